/**
 * Type-level checks (run by `tsc --noEmit`, trivially true at run time): the parsed shapes fit the core's plain
 * Kubernetes types, so code written against `kubernetes.ts` accepts parsed manifests unchanged.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { NodeSelectorRequirement, ObjectMeta, Taint, Toleration } from '../../../shared/core/api/kubernetes.js';
import type { Manifest } from '../../../shared/core/api/manifest.js';
import type { NodePool } from '../../../shared/core/api/nodepool.js';
import type { Pod, PodTemplateSpec } from '../../../shared/core/api/pod.js';
import type { Deployment, Job } from '../../../shared/core/api/workloads.js';

describe('api types', () => {
  it('fit the plain Kubernetes types of the core', () => {
    expectTypeOf<Manifest['object']['metadata']>().toExtend<ObjectMeta>();
    expectTypeOf<NodePool['spec']['template']['spec']['requirements']>().toExtend<readonly NodeSelectorRequirement[]>();
    expectTypeOf<NonNullable<NodePool['spec']['template']['spec']['taints']>>().toExtend<readonly Taint[]>();
    expectTypeOf<NonNullable<Pod['spec']['tolerations']>>().toExtend<readonly Toleration[]>();
    expectTypeOf<Deployment['spec']['template']>().toEqualTypeOf<PodTemplateSpec>();
    expectTypeOf<Job['spec']['parallelism']>().toEqualTypeOf<number>();
    expectTypeOf<Pod['metadata']['namespace']>().toEqualTypeOf<string>();
  });
});
