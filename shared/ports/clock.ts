/** Clock port: the only source of time above the core. The simulation supplies a virtual clock. */
export interface Clock {
  /** Milliseconds since the Unix epoch (UTC). */
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };
