import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { chartJsSource } from '../../shared/cli/report/chart-js-source.js';
import { escapeHtml, inlineScriptSource, jsonForScript, REPORT_CHART_IDS, REPORT_DATA_ID, renderReport } from '../../shared/cli/report/html.js';
import { reportSeries } from '../../shared/cli/report/series.js';
import type { Result } from '../../shared/sim/result-schema.js';

const HOSTILE_POD = '<script>window.__pwned = 1</script>';
const HOSTILE_POOL = '</script><img src=x onerror="window.__pwned = 2">';
const HOSTILE_REASON = 'needs <b>bold</b> & "quotes" \u2028 and </SCRIPT>';

/** A one-hour Result whose user-controlled strings try to break out of the page. */
const hostile: Result = {
  scenario: '<i>scenario</i>',
  start: '2026-03-02T08:00:00.000Z',
  end: '2026-03-02T09:00:00.000Z',
  seed: 1,
  nodeClaims: [
    {
      name: 'claim-1',
      nodePool: HOSTILE_POOL,
      instanceType: 'm5.large',
      capacityType: 'spot',
      zone: 'us-west-2a',
      price: 0.04,
      labels: {},
      taints: [],
      allocatable: {},
      requirements: [],
      createdAt: '2026-03-02T08:00:00.000Z',
      launchedAt: '2026-03-02T08:00:00.000Z',
      registeredAt: null,
      initializedAt: null,
      deletedAt: '2026-03-02T08:30:00.000Z',
      deletionReason: 'Expired',
      launchError: null,
    },
  ],
  nodes: [],
  launchAttempts: [],
  pods: [],
  unschedulable: [{ pod: `default/${HOSTILE_POD}`, since: '2026-03-02T08:00:00.000Z', reason: HOSTILE_REASON, nodePools: { [HOSTILE_POOL]: HOSTILE_REASON } }],
  disruptions: [],
  events: [],
  violations: { budget: 0, pdb: 0, doNotDisrupt: 0, limits: 0, duplicateLaunches: 0, leakedInstances: 0, placement: 0, churn: 0, evictionLoops: 0 },
  cost: { totalUSD: 0.02, peakHourlyUSD: 0.04, finalHourlyUSD: 0 },
};

const CHART_STUB = 'window.Chart = function () {};\n//# sourceMappingURL=chart.umd.min.js.map\n';

/** The text of every `<script …>…</script>` element, with its opening tag. */
function scripts(html: string): { tag: string; text: string }[] {
  return [...html.matchAll(/(<script[^>]*>)([\s\S]*?)<\/script>/g)].map((m) => ({ tag: m[1]!, text: m[2]! }));
}

describe('report html', () => {
  describe('escapeHtml', () => {
    it('escapes the five characters that matter in content and quoted attributes', () => {
      expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&#60;a href=&#34;x&#34; title=&#39;y&#39;&#62;&#38;&#60;/a&#62;');
    });
  });

  describe('jsonForScript', () => {
    it('writes no <, > or & (so neither </script> nor <!-- can appear) and parses back to the same value', () => {
      const value = { a: HOSTILE_POD, b: '<!-- x -->', c: 'a & b', d: 'line\u2028sep\u2029' };
      const text = jsonForScript(value);
      expect(text).not.toMatch(/[<>&\u2028\u2029]/);
      expect(JSON.parse(text)).toEqual(value);
    });
  });

  describe('inlineScriptSource', () => {
    it('breaks up </script and <!-- in any case and drops the source map comment', () => {
      const out = inlineScriptSource('var a = "</script>", b = "</SCRIPT>", c = "<!--";\n//# sourceMappingURL=x.js.map\n');
      expect(out).not.toMatch(/<\/script|<!--/i);
      expect(out).not.toContain('sourceMappingURL');
      expect(out).toContain('"<\\/script>"');
    });

    it('leaves the installed Chart.js bundle intact apart from its source map comment', () => {
      const source = chartJsSource();
      expect(source).toContain('Chart.js v4');
      expect(inlineScriptSource(source)).toBe(source.replace(/\n\/\/# sourceMappingURL=\S*\s*$/, '\n'));
    });
  });

  describe('renderReport', () => {
    const html = renderReport({ result: hostile, nodePools: [{ nodePool: HOSTILE_POOL, budgets: [{ nodes: '0', schedule: '0 8 * * *', duration: '30m' }] }], chartJs: CHART_STUB });

    it('has exactly three script elements: the JSON data, Chart.js and the page script', () => {
      const found = scripts(html);
      expect(found.map((s) => s.tag)).toEqual([`<script type="application/json" id="${REPORT_DATA_ID}">`, '<script>', '<script>']);
      expect(html.match(/<script/gi)).toHaveLength(3);
    });

    it('shows hostile names and reasons escaped, never as markup', () => {
      expect(html).toContain(escapeHtml(`default/${HOSTILE_POD}`));
      expect(html).toContain(escapeHtml(HOSTILE_POOL));
      expect(html).toContain(escapeHtml(HOSTILE_REASON));
      expect(html).not.toContain('<img');
      expect(html).not.toContain('<b>bold');
      expect(html).toContain(`<title>Skiff simulation report: ${escapeHtml('<i>scenario</i>')}</title>`);
    });

    it('embeds the series as JSON that parses back exactly, hostile strings included', () => {
      const data = scripts(html)[0]!.text;
      expect(JSON.parse(data)).toEqual(reportSeries(hostile, [{ nodePool: HOSTILE_POOL, budgets: [{ nodes: '0', schedule: '0 8 * * *', duration: '30m' }] }]));
      expect(JSON.parse(data).cost.groups[0].key).toBe(HOSTILE_POOL);
    });

    it('allows by Content-Security-Policy exactly its two inline scripts and no network', () => {
      const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)![1]!;
      expect(csp).toContain("default-src 'none'");
      const [, chart, app] = scripts(html);
      const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
      expect(csp).toContain(`script-src ${hash(chart!.text)} ${hash(app!.text)};`);
      expect(csp).not.toMatch(/unsafe-eval|https?:/);
    });

    it('has a canvas for each chart', () => {
      for (const id of REPORT_CHART_IDS) expect(html).toContain(`<canvas id="${id}"`);
    });

    it('lists the NodeClaims with their deletion reason and the pending pods with per-NodePool reasons', () => {
      expect(html).toMatch(/<table id="table-nodeclaims">[\s\S]*<td>claim-1<\/td>[\s\S]*<td>Expired<\/td>/);
      expect(html).toMatch(/<table id="table-unschedulable">[\s\S]*<li><b>&#60;\/script&#62;/);
    });

    it('says when the run had no disruptions, and not when it had some', () => {
      expect(html).not.toContain('id="disruptions-empty"'); // claim-1 was deleted as Expired
      const quiet: Result = { ...hostile, nodeClaims: hostile.nodeClaims.map((c) => ({ ...c, deletedAt: null, deletionReason: null })) };
      expect(renderReport({ result: quiet, nodePools: [], chartJs: CHART_STUB })).toContain('id="disruptions-empty"');
      const withDisruption: Result = {
        ...hostile,
        disruptions: [{ at: '2026-03-02T08:20:00.000Z', command: 'c1', nodeClaim: 'claim-1', nodePool: 'p', reason: 'Empty', decision: 'delete', replacement: null, drainStartedAt: null, completedAt: null }],
      };
      expect(renderReport({ result: { ...quiet, disruptions: withDisruption.disruptions }, nodePools: [], chartJs: CHART_STUB })).not.toContain('id="disruptions-empty"');
    });

    it('notes the nodes still drifted at the end, with what held each, escaped (trial: the report said nothing of a rollout left part-way)', () => {
      const live = { ...hostile.nodeClaims[0]!, deletedAt: null, deletionReason: null, driftedAtEnd: 'NodeClassDrifted: EC2NodeClass <x> changed since the node was launched' };
      const drifted: Result = {
        ...hostile,
        nodeClaims: [live],
        nodes: [{ name: 'n1', nodeClaim: 'claim-1', instanceType: 'm5.large', zone: 'us-west-2a', capacityType: 'spot', labels: {}, createdAt: live.createdAt, deletedAt: null }],
        events: [{ at: '2026-03-02T08:40:00.000Z', type: 'Normal', reason: 'DisruptionBlocked', object: 'Node/n1', message: 'Cannot disrupt Node: pod default/db-0 is annotated karpenter.sh/do-not-disrupt' }],
      };
      const page = renderReport({ result: drifted, nodePools: [], chartJs: CHART_STUB });
      expect(page).toContain('<p class="note" id="drifted-at-end">Drifted at the end and not replaced: 1 node (the rollout did not finish)</p>');
      expect(page).toContain(`<li>${escapeHtml('n1 (NodePool ' + HOSTILE_POOL + '): NodeClassDrifted: EC2NodeClass <x> changed since the node was launched; held: Cannot disrupt Node: pod default/db-0 is annotated karpenter.sh/do-not-disrupt')}</li>`);
      expect(html).not.toContain('id="drifted-at-end"');
    });

    it('describes the shaded budget windows in UTC', () => {
      expect(html).toContain('budget #1 (spec.disruption.budgets[0]): at most 0 node(s) for all reasons, 2026-03-02 08:00:00 → 2026-03-02 08:30:00 (0 8 * * * for 30m)');
    });

    it('is the same text for the same inputs', () => {
      expect(renderReport({ result: hostile, nodePools: [{ nodePool: HOSTILE_POOL, budgets: [{ nodes: '0', schedule: '0 8 * * *', duration: '30m' }] }], chartJs: CHART_STUB })).toBe(html);
    });
  });
});
