/**
 * `karpenter.sh/do-not-disrupt` (Karpenter core `utils/pod/scheduling.go IsDoNotDisruptActive`, docs
 * `concepts/disruption.md#pod-level-controls`):
 * - on a pod, `"true"` blocks voluntary disruption of its node for good; a Go duration (`"30m"`) blocks it until the
 *   pod has existed that long; any other value is ignored (and worth an `InvalidDoNotDisruptAnnotation` event);
 * - on a node, only `"true"` counts.
 * Voluntary disruption (Empty, Underutilized, Drifted) never evicts such a pod. Expiration and interruption are not
 * voluntary: they drain anyway, and a NodePool's `terminationGracePeriod` bounds the wait.
 */
import { parseDuration } from '../api/duration.js';

/** The annotation key. */
export const DO_NOT_DISRUPT = 'karpenter.sh/do-not-disrupt';

/** The protection a pod's annotation gives at one instant. */
export type DoNotDisrupt =
  | { readonly active: false; readonly invalid?: string }
  | { readonly active: true; /** Epoch ms when it lapses; undefined for `"true"`. */ readonly untilMs?: number };

/**
 * Whether a pod's `karpenter.sh/do-not-disrupt` protects it now.
 * @param annotations the pod's annotations
 * @param createdAtMs when the pod was created, epoch ms (the start of a duration's protection)
 * @param nowMs the instant, epoch ms
 * @returns inactive with `invalid` set to the value when it is neither `"true"` nor a duration
 */
export function podDoNotDisrupt(annotations: Readonly<Record<string, string>>, createdAtMs: number, nowMs: number): DoNotDisrupt {
  const value = annotations[DO_NOT_DISRUPT];
  if (value === undefined) return { active: false };
  if (value === 'true') return { active: true };
  let seconds: number;
  try {
    seconds = parseDuration(value);
  } catch {
    return { active: false, invalid: value };
  }
  const untilMs = createdAtMs + seconds * 1000;
  return nowMs < untilMs ? { active: true, untilMs } : { active: false };
}

/** True when a node carries `karpenter.sh/do-not-disrupt: "true"` (other values are ignored on nodes). */
export function nodeDoNotDisrupt(annotations: Readonly<Record<string, string>>): boolean {
  return annotations[DO_NOT_DISRUPT] === 'true';
}
