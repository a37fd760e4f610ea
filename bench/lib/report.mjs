// The benchmark's outputs: a table on stdout (cli-table3), a JSON file, and an SVG chart of
// the ratios (vega-lite compiled to vega, rendered headless to SVG).
import fs from 'node:fs';
import path from 'node:path';
import Table from 'cli-table3';
import * as vega from 'vega';
import * as vl from 'vega-lite';

const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

/** The timing table of one interleaved benchmark, ratios against berth and against the floor. */
export function timingTable(title, results) {
  const berth = results.find((r) => r.name.startsWith('berth'));
  const floor = results.find((r) => r.floor);
  const t = new Table({
    head: [title, 'median ms', 'p90 ms', 'round medians (min–max)', 'n', '× berth', floor ? `× ${floor.name}` : ''],
    style: { head: [], border: [] },
  });
  for (const r of results) {
    t.push([
      r.name,
      fmt(r.median),
      fmt(r.p90),
      `${fmt(r.spread.min)}–${fmt(r.spread.max)}`,
      r.n,
      berth ? (r.median / berth.median).toFixed(2) : '',
      floor ? (r.median / floor.median).toFixed(2) : '',
    ]);
  }
  return t.toString();
}

/** A two-column table of `[label, value]` rows. */
export function plainTable(title, rows) {
  const t = new Table({ head: [title, ''], style: { head: [], border: [] } });
  for (const row of rows) t.push(row);
  return t.toString();
}

/** The targets table: what, target, measured, met. */
export function targetsTable(targets) {
  const t = new Table({ head: ['target', 'goal', 'measured', 'met'], style: { head: [], border: [] } });
  for (const x of targets) t.push([x.name, x.goal, x.measured, x.met ? 'yes' : 'NO']);
  return t.toString();
}

/** Writes `data` as pretty JSON to `file` (directories created). */
export function writeJson(file, data) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
}

/**
 * The ratio chart: per operation, each contender's median time relative to berth's
 * (berth = 1; above 1 berth is faster), on a log axis. Rendered headless by vega to SVG.
 * @param {{ op: string, contender: string, ratio: number }[]} rows
 * @param {string} subtitle the machine and engine the figures come from
 */
export async function ratioChartSvg(rows, subtitle) {
  const spec = vl.compile({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'Median time relative to berth (berth = 1, higher = slower than berth)', subtitle },
    data: { values: rows },
    facet: { row: { field: 'op', type: 'nominal', title: null, sort: null, header: { labelAngle: 0, labelAlign: 'left', labelFontWeight: 'bold' } } },
    spec: {
      width: 420,
      layer: [
        {
          mark: { type: 'bar', height: 14 },
          encoding: {
            y: { field: 'contender', type: 'nominal', title: null, sort: null },
            x: { field: 'ratio', type: 'quantitative', scale: { type: 'log', domain: [0.2, 60] }, title: 'ratio (log scale)' },
            color: { field: 'kind', type: 'nominal', legend: { title: null, orient: 'bottom' }, scale: { domain: ['berth', 'raw floor', 'other client'], range: ['#2b6cb0', '#a0aec0', '#dd6b20'] } },
          },
        },
        {
          mark: { type: 'text', align: 'left', dx: 3, fontSize: 10 },
          encoding: {
            y: { field: 'contender', type: 'nominal', sort: null },
            x: { field: 'ratio', type: 'quantitative' },
            text: { field: 'ratio', type: 'quantitative', format: '.2f' },
          },
        },
      ],
    },
    resolve: { scale: { y: 'independent' } },
  }, { logger: vega.logger(vega.None) }).spec;
  const view = new vega.View(vega.parse(spec), { renderer: 'none' });
  return view.toSVG();
}
