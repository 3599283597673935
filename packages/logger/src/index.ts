import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger } from 'pino';

export interface RootLoggerOptions {
  /** Fields added to every line as it is written: the active trace's ids when the process traces. */
  mixin?: () => object;
  /** Lines for a person on a terminal (pino-pretty) instead of JSON; ignored when a destination is given. */
  pretty?: boolean;
  /** Where pretty lines go: standard output unless a test says otherwise. */
  prettyOutput?: NodeJS.WritableStream;
}

/**
 * The one root logger of a process. Modules take `root.child({ module })`, requests
 * `child({ requestId })`, so every line of a request carries its id.
 */
export function createRootLogger(
  level: string,
  destination?: pino.DestinationStream,
  options: RootLoggerOptions = {},
): Logger {
  return pino(
    {
      level,
      ...(options.mixin ? { mixin: options.mixin } : {}),
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['req.headers.authorization', 'token', '*.token'], censor: '[redacted]' },
    },
    destination ??
      (options.pretty
        ? pretty({
            colorize: options.prettyOutput === undefined,
            translateTime: 'SYS:HH:MM:ss.l',
            ignore: 'pid,hostname',
            sync: true,
            ...(options.prettyOutput ? { destination: options.prettyOutput } : {}),
          })
        : pino.destination({ sync: false })),
  );
}

/** A logger that drops everything: for CLI commands and tests that want no output. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
