import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * The one root logger of a process. Modules take `root.child({ module })`, requests
 * `child({ requestId })`, so every line of a request carries its id.
 */
export function createRootLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['req.headers.authorization', 'token', '*.token'], censor: '[redacted]' },
    },
    destination ?? pino.destination({ sync: false }),
  );
}

/** A logger that drops everything: for CLI commands and tests that want no output. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
