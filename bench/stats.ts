/**
 * Small helpers of the benchmark suite: a seeded random generator, medians and percentiles, and a description of
 * the machine the figures were measured on.
 */
import { cpus, loadavg, totalmem } from 'node:os';

/** A seeded pseudo-random generator returning floats in [0, 1). */
export type Random = () => number;

/**
 * Mulberry32, a 32-bit seeded generator: the same seed always gives the same sequence, so every input the suite
 * builds is reproducible.
 * @param seed any integer
 * @example const rng = seededRandom(7); rng(); // 0.…
 */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** One element of `values` chosen uniformly with `rng`. */
export function pick<T>(rng: Random, values: readonly T[]): T {
  return values[Math.floor(rng() * values.length)]!;
}

/** The median of `values` (mean of the two middle values for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/**
 * The `p`-th percentile of `values` by linear interpolation between closest ranks; NaN when empty.
 * @param p 0–100
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

/** What the figures were measured on. */
export interface MachineInfo {
  /** CPU model as the OS reports it. */
  readonly cpuModel: string;
  /** Logical cores. */
  readonly cores: number;
  /** Total memory, MiB. */
  readonly memoryMiB: number;
  /** `process.version`, e.g. `v20.20.2`. */
  readonly node: string;
  /** `process.platform`/`process.arch`. */
  readonly platform: string;
  /** When the run started, ISO-8601 UTC. */
  readonly date: string;
  /** 1-minute load average when the run started (other work on the machine skews timings). */
  readonly loadAverage: number;
}

/** Describes this machine and the current time. */
export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryMiB: Math.round(totalmem() / 1024 / 1024),
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
    date: new Date().toISOString(),
    loadAverage: loadavg()[0] ?? 0,
  };
}
