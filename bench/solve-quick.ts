/**
 * Quick solver timing on the real catalogue: N identical small pods, and N mixed pods, on the seed's general
 * NodePool. Usage: `npx tsx bench/solve-quick.ts [N]`. A one-off probe for development; the benchmark suite is
 * `npm run bench` (`bench/run.ts`, which writes BENCHMARKS.md).
 */
import { loadCatalog } from '../shared/core/instancetypes/catalog.js';
import { buildNodePoolTemplate } from '../shared/core/provisioning/nodepool-template.js';
import { toSchedulingPod } from '../shared/core/provisioning/pod.js';
import { solve } from '../shared/core/provisioning/scheduler.js';
import { planPrice } from '../shared/core/provisioning/solve-pass.js';
import { SimulatedEc2 } from '../shared/sim/simulated-ec2.js';
import { VirtualClock } from '../shared/sim/virtual-clock.js';

const n = Number(process.argv[2] ?? 500);
const ec2 = new SimulatedEc2(new VirtualClock(0), { region: 'us-west-2', catalog: loadCatalog(), vmMemoryOverheadPercent: 0.075, clusterName: 'bench', onRegister: () => {} });
const types = await ec2.getInstanceTypes({ nodeClass: 'default' });
const pool = {
  metadata: { name: 'general' },
  spec: {
    template: {
      metadata: { labels: { 'workload-type': 'general' } },
      spec: {
        nodeClassRef: { name: 'default' },
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In' as const, values: ['spot', 'on-demand'] },
          { key: 'karpenter.k8s.aws/instance-category', operator: 'In' as const, values: ['c', 'm', 'r'] },
          { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt' as const, values: ['4'] },
          { key: 'kubernetes.io/arch', operator: 'In' as const, values: ['amd64'] },
        ],
      },
    },
  },
};
const template = buildNodePoolTemplate(pool, types, [], {});
const cpus = ['100m', '250m', '500m', '1000m', '1500m'];
const mems = ['100Mi', '256Mi', '512Mi', '1Gi', '2Gi', '4Gi'];
for (const [label, make] of [
  ['identical 100m/128Mi', (i: number) => ({ cpu: '100m', memory: '128Mi', i })],
  ['mixed', (i: number) => ({ cpu: cpus[i % cpus.length]!, memory: mems[(i * 7) % mems.length]!, i })],
] as const) {
  const pods = Array.from({ length: n }, (_, i) => {
    const r = make(i);
    return toSchedulingPod({ namespace: 'default', name: `p${i}`, spec: { containers: [{ name: 'c', resources: { requests: { cpu: r.cpu, memory: r.memory } } }] } }, i);
  });
  const t0 = performance.now();
  const result = solve(pods, [template], []);
  const ms = performance.now() - t0;
  console.log(`${label}: ${n} pods in ${ms.toFixed(0)} ms → ${result.newNodeClaims.length} NodeClaims, $${planPrice(result).toFixed(4)}/h, ${result.unschedulable.length} unschedulable`);
}
