/**
 * Bulk placement, the packed solve's second phase (`scheduler.ts`): runs of identical pods without topology terms,
 * host ports or alternative terms go to existing capacity and the room planned NodeClaims hold for free
 * ({@link BulkPlacement.fillExisting}), then the runs that share a NodePool and requirements are packed into new
 * NodeClaims together ({@link BulkPlacement.packGroup}), and what is left opens NodeClaims run by run
 * ({@link BulkPlacement.openBins}). Every bin is committed with the checks placing its pods one by one would make.
 */
import { add, fitCount, fitsSum, scale, subtract, type ResourceList } from '../resources/resource-list.js';
import type { PricedType } from './instance-options.js';
import { packClasses } from './packing.js';
import { packingTarget, packingTargetBySimulation, planBin } from './packing-target.js';
import type { Accepted, PlannedNodeClaim } from './planned-nodeclaim.js';
import type { SchedulingPod } from './pod.js';
import { alternativeKey } from './pod-shape.js';
import type { SolvePass } from './solve-pass.js';
import type { NodePoolTemplate, Rejection } from './types.js';

/**
 * Runs of distinct pods up to which a group is packed by column generation (the master LP has one row per run).
 * Measured on 1,000 pods over the whole catalogue: 30 shapes 0.7 s, 60 shapes 2.5 s, 120 shapes 18.6 s by column
 * generation against 0.25–0.4 s filled into one target type (8–13 % dearer), so larger groups take the latter.
 */
export const MAX_PACKING_CLASSES = 40;

/** The bulk phase of one packed solve, placing into the pass's state (see the file comment). */
export class BulkPlacement {
  /** Per NodePool and requirements: the instance type fallback NodeClaims pack into, chosen once per solve. */
  private readonly targets = new Map<string, PricedType>();

  /** @param pass the packed solve whose state (targets, planned NodeClaims, limits) the bulk phase places into */
  constructor(private readonly pass: SolvePass) {}

  /** The largest batch (≤ `count`) of `pod` `check` accepts within `ceiling` USD/hour, with its check. */
  private largestBatch(check: (n: number) => Accepted | Rejection, count: number, ceiling: number): { n: number; check: Accepted } | undefined {
    const ok = (n: number) => {
      const c = check(n);
      return c.ok && c.options[0]!.price <= ceiling + 1e-9 ? c : undefined;
    };
    const all = ok(count);
    if (all) return { n: count, check: all };
    let [lo, hi] = [0, count];
    let found: Accepted | undefined;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      const c = ok(mid);
      if (c) [lo, found] = [mid, c];
      else hi = mid;
    }
    if (lo === 0) return undefined;
    return { n: lo, check: found ?? ok(lo)! };
  }

  /** Existing capacity first, then room planned NodeClaims hold for free; returns the pods of `run` left over. */
  fillExisting(run: readonly SchedulingPod[]): SchedulingPod[] {
    const pod = run[0]!;
    let i = 0;
    for (const target of this.pass.existingTargets) {
      if (i >= run.length) break;
      if (!target.accepts(pod)) continue;
      const n = Math.min(run.length - i, target.fitCount(pod.requests));
      for (const p of run.slice(i, i + n)) {
        target.add(p);
        this.pass.placedExisting.push({ pod: p.key, target: target.name });
      }
      i += n;
    }
    for (const claim of this.pass.planned) {
      if (i >= run.length) break;
      const n = Math.min(run.length - i, fitCount(pod.requests, claim.freeRoom()));
      if (n <= 0) continue;
      const batch = this.largestBatch((k) => claim.canAdd(pod, this.pass.remaining.get(claim.template.name), k), n, claim.ceiling());
      if (!batch) continue;
      claim.commit(run.slice(i, i + batch.n), batch.check, this.pass.remaining);
      i += batch.n;
    }
    return run.slice(i);
  }

  /**
   * Commits one planned bin: `plan[c]` pods of each run `c` from `next[c]` on, into a new NodeClaim of `template`
   * no dearer than `target`. In one check when it passes (the pods share requirements, and a fresh NodeClaim of the
   * NodePool accepts each class: what placing them one by one checks), else class by class as far as each fits.
   * Advances `next`; returns whether a NodeClaim was opened and, when the bin passed in one check, that check.
   * @param known the one-check acceptance of an identical bin (same runs, same plan) while the NodePool has no
   *   limits: the check reads only the runs' first pods, the plan and the probe (never mutated), so it would
   *   answer the same and is not repeated
   */
  private commitBin(
    template: NodePoolTemplate,
    runs: readonly SchedulingPod[][],
    reps: readonly SchedulingPod[],
    next: number[],
    plan: readonly number[],
    target: PricedType,
    known?: Accepted,
  ): { opened: boolean; whole?: Accepted } {
    const probe = this.pass.probeOf(template);
    const first = plan.findIndex((n) => n > 0);
    if (first < 0) return { opened: false };
    const all: SchedulingPod[] = [];
    for (let c = first; c < runs.length; c++) for (let i = next[c]!, end = next[c]! + plan[c]!; i < end; i++) all.push(runs[c]![i]!);
    const checkWhole = (): Accepted | Rejection => {
      let plus: ResourceList = {};
      for (let c = first + 1; c < runs.length; c++) if (plan[c]! > 0) plus = add(plus, scale(reps[c]!.requests, plan[c]!));
      return probe.canAdd(reps[first]!, this.pass.remaining.get(template.name), plan[first]!, plus);
    };
    const whole = known ?? checkWhole();
    if (whole.ok && whole.options[0]!.price <= target.price + 1e-9) {
      this.pass.open(template, whole, all).target = { allocatable: target.type.allocatable, price: target.price };
      for (let c = 0; c < runs.length; c++) next[c]! += plan[c]!;
      return { opened: true, whole };
    }
    let claim: PlannedNodeClaim | undefined;
    for (let c = 0; c < runs.length; c++) {
      const n = plan[c]!;
      if (n === 0) continue;
      const pod = reps[c]!;
      const pods = runs[c]!.slice(next[c]!, next[c]! + n);
      const into = claim;
      const batch = this.largestBatch((k) => (into ?? probe).canAdd(pod, this.pass.remaining.get(template.name), k), n, target.price);
      if (!batch) continue;
      if (into) into.commit(pods.slice(0, batch.n), batch.check, this.pass.remaining);
      else (claim = this.pass.open(template, batch.check, pods.slice(0, batch.n))).target = { allocatable: target.type.allocatable, price: target.price };
      next[c]! += batch.n;
    }
    return { opened: claim !== undefined };
  }

  /**
   * Packs runs of pods that share a NodePool and requirements into new NodeClaims of one target instance type
   * (vector bin packing, dot-product heuristic: each NodeClaim is filled with the pod whose requests best align
   * with the room left, normalised by the target's room). Returns the runs' pods left over.
   */
  private packGroupOneType(template: NodePoolTemplate, options: readonly PricedType[], runs: readonly SchedulingPod[][]): SchedulingPod[][] {
    const overhead = template.daemonOverhead;
    const reps = runs.map((r) => r[0]!);
    const fitting = options.filter((o) => reps.every((p) => fitsSum(overhead, p.requests, o.type.allocatable)));
    // Dense columns over the resources the pods request.
    const keys = [...new Set(reps.flatMap((p) => Object.keys(p.requests).filter((k) => p.requests[k]! > 0)))];
    const d = keys.length;
    const req = new Float64Array(runs.length * d);
    reps.forEach((p, c) => keys.forEach((k, j) => (req[c * d + j] = p.requests[k] ?? 0)));
    const roomOf = (o: PricedType) => Float64Array.from(keys, (k) => Math.max(0, (o.type.allocatable[k] ?? 0) - (overhead[k] ?? 0)));
    const target = packingTargetBySimulation(
      fitting.length > 0 ? fitting : options,
      runs.map((r) => r.length),
      req,
      d,
      roomOf,
      overhead,
      keys,
    );
    const room = roomOf(target);
    const next = runs.map(() => 0);
    for (;;) {
      // Plan one NodeClaim arithmetically.
      const plan = planBin(
        room,
        req,
        d,
        runs.map((r, c) => r.length - next[c]!),
      );
      const planned = plan.reduce((a, b) => a + b, 0);
      if (planned === 0) break;
      if (!this.commitBin(template, runs, reps, next, plan, target).opened) break;
    }
    return runs.map((run, c) => run.slice(next[c]!)).filter((run) => run.length > 0);
  }

  /**
   * Packs runs of pods that share a NodePool and requirements into new NodeClaims by column generation
   * (`packing.ts`): each run is a class, each option an instance type with its room after daemonset overhead. Every
   * bin is committed with one check of the NodePool's probe (what placing its pods one by one checks), else class by
   * class; returns the runs' pods left over. Groups of more than {@link MAX_PACKING_CLASSES} runs pack into one
   * target type instead (`packGroupOneType`).
   */
  packGroup(template: NodePoolTemplate, options: readonly PricedType[], runs: readonly SchedulingPod[][]): SchedulingPod[][] {
    if (runs.length > MAX_PACKING_CLASSES) return this.packGroupOneType(template, options, runs);
    const overhead = template.daemonOverhead;
    const reps = runs.map((r) => r[0]!);
    const keys = [...new Set(reps.flatMap((p) => Object.keys(p.requests).filter((k) => p.requests[k]! > 0)))];
    const packing = packClasses(
      runs.map((run, c) => ({ requests: keys.map((k) => reps[c]!.requests[k] ?? 0), count: run.length })),
      options.map((o) => ({ room: keys.map((k) => Math.max(0, (o.type.allocatable[k] ?? 0) - (overhead[k] ?? 0))), price: o.price })),
    );
    const next = runs.map(() => 0);
    for (const bin of packing.bins) {
      const target = options[bin.option]!;
      // Copies of a bin are checked once while the NodePool has no limits (see `commitBin`).
      let previous: { plan: readonly number[]; whole: Accepted } | undefined;
      for (let copy = 0; copy < bin.copies; copy++) {
        // The bin's own counts while every run still has them (the plan is only read).
        const plan = bin.counts.every((k, c) => k <= runs[c]!.length - next[c]!) ? bin.counts : bin.counts.map((k, c) => Math.min(k, runs[c]!.length - next[c]!));
        if (plan.every((n) => n === 0)) break;
        const same = previous !== undefined && this.pass.remaining.get(template.name) === undefined && (plan === previous.plan || plan.every((n, c) => n === previous!.plan[c]));
        const { whole } = this.commitBin(template, runs, reps, next, plan, target, same ? previous!.whole : undefined);
        previous = whole ? { plan, whole } : undefined;
      }
    }
    return runs.map((run, c) => run.slice(next[c]!)).filter((run) => run.length > 0);
  }

  /** Fallback: new NodeClaims for one run, from the first NodePool that takes its pods; returns what is left. */
  openBins(run: readonly SchedulingPod[]): SchedulingPod[] {
    const pod = run[0]!;
    let i = 0;
    while (i < run.length) {
      const fresh = this.pass.freshFor(pod);
      if (!fresh) break;
      const probe = this.pass.probeOf(fresh.template);
      const left = run.length - i;
      const group = `${fresh.template.name}|${alternativeKey(pod.requirementAlternatives[0]!)}`;
      const chosen = this.targets.get(group);
      let target = chosen && fresh.check.options.find((o) => o.type === chosen.type);
      if (!target) {
        target = packingTarget(fresh.check.options, scale(pod.requests, left), fresh.template.daemonOverhead);
        this.targets.set(group, target);
      }
      const n = Math.max(1, Math.min(left, fitCount(pod.requests, subtract(target.type.allocatable, fresh.template.daemonOverhead))));
      const batch = this.largestBatch((k) => probe.canAdd(pod, this.pass.remaining.get(fresh.template.name), k), n, target.price) ?? { n: 1, check: fresh.check };
      const claim = this.pass.open(fresh.template, batch.check, run.slice(i, i + batch.n));
      claim.target = { allocatable: target.type.allocatable, price: target.price };
      i += batch.n;
    }
    return run.slice(i);
  }
}
