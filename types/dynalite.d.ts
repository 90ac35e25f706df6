/**
 * Types for dynalite 4 (https://github.com/architect/dynalite): an in-process DynamoDB on LevelDB that speaks the
 * real DynamoDB JSON protocol. The package ships no types. Only the factory is typed; the returned server is a
 * plain Node server you `listen()` on and `close()` (which also closes the LevelDB store).
 */
declare module 'dynalite' {
  import type { Server } from 'node:http';

  /** Options of the dynalite factory (from its `index.js` JSDoc). */
  export interface DynaliteOptions {
    /** Milliseconds a new table stays `CREATING` before turning `ACTIVE`. @default 500 */
    readonly createTableMs?: number;
    /** Milliseconds a deleted table stays `DELETING`. @default 500 */
    readonly deleteTableMs?: number;
    /** Milliseconds an updated table stays `UPDATING`. @default 500 */
    readonly updateTableMs?: number;
    /** Maximum item size, KiB. @default 400 (DynamoDB's limit) */
    readonly maxItemSizeKb?: number;
    /** Folder of an on-disk LevelDB store. @default undefined — an in-memory store */
    readonly path?: string;
    /** Logs every request to the console. Note: process-wide, it cannot be turned off again. @default false */
    readonly verbose?: boolean;
    /** Logs request bodies to stderr. Process-wide like `verbose`. @default false */
    readonly debug?: boolean;
  }

  /**
   * Creates (does not start) a dynalite server; call `listen(port, host)` on it.
   * `close()` stops accepting connections, waits for open ones (keep-alive sockets included — close or destroy
   * clients first), then closes the store.
   */
  export default function dynalite(options?: DynaliteOptions): Server;
}
