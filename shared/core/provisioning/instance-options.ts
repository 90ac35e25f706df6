/**
 * Instance options: the instance types a NodeClaim could launch as, each priced by its cheapest offering the
 * NodeClaim's requirements allow (USD/hour) and kept cheapest first, with the fit checks, the largest allocatable
 * and the final instance-type list a planned NodeClaim carries (at most {@link MAX_INSTANCE_TYPES}, Karpenter's
 * `MaxInstanceTypes`, kubernetes-sigs/karpenter `pkg/controllers/provisioning/scheduling/nodeclaim.go`).
 */
import { LABEL_INSTANCE_TYPE } from '../api/labels.js';
import { cheapestOffering, type InstanceType } from '../instancetypes/offering.js';
import { fits, type ResourceList } from '../resources/resource-list.js';
import { Requirement } from '../scheduling/requirement.js';
import type { Requirements } from '../scheduling/requirements.js';
import type { NodePoolTemplate } from './types.js';
import { typeValueBits } from './value-bits.js';

/** Karpenter's `MaxInstanceTypes`: the most instance types a NodeClaim carries. */
export const MAX_INSTANCE_TYPES = 600;

/** An instance type with the price of its cheapest offering a NodeClaim's requirements allow (USD/hour). */
export class PricedType {
  /** The type's allocatable cpu (millicores), memory (MiB) and pods, copied for the hot fit checks. */
  readonly cpu: number;
  readonly memory: number;
  readonly pods: number;
  /** The type's other allocatable resources (extended resources, storage), canonical units. */
  readonly extras: readonly (readonly [string, number])[];
  /** The label key `bits` was computed for, and the type's value bits on it (see {@link typeValueBits}). */
  private bitsKey: string | undefined;
  private bits: number | undefined;

  constructor(
    readonly type: InstanceType,
    /** USD/hour. */
    readonly price: number,
  ) {
    this.cpu = type.allocatable.cpu ?? 0;
    this.memory = type.allocatable.memory ?? 0;
    this.pods = type.allocatable.pods ?? 0;
    this.extras = extraAllocatable(type);
  }

  /** `typeValueBits(this.type, key)`, remembered for the last key asked (solves use one or two keys). */
  valueBits(key: string): number | undefined {
    if (this.bitsKey !== key) [this.bitsKey, this.bits] = [key, typeValueBits(this.type, key)];
    return this.bits;
  }
}

/**
 * `(o) => fits(requests, o.type.allocatable)`: over the copied columns when `requests` asks only for cpu, memory and
 * pods (the usual case), else the generic check.
 */
export function fitter(requests: ResourceList): (o: PricedType) => boolean {
  for (const k in requests) if (k !== 'cpu' && k !== 'memory' && k !== 'pods' && requests[k]! > FIT_EPSILON) return (o) => fits(requests, o.type.allocatable);
  const [c, m, p] = [requests.cpu ?? 0, requests.memory ?? 0, requests.pods ?? 0];
  return (o) => !((c > FIT_EPSILON && c > o.cpu + FIT_EPSILON) || (m > FIT_EPSILON && m > o.memory + FIT_EPSILON) || (p > FIT_EPSILON && p > o.pods + FIT_EPSILON));
}

/**
 * The instance types `requirements` allow, with an available offering, priced and sorted cheapest first
 * (ties by name). The order lets the cheapest type that fits some requests be found by a short scan.
 */
export function pricedOptions(types: readonly (InstanceType | PricedType)[], requirements: Requirements): PricedType[] {
  const out: PricedType[] = [];
  for (const x of types) {
    const type = 'type' in x ? x.type : x;
    if (requirements.intersects(type.requirements) !== undefined) continue;
    const offering = cheapestOffering(type, requirements);
    if (offering) out.push(new PricedType(type, offering.price));
  }
  return out.sort(byPrice);
}

/** {@link optionsOf}'s answers per template object. */
const templateOptions = new WeakMap<NodePoolTemplate, PricedType[]>();

/** Options of a template, priced under its own requirements, computed once per template object. */
export function optionsOf(template: NodePoolTemplate): PricedType[] {
  let options = templateOptions.get(template);
  if (!options) {
    options = pricedOptions(template.instanceTypes, template.requirements);
    templateOptions.set(template, options);
  }
  return options;
}

/** {@link largestAllocatable}'s answers per options array. */
const largest = new WeakMap<readonly PricedType[], ResourceList>();

/** The allocatable entries of an instance type other than cpu, memory and pods (see `PricedType.extras`), once per type. */
const extraLists = new WeakMap<InstanceType, readonly (readonly [string, number])[]>();
function extraAllocatable(type: InstanceType): readonly (readonly [string, number])[] {
  let list = extraLists.get(type);
  if (!list) extraLists.set(type, (list = Object.entries(type.allocatable).filter(([k]) => k !== 'cpu' && k !== 'memory' && k !== 'pods')));
  return list;
}

/** Key-wise maximum of the options' allocatable (canonical units), computed once per options array. */
export function largestAllocatable(options: readonly PricedType[]): ResourceList {
  let out = largest.get(options);
  if (!out) {
    // Only positive maxima are kept (a missing key reads as 0); cpu, memory and pods come from the columns.
    let [cpu, memory, pods] = [0, 0, 0];
    const acc: Record<string, number> = {};
    for (const o of options) {
      if (o.cpu > cpu) cpu = o.cpu;
      if (o.memory > memory) memory = o.memory;
      if (o.pods > pods) pods = o.pods;
      for (const [k, v] of o.extras) if (!(v <= (acc[k] ?? 0))) acc[k] = Math.max(0, v);
    }
    if (cpu > 0) acc.cpu = cpu;
    if (memory > 0) acc.memory = memory;
    if (pods > 0) acc.pods = pods;
    largest.set(options, (out = acc));
  }
  return out;
}

/** Tolerance of `fits` (resource-list.ts). */
export const FIT_EPSILON = 1e-6;

/**
 * `options.filter((o) => fits(requests, o.type.allocatable))` (the same array when all fit), for requests of cpu,
 * memory and pods only; undefined when `requests` has another resource (use the generic path).
 */
export function fittingFast(options: PricedType[], requests: ResourceList): PricedType[] | undefined {
  for (const k in requests) if (k !== 'cpu' && k !== 'memory' && k !== 'pods' && requests[k]! > FIT_EPSILON) return undefined;
  const ok = fitter(requests);
  let i = 0;
  while (i < options.length && ok(options[i]!)) i++;
  if (i === options.length) return options;
  const out = options.slice(0, i);
  for (i++; i < options.length; i++) if (ok(options[i]!)) out.push(options[i]!);
  return out;
}

/** Cheapest first, equal prices by instance type name. */
export function byPrice(a: PricedType, b: PricedType): number {
  return a.price - b.price || a.type.name.localeCompare(b.type.name);
}

/** One instance-type list of {@link finalOptions}, with its requirements per claim requirements object. */
interface FinalList {
  /** The options it was built from (the first {@link MAX_INSTANCE_TYPES} count). */
  readonly head: readonly PricedType[];
  readonly instanceTypes: readonly { name: string; price: number }[];
  readonly byRequirements: WeakMap<Requirements, Requirements>;
}

/** {@link finalOptions}' answers per options array. */
const finals = new WeakMap<readonly PricedType[], FinalList>();

/**
 * The lists one solve pass has built, by a cheap signature: NodeClaims whose options differ only in array identity
 * (or beyond the first {@link MAX_INSTANCE_TYPES}) share one list.
 */
export type FinalLists = Map<string, FinalList[]>;

/** Whether two option lists agree on their first {@link MAX_INSTANCE_TYPES} entries (type and price). */
function sameHead(a: readonly PricedType[], b: readonly PricedType[]): boolean {
  const n = Math.min(a.length, MAX_INSTANCE_TYPES);
  if (Math.min(b.length, MAX_INSTANCE_TYPES) !== n) return false;
  for (let i = 0; i < n; i++) if (a[i]!.type !== b[i]!.type || a[i]!.price !== b[i]!.price) return false;
  return true;
}

/**
 * A planned NodeClaim's instance-type list (its {@link MAX_INSTANCE_TYPES} cheapest options: name and USD/hour) and
 * its requirements with `node.kubernetes.io/instance-type In` that list. Cached per options array and shared, within
 * a pass (`lists`), by NodeClaims with the same list: thousands of NodeClaims share a few lists, and building a
 * 600-entry list (and a 600-value requirement) for each dominated large solves.
 */
export function finalOptions(options: readonly PricedType[], requirements: Requirements, lists: FinalLists): { instanceTypes: readonly { name: string; price: number }[]; requirements: Requirements } {
  let cached = finals.get(options);
  if (!cached) {
    const n = Math.min(options.length, MAX_INSTANCE_TYPES);
    const signature = n === 0 ? '' : `${n}|${options[0]!.type.name}|${options[0]!.price}|${options[n - 1]!.type.name}|${options[n - 1]!.price}`;
    const bucket = lists.get(signature) ?? [];
    cached = bucket.find((l) => sameHead(l.head, options));
    if (!cached) {
      const instanceTypes = options.slice(0, MAX_INSTANCE_TYPES).map((o) => ({ name: o.type.name, price: o.price }));
      cached = { head: options, instanceTypes, byRequirements: new WeakMap() };
      bucket.push(cached);
      lists.set(signature, bucket);
    }
    finals.set(options, cached);
  }
  let withTypes = cached.byRequirements.get(requirements);
  if (!withTypes) {
    withTypes = requirements.add(Requirement.in(LABEL_INSTANCE_TYPE, cached.instanceTypes.map((o) => o.name)));
    cached.byRequirements.set(requirements, withTypes);
  }
  return { instanceTypes: cached.instanceTypes, requirements: withTypes };
}
