/**
 * Prices from AWS, as Karpenter's AWS provider fetches them (aws/karpenter-provider-aws
 * `pkg/providers/pricing/pricing.go`): on-demand list prices from the Price List Query API (`GetProducts`), spot
 * prices from EC2 `DescribeSpotPriceHistory`. SDK failures leave as Skiff errors (`awsError` of `sdk-errors.ts`:
 * throttling → `ThrottledError`, anything else → `CloudProviderError` with the AWS error code); nothing here stores
 * or caches (see `price-store.ts`).
 */
import { paginateDescribeSpotPriceHistory, type EC2Client } from '@aws-sdk/client-ec2';
import { PricingClient, paginateGetProducts, type Filter, type PricingClientConfig } from '@aws-sdk/client-pricing';
import { awsError } from './sdk-errors.js';

/** On-demand prices: instance type → USD per instance-hour (CNY in China regions, see {@link priceCurrency}). */
export type OnDemandPrices = ReadonlyMap<string, number>;

/** Spot prices: instance type → availability zone name → USD per instance-hour. */
export type SpotPrices = ReadonlyMap<string, ReadonlyMap<string, number>>;

/**
 * The region whose Price List Query API endpoint serves `region`'s prices: `ap-south-1` for `ap-*`, `eu-central-1`
 * for `eu-*`, `cn-northwest-1` for `cn-*`, else `us-east-1`. Any endpoint returns every region's prices; these are
 * the nearest ones that exist.
 *
 * Source: aws `pkg/providers/pricing/pricing.go NewAPI`; AWS Billing User Guide, "Using the AWS Price List Query API"
 * (endpoints `api.pricing.{us-east-1,eu-central-1,ap-south-1}.amazonaws.com`).
 * @param region the cluster's region, e.g. `eu-west-1`
 * @example pricingApiRegion('eu-west-1') // 'eu-central-1'
 */
export function pricingApiRegion(region: string): string {
  if (region.startsWith('ap-')) return 'ap-south-1';
  if (region.startsWith('eu-')) return 'eu-central-1';
  if (region.startsWith('cn-')) return 'cn-northwest-1';
  return 'us-east-1';
}

/**
 * A Pricing client on the endpoint that serves `region` ({@link pricingApiRegion}).
 * @param region the cluster's region (not the endpoint's)
 * @param config any other client settings (credentials, retries); `region` is always overridden
 * @example const pricing = createPricingClient('ap-southeast-2'); // talks to ap-south-1
 */
export function createPricingClient(region: string, config: Omit<PricingClientConfig, 'region'> = {}): PricingClient {
  return new PricingClient({ ...config, region: pricingApiRegion(region) });
}

/** The currency `GetProducts` prices `region` in: `CNY` in China regions, else `USD`. Source: aws `pricing.go onDemandPage`. */
export function priceCurrency(region: string): 'USD' | 'CNY' {
  return region.startsWith('cn-') ? 'CNY' : 'USD';
}

/** A `TERM_MATCH` filter (the only type Karpenter uses). */
const term = (field: string, value: string): Filter => ({ Type: 'TERM_MATCH', Field: field, Value: value });

/**
 * The `GetProducts` filter sets {@link fetchOnDemandPrices} sends, one query each: shared-tenancy compute instances,
 * and bare-metal instances (which the Price List files under `Dedicated` tenancy and product family
 * `Compute Instance (bare metal)`). Both also match region, `operatingSystem=Linux`, `preInstalledSw=NA`,
 * `capacitystatus=Used` (the price of a running instance, not of an unused reservation) and `marketoption=OnDemand`.
 *
 * Source: aws `pricing.go UpdateOnDemandPricing`/`fetchOnDemandPricing`; attribute names as `DescribeServices`
 * lists them for `AmazonEC2` (AWS Billing User Guide, "Offer file definitions").
 * @param region the cluster's region code, e.g. `us-west-2`
 */
export function onDemandPriceFilters(region: string): readonly (readonly Filter[])[] {
  const common = [
    term('regionCode', region),
    term('serviceCode', 'AmazonEC2'),
    term('preInstalledSw', 'NA'),
    term('operatingSystem', 'Linux'),
    term('capacitystatus', 'Used'),
    term('marketoption', 'OnDemand'),
  ];
  return [
    [...common, term('tenancy', 'Shared'), term('productFamily', 'Compute Instance')],
    [...common, term('tenancy', 'Dedicated'), term('productFamily', 'Compute Instance (bare metal)')],
  ];
}

/**
 * On-demand Linux prices of every instance type in `region`: `GetProducts` (`ServiceCode=AmazonEC2`, the filter
 * sets of {@link onDemandPriceFilters}), every page, each `PriceList` entry parsed by {@link parsePriceList}. When
 * both queries price a type, the bare-metal query wins (it only returns `*.metal*` types).
 * @param pricing a Pricing client, normally from {@link createPricingClient} (any endpoint answers for any region)
 * @param region the cluster's region code, e.g. `us-west-2`
 * @returns instance type → USD per instance-hour (CNY in China regions); possibly empty
 * @throws {ThrottledError} when the API throttles past the SDK's retries
 * @throws {CloudProviderError} on any other API failure (`code` is the SDK error name)
 * @example
 * const prices = await fetchOnDemandPrices(createPricingClient('us-west-2'), 'us-west-2');
 * prices.get('m5.large') // 0.096
 */
export async function fetchOnDemandPrices(pricing: PricingClient, region: string): Promise<Map<string, number>> {
  const prices = new Map<string, number>();
  const currency = priceCurrency(region);
  for (const filters of onDemandPriceFilters(region)) {
    try {
      for await (const page of paginateGetProducts({ client: pricing }, { ServiceCode: 'AmazonEC2', Filters: [...filters] })) {
        for (const [type, price] of parsePriceList(page.PriceList ?? [], currency)) prices.set(type, price);
      }
    } catch (error) {
      throw awsError(error, 'pricing:GetProducts');
    }
  }
  return prices;
}

/**
 * Reads on-demand prices out of `GetProducts` `PriceList` entries. Each entry is a JSON document
 * `{ product: { attributes: { instanceType, … } }, terms: { OnDemand: { <sku.offerTermCode>: { priceDimensions:
 * { <sku.offerTermCode.rateCode>: { unit: 'Hrs', pricePerUnit: { USD: '0.0960000000' } } } } } } }` (AWS Billing
 * User Guide, "Reading the service price list file"). Entries that are not JSON, have no `instanceType`, or have no
 * positive price in `currency` are skipped, as Karpenter skips them; when an entry has several dimensions the last
 * positive one wins, and so does the last entry for a type.
 *
 * Source: aws `pricing.go onDemandPage`.
 * @param priceList the `PriceList` strings of one or more pages
 * @param currency the `pricePerUnit` key to read @default 'USD'
 * @returns instance type → price per instance-hour
 */
export function parsePriceList(priceList: readonly string[], currency = 'USD'): Map<string, number> {
  const prices = new Map<string, number>();
  for (const entry of priceList) {
    let document: unknown;
    try {
      document = JSON.parse(entry);
    } catch {
      continue;
    }
    const instanceType = field(field(field(document, 'product'), 'attributes'), 'instanceType');
    if (typeof instanceType !== 'string' || instanceType === '') continue;
    for (const offerTerm of values(field(field(document, 'terms'), 'OnDemand'))) {
      for (const dimension of values(field(offerTerm, 'priceDimensions'))) {
        const text = field(field(dimension, 'pricePerUnit'), currency);
        const price = typeof text === 'string' && text.trim() !== '' ? Number(text) : Number.NaN;
        if (Number.isFinite(price) && price > 0) prices.set(instanceType, price);
      }
    }
  }
  return prices;
}

/**
 * The `ProductDescriptions` {@link fetchSpotPrices} asks for: Linux in EC2-Classic and in a VPC (Karpenter's pair).
 * Source: aws `pricing.go UpdateSpotPricing`.
 */
export const SPOT_PRODUCT_DESCRIPTIONS = ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'] as const;

/**
 * Current spot prices of every instance type in every zone of the client's region: `DescribeSpotPriceHistory` with
 * {@link SPOT_PRODUCT_DESCRIPTIONS} and `StartTime = now` (which returns the price in effect at `now` for each pool),
 * every page. When a (type, zone) appears more than once (one record per product description, or several
 * timestamps), the record with the newest `Timestamp` wins, and on equal timestamps the later one in API order.
 * Records without a type, zone, timestamp or a positive numeric price are skipped.
 *
 * Source: aws `pricing.go UpdateSpotPricing`/`spotPage`.
 * @param ec2 an EC2 client in the cluster's region
 * @param now epoch ms (UTC), from the clock port
 * @returns instance type → zone → USD per instance-hour; possibly empty
 * @throws {ThrottledError} when the API throttles past the SDK's retries
 * @throws {CloudProviderError} on any other API failure
 * @example
 * const spot = await fetchSpotPrices(ec2, clock.now());
 * spot.get('m5.large')?.get('us-west-2a') // 0.0374
 */
export async function fetchSpotPrices(ec2: EC2Client, now: number): Promise<Map<string, Map<string, number>>> {
  const newest = new Map<string, Map<string, { price: number; at: number }>>();
  try {
    const pages = paginateDescribeSpotPriceHistory({ client: ec2 }, { ProductDescriptions: [...SPOT_PRODUCT_DESCRIPTIONS], StartTime: new Date(now) });
    for await (const page of pages) {
      for (const record of page.SpotPriceHistory ?? []) {
        const type = record.InstanceType as string | undefined;
        const zone = record.AvailabilityZone;
        const at = record.Timestamp?.getTime();
        const price = record.SpotPrice === undefined || record.SpotPrice.trim() === '' ? Number.NaN : Number(record.SpotPrice);
        if (!type || !zone || at === undefined || Number.isNaN(at) || !Number.isFinite(price) || price <= 0) continue;
        const zones = newest.get(type) ?? new Map<string, { price: number; at: number }>();
        newest.set(type, zones);
        const seen = zones.get(zone);
        if (!seen || at >= seen.at) zones.set(zone, { price, at });
      }
    }
  } catch (error) {
    throw awsError(error, 'ec2:DescribeSpotPriceHistory');
  }
  return new Map([...newest].map(([type, zones]) => [type, new Map([...zones].map(([zone, p]) => [zone, p.price]))]));
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
}

function values(value: unknown): unknown[] {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.values(value) : [];
}
