/**
 * Structured JSON logs (pino). Secrets, keys, inputs and outputs are never logged: the redact list is a
 * safety net, not a licence to pass them in.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(service: string, level = 'info'): Logger {
  return pino({
    level,
    base: { service },
    redact: {
      paths: ['input', 'output', '*.input', '*.output', 'authorization', '*.authorization', 'token', '*.token', 'key', '*.key'],
      censor: '[redacted]',
    },
  });
}
