/**
 * The disruption methods in the order a pass tries them (Karpenter core `pkg/controllers/disruption/controller.go`
 * `NewMethods`): Emptiness → Drift → multi-node consolidation → single-node consolidation. The first that finds a
 * command wins the pass.
 */
import type { ControllerMethod } from './methods/context.js';
import { drift } from './methods/drift.js';
import { emptiness } from './methods/emptiness.js';
import { multiNodeConsolidation } from './methods/multi-node-consolidation.js';
import { singleNodeConsolidation } from './methods/single-node-consolidation.js';

/** The methods in priority order. */
export const DISRUPTION_METHODS: readonly ControllerMethod[] = [emptiness, drift, multiNodeConsolidation, singleNodeConsolidation];
