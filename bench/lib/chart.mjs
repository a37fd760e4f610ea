// The benchmark's chart (`ratios.svg`): vega-lite compiled to vega, rendered headless to SVG.
//
// Top: per operation, each contender's median time relative to berth's (berth = 1), as a bar
// from 1 to the ratio on a log axis with a rule at 1 (a bar on a log scale has no baseline at
// 0, so bars start at 1: right of it the contender is slower than berth, left of it faster),
// a dot at the ratio and its number. Bottom: one row per target, the measured figure as a bar
// from the neutral value (1 for ratios, 0 otherwise) with a dot and its number, coloured met
// or missed, the goal as a dashed rule with the side that meets it shaded.
//
// A bar narrower than 1.5 px (a ratio of about 1, berth's own row) is left out: its dot shows
// the figure, so no mark is ever drawn with zero width (`bench/check-chart.mjs` checks that).
import * as vega from 'vega';
import * as vl from 'vega-lite';

const WIDTH = 440;
const ROW = 20;
const LABEL_EXTENT = 230;
const TARGET_ROW = 26;
/** Line break in a wrapped axis label (split by the axis's labelExpr). */
const WRAP = '|';
const WRAP_AT = 34;
const KINDS = { domain: ['berth', 'raw floor', 'other client'], range: ['#2b6cb0', '#718096', '#dd6b20'] };
const MET = { domain: ['met', 'missed'], range: ['#2f855a', '#c53030'] };
const MIN_BAR_PX = 1.5;

/** The 1-2-5 ticks of a log axis between `lo` and `hi`. */
function logTicks(lo, hi) {
  const out = [];
  const steps = hi / lo < 4 ? [1, 1.2, 1.5, 2, 3, 5, 7] : hi / lo < 30 ? [1, 2, 3, 5] : [1, 2, 5];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of steps) {
      const v = +(m * 10 ** e).toPrecision(3);
      if (v >= lo && v <= hi) out.push(v);
    }
  }
  return out;
}

/** A log domain around `values` with room for the labels. */
function logDomain(values) {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return [lo / 2, hi * 2.2];
}

/** The pixel width of a bar from `from` to `to` on `scale` ('log' or 'linear') over `domain`. */
function barPx(scale, domain, from, to) {
  const f = scale === 'log' ? Math.log : (v) => v;
  return (WIDTH * Math.abs(f(to) - f(from))) / (f(domain[1]) - f(domain[0]));
}

/** `text` (backticks dropped) broken into lines of at most 34 characters at spaces, joined by WRAP. */
function wrap(text) {
  const lines = [''];
  for (const word of text.replaceAll('`', '').split(' ')) {
    const last = lines.length - 1;
    if (lines[last] && lines[last].length + word.length + 1 > WRAP_AT) lines.push(word);
    else lines[last] = lines[last] ? `${lines[last]} ${word}` : word;
  }
  return lines.join(WRAP);
}

const fmtRatio = (r) => (r >= 10 ? r.toFixed(1) : r.toFixed(2));

/** The text layers: a label right of the dot (bars going right) or left of it (bars going left). */
function labelLayers(x, y) {
  const text = (side) => ({
    transform: [{ filter: `datum.side === '${side}'` }],
    mark: { type: 'text', align: side === 'right' ? 'left' : 'right', dx: side === 'right' ? 7 : -7, fontSize: 10, color: '#1a202c' },
    encoding: { x, y, text: { field: 'label' } },
  });
  return [text('right'), text('left')];
}

/** One operation's panel: contenders as rows, bars from 1 to their ratio. */
function opPanel(op, rows, domain, axis) {
  const x = { field: 'ratio', type: 'quantitative', scale: { type: 'log', domain, nice: false, clamp: true }, axis };
  const y = { field: 'contender', type: 'nominal', sort: rows.map((r) => r.contender), title: null, axis: { labelLimit: 0, minExtent: LABEL_EXTENT, labelPadding: 8, ticks: false, domain: false } };
  const color = { field: 'kind', type: 'nominal', scale: KINDS, legend: null };
  return {
    title: { text: op, anchor: 'start', fontSize: 11, offset: 4 },
    width: WIDTH,
    height: { step: ROW },
    data: { values: rows },
    layer: [
      { mark: { type: 'rule', color: '#a0aec0', strokeWidth: 1 }, encoding: { x: { datum: 1, type: 'quantitative', scale: x.scale, axis } } },
      { transform: [{ filter: 'datum.bar' }], mark: { type: 'bar', height: 11, opacity: 0.85 }, encoding: { x, x2: { datum: 1 }, y, color } },
      { mark: { type: 'point', filled: true, size: 45, opacity: 1 }, encoding: { x, y, color } },
      ...labelLayers(x, y),
    ],
  };
}

/** One target's panel: the measured figure against the goal on the target's own axis. */
function targetPanel(t) {
  const ratio = t.unit === '×';
  const neutral = ratio ? 1 : 0;
  const scaleType = ratio ? 'log' : 'linear';
  // Every mark in the left 55% of the plot, the label right of them all.
  const lo = Math.min(t.value, t.limit, neutral);
  const hi = Math.max(t.value, t.limit, neutral);
  let domain;
  if (ratio) {
    const from = Math.log(lo / 1.3);
    domain = [Math.exp(from), Math.exp(from + (Math.log(hi) - from) / 0.55)];
  } else {
    const span = hi - lo || (t.unit ? 1 : 2);
    const from = lo - (lo < 0 ? span * 0.1 : 0);
    domain = [from, from + (hi - from || span) / 0.55];
  }
  const edge = t.better === 'lower' ? domain[0] : domain[1];
  const unit = t.unit === '×' ? '×' : t.unit ? ` ${t.unit}` : '';
  const value = ratio ? fmtRatio(t.value) : t.unit ? t.value.toFixed(2) : String(t.value);
  const row = {
    name: wrap(t.name),
    v: t.value,
    neutral,
    status: t.met ? 'met' : 'missed',
    bar: barPx(scaleType, domain, neutral, t.value) >= MIN_BAR_PX,
    at: hi,
    label: `${value}${unit} ${t.met ? 'met' : 'MISSED'} · goal ${t.goal}`,
  };
  const scale = { type: scaleType, domain, nice: false, clamp: true, zero: false };
  const ticks = ratio ? { values: logTicks(...domain), format: '~g' } : t.unit ? { tickCount: 5, format: '~r' } : { tickMinStep: 1, format: 'd' };
  const x = { field: 'v', type: 'quantitative', scale, title: null, axis: { ...ticks, labelFontSize: 9, grid: false } };
  const y = {
    field: 'name',
    type: 'nominal',
    title: null,
    axis: { labelExpr: `split(datum.label, '${WRAP}')`, labelLimit: 0, minExtent: LABEL_EXTENT, labelPadding: 8, ticks: false, domain: false, labelFontSize: 10, labelLineHeight: 12 },
  };
  const color = { field: 'status', type: 'nominal', scale: MET, legend: null };
  return {
    width: WIDTH,
    height: TARGET_ROW,
    data: { values: [row] },
    layer: [
      // The side that meets the goal (none to shade when the goal is the axis's end, as 0 leaks).
      ...(barPx(scaleType, domain, t.limit, edge) >= MIN_BAR_PX
        ? [{ mark: { type: 'rect', color: '#c6f6d5', opacity: 0.6 }, encoding: { x: { datum: t.limit, type: 'quantitative', scale }, x2: { datum: edge } } }]
        : []),
      { mark: { type: 'rule', color: '#a0aec0' }, encoding: { x: { datum: neutral, type: 'quantitative', scale } } },
      { mark: { type: 'rule', color: '#1a202c', strokeDash: [4, 2], strokeWidth: 1.5 }, encoding: { x: { datum: t.limit, type: 'quantitative', scale } } },
      { transform: [{ filter: 'datum.bar' }], mark: { type: 'bar', height: 10, opacity: 0.85 }, encoding: { x, x2: { field: 'neutral' }, y, color } },
      { mark: { type: 'point', filled: true, size: 45, opacity: 1 }, encoding: { x, y, color } },
      { mark: { type: 'text', align: 'left', dx: 9, fontSize: 10, color: '#1a202c' }, encoding: { x: { field: 'at', type: 'quantitative', scale }, y, text: { field: 'label' } } },
    ],
  };
}

/** The ratio rows of the top part, per operation: `{ op, contender, ratio, kind }`. */
export function ratioRows(results) {
  const t = results.timings ?? {};
  const w = results.plan ?? {};
  const ops = [
    ['peek', t.peek],
    ['create-to-ready', t.create],
    ['exec of true', t.exec],
    ['remove', t.remove],
    ['one command: run / exec of true', t.run],
    [w.workload ? `agent turn (${w.workload.files} files, ${w.workload.runs} runs)` : 'agent turn', t.turn],
    [w.workload200 ? `agent turn (${w.workload200.files} files, ${w.workload200.runs} runs)` : 'long agent turn', t.turn200],
  ];
  const rows = [];
  for (const [op, rs] of ops) {
    const b = rs?.find((x) => x.name.startsWith('berth'));
    if (!b) continue;
    for (const x of rs) {
      const kind = x.name.startsWith('berth') ? 'berth' : x.name.startsWith('raw') ? 'raw floor' : 'other client';
      rows.push({ op, contender: x.name, ratio: +(x.median / b.median).toFixed(4), kind });
    }
  }
  return rows;
}

/** The vega-lite spec of the whole chart (exported for the check and for tests of the layout). */
export function chartSpec(results) {
  const rows = ratioRows(results);
  const domain = rows.length ? logDomain([...rows.map((r) => r.ratio), 1]) : [0.5, 2];
  const ops = [...new Set(rows.map((r) => r.op))];
  // The shared log axis is drawn once, under the last operation.
  const axis = { values: logTicks(...domain), format: '~g', title: "median time ÷ berth's (log scale; right of 1: slower than berth)", labelFontSize: 9, titleFontSize: 10, titleFontWeight: 'normal' };
  const opPanels = ops.map((op, i) =>
    opPanel(op, rows.filter((r) => r.op === op).map((r) => ({
      ...r,
      bar: barPx('log', domain, 1, r.ratio) >= MIN_BAR_PX,
      side: r.ratio >= 1 ? 'right' : 'left',
      label: `${fmtRatio(r.ratio)}×`,
    })), domain, i === ops.length - 1 ? axis : null),
  );
  const targets = (results.targets ?? []).filter((t) => Number.isFinite(t.value) && Number.isFinite(t.limit));
  const m = results.machine ?? {};
  const subtitle = [
    `${m.engine ?? 'engine'}, ${m.cpus ?? '?'} × ${m.cpu ?? '?'}, node ${m.node ?? '?'}, ${(results.finishedAt ?? '').slice(0, 10)}`,
    ...(results.quick ? ['QUICK RUN: smoke figures only, not a measurement'] : []),
  ];
  const section = (text, sub) => ({ text, subtitle: sub, anchor: 'start', fontSize: 13, subtitleFontSize: 10 });
  const parts = [];
  if (opPanels.length) {
    parts.push({
      title: section('Median time relative to berth (berth = 1)', 'blue: berth · grey: the raw requests (the floor) · orange: other clients'),
      vconcat: opPanels,
      spacing: 6,
    });
  }
  if (targets.length) {
    parts.push({
      title: section('Targets', 'dot and bar: measured (green met, red missed) · dashed: the goal · shaded: the side that meets it'),
      vconcat: targets.map(targetPanel),
      spacing: 4,
    });
  }
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'berth benchmark', subtitle, anchor: 'start', fontSize: 15 },
    vconcat: parts,
    spacing: 22,
    background: 'white',
    padding: 12,
    config: { view: { stroke: null }, axis: { labelFontSize: 10 } },
    resolve: { scale: { x: 'independent', y: 'independent', color: 'independent' } },
  };
}

/** The chart as an SVG document (vega's headless renderer). */
export async function chartSvg(results) {
  const spec = vl.compile(chartSpec(results), { logger: vega.logger(vega.None) }).spec;
  const view = new vega.View(vega.parse(spec), { renderer: 'none' });
  return view.toSVG();
}
