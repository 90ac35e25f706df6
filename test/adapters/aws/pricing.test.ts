import { DescribeSpotPriceHistoryCommand, EC2Client, type SpotPrice } from '@aws-sdk/client-ec2';
import { GetProductsCommand, PricingClient, type GetProductsCommandInput } from '@aws-sdk/client-pricing';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  SPOT_PRODUCT_DESCRIPTIONS,
  createPricingClient,
  fetchOnDemandPrices,
  fetchSpotPrices,
  onDemandPriceFilters,
  parsePriceList,
  pricingApiRegion,
} from '../../../shared/adapters/aws/pricing.js';
import { ThrottledError } from '../../../shared/core/errors.js';
import { instanceTypeByName } from '../../../shared/core/instancetypes/catalog.js';

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
const T0 = Date.parse('2026-01-01T00:00:00Z');

/** The shipped catalogue's us-east-1 list price of a type, USD/hour (so the fixtures carry real prices). */
const listPrice = (type: string): number => {
  const price = instanceTypeByName(type)?.onDemandPrice;
  if (price === undefined || price === null) throw new Error(`no catalogue price for ${type}`);
  return price;
};

/**
 * One `GetProducts` `PriceList` entry in the documented shape (AWS Billing User Guide, "Reading the service price
 * list file"): a product with its attributes, OnDemand and Reserved terms keyed by `sku.offerTermCode`, price
 * dimensions keyed by `sku.offerTermCode.rateCode`, prices as 10-decimal strings.
 */
function priceListEntry(args: {
  instanceType: string;
  price: number;
  region?: string;
  currency?: string;
  tenancy?: 'Shared' | 'Dedicated';
  productFamily?: string;
  reservedPrice?: number;
}): string {
  const sku = `SKU${args.instanceType.replace(/[^a-z0-9]/g, '').toUpperCase()}`;
  const onDemand = `${sku}.JRTCKXETXF`;
  const reserved = `${sku}.4NA7Y494T4`;
  return JSON.stringify({
    product: {
      productFamily: args.productFamily ?? 'Compute Instance',
      attributes: {
        servicecode: 'AmazonEC2',
        regionCode: args.region ?? 'us-west-2',
        location: 'US West (Oregon)',
        locationType: 'AWS Region',
        instanceType: args.instanceType,
        instanceFamily: 'General purpose',
        currentGeneration: 'Yes',
        vcpu: '2',
        memory: '8 GiB',
        operatingSystem: 'Linux',
        licenseModel: 'No License required',
        preInstalledSw: 'NA',
        tenancy: args.tenancy ?? 'Shared',
        capacitystatus: 'Used',
        marketoption: 'OnDemand',
        operation: 'RunInstances',
        usagetype: `USW2-BoxUsage:${args.instanceType}`,
      },
      sku,
    },
    serviceCode: 'AmazonEC2',
    terms: {
      OnDemand: {
        [onDemand]: {
          offerTermCode: 'JRTCKXETXF',
          sku,
          effectiveDate: '2026-01-01T00:00:00Z',
          termAttributes: {},
          priceDimensions: {
            [`${onDemand}.6YS6EN2CT7`]: {
              rateCode: `${onDemand}.6YS6EN2CT7`,
              description: `$${args.price} per On Demand Linux ${args.instanceType} Instance Hour`,
              unit: 'Hrs',
              beginRange: '0',
              endRange: 'Inf',
              appliesTo: [],
              pricePerUnit: { [args.currency ?? 'USD']: args.price.toFixed(10) },
            },
          },
        },
      },
      Reserved: {
        [reserved]: {
          offerTermCode: '4NA7Y494T4',
          sku,
          effectiveDate: '2026-01-01T00:00:00Z',
          termAttributes: { LeaseContractLength: '1yr', OfferingClass: 'standard', PurchaseOption: 'No Upfront' },
          priceDimensions: {
            [`${reserved}.6YS6EN2CT7`]: {
              rateCode: `${reserved}.6YS6EN2CT7`,
              description: 'Linux/UNIX (Amazon VPC), Reserved Instance',
              unit: 'Hrs',
              beginRange: '0',
              endRange: 'Inf',
              appliesTo: [],
              pricePerUnit: { USD: (args.reservedPrice ?? args.price * 0.6).toFixed(10) },
            },
          },
        },
      },
    },
    version: '20260101000000',
    publicationDate: '2026-01-01T00:00:00Z',
  });
}

/** An AWS service error as the SDK raises it (the error code in `name`), once its retries are spent. */
const sdkError = (name: string, message = name): Error => Object.assign(new Error(message), { name, $metadata: {} });

describe('pricing', () => {
  describe('pricingApiRegion', () => {
    it.each([
      ['us-east-1', 'us-east-1'],
      ['us-west-2', 'us-east-1'],
      ['ca-central-1', 'us-east-1'],
      ['sa-east-1', 'us-east-1'],
      ['me-south-1', 'us-east-1'],
      ['ap-south-1', 'ap-south-1'],
      ['ap-southeast-2', 'ap-south-1'],
      ['ap-northeast-1', 'ap-south-1'],
      ['eu-west-1', 'eu-central-1'],
      ['eu-central-1', 'eu-central-1'],
      ['cn-north-1', 'cn-northwest-1'],
    ])('serves %s from the %s endpoint', (region, endpoint) => {
      expect(pricingApiRegion(region)).toBe(endpoint);
    });
  });

  describe('createPricingClient', () => {
    it('configures the client for the endpoint region, whatever region the config names', async () => {
      expect(await createPricingClient('eu-west-1', { credentials }).config.region()).toBe('eu-central-1');
      expect(await createPricingClient('ap-southeast-1', { credentials }).config.region()).toBe('ap-south-1');
      expect(await createPricingClient('us-west-2', { credentials }).config.region()).toBe('us-east-1');
    });
  });

  describe('fetchOnDemandPrices', () => {
    const pricing = new PricingClient({ region: 'us-east-1', credentials });
    const mock = mockClient(pricing);
    beforeEach(() => mock.reset());

    /** Inputs of every GetProducts call, copied at call time (the SDK paginator reuses one input object). */
    const recordCalls = (pages: (input: GetProductsCommandInput) => { PriceList: string[]; NextToken?: string }): GetProductsCommandInput[] => {
      const calls: GetProductsCommandInput[] = [];
      mock.on(GetProductsCommand).callsFake((input: GetProductsCommandInput) => {
        calls.push(structuredClone(input));
        return pages(input);
      });
      return calls;
    };

    it('asks for Linux, shared-tenancy and bare-metal, used-capacity on-demand EC2 prices of the region', async () => {
      const calls = recordCalls(() => ({ PriceList: [] }));
      await fetchOnDemandPrices(pricing, 'us-west-2');
      const common = [
        { Type: 'TERM_MATCH', Field: 'regionCode', Value: 'us-west-2' },
        { Type: 'TERM_MATCH', Field: 'serviceCode', Value: 'AmazonEC2' },
        { Type: 'TERM_MATCH', Field: 'preInstalledSw', Value: 'NA' },
        { Type: 'TERM_MATCH', Field: 'operatingSystem', Value: 'Linux' },
        { Type: 'TERM_MATCH', Field: 'capacitystatus', Value: 'Used' },
        { Type: 'TERM_MATCH', Field: 'marketoption', Value: 'OnDemand' },
      ];
      expect(calls.map((c) => ({ ServiceCode: c.ServiceCode, Filters: c.Filters, NextToken: c.NextToken }))).toEqual([
        {
          ServiceCode: 'AmazonEC2',
          Filters: [...common, { Type: 'TERM_MATCH', Field: 'tenancy', Value: 'Shared' }, { Type: 'TERM_MATCH', Field: 'productFamily', Value: 'Compute Instance' }],
          NextToken: undefined,
        },
        {
          ServiceCode: 'AmazonEC2',
          Filters: [
            ...common,
            { Type: 'TERM_MATCH', Field: 'tenancy', Value: 'Dedicated' },
            { Type: 'TERM_MATCH', Field: 'productFamily', Value: 'Compute Instance (bare metal)' },
          ],
          NextToken: undefined,
        },
      ]);
      expect(onDemandPriceFilters('us-west-2').map((filters) => filters.length)).toEqual([8, 8]);
    });

    it('reads every page of both queries into instance type → USD/hour', async () => {
      const calls = recordCalls((input) => {
        const metal = input.Filters?.some((f) => f.Value === 'Dedicated');
        if (metal) return { PriceList: [priceListEntry({ instanceType: 'm5.metal', price: listPrice('m5.metal'), tenancy: 'Dedicated', productFamily: 'Compute Instance (bare metal)' })] };
        if (input.NextToken === undefined) return { PriceList: [priceListEntry({ instanceType: 'm5.large', price: listPrice('m5.large') })], NextToken: 'page-2' };
        if (input.NextToken === 'page-2') return { PriceList: [priceListEntry({ instanceType: 'c6g.xlarge', price: listPrice('c6g.xlarge') })], NextToken: 'page-3' };
        return { PriceList: [priceListEntry({ instanceType: 'p5.48xlarge', price: listPrice('p5.48xlarge') })] };
      });
      const prices = await fetchOnDemandPrices(pricing, 'us-west-2');
      expect(calls.map((c) => c.NextToken)).toEqual([undefined, 'page-2', 'page-3', undefined]);
      expect(Object.fromEntries(prices)).toEqual({
        'm5.large': 0.096,
        'c6g.xlarge': listPrice('c6g.xlarge'),
        'p5.48xlarge': listPrice('p5.48xlarge'),
        'm5.metal': listPrice('m5.metal'),
      });
    });

    it('reads CNY prices in China regions', async () => {
      recordCalls((input) =>
        input.Filters?.some((f) => f.Value === 'Shared') ? { PriceList: [priceListEntry({ instanceType: 'm5.large', price: 0.82, currency: 'CNY', region: 'cn-north-1' })] } : { PriceList: [] },
      );
      expect(Object.fromEntries(await fetchOnDemandPrices(pricing, 'cn-north-1'))).toEqual({ 'm5.large': 0.82 });
    });

    it('turns throttling into ThrottledError and other failures into CloudProviderError', async () => {
      mock.on(GetProductsCommand).rejects(sdkError('ThrottlingException', 'Rate exceeded'));
      await expect(fetchOnDemandPrices(pricing, 'us-west-2')).rejects.toBeInstanceOf(ThrottledError);
      mock.on(GetProductsCommand).rejects(sdkError('AccessDeniedException', 'not authorized to perform: pricing:GetProducts'));
      await expect(fetchOnDemandPrices(pricing, 'us-west-2')).rejects.toMatchObject({ name: 'CloudProviderError', code: 'AccessDeniedException' });
    });
  });

  describe('parsePriceList', () => {
    it('takes the OnDemand price and ignores Reserved terms', () => {
      expect(parsePriceList([priceListEntry({ instanceType: 'm5.large', price: 0.096, reservedPrice: 0.06 })])).toEqual(new Map([['m5.large', 0.096]]));
    });

    it('skips entries that are not JSON, have no instance type, or have no positive price in the currency', () => {
      const noType = JSON.parse(priceListEntry({ instanceType: 'x', price: 1 })) as { product: { attributes: Record<string, unknown> } };
      delete noType.product.attributes.instanceType;
      const entries = [
        '{not json',
        JSON.stringify(noType),
        priceListEntry({ instanceType: 'm5.xlarge', price: 0 }),
        priceListEntry({ instanceType: 'm5.2xlarge', price: 0.384, currency: 'CNY' }),
        priceListEntry({ instanceType: 'm5.large', price: 0.096 }),
      ];
      expect(parsePriceList(entries)).toEqual(new Map([['m5.large', 0.096]]));
      expect(parsePriceList(entries, 'CNY')).toEqual(new Map([['m5.2xlarge', 0.384]]));
    });
  });

  describe('fetchSpotPrices', () => {
    const ec2 = new EC2Client({ region: 'us-west-2', credentials });
    const mock = mockClient(ec2);
    beforeEach(() => mock.reset());
    const record = (type: string, zone: string, price: string, at: number, description = 'Linux/UNIX'): SpotPrice => ({
      InstanceType: type as SpotPrice['InstanceType'],
      AvailabilityZone: zone,
      ProductDescription: description as SpotPrice['ProductDescription'],
      SpotPrice: price,
      Timestamp: new Date(at),
    });

    it('asks for both Linux product descriptions at StartTime = now', async () => {
      const inputs: unknown[] = [];
      mock.on(DescribeSpotPriceHistoryCommand).callsFake((input: unknown) => {
        inputs.push(structuredClone(input));
        return { SpotPriceHistory: [] };
      });
      await fetchSpotPrices(ec2, T0);
      expect(inputs).toEqual([{ ProductDescriptions: ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'], StartTime: new Date(T0), NextToken: undefined, MaxResults: undefined }]);
      expect(SPOT_PRODUCT_DESCRIPTIONS).toEqual(['Linux/UNIX', 'Linux/UNIX (Amazon VPC)']);
    });

    it('keeps the newest price per instance type and zone across pages and product descriptions', async () => {
      mock
        .on(DescribeSpotPriceHistoryCommand)
        .resolvesOnce({
          SpotPriceHistory: [
            record('m5.large', 'us-west-2a', '0.0400', T0 - 60_000),
            record('m5.large', 'us-west-2b', '0.0380', T0 - 30_000),
            record('c6g.xlarge', 'us-west-2a', '0.0610', T0 - 10_000),
          ],
          NextToken: 'page-2',
        })
        .resolvesOnce({
          SpotPriceHistory: [
            record('m5.large', 'us-west-2a', '0.0374', T0 - 5_000, 'Linux/UNIX (Amazon VPC)'),
            record('m5.large', 'us-west-2b', '0.0999', T0 - 90_000, 'Linux/UNIX (Amazon VPC)'),
          ],
        });
      const spot = await fetchSpotPrices(ec2, T0);
      expect(mock.commandCalls(DescribeSpotPriceHistoryCommand)).toHaveLength(2);
      expect(spot).toEqual(
        new Map([
          ['m5.large', new Map([['us-west-2a', 0.0374], ['us-west-2b', 0.038]])],
          ['c6g.xlarge', new Map([['us-west-2a', 0.061]])],
        ]),
      );
    });

    it('on equal timestamps takes the later record in API order', async () => {
      mock.on(DescribeSpotPriceHistoryCommand).resolves({
        SpotPriceHistory: [record('m5.large', 'us-west-2a', '0.0400', T0), record('m5.large', 'us-west-2a', '0.0410', T0, 'Linux/UNIX (Amazon VPC)')],
      });
      expect((await fetchSpotPrices(ec2, T0)).get('m5.large')?.get('us-west-2a')).toBe(0.041);
    });

    it('skips records without a type, zone, timestamp or positive price', async () => {
      mock.on(DescribeSpotPriceHistoryCommand).resolves({
        SpotPriceHistory: [
          { AvailabilityZone: 'us-west-2a', SpotPrice: '0.04', Timestamp: new Date(T0) },
          { InstanceType: 'm5.large', SpotPrice: '0.04', Timestamp: new Date(T0) },
          { InstanceType: 'm5.large', AvailabilityZone: 'us-west-2a', SpotPrice: '0.04' },
          record('m5.large', 'us-west-2b', 'n/a', T0),
          record('m5.large', 'us-west-2c', '0', T0),
          record('m5.large', 'us-west-2d', '0.0370', T0),
        ],
      });
      expect(await fetchSpotPrices(ec2, T0)).toEqual(new Map([['m5.large', new Map([['us-west-2d', 0.037]])]]));
    });

    it('turns RequestLimitExceeded into ThrottledError and other failures into CloudProviderError', async () => {
      mock.on(DescribeSpotPriceHistoryCommand).rejects(sdkError('RequestLimitExceeded'));
      await expect(fetchSpotPrices(ec2, T0)).rejects.toBeInstanceOf(ThrottledError);
      mock.on(DescribeSpotPriceHistoryCommand).rejects(sdkError('UnauthorizedOperation'));
      await expect(fetchSpotPrices(ec2, T0)).rejects.toMatchObject({ name: 'CloudProviderError', code: 'UnauthorizedOperation' });
    });
  });
});
