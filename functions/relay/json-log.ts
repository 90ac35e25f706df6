/** The relay's log: one JSON object per line (`{time, level, message, ...attributes}`), for `kubectl logs`. */
import type { Log } from '../../shared/lambda/log.js';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/**
 * A {@link Log} writing JSON lines to `write` (stdout by default), dropping levels below `level`.
 * @param now epoch ms for the `time` field
 */
export function jsonLog(level: (typeof LEVELS)[number], now: () => number, write: (line: string) => void = (line) => process.stdout.write(line)): Log {
  const min = LEVELS.indexOf(level);
  const at = (l: (typeof LEVELS)[number]) => (message: string, attributes?: Record<string, unknown>) => {
    if (LEVELS.indexOf(l) < min) return;
    write(`${JSON.stringify({ time: new Date(now()).toISOString(), level: l, message, ...attributes })}\n`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
