import { pino } from "pino";

export type Logger = pino.Logger;

export function createLogger(level: string): Logger {
  // No log line carries request headers or raw keys, so there is nothing to redact.
  return pino({ level, base: undefined });
}
