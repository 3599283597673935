export { CursorCodec, loadCursorSecret } from './cursor-codec';
