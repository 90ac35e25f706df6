/**
 * The logging surface handlers use. Production passes a Powertools `Logger` (structured JSON to CloudWatch);
 * the simulation passes {@link silentLog} or a collector, so nothing reaches stdout.
 */

/** Structured log methods: a message and optional attributes. */
export interface Log {
  debug(message: string, attributes?: Record<string, unknown>): void;
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
  error(message: string, attributes?: Record<string, unknown>): void;
}

/** A log that drops everything. */
export const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };
