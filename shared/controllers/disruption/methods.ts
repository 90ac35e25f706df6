/**
 * The disruption methods in the order a pass tries them. Karpenter's (core `pkg/controllers/disruption/controller.go`
 * `NewMethods`): Emptiness → Drift → multi-node consolidation → single-node consolidation. Skiff adds its two
 * repacking moves (`methods/repack-consolidation.ts`, `methods/split-consolidation.ts`): Emptiness → Drift →
 * multi-node → repack → single-node → split. The first that finds a command wins the pass.
 *
 * Why repack goes before single-node (measured on issue 20's 2,000-pod burst, `bench/cost-over-time.ts`): after the
 * scale-in single-node consolidation finds a command in every pass — an m6g.2xlarge → c6g.2xlarge replacement saving
 * $0.036/h — so a repacking placed after it never runs and the fleet stalls at 1.34× the LP bound, exactly as with
 * Karpenter's moves alone. Repack only proposes moves that save at least 10 % of what they disrupt (its churn guard),
 * so where it acts it saves more per pass than single-node's one-node moves; where it finds nothing single-node runs
 * as before. Split stays last: a one-node move, tried only when single-node's one-replacement move finds nothing.
 */
import type { ConsolidationSetting } from './deps.js';
import type { ControllerMethod } from './methods/context.js';
import { drift } from './methods/drift.js';
import { emptiness } from './methods/emptiness.js';
import { multiNodeConsolidation } from './methods/multi-node-consolidation.js';
import { repackConsolidation } from './methods/repack-consolidation.js';
import { singleNodeConsolidation } from './methods/single-node-consolidation.js';
import { splitConsolidation } from './methods/split-consolidation.js';

/** Karpenter's methods in its priority order (the `karpenter` consolidation setting). */
export const KARPENTER_METHODS: readonly ControllerMethod[] = [emptiness, drift, multiNodeConsolidation, singleNodeConsolidation];

/** Skiff's methods in priority order: Karpenter's, then repack and split consolidation (the default). */
export const DISRUPTION_METHODS: readonly ControllerMethod[] = [emptiness, drift, multiNodeConsolidation, repackConsolidation, singleNodeConsolidation, splitConsolidation];

/** The method list of a consolidation setting (`DisruptionDeps.consolidation`; absent is `skiff`). */
export function methodsFor(setting: ConsolidationSetting | undefined): readonly ControllerMethod[] {
  return setting === 'karpenter' ? KARPENTER_METHODS : DISRUPTION_METHODS;
}
