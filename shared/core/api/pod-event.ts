/**
 * The message the relay posts and the webhook enqueues for the provisioner: one pod or node change.
 * Messages are triggers: the provisioner reads the current state, so a duplicate or stale message is harmless.
 */
import * as z from 'zod';

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

/** The FIFO deduplication id of an event: object uid + resourceVersion. */
export function deduplicationId(e: PodEvent): string {
  return `${e.uid}:${e.resourceVersion}`;
}
