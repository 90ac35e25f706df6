/**
 * The message the relay posts and the webhook enqueues for the provisioner: one pod or node change.
 * Messages are triggers: the provisioner reads the current state, so a duplicate or stale message is harmless.
 */
import * as z from 'zod';
import { fnv1a } from '../hash.js';

/** A pod kube-scheduler marked Unschedulable, or a node change. */
export const PodEventSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('pod'),
    cluster: z.string().min(1),
    namespace: z.string().min(1),
    name: z.string().min(1),
    uid: z.string().min(1),
    resourceVersion: z.string().min(1),
  }),
  z.object({
    kind: z.literal('node'),
    cluster: z.string().min(1),
    name: z.string().min(1),
    uid: z.string().min(1),
    resourceVersion: z.string().min(1),
    /** `deleting`: the Node got a deletionTimestamp (it waits on finalizers, e.g. Skiff's termination finalizer). */
    event: z.enum(['registered', 'ready', 'notReady', 'deleting', 'deleted']),
  }),
]);

/** A parsed {@link PodEventSchema} message. */
export type PodEvent = z.infer<typeof PodEventSchema>;

/**
 * How many FIFO message groups one cluster's events are spread over: 128. SQS FIFO delivers no message of a group
 * while an earlier one of that group is in flight, and a message whose deletion was lost, or whose batch failed,
 * stays in flight for the queue's visibility timeout. With one group per cluster every such message held back all of
 * the cluster's later events (issue 21: under lost deletions the queue fell ten minutes behind a burst, because every
 * node that joined re-reported every pending pod); spread over groups it holds back only its own group's. Provisioning
 * passes may then overlap (up to the provisioner's reserved concurrency), which the launch protocol is built for
 * (`shared/controllers/provision.ts`): overlapping passes that take the same decision join one NodeClaim, and a pass
 * that started after a trigger was sent covers it (`ProvisionReport.coveredByPassAt`).
 */
export const POD_EVENT_GROUPS = 128;

/**
 * The FIFO message group of an event: `<cluster>#<n>`, n = FNV-1a of the object's uid modulo {@link POD_EVENT_GROUPS},
 * so one object's events stay in order. At most 104 characters (an EKS cluster name has at most 100; SQS allows 128).
 * @example messageGroupId('prod', event) // 'prod#17'
 */
export function messageGroupId(cluster: string, e: Pick<PodEvent, 'uid'>): string {
  return `${cluster}#${fnv1a(e.uid) % POD_EVENT_GROUPS}`;
}

/** The FIFO deduplication id of an event: object uid + resourceVersion. */
export function deduplicationId(e: PodEvent): string {
  return `${e.uid}:${e.resourceVersion}`;
}
