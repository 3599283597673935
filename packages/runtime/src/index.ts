export type { QuarryModule } from './quarry-module';
export { HeavyCallLimiter } from './heavy-call-limiter';
export { freePort } from './free-port';
export { threadEntry } from './thread-entry';
export { closeBullmq, closeBullmqWorker, closeWithin, lostAfterReady } from './close-within';
export { pinLoadedAddons } from './pin-native-addons';
export { addressAllowed, addressRange, hostPattern, refusedAddress, urlHost } from './host-address';
export { checkCron } from './cron-rules';
export { NotReadyError, readyStep } from './not-ready';
