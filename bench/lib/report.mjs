// The benchmark's tables on stdout (cli-table3) and its JSON file; the chart is in chart.mjs.
import fs from 'node:fs';
import path from 'node:path';
import Table from 'cli-table3';

const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

/** The timing table of one interleaved benchmark, ratios against berth and against the floor. */
export function timingTable(title, results) {
  const berth = results.find((r) => r.name.startsWith('berth'));
  const floor = results.find((r) => r.floor);
  const t = new Table({
    head: [title, 'median ms', 'p90 ms', 'p99 ms', 'round medians (min–max)', 'n', '× berth', floor ? `× ${floor.name}` : ''],
    style: { head: [], border: [] },
  });
  for (const r of results) {
    t.push([
      r.name,
      fmt(r.median),
      fmt(r.p90),
      fmt(r.p99),
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

/** The targets table: what, target, measured, met (`quick`: headed as a smoke run's). */
export function targetsTable(targets, quick = false) {
  const t = new Table({ head: [quick ? 'target (QUICK RUN: smoke figures only)' : 'target', 'goal', 'measured', 'met'], style: { head: [], border: [] } });
  for (const x of targets) t.push([x.name, x.goal, x.measured, x.met ? 'yes' : 'NO']);
  return t.toString();
}

/** Writes `data` as pretty JSON to `file` (directories created). */
export function writeJson(file, data) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
}
