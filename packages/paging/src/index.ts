export { CursorCodec } from './cursor-codec';
