/**
 * The HTML report in a real browser: `skiff simulate --report` on a small scenario, opened from disk in headless
 * Chromium (Debian's `chromium` driven by playwright-core), must draw every chart with data, shade the
 * budget windows, log no console error, load nothing but itself, and survive hostile names. A screenshot is saved
 * as test-output/report.png.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../shared/cli/main.js';
import { chartJsSource } from '../../shared/cli/report/chart-js-source.js';
import { REPORT_CHART_IDS, renderReport } from '../../shared/cli/report/html.js';
import { simulateScenario } from '../../shared/cli/simulate.js';
import { writeReport } from '../../shared/cli/report/write-report.js';
import type { SimulationResult } from '../../shared/sim/result.js';

const CHROMIUM = '/usr/bin/chromium';
const OUTPUT = resolve('test-output');
const REPORT = resolve(OUTPUT, 'report.html');
const SCREENSHOT = resolve(OUTPUT, 'report.png');
const SCENARIO = 'test/scenarios/report-day.yaml';

/** What the page logged and requested while it was open. */
interface PageLog {
  readonly errors: string[];
  readonly requests: string[];
}

/** Per chart canvas: its Chart.js datasets (label and number of points) and the budget windows drawn. */
interface ChartState {
  readonly id: string;
  readonly datasets: { label: string; points: number }[];
  readonly budgetWindowsDrawn: string | null;
}

async function open(browser: Browser, file: string): Promise<{ page: Page; log: PageLog }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const log: PageLog = { errors: [], requests: [] };
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') log.errors.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => log.errors.push(`pageerror: ${e.message}`));
  page.on('request', (r) => log.requests.push(r.url()));
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  return { page, log };
}

/** Chart state read from the page (the page defines `Chart`; the test's tsconfig has no DOM types, hence a string). */
const CHARTS_EXPRESSION = `(${JSON.stringify(REPORT_CHART_IDS)}).map((id) => {
  const canvas = document.getElementById(id);
  const chart = canvas && window.Chart && window.Chart.getChart(canvas);
  return {
    id,
    datasets: chart ? chart.data.datasets.map((d) => ({ label: d.label, points: d.data.length })) : [],
    budgetWindowsDrawn: canvas ? canvas.getAttribute('data-budget-windows-drawn') : null,
  };
})`;

describe('skiff simulate --report', () => {
  let browser: Browser;
  let result: SimulationResult;
  let cli: { status: number; out: string; err: string };

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`the report test needs Debian's Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (never \`npx playwright install\`)`);
    }
    mkdirSync(OUTPUT, { recursive: true });
    // A terminal and --json: the Result alone on stdout, nothing on stderr (no progress bar, no note).
    let out = '';
    let err = '';
    const status = await main(['simulate', SCENARIO, '--json', '--report', REPORT], { out: (t) => (out += t), err: (t) => (err += t), isTTY: true });
    cli = { status, out, err };
    result = JSON.parse(out) as SimulationResult;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('writes the report, prints only the Result on stdout with --json and nothing on stderr, even on a terminal', () => {
    expect(cli.status).toBe(0);
    expect(cli.err).toBe('');
    expect(result.scenario).toBe('report-day');
    expect(statSync(REPORT).size).toBeGreaterThan(100_000); // Chart.js is inlined
  });

  it('draws every chart with data, shades the budget windows, logs no error and loads nothing but itself', async () => {
    const { page, log } = await open(browser, REPORT);
    try {
      const charts = (await page.evaluate(CHARTS_EXPRESSION)) as ChartState[];
      const byId = new Map(charts.map((c) => [c.id, c]));
      const points = (id: string) => byId.get(id)!.datasets.reduce((n, d) => n + d.points, 0);

      // Nodes: one dataset per NodePool and capacity type of the run.
      expect(byId.get('chart-nodes')!.datasets.map((d) => d.label).sort()).toEqual(['batch · spot', 'general · on-demand']);
      expect(points('chart-nodes')).toBeGreaterThan(0);
      expect(byId.get('chart-cost')!.datasets.map((d) => d.label).sort()).toEqual(['batch', 'general']);
      expect(points('chart-cost')).toBeGreaterThan(0);
      expect(points('chart-pending')).toBeGreaterThan(0);
      // The instance terminated at 10:00 is on the timeline; both scheduled budgets have a window in the run.
      const terminated = result.nodeClaims.filter((c) => c.deletionReason !== null).length;
      expect(terminated).toBeGreaterThan(0);
      expect(byId.get('chart-disruptions')!.datasets).toEqual([
        { label: 'disruption command', points: result.disruptions.length },
        { label: 'NodeClaim deleted', points: terminated },
      ]);
      expect(byId.get('chart-disruptions')!.budgetWindowsDrawn).toBe('2');

      const rows = (await page.evaluate(`document.querySelectorAll('#table-nodeclaims tbody tr').length`)) as number;
      expect(rows).toBe(result.nodeClaims.length);
      const pending = (await page.evaluate(`document.querySelector('#table-unschedulable').textContent`)) as string;
      expect(pending).toContain('default/high-memory-report');
      expect(pending).toContain('no NodePool defines the label node-type');

      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      expect(log.errors).toEqual([]);
      expect(log.requests).toEqual([pathToFileURL(REPORT).href]);
    } finally {
      await page.close();
    }
    expect(statSync(SCREENSHOT).size).toBeGreaterThan(10_000);
  });

  it('draws examples/seed: every chart, disruptions as they come (or a note saying there were none)', async () => {
    const run = await simulateScenario('examples/seed', { seed: 1 });
    const file = resolve(OUTPUT, 'report-seed.html');
    await writeReport(file, run);
    const { page, log } = await open(browser, file);
    try {
      const charts = (await page.evaluate(CHARTS_EXPRESSION)) as ChartState[];
      expect(charts.map((c) => c.id)).toEqual([...REPORT_CHART_IDS]);
      for (const c of charts.filter((c) => c.id !== 'chart-disruptions')) expect(c.datasets.reduce((n, d) => n + d.points, 0)).toBeGreaterThan(0);
      const commands = run.result.disruptions.length;
      const deletions = run.result.nodeClaims.filter((c) => c.deletionReason !== null && c.deletedAt !== null).length;
      expect(charts.find((c) => c.id === 'chart-disruptions')!.datasets.map((d) => d.points)).toEqual([commands, deletions]);
      expect(await page.isVisible('#disruptions-empty')).toBe(commands + deletions === 0);
      await page.screenshot({ path: resolve(OUTPUT, 'report-seed.png'), fullPage: true });
      expect(log.errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('shows an empty disruption chart with a note when nothing was disrupted', async () => {
    const quiet: SimulationResult = { ...result, disruptions: [], nodeClaims: result.nodeClaims.map((c) => ({ ...c, deletionReason: null })) };
    const file = resolve(OUTPUT, 'report-quiet.html');
    writeFileSync(file, renderReport({ result: quiet, nodePools: [], chartJs: chartJsSource() }));
    const { page, log } = await open(browser, file);
    try {
      const charts = (await page.evaluate(CHARTS_EXPRESSION)) as ChartState[];
      expect(charts.find((c) => c.id === 'chart-disruptions')!.datasets.map((d) => d.points)).toEqual([0, 0]);
      expect(await page.isVisible('#disruptions-empty')).toBe(true);
      expect(log.errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('shows hostile names as text: a pod named <script> runs nothing and breaks nothing', async () => {
    const HOSTILE_POD = '<script>window.__pwned = 1</script>';
    const HOSTILE_POOL = '</script><img src=x onerror="window.__pwned = 2">';
    const hostile: SimulationResult = {
      ...result,
      nodeClaims: result.nodeClaims.map((c) => (c.nodePool === 'batch' ? { ...c, nodePool: HOSTILE_POOL } : c)),
      unschedulable: result.unschedulable.map((u) => ({ ...u, pod: `default/${HOSTILE_POD}`, nodePools: { ...u.nodePools, [HOSTILE_POOL]: `<b>${HOSTILE_POD}</b>` } })),
    };
    const file = resolve(OUTPUT, 'report-hostile.html');
    writeFileSync(file, renderReport({ result: hostile, nodePools: [{ nodePool: HOSTILE_POOL, budgets: [{ nodes: '0', schedule: '0 9 * * *', duration: '1h' }] }], chartJs: chartJsSource() }));
    const { page, log } = await open(browser, file);
    try {
      expect(await page.evaluate('window.__pwned')).toBeUndefined();
      expect(await page.evaluate(`document.querySelectorAll('script').length`)).toBe(3);
      expect(await page.evaluate(`document.querySelectorAll('img').length`)).toBe(0);
      const cell = (await page.evaluate(`document.querySelector('#table-unschedulable tbody td').textContent`)) as string;
      expect(cell).toBe(`default/${HOSTILE_POD}`);
      const costLabels = ((await page.evaluate(CHARTS_EXPRESSION)) as ChartState[]).find((c) => c.id === 'chart-cost')!.datasets.map((d) => d.label);
      expect(costLabels).toContain(HOSTILE_POOL);
      expect(await page.evaluate(`document.getElementById('chart-disruptions').getAttribute('data-budget-windows-drawn')`)).toBe('1');
      expect(log.errors).toEqual([]);
      expect(log.requests).toEqual([pathToFileURL(file).href]);
    } finally {
      await page.close();
    }
    expect(readFileSync(file, 'utf8')).not.toContain('<img');
  });

  it('refuses a report path in a folder that is a file with status 2, before the run (a write failing after the run: test/cli/simulate.test.ts)', async () => {
    let out = '';
    let err = '';
    const unwritable = resolve(OUTPUT, 'report.png', 'report.html'); // a folder that is a file
    const status = await main(['simulate', 'examples/seed', '--report', unwritable], { out: (t) => (out += t), err: (t) => (err += t), isTTY: false });
    expect(status).toBe(2);
    expect(out).toBe('');
    expect(err).toContain(`${resolve(OUTPUT, 'report.png')} is a file, not a folder, so no report can be written in it`);
  });
});
