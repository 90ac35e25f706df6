import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCatalog, CATALOG_FACTS_PATH, CATALOG_PATH, formatCatalog, formatCatalogFacts, PRICE_NOTE, readSources, referenceDataDir, REPO_ROOT } from '../../../scripts/build-catalog.js';
import { decodeCatalogFacts, shippedInstanceType, shippedInstanceTypes } from '../../../shared/core/instancetypes/catalog-facts.js';
import { ValidationError } from '../../../shared/core/errors.js';
import { catalogHeader, instanceTypeByName, loadCatalog, validateCatalog } from '../../../shared/core/instancetypes/catalog.js';
import { CATALOG_FORMAT_MAGIC, decodeCatalogText, encodeCatalogText } from '../../../shared/core/instancetypes/catalog-format.js';

/** Types the us-east-1 price table has no entry for. */
const WITHOUT_PRICE = [
  'dl2q.24xlarge',
  'hpc6a.48xlarge',
  'hpc6id.32xlarge',
  'hpc7a.12xlarge',
  'hpc7a.24xlarge',
  'hpc7a.48xlarge',
  'hpc7a.96xlarge',
  'hpc8a.96xlarge',
  'p5e.48xlarge',
  'trn2.48xlarge',
  'x8aedz.12xlarge',
  'x8aedz.24xlarge',
  'x8aedz.3xlarge',
  'x8aedz.6xlarge',
  'x8aedz.large',
  'x8aedz.metal-12xl',
  'x8aedz.metal-24xl',
  'x8aedz.xlarge',
];

describe('catalog', () => {
  describe('loadCatalog', () => {
    it('holds all 1,363 instance types, sorted by name, each once', () => {
      const names = loadCatalog().map((t) => t.name);
      expect(names).toHaveLength(1363);
      expect(new Set(names).size).toBe(names.length);
      expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    });

    it('returns the same frozen array on every call', () => {
      const first = loadCatalog();
      expect(loadCatalog()).toBe(first);
      expect(Object.isFrozen(first)).toBe(true);
      expect(Object.isFrozen(first[0]?.labels)).toBe(true);
    });

    it('has an on-demand price for every type but the 18 the price table lacks', () => {
      const missing = loadCatalog()
        .filter((t) => t.onDemandPrice === null)
        .map((t) => t.name);
      expect(missing).toEqual(WITHOUT_PRICE);
    });

    it('carries Karpenter labels that agree with the row fields', () => {
      for (const type of loadCatalog()) {
        expect(type.labels['node.kubernetes.io/instance-type']).toBe(type.name);
        expect(type.labels['karpenter.k8s.aws/instance-cpu']).toBe(String(type.vcpu));
        expect(type.labels['karpenter.k8s.aws/instance-memory']).toBe(String(type.memoryMiB));
        expect(type.labels['kubernetes.io/arch']).toBe(type.arch);
      }
    });
  });

  describe('instanceTypeByName', () => {
    it('finds m5.large with its facts, price and Karpenter allocatable', () => {
      expect(instanceTypeByName('m5.large')).toMatchObject({
        vcpu: 2,
        memoryMiB: 8192,
        arch: 'amd64',
        os: 'linux',
        gpu: null,
        accelerator: null,
        extendedResources: { 'vpc.amazonaws.com/pod-eni': 9 },
        defaultMaxENIs: 3,
        ipv4AddressesPerInterface: 10,
        onDemandPrice: 0.096,
        karpenterAllocatable: { cpu: 1930, memory: 6903, 'ephemeral-storage': 17408, pods: 29 },
      });
    });

    it('describes GPUs and accelerators', () => {
      expect(instanceTypeByName('p4d.24xlarge')?.gpu).toEqual({ name: 'a100', manufacturer: 'nvidia', count: 8, memoryMiB: 40960 });
      expect(instanceTypeByName('p4d.24xlarge')?.extendedResources['nvidia.com/gpu']).toBe(8);
      expect(instanceTypeByName('g4ad.xlarge')?.extendedResources['amd.com/gpu']).toBe(1);
      expect(instanceTypeByName('inf2.xlarge')?.accelerator).toEqual({ name: 'inferentia2', manufacturer: 'aws', count: 1 });
      expect(instanceTypeByName('inf2.xlarge')?.extendedResources).toMatchObject({ 'aws.amazon.com/neuron': 1, 'aws.amazon.com/neuroncore': 2 });
    });

    it('returns a null price when the price table lacks the type', () => {
      expect(instanceTypeByName('p5e.48xlarge')?.onDemandPrice).toBeNull();
    });

    it('returns undefined for an unknown type', () => {
      expect(instanceTypeByName('m99.huge')).toBeUndefined();
    });
  });

  describe('catalogHeader', () => {
    it('names sources, licences, the source date and the price note', () => {
      const header = catalogHeader();
      expect(header.note).toBe('on-demand prices are us-east-1 list prices, also used for us-east-2 and us-west-2');
      expect(header.sourceDate).toBe('2026-08-21');
      expect(header.counts).toEqual({ instanceTypes: 1363, withoutPrice: 18 });
      expect(header.sources.map((s) => [s.file, s.licence])).toEqual([
        ['ec2-instance-types.json', 'Apache-2.0'],
        ['ec2-on-demand-prices-us-east-1.json', 'Apache-2.0'],
        ['eni-limits.jsonl', 'MIT-0 style (Amazon)'],
      ]);
    });
  });

  describe('validateCatalog', () => {
    it('rejects something that is not a catalogue', () => {
      expect(() => validateCatalog([])).toThrow(ValidationError);
    });

    it('lists every bad row field with its path', () => {
      const bad = { header: { schemaVersion: 1 }, instanceTypes: [{ name: '', vcpu: -1, arch: 'x86', onDemandPrice: 'cheap' }] };
      try {
        validateCatalog(bad);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(ValidationError);
        const paths = (e as ValidationError).issues.map((i) => i.path);
        expect(paths).toEqual(
          expect.arrayContaining(['instanceTypes[0].name', 'instanceTypes[0].vcpu', 'instanceTypes[0].arch', 'instanceTypes[0].onDemandPrice']),
        );
      }
    });
  });
});

describe('build-catalog script', () => {
  const dataDir = referenceDataDir();

  describe('buildCatalog', () => {
    it.skipIf(!existsSync(dataDir))('reproduces the committed catalog-data.ts byte for byte from the reference data', () => {
      const sources = readSources(dataDir);
      const text = formatCatalog(buildCatalog(sources));
      expect(formatCatalog(buildCatalog(sources))).toBe(text);
      expect(text).toBe(readFileSync(join(REPO_ROOT, CATALOG_PATH), 'utf8'));
      expect(formatCatalogFacts(buildCatalog(sources))).toBe(readFileSync(join(REPO_ROOT, CATALOG_FACTS_PATH), 'utf8'));
    });

    it.skipIf(!existsSync(dataDir))('decodes to exactly the rows and header it built: same values, same key order', () => {
      const built = buildCatalog(readSources(dataDir));
      expect(JSON.stringify(decodeCatalogText(encodeCatalogText(built)))).toBe(JSON.stringify(built));
      expect(JSON.stringify(loadCatalog())).toBe(JSON.stringify(built.instanceTypes));
      expect(JSON.stringify(catalogHeader())).toBe(JSON.stringify(built.header));
    });

    it.skipIf(!existsSync(dataDir))('fails when an instance type has no ENI limits', () => {
      const sources = readSources(dataDir);
      const eniLimitsJsonl = sources.eniLimitsJsonl
        .split('\n')
        .filter((line) => !line.includes('"m5.large"'))
        .join('\n');
      expect(() => buildCatalog({ ...sources, eniLimitsJsonl })).toThrow(/no ENI limits for m5\.large/);
    });
  });

  describe('compact format', () => {
    // The catalogue was 1.5 MB of JSON rows, a third of every Lambda bundle (issue 23); the goal is a whole bundle of 1.5 MB.
    it('keeps the committed module under 256 KiB', () => {
      expect(statSync(join(REPO_ROOT, CATALOG_PATH)).size).toBeLessThan(256 * 1024);
    });

    it('refuses text that is not in the format, naming the line', () => {
      expect(() => decodeCatalogText('{"header":{}}')).toThrow(ValidationError);
      const text = encodeCatalogText({ header: catalogHeader(), instanceTypes: [instanceTypeByName('m5.large')!] });
      expect(text.startsWith(`${CATALOG_FORMAT_MAGIC}\n`)).toBe(true);
      const short = text.replace(/ 29\n$/, '\n');
      try {
        decodeCatalogText(short);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(ValidationError);
        expect((e as ValidationError).issues[0]?.path).toBe('line 4');
      }
    });

    it('refuses to encode a label value that cannot be a cell', () => {
      const m5 = instanceTypeByName('m5.large')!;
      const spaced = { ...m5, labels: { ...m5.labels, 'karpenter.k8s.aws/instance-family': 'm 5' } };
      expect(() => encodeCatalogText({ header: catalogHeader(), instanceTypes: [spaced] })).toThrow(/cannot be a cell/);
    });
  });

  describe('facts table (what the controllers read)', () => {
    it('holds, for every catalogue type, its price, network bandwidth label and pod-eni count, and nothing else', () => {
      const rows = loadCatalog();
      expect(shippedInstanceTypes().map((t) => t.name)).toEqual(rows.map((r) => r.name));
      for (const row of rows) {
        const bandwidth = row.labels['karpenter.k8s.aws/instance-network-bandwidth'];
        const podEni = row.extendedResources['vpc.amazonaws.com/pod-eni'];
        expect(shippedInstanceType(row.name)).toEqual({
          name: row.name,
          onDemandPrice: row.onDemandPrice,
          labels: bandwidth === undefined ? {} : { 'karpenter.k8s.aws/instance-network-bandwidth': bandwidth },
          extendedResources: podEni === undefined ? {} : { 'vpc.amazonaws.com/pod-eni': podEni },
        });
      }
      expect(shippedInstanceType('m99.huge')).toBeUndefined();
    });

    it('is a small fraction of the whole catalogue', () => {
      expect(statSync(join(REPO_ROOT, CATALOG_FACTS_PATH)).size).toBeLessThan(64 * 1024);
    });

    it('refuses text that is not in the format', () => {
      expect(() => decodeCatalogFacts('a1.large 0.051 750 9\n')).toThrow(ValidationError);
      expect(() => decodeCatalogFacts('skiff-catalog-facts 1\na1.large 0.051 750\n')).toThrow(ValidationError);
    });
  });

  describe('referenceDataDir', () => {
    it('uses SKIFF_REFERENCE_DATA when set, else ../shared/data next to the repository', () => {
      expect(referenceDataDir({ SKIFF_REFERENCE_DATA: '/tmp/ref' })).toBe('/tmp/ref');
      expect(referenceDataDir({})).toBe(join(REPO_ROOT, '..', 'shared', 'data'));
    });
  });

  it('exports the price note the header carries', () => {
    expect(PRICE_NOTE).toBe(catalogHeader().note);
  });
});
