/**
 * The disruption methods in the order a pass tries them. Karpenter's (core `pkg/controllers/disruption/controller.go`
 * `NewMethods`): Emptiness → Drift → multi-node consolidation → single-node consolidation; Skiff then adds its two
 * repacking moves (`methods/repack-consolidation.ts`, `methods/split-consolidation.ts`), which act only where
 * Karpenter's find nothing. The first that finds a command wins the pass.
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
export const DISRUPTION_METHODS: readonly ControllerMethod[] = [...KARPENTER_METHODS, repackConsolidation, splitConsolidation];

/** The method list of a consolidation setting (`DisruptionDeps.consolidation`; absent is `skiff`). */
export function methodsFor(setting: ConsolidationSetting | undefined): readonly ControllerMethod[] {
  return setting === 'karpenter' ? KARPENTER_METHODS : DISRUPTION_METHODS;
}
