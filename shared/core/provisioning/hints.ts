/**
 * "Did you mean" hints for pods no NodePool can serve: a label key, a label value or a toleration that is one typo
 * away from what the NodePools (or the well-known labels) define. Pure: the caller passes what the NodePools define.
 *
 * Closeness is Levenshtein edit distance (`fastest-levenshtein`): a candidate is suggested when it is within
 * `max(2, 30 % of the typed length)` edits and fewer than half of the typed characters change (so a one-letter
 * value such as instance category `g` never suggests `c`), or when it differs only in letter case.
 */
import { closest, distance } from 'fastest-levenshtein';
import type { Taint, Toleration } from '../api/kubernetes.js';
import { LABEL_ARCH, LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_OS, LABEL_ZONE, WELL_KNOWN_LABELS, ownValue } from '../api/labels.js';
import { shippedInstanceType } from '../instancetypes/catalog-facts.js';
import { formatTaint, tolerates } from '../scheduling/taints.js';
import type { SchedulingPod } from './pod.js';
import type { NodePoolTemplate } from './types.js';

/**
 * Well-known labels whose values form a closed set (Kubernetes' GOARCH/GOOS values EC2 offers; Karpenter's
 * capacity types): a pod asking for one of them that no NodePool offers gets no near-miss suggestion.
 */
const CLOSED_VALUES: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  [LABEL_ARCH, new Set(['amd64', 'arm64'])],
  [LABEL_OS, new Set(['linux', 'windows'])],
  [LABEL_CAPACITY_TYPE, new Set(['spot', 'on-demand', 'reserved'])],
]);

/**
 * The closed set of values a well-known label takes (`kubernetes.io/arch`: amd64, arm64; `kubernetes.io/os`;
 * `karpenter.sh/capacity-type`: spot, on-demand, reserved), or undefined for a label whose values are open.
 * @example closedValues('karpenter.sh/capacity-type')?.has('ondemand') // false
 */
export function closedValues(key: string): ReadonlySet<string> | undefined {
  return CLOSED_VALUES.get(key);
}

/**
 * Other names for the values of closed well-known labels, as people write them (uname's `x86_64`, `aarch64`; an
 * underscore for a hyphen): not one typo away, but unmistakable. Lowercase alias → the value Kubernetes and Karpenter use.
 */
const VALUE_ALIASES: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map([
  [
    LABEL_ARCH,
    new Map([
      ['x86_64', 'amd64'],
      ['x86-64', 'amd64'],
      ['x64', 'amd64'],
      ['amd', 'amd64'],
      ['aarch64', 'arm64'],
      ['arm', 'arm64'],
      ['armv8', 'arm64'],
      ['graviton', 'arm64'],
    ]),
  ],
  [
    LABEL_CAPACITY_TYPE,
    new Map([
      ['ondemand', 'on-demand'],
      ['on_demand', 'on-demand'],
      ['od', 'on-demand'],
    ]),
  ],
]);

/**
 * The value of well-known (or any) label `key` that `typed` most likely means, among `candidates` (the values
 * something offers), or undefined when nothing is close. Another value of a closed set (`arm64` for `amd64`) and a real
 * EC2 instance type (`a1.large` for `m1.large`) are choices, not typos; an alias (`x86_64` → `amd64`) and a near miss
 * ({@link closestNearMiss}: `Spot` → `spot`, `m5.larg` → `m5.large`) are suggested.
 * @param key the label key
 * @param typed the value written
 * @param candidates the values offered (a NodePool's, or its instance types')
 * @example nearValue('kubernetes.io/arch', 'x86_64', ['amd64', 'arm64']) // 'amd64'
 * @example nearValue('karpenter.sh/capacity-type', 'Spot', ['on-demand', 'spot']) // 'spot'
 */
export function nearValue(key: string, typed: string, candidates: Iterable<string>): string | undefined {
  if (CLOSED_VALUES.get(key)?.has(typed)) return undefined;
  if (key === LABEL_INSTANCE_TYPE && shippedInstanceType(typed)) return undefined;
  const list = [...candidates];
  const alias = VALUE_ALIASES.get(key)?.get(typed.toLowerCase());
  if (alias !== undefined && list.includes(alias)) return alias;
  return closestNearMiss(typed, list);
}

/** What a hint is about. */
export type HintKind =
  /** A label key the pod requires that no NodePool defines, close to one that is defined or well-known. */
  | 'labelKey'
  /** A label value the pod requires that nothing offers, close to one a NodePool or its instance types offer. */
  | 'labelValue'
  /** A toleration whose key is close to the key of a taint the pod does not tolerate. */
  | 'tolerationKey'
  /** A toleration with the taint's key whose value is close to the taint's value. */
  | 'tolerationValue'
  /** A toleration with the taint's key and value but another effect. */
  | 'tolerationEffect';

/** One "did you mean" suggestion. */
export interface Hint {
  readonly kind: HintKind;
  /** What the pod says: a label key, a label value, a toleration key, value or effect. */
  readonly typed: string;
  /** What it probably means. */
  readonly suggestion: string;
  /**
   * NodePools that define the suggestion (set the label or value, or carry the taint); empty for a well-known label,
   * which Skiff sets on nodes without any NodePool defining it.
   */
  readonly nodePools: readonly string[];
  /** For the toleration kinds: the taint the pod does not tolerate. */
  readonly taint?: Taint;
  /** One sentence a user can act on, starting with "did you mean". Never contains the text ` Hint: `. */
  readonly message: string;
}

/**
 * True when `candidate` is close enough to `typed` to suggest it (see the module doc for the rule). An identical
 * candidate is not a near miss.
 * @example isNearMiss('node-typ', 'node-type') // true
 * @example isNearMiss('g', 'c') // false
 */
export function isNearMiss(typed: string, candidate: string): boolean {
  if (typed === candidate) return false;
  if (typed.toLowerCase() === candidate.toLowerCase()) return true;
  const d = distance(typed, candidate);
  return d <= Math.max(2, 0.3 * typed.length) && 2 * d < typed.length;
}

/**
 * The candidate closest to `typed` by edit distance when it is a near miss ({@link isNearMiss}), else undefined.
 * A candidate that differs only in letter case wins; ties go to the first in sort order, so the answer does not
 * depend on the order of `candidates`.
 */
export function closestNearMiss(typed: string, candidates: Iterable<string>): string | undefined {
  const list = [...new Set(candidates)].filter((c) => c !== typed).sort();
  if (list.length === 0) return undefined;
  const sameLetters = list.find((c) => c.toLowerCase() === typed.toLowerCase());
  if (sameLetters !== undefined) return sameLetters;
  const best = closest(typed, list);
  return isNearMiss(typed, best) ? best : undefined;
}

/**
 * A hint for a label key the pod requires that no NodePool defines and that is not well-known.
 * @param key the label key the pod requires
 * @param definedBy label key → the NodePools whose requirements or template labels define it
 * @param wellKnown labels Skiff sets on nodes without a NodePool defining them (default {@link WELL_KNOWN_LABELS})
 * @returns undefined when the key is defined, well-known, or has no near miss
 * @example labelKeyHint('node-typ', new Map([['node-type', ['general']]]))?.suggestion // 'node-type'
 */
export function labelKeyHint(key: string, definedBy: ReadonlyMap<string, readonly string[]>, wellKnown: ReadonlySet<string> = WELL_KNOWN_LABELS): Hint | undefined {
  if (definedBy.has(key) || wellKnown.has(key)) return undefined;
  const suggestion = closestNearMiss(key, [...definedBy.keys(), ...wellKnown]);
  if (suggestion === undefined) return undefined;
  const nodePools = [...(definedBy.get(suggestion) ?? [])].sort();
  const where = nodePools.length > 0 ? `${poolNames(nodePools)} ${nodePools.length === 1 ? 'defines' : 'define'} ${suggestion}` : `${suggestion} is a well-known label Skiff sets on nodes`;
  return { kind: 'labelKey', typed: key, suggestion, nodePools, message: `did you mean the label ${suggestion}? The pod requires ${key}, which no NodePool defines; ${where}` };
}

/**
 * A hint for a label value the pod requires that no NodePool (nor any instance type of one) offers.
 * @param key the label key
 * @param value the value the pod requires
 * @param offeredBy value → the NodePools that allow it (in their requirements or through their instance types)
 * @returns undefined when the value is offered or has no near miss
 * @example labelValueHint('node-type', 'high-memry', new Map([['high-memory', ['general']]]))?.suggestion // 'high-memory'
 */
export function labelValueHint(key: string, value: string, offeredBy: ReadonlyMap<string, readonly string[]>): Hint | undefined {
  if (offeredBy.has(value)) return undefined;
  // Another value of a closed well-known set is a choice, not a typo (arm64 is not a misspelt amd64), and a real EC2
  // instance type is no typo for another one (the diagnosis says why the EC2NodeClass does not offer it): nearValue.
  const suggestion = nearValue(key, value, offeredBy.keys());
  if (suggestion === undefined) return undefined;
  const nodePools = [...(offeredBy.get(suggestion) ?? [])].sort();
  return {
    kind: 'labelValue',
    typed: value,
    suggestion,
    nodePools,
    message: `did you mean ${key}=${suggestion}? The pod requires ${key}=${value}, which no NodePool offers; ${poolNames(nodePools)} ${nodePools.length === 1 ? 'offers' : 'offer'} ${key}=${suggestion}`,
  };
}

/**
 * A hint for a taint the pod does not tolerate although one of its tolerations nearly matches: a key one typo away,
 * the right key with a value one typo away, or the right key and value with another effect.
 * @param taint a taint of `nodePool` the pod does not tolerate
 * @param tolerations the pod's tolerations
 * @param nodePool the name of the NodePool whose template carries the taint
 * @returns undefined when no toleration nearly matches, or when the taint is in fact tolerated
 * @example tolerationHint({ key: 'nvidia.com/gpu', effect: 'NoSchedule' }, [{ key: 'nvidia.com/gpus', operator: 'Exists' }], 'gpu')?.suggestion // 'nvidia.com/gpu'
 */
export function tolerationHint(taint: Taint, tolerations: readonly Toleration[], nodePool: string): Hint | undefined {
  if (tolerations.some((t) => tolerates(t, taint))) return undefined;
  const shown = formatTaint(taint);
  const sameKey = tolerations.filter((t) => t.key === taint.key);
  for (const t of sameKey) {
    const valueMatches = t.operator === 'Exists' || (t.value ?? '') === (taint.value ?? '');
    if (valueMatches && t.effect && t.effect !== taint.effect) {
      return {
        kind: 'tolerationEffect',
        typed: t.effect,
        suggestion: taint.effect,
        nodePools: [nodePool],
        taint,
        message: `did you mean effect ${taint.effect}? The pod tolerates ${taint.key} with effect ${t.effect}, but NodePool ${nodePool}'s taint is ${shown}`,
      };
    }
    if (!valueMatches && taint.value !== undefined && isNearMiss(t.value ?? '', taint.value)) {
      return {
        kind: 'tolerationValue',
        typed: t.value ?? '',
        suggestion: taint.value,
        nodePools: [nodePool],
        taint,
        message: `did you mean the value ${taint.value}? The pod tolerates ${taint.key}=${t.value ?? ''}, but NodePool ${nodePool}'s taint is ${shown}`,
      };
    }
  }
  const keys = tolerations.map((t) => t.key).filter((k): k is string => !!k && k !== taint.key);
  const typed = keys.find((k) => closestNearMiss(k, [taint.key]) !== undefined);
  if (typed === undefined) return undefined;
  return {
    kind: 'tolerationKey',
    typed,
    suggestion: taint.key,
    nodePools: [nodePool],
    taint,
    message: `did you mean to tolerate ${taint.key}? The pod tolerates ${typed}, but NodePool ${nodePool}'s taint is ${shown}`,
  };
}

/**
 * Every "did you mean" hint for a pod against a set of NodePools, without duplicates, in a stable order: label keys
 * and values (over every requirement alternative of the pod), then tolerations (NodePools in the order given).
 * Only requirements the pod needs to be met are checked (`NotIn` and `DoesNotExist` never need a NodePool), and a
 * value only when none of the values the requirement allows is offered anywhere.
 * @param pod the pending pod
 * @param templates the NodePools (their requirements include template labels; their instance types are the ones
 *   the NodePool allows)
 */
export function podHints(pod: SchedulingPod, templates: readonly NodePoolTemplate[]): Hint[] {
  const definedBy = new Map<string, string[]>();
  for (const t of templates) for (const key of t.requirements.keys()) definedBy.set(key, [...(definedBy.get(key) ?? []), t.name]);
  const hints: Hint[] = [];
  for (const alternative of pod.requirementAlternatives) {
    for (const requirement of alternative.values()) {
      if (requirement.allowsAbsence()) continue;
      const key = requirement.key;
      const keyHint = labelKeyHint(key, definedBy);
      if (keyHint) {
        hints.push(keyHint);
        continue;
      }
      if (requirement.complement || requirement.values.size === 0) continue;
      const offeredBy = valuesOffered(key, templates);
      if ([...requirement.values].some((v) => offeredBy.has(v))) continue;
      for (const value of requirement.sortedValues()) {
        const valueHint = labelValueHint(key, value, offeredBy);
        if (valueHint) hints.push(valueHint);
      }
    }
  }
  for (const t of templates) {
    for (const taint of t.taints) {
      if (taint.effect === 'PreferNoSchedule') continue;
      const hint = tolerationHint(taint, pod.tolerations, t.name);
      if (hint) hints.push(hint);
    }
  }
  const seen = new Set<string>();
  return hints.filter((h) => !seen.has(h.message) && seen.add(h.message));
}

/**
 * Values of `key` each NodePool offers: the finite `In` values of its requirements (template labels included) and,
 * where its requirements leave the key open, the values its instance types carry (zones and capacity types from
 * their offerings).
 */
function valuesOffered(key: string, templates: readonly NodePoolTemplate[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const offer = (value: string, pool: string) => {
    const pools = out.get(value) ?? [];
    if (!pools.includes(pool)) out.set(value, [...pools, pool]);
  };
  for (const t of templates) {
    const r = t.requirements.get(key);
    for (const value of typeValues(t, key)) if (r.has(value)) offer(value, t.name);
    if (!r.complement) for (const value of r.values) offer(value, t.name);
  }
  return out;
}

/** Values of `key` across a template's instance types, computed once per template and key. */
const typeValuesCache = new WeakMap<NodePoolTemplate, Map<string, readonly string[]>>();
function typeValues(t: NodePoolTemplate, key: string): readonly string[] {
  let byKey = typeValuesCache.get(t);
  if (!byKey) {
    byKey = new Map();
    typeValuesCache.set(t, byKey);
  }
  let values = byKey.get(key);
  if (!values) {
    const set = new Set<string>();
    for (const it of t.instanceTypes) {
      if (key === LABEL_ZONE) for (const o of it.offerings) set.add(o.zone);
      else if (key === LABEL_CAPACITY_TYPE) for (const o of it.offerings) set.add(o.capacityType);
      else if (ownValue(it.labels, key) !== undefined) set.add(it.labels[key]!);
    }
    values = [...set];
    byKey.set(key, values);
  }
  return values;
}

/** `NodePool a`, `NodePools a and b`, `NodePools a, b and c`. */
function poolNames(pools: readonly string[]): string {
  if (pools.length <= 1) return `NodePool ${pools[0] ?? ''}`.trimEnd();
  return `NodePools ${pools.slice(0, -1).join(', ')} and ${pools[pools.length - 1]}`;
}
