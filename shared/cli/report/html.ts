/**
 * The HTML report of `skiff simulate --report`: one self-contained page (Chart.js inlined, no network at view time)
 * that opens, for a run that started with nodes (a snapshot), with the answer in money (`Result.whatIf`: $/h now and
 * after Skiff's disruptions settle, the saving, the disruptions in order with method and budget, the evictions, the
 * pods pending at the start); then four charts — nodes by NodePool and capacity type, fleet price, pending pods, disruptions by reason with
 * budget windows shaded — and tables of NodeClaims and of the pods still pending at the end, with their reasons.
 *
 * Safety: every user-controlled string (names, reasons, messages) reaches the page either HTML-escaped in the markup
 * or inside a `<script type="application/json">` block with `<`, `>` and `&` written as `\u003c`, `\u003e`,
 * `\u0026` (so no `</script>` can close it); the page script only ever puts those strings into the DOM as text
 * (Chart.js draws them on a canvas). A Content-Security-Policy allows the two inline scripts by hash and nothing
 * else — no network, no injected script.
 *
 * Pure: same inputs, same text.
 */
import { createHash } from 'node:crypto';
import { splitHints } from '../../core/provisioning/diagnosis.js';
import type { Result, WhatIf } from '../../sim/result-schema.js';
import { reportSeries, UNMANAGED_NODEPOOL, type NodePoolBudgets, type ReportSeries } from './series.js';
import { baselineNote, driftedLines } from '../summary.js';

/** What {@link renderReport} needs. */
export interface ReportInput {
  /** The Result of the run (`simulate --json`'s object). */
  readonly result: Result;
  /** The scenario's NodePools and their `spec.disruption.budgets` (the Result carries no budgets). */
  readonly nodePools: readonly NodePoolBudgets[];
  /** The Chart.js UMD bundle's source, inlined as is (see `chartJsSource()`). */
  readonly chartJs: string;
}

/** The `id`s of the four chart canvases, in page order (tests and readers find the charts by them). */
export const REPORT_CHART_IDS = ['chart-nodes', 'chart-cost', 'chart-pending', 'chart-disruptions'] as const;

/** The `id` of the `<script type="application/json">` element holding the {@link ReportSeries} the charts draw. */
export const REPORT_DATA_ID = 'skiff-report-data';

/**
 * Escapes text for HTML element content and double- or single-quoted attribute values: `& < > " '`.
 * @example escapeHtml('<script>') // '&lt;script&gt;'
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * JSON for a `<script type="application/json">` element: `<`, `>`, `&`, U+2028 and U+2029 are written as `\uXXXX`
 * escapes, so the text can neither close the element (`</script>`) nor open a comment (`<!--`); `JSON.parse` of the
 * element's text gives `value` back.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Script source made safe to inline in a `<script>` element: `</script` and `<!--` (any case) are broken up with a
 * backslash (`<\/script`, `<\!--`, the same text inside a JavaScript string), and a trailing `sourceMappingURL`
 * comment is dropped (the map is not inlined).
 */
export function inlineScriptSource(source: string): string {
  return source
    .replace(/\n\/\/# sourceMappingURL=\S*\s*$/, '\n')
    .replace(/<\/(script)/gi, '<\\/$1')
    .replace(/<!--/g, '<\\!--');
}

/**
 * Renders the report page.
 * @returns a complete HTML document (UTF-8) that needs nothing else to display
 * @example await writeFile('report.html', renderReport({ result, nodePools, chartJs: chartJsSource() }));
 */
export function renderReport(input: ReportInput): string {
  const { result } = input;
  const series = reportSeries(result, input.nodePools);
  const chartJs = inlineScriptSource(input.chartJs);
  const app = APP_SCRIPT;
  // Fixed words and base64 hashes only: nothing to escape in the attribute.
  const csp = [`default-src 'none'`, `script-src ${sha256Source(chartJs)} ${sha256Source(app)}`, `style-src 'unsafe-inline'`, `img-src data:`, `base-uri 'none'`, `form-action 'none'`].join('; ');
  const title = `Skiff simulation report: ${result.scenario}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>${escapeHtml(title)}</h1>
${result.whatIf ? whatIfHtml(result, result.whatIf) : ''}${summaryHtml(result)}
</header>
<main>
${result.whatIf ? whatIfSections(result.whatIf) : ''}<section>
<h2>Nodes by NodePool and capacity type</h2>
<div class="chart"><canvas id="chart-nodes" role="img" aria-label="Nodes over time by NodePool and capacity type"></canvas></div>
</section>
<section>
<h2>Fleet price by NodePool (USD per hour)</h2>
<div class="chart"><canvas id="chart-cost" role="img" aria-label="Fleet price in USD per hour over time by NodePool"></canvas></div>
<p class="note" id="cost-note">Each launched NodeClaim's price from launch until deletion${result.nodes.some((n) => n.nodeClaim === null) ? `, and each node no NodeClaim owns (a managed node group's, Fargate's, a scenario's unmanaged nodes: the series ${UNMANAGED_NODEPOOL}; never disrupted) at its instance's price while it exists` : ''}: the whole fleet. Total ${usd(result.cost.totalUSD)}, peak ${usd(result.cost.peakHourlyUSD)}/h, final ${usd(result.cost.finalHourlyUSD)}/h.</p>
</section>
<section>
<h2>Pending pods</h2>
<div class="chart"><canvas id="chart-pending" role="img" aria-label="Pods pending over time"></canvas></div>
<p class="note">A pod counts from the moment kube-scheduler marked it Unschedulable until it was scheduled or deleted.</p>
</section>
<section>
<h2>Disruptions by reason</h2>
<div class="chart"><canvas id="chart-disruptions" role="img" aria-label="Disruption commands and NodeClaim deletions over time by reason, with disruption budget windows shaded"></canvas></div>
${series.disruptions.length === 0 ? '<p class="empty" id="disruptions-empty">No disruption commands and no NodeClaim deleted with a reason in this run.</p>\n' : ''}${budgetsHtml(series)}${driftedHtml(result)}
</section>
<section>
<h2>NodeClaims (${result.nodeClaims.length})</h2>
${nodeClaimsTable(result)}
</section>
<section>
<h2>Pods pending at the end (${result.unschedulable.length})</h2>
${unschedulableTable(result)}
</section>
</main>
<footer><p>Times are UTC. Generated by <code>skiff simulate --report</code> from the run's Result (seed ${escapeHtml(String(result.seed))}). ${escapeHtml(pricingNote(result))}</p></footer>
<script type="application/json" id="${REPORT_DATA_ID}">${jsonForScript(series)}</script>
<script>${chartJs}</script>
<script>${app}</script>
</body>
</html>
`;
}

/** `'sha256-<base64>'`: a CSP source allowing exactly this inline script text. */
function sha256Source(script: string): string {
  return `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`;
}

function usd(x: number): string {
  return `$${x < 1 ? x.toFixed(4) : x.toFixed(2)}`;
}

/** `2026-03-02 08:00:01` (UTC) for an ISO time; `—` for null. */
function shortTime(iso: string | null): string {
  return iso === null ? '—' : iso.replace('T', ' ').replace(/(\.\d{3})?Z$/, '');
}

/** The summary's "Drifted at the end and not replaced" lines as a note under the disruptions chart; empty without any. */
function driftedHtml(result: Result): string {
  const [head, ...rest] = driftedLines(result);
  if (head === undefined) return '';
  return `<p class="note" id="drifted-at-end">${escapeHtml(head)}</p>\n<ul>${rest.map((l) => `<li>${escapeHtml(l.trim())}</li>`).join('')}</ul>\n`;
}

function pricingNote(result: Result): string {
  const pricing = (result as { pricing?: { onDemand?: unknown; spot?: unknown } }).pricing;
  return pricing && typeof pricing.onDemand === 'string' && typeof pricing.spot === 'string' ? `Prices: on-demand ${pricing.onDemand}; spot ${pricing.spot}.` : '';
}

function summaryHtml(result: Result): string {
  const hours = (Date.parse(result.end) - Date.parse(result.start)) / 3_600_000;
  const launched = result.nodeClaims.filter((c) => c.instanceType !== null).length;
  const failed = result.nodeClaims.filter((c) => c.launchError !== null).length;
  const violations = Object.entries(result.violations).filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] > 0);
  const items = [
    `${escapeHtml(shortTime(result.start))} → ${escapeHtml(shortTime(result.end))} UTC (${Math.round(hours * 100) / 100} h), seed ${escapeHtml(String(result.seed))}${escapeHtml(baselineNote(result))}`,
    `NodeClaims: ${launched} with an instance${failed > 0 ? `, ${failed} failed to launch` : ''}; disruptions: ${result.disruptions.length}`,
    `Cost: ${usd(result.cost.totalUSD)} in total, peak ${usd(result.cost.peakHourlyUSD)}/h, final ${usd(result.cost.finalHourlyUSD)}/h`,
    `Pods: ${result.pods.length} created, ${result.unschedulable.length} pending at the end`,
    `Violations: ${violations.length === 0 ? 'none' : escapeHtml(violations.map(([k, n]) => `${k}=${n}`).join(', '))}`,
  ];
  return `<ul class="summary">${items.map((i) => `<li>${i}</li>`).join('')}</ul>`;
}

/**
 * The opening of a run that started with nodes (a snapshot, `Result.whatIf`): the fleet's price now and after Skiff's
 * disruptions settle, the saving, and which prices were simulated.
 */
function whatIfHtml(result: Result, w: WhatIf): string {
  const n = w.nodesAtStart;
  const sign = w.savingHourlyUSD < 0 ? '-' : '';
  const items = [
    `<b>What Skiff would do to this cluster:</b> ${n.total} nodes at the start, ${n.managed} managed by its NodePools${n.unmanaged ? `, ${n.unmanaged} not (kept, never disrupted)` : ''}`,
    `Fleet now: <b id="whatif-now">${usd(w.hourlyUSDAtStart)}/h</b> · after Skiff's disruptions: <b id="whatif-after">${usd(w.hourlyUSDAfter)}/h</b> (${w.settled ? `settled at ${escapeHtml(shortTime(w.settledAt))} UTC` : 'at the end of the run; disruptions still going'}, ${w.nodesAfter} nodes)`,
    `Saving: <b id="whatif-saving">${sign}${usd(Math.abs(w.savingHourlyUSD))}/h</b> (${w.savingPercent} %), about ${sign}$${Math.abs(w.savingMonthlyUSD).toFixed(0)} a month`,
    `Disruptions: ${w.actions.length} node(s); evictions: ${w.evictions.total}; pods pending at the start: ${w.pendingAtStart.length}`,
    escapeHtml(pricingNote(result)),
  ];
  return `<ul class="summary whatif" id="whatif">${items.map((i) => `<li>${i}</li>`).join('')}</ul>
`;
}

/** The what-if tables: the disruptions in order (method, budget, evictions) and the pods pending at the start. */
function whatIfSections(w: WhatIf): string {
  const actionRows = w.actions.map((a) =>
    [
      String(a.order),
      shortTime(a.at),
      a.node ?? a.nodeClaim,
      a.nodePool,
      `${a.instanceType ?? '?'} ${a.capacityType ?? ''}`.trim(),
      a.hourlyUSD === null ? '—' : a.hourlyUSD.toFixed(4),
      a.method,
      a.decision === 'replace' ? `replace → ${a.replacements.map((r) => `${r.instanceType ?? r.nodeClaim} ${r.capacityType ?? ''}`.trim()).join(', ')}` : 'delete',
      a.budget,
      String(a.evictions),
      shortTime(a.completedAt),
    ].map((cell, i) => `<td${i === 5 || i === 9 ? ' class="num"' : ''}>${escapeHtml(cell)}</td>`).join(''),
  );
  const actions = w.actions.length === 0 ? '<p class="empty">Skiff would consolidate, replace or expire no node in this run.</p>' : table(['#', 'Started', 'Node', 'NodePool', 'Type', 'USD/h', 'Method', 'Decision', 'Budget that allowed it', 'Evicted', 'Done'], actionRows, 'whatif-actions');
  const evicted = w.evictions.byOwner.length === 0 ? '' : `<p class="note">Evictions by owner: ${w.evictions.byOwner.slice(0, 20).map((o) => `${escapeHtml(o.owner)} ${o.count}`).join(', ')}${w.evictions.byOwner.length > 20 ? ', …' : ''}</p>`;
  const pendingRows = w.pendingAtStart.map((p) => {
    const { reason, hints } = splitHints(p.reason);
    return `<td>${escapeHtml(p.pod)}</td><td>${escapeHtml(reason)}${hints.length > 0 ? `<ul class="hints">${hints.map((h) => `<li>hint: ${escapeHtml(h)}</li>`).join('')}</ul>` : ''}</td><td>${escapeHtml(p.outcome)}</td>`;
  });
  const pending = w.pendingAtStart.length === 0 ? '<p class="empty">No pod was pending at the start.</p>' : table(['Pod', 'Why', 'What became of it'], pendingRows, 'whatif-pending');
  return `<section>
<h2>What Skiff would disrupt, in order (${w.actions.length}; ${w.evictions.total} evictions)</h2>
${actions}
${evicted}
</section>
<section>
<h2>Pods pending at the start (${w.pendingAtStart.length})</h2>
${pending}
</section>
`;
}

function budgetsHtml(series: ReportSeries): string {
  const { shades, always } = series.budgets;
  const reasons = (r: readonly string[]) => (r.length === 0 ? 'all reasons' : r.join(', '));
  const lines: string[] = [];
  for (const s of shades) {
    const index = series.nodePools.indexOf(s.nodePool);
    const color = `hsla(${hue(index < 0 ? series.nodePools.length : index)}, 70%, 50%, 0.35)`;
    lines.push(
      `<li><span class="swatch" style="background:${color}"></span>NodePool <b>${escapeHtml(s.nodePool)}</b> budget #${s.budget + 1} (spec.disruption.budgets[${s.budget}]): at most ${escapeHtml(s.nodes)} node(s) for ${escapeHtml(reasons(s.reasons))}, ${escapeHtml(shortTime(new Date(s.start).toISOString()))} → ${escapeHtml(shortTime(new Date(s.end).toISOString()))} (${escapeHtml(s.label)})</li>`,
    );
  }
  for (const a of always) lines.push(`<li>NodePool <b>${escapeHtml(a.nodePool)}</b> budget #${a.budget + 1} (spec.disruption.budgets[${a.budget}]): at most ${escapeHtml(a.nodes)} node(s) for ${escapeHtml(reasons(a.reasons))}, always active</li>`);
  if (lines.length === 0) return '<p class="note">No disruption budgets.</p>';
  const shaded = shades.length > 0 ? 'Shaded: the windows of scheduled disruption budgets (cron, UTC). ' : '';
  return `<p class="note">${shaded}Budgets limit Empty, Underutilized and Drifted disruptions; expiration and interruption do not wait for them.</p>\n<ul class="budgets">${lines.join('')}</ul>`;
}

/** The hue of the i-th colour of the palette (the page script uses the same formula). */
function hue(i: number): number {
  return (i * 137 + 210) % 360;
}

function nodeClaimsTable(result: Result): string {
  if (result.nodeClaims.length === 0) return '<p class="empty">No NodeClaims were created.</p>';
  const header = ['NodeClaim', 'NodePool', 'Instance type', 'Capacity', 'Zone', 'USD/h', 'Created', 'Launched', 'Initialized', 'Deleted', 'Reason or launch error'];
  const rows = result.nodeClaims.map((c) =>
    [
      c.name,
      c.nodePool,
      c.instanceType ?? '—',
      c.capacityType ?? '—',
      c.zone ?? '—',
      c.price === null ? '—' : c.price.toFixed(4),
      shortTime(c.createdAt),
      shortTime(c.launchedAt),
      shortTime(c.initializedAt),
      shortTime(c.deletedAt),
      [c.deletionReason, c.launchError].filter((x) => x !== null).join(': ') || '—',
    ].map((cell, i) => `<td${i === 5 ? ' class="num"' : ''}>${escapeHtml(cell)}</td>`),
  );
  return table(header, rows.map((r) => r.join('')), 'nodeclaims');
}

function unschedulableTable(result: Result): string {
  if (result.unschedulable.length === 0) return '<p class="empty">Every pod was scheduled.</p>';
  const header = ['Pod', 'Pending since', 'Why', 'Per NodePool'];
  const rows = result.unschedulable.map((u) => {
    const { reason, hints } = splitHints(u.reason);
    const why = `${escapeHtml(reason)}${hints.length > 0 ? `<ul class="hints">${hints.map((h) => `<li>hint: ${escapeHtml(h)}</li>`).join('')}</ul>` : ''}`;
    const pools = Object.entries(u.nodePools);
    const per = pools.length === 0 ? '—' : `<ul>${pools.map(([pool, w]) => `<li><b>${escapeHtml(pool)}</b>: ${escapeHtml(w)}</li>`).join('')}</ul>`;
    return `<td>${escapeHtml(u.pod)}</td><td>${escapeHtml(shortTime(u.since))}</td><td>${why}</td><td>${per}</td>`;
  });
  return table(header, rows, 'unschedulable');
}

function table(header: readonly string[], rows: readonly string[], id: string): string {
  return `<div class="table"><table id="table-${id}"><thead><tr>${header.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>\n${rows.map((r) => `<tr>${r}</tr>`).join('\n')}\n</tbody></table></div>`;
}

const STYLE = `
:root { color-scheme: light; --fg: #1d2430; --muted: #5b6575; --line: #d9dee7; --bg: #fff; --band: #f6f8fb; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header, main, footer { max-width: 1200px; margin: 0 auto; padding: 0 20px; }
h1 { font-size: 22px; margin: 20px 0 8px; }
h2 { font-size: 16px; margin: 28px 0 8px; }
.summary { list-style: none; padding: 10px 14px; margin: 0; background: var(--band); border: 1px solid var(--line); border-radius: 6px; }
.summary li { margin: 2px 0; }
.chart { position: relative; height: 300px; }
.note, footer { color: var(--muted); font-size: 13px; }
.empty { color: var(--muted); font-style: italic; margin: 6px 0; }
.budgets { margin: 4px 0; padding-left: 0; list-style: none; font-size: 13px; }
.swatch { display: inline-block; width: 12px; height: 12px; margin-right: 6px; vertical-align: -1px; border: 1px solid var(--line); }
.table { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid var(--line); }
th { background: var(--band); position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td ul { margin: 0; padding-left: 16px; }
.hints { color: var(--muted); }
footer { margin-top: 32px; padding-bottom: 24px; }
`;

/**
 * The page script: reads the series from the JSON block and draws the charts with Chart.js (linear time axes in
 * epoch ms with UTC tick labels; no date adapter). Strings from the data reach the DOM only as text.
 */
const APP_SCRIPT = `
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById(${JSON.stringify(REPORT_DATA_ID)}).textContent);
  var span = data.end - data.start;
  function pad(n) { return String(n).padStart(2, '0'); }
  function utc(ms, withDate) {
    var d = new Date(ms);
    var hm = pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes());
    return withDate ? d.getUTCFullYear() + '-' + pad(d.getUTCMonth() + 1) + '-' + pad(d.getUTCDate()) + ' ' + hm : hm;
  }
  function fullUtc(ms) { return new Date(ms).toISOString().replace('T', ' ').replace('.000Z', 'Z'); }
  function hue(i) { return (i * 137 + 210) % 360; }
  function color(i, alpha, lightness) { return 'hsla(' + hue(i) + ', 70%, ' + (lightness || 50) + '%, ' + alpha + ')'; }
  // One hue per NodePool on every chart (the order of data.nodePools); capacity types differ in lightness.
  function poolIndex(pool) { var i = data.nodePools.indexOf(pool); return i < 0 ? data.nodePools.length : i; }
  var LIGHTNESS = { spot: 68, 'on-demand': 45, reserved: 30 };
  function groupColor(key, alpha) {
    var parts = key.split('/');
    return color(poolIndex(parts[0]), alpha, parts.length > 1 ? LIGHTNESS[parts[1]] : 50);
  }
  var multiDay = span > 36 * 3600 * 1000;
  // Tick spacing: the first of these (1 min … 90 days) giving at most 10 intervals; multiples of it are whole UTC
  // minutes, hours or days since the epoch.
  var MIN = 60 * 1000, HOUR = 60 * MIN, DAY = 24 * HOUR;
  var steps = [MIN, 5 * MIN, 10 * MIN, 15 * MIN, 30 * MIN, HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY, 90 * DAY];
  var step = steps.filter(function (s) { return span / s <= 10; })[0] || steps[steps.length - 1];
  function timeAxis() {
    return {
      type: 'linear', min: data.start, max: data.end,
      ticks: { stepSize: step, maxRotation: 0, autoSkipPadding: 16, callback: function (v) { return utc(Number(v), multiDay); } },
      title: { display: true, text: 'time (UTC)' }
    };
  }
  function stepDatasets(series, labelOf, stacked) {
    return series.groups.map(function (g, i) {
      return {
        label: labelOf(g.key),
        data: series.times.map(function (t, j) { return { x: t, y: g.values[j] }; }),
        stepped: 'before', borderColor: groupColor(g.key, 1), backgroundColor: groupColor(g.key, 0.3),
        fill: stacked ? (i === 0 ? 'origin' : '-1') : false, pointRadius: 0, borderWidth: 1.5
      };
    });
  }
  function stepChart(id, series, opts) {
    return new Chart(document.getElementById(id), {
      type: 'line',
      data: { datasets: stepDatasets(series, opts.labelOf || function (k) { return k; }, opts.stacked) },
      options: {
        animation: false, maintainAspectRatio: false,
        interaction: { mode: 'nearest', axis: 'x', intersect: false },
        scales: { x: timeAxis(), y: { beginAtZero: true, stacked: opts.stacked, title: { display: true, text: opts.yTitle }, ticks: opts.yTicks || {} } },
        plugins: {
          legend: { position: 'bottom' },
          tooltip: { callbacks: { title: function (items) { return items.length ? fullUtc(items[0].parsed.x) : ''; }, label: opts.tooltipLabel } }
        }
      }
    });
  }
  stepChart('chart-nodes', data.nodes, {
    stacked: true, yTitle: 'nodes', yTicks: { precision: 0 },
    labelOf: function (k) { return k.replace('/', ' · '); }
  });
  stepChart('chart-cost', data.cost, {
    stacked: true, yTitle: 'USD per hour',
    yTicks: { callback: function (v) { return '$' + Number(v).toFixed(2); } },
    tooltipLabel: function (item) { return item.dataset.label + ': $' + Number(item.parsed.y).toFixed(4) + '/h'; }
  });
  stepChart('chart-pending', data.pending, { stacked: false, yTitle: 'pods pending', yTicks: { precision: 0 } });

  // Disruptions: one row per reason; commands and deletions as two marker styles.
  var known = ['Empty', 'Underutilized', 'Drifted', 'Expired', 'Interrupted', 'InstanceTerminated', 'RegistrationTimeout', 'LaunchFailed'];
  var present = data.disruptions.map(function (m) { return m.reason; });
  var reasons = known.filter(function (r, i) { return i < 3 || present.indexOf(r) >= 0; })
    .concat(present.filter(function (r, i) { return known.indexOf(r) < 0 && present.indexOf(r) === i; }).sort());
  function marks(kind) {
    return data.disruptions.filter(function (m) { return m.kind === kind; })
      .map(function (m) { return { x: m.at, y: m.reason, mark: m }; });
  }
  var lanes = [];
  data.budgets.shades.forEach(function (s) { if (lanes.indexOf(s.nodePool) < 0) lanes.push(s.nodePool); });
  var budgetWindows = {
    id: 'skiffBudgetWindows',
    beforeDatasetsDraw: function (chart) {
      var area = chart.chartArea, x = chart.scales.x, ctx = chart.ctx, drawn = 0;
      ctx.save();
      ctx.beginPath(); ctx.rect(area.left, area.top, area.right - area.left, area.bottom - area.top); ctx.clip();
      data.budgets.shades.forEach(function (s) {
        var lane = lanes.indexOf(s.nodePool), c = poolIndex(s.nodePool);
        var x1 = Math.max(area.left, x.getPixelForValue(s.start)), x2 = Math.min(area.right, x.getPixelForValue(s.end));
        if (!(x2 > x1)) return;
        ctx.fillStyle = color(c, 0.18);
        ctx.fillRect(x1, area.top, x2 - x1, area.bottom - area.top);
        ctx.fillStyle = color(c, 0.9);
        ctx.font = '11px system-ui, sans-serif';
        ctx.textBaseline = 'top';
        ctx.fillText(s.nodePool + ' \\u2264 ' + s.nodes + (s.reasons.length ? ' (' + s.reasons.join(', ') + ')' : ''), x1 + 3, area.top + 3 + 13 * lane);
        drawn++;
      });
      ctx.restore();
      chart.canvas.setAttribute('data-budget-windows-drawn', String(drawn));
    }
  };
  new Chart(document.getElementById('chart-disruptions'), {
    type: 'scatter',
    data: { datasets: [
      { label: 'disruption command', data: marks('command'), pointStyle: 'triangle', pointRadius: 7, backgroundColor: 'rgba(214, 96, 0, 0.85)', borderColor: 'rgb(160, 70, 0)' },
      { label: 'NodeClaim deleted', data: marks('deletion'), pointStyle: 'rectRot', pointRadius: 6, backgroundColor: 'rgba(40, 40, 40, 0.8)', borderColor: 'rgb(20, 20, 20)' }
    ] },
    options: {
      animation: false, maintainAspectRatio: false,
      scales: { x: timeAxis(), y: { type: 'category', labels: reasons, offset: true, title: { display: true, text: 'reason' } } },
      plugins: {
        legend: { position: 'bottom' },
        tooltip: { callbacks: {
          title: function (items) { return items.length ? fullUtc(items[0].raw.x) : ''; },
          label: function (item) { var m = item.raw.mark; return m.reason + ': ' + m.nodeClaim + ' (NodePool ' + m.nodePool + ') ' + m.detail; }
        } }
      }
    },
    plugins: [budgetWindows]
  });
})();
`;
