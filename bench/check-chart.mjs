// Checks that the benchmark's chart draws what it shows: renders the SVG to PNG with
// `rsvg-convert` (Debian: librsvg2-bin), then, for every data mark vega drew (bars and other
// rects, dots, rules, labels), fails when it has no extent (a bar path `h0`, a symbol of size 0,
// a rule of length 0, an empty label) or when the PNG has no pixel of its colour where it
// should be (a mark the renderer did not paint).
//
//   node bench/check-chart.mjs [bench/results/ratios.svg] [--png <out.png>]
//   node bench/check-chart.mjs --self-test    proves the check fails on broken charts
//
// Exit code 0 when every mark is drawn, 1 with the list of the ones that are not.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { XMLParser } from 'fast-xml-parser';
import { svgPathBbox } from 'svg-path-bbox';
import { PNG } from 'pngjs';

/** Below this many pixels a mark's width or height (or a rule's length) counts as zero. */
const MIN_PX = 0.5;
/** The largest channel difference (0–255) of a pixel that shows a mark's colour. */
const TOLERANCE = 48;
const WHITE = [255, 255, 255];

function parseArgs(argv) {
  const i = argv.indexOf('--png');
  const png = i >= 0 ? argv[i + 1] : undefined;
  const rest = i >= 0 ? argv.filter((_, j) => j !== i && j !== i + 1) : argv;
  const svg = rest[0] ?? new URL('./results/ratios.svg', import.meta.url).pathname;
  return { svg, png: png ?? path.join(os.tmpdir(), `${path.basename(svg, '.svg')}-check.png`) };
}

/** Renders `svg` to `png` with rsvg-convert; throws with how to install it when it is missing. */
function render(svg, png) {
  const r = spawnSync('rsvg-convert', ['--format', 'png', '--output', png, svg], { encoding: 'utf8' });
  if (r.error?.code === 'ENOENT') throw new Error('rsvg-convert not found: install it (Debian: apt-get install -y librsvg2-bin)');
  if (r.status !== 0) throw new Error(`rsvg-convert failed (exit ${r.status}): ${r.stderr.trim()}`);
  return PNG.sync.read(fs.readFileSync(png));
}

/** `translate(x,y)` of a transform attribute; anything else in it is reported as unsupported. */
function translation(transform) {
  if (!transform) return { dx: 0, dy: 0, ok: true };
  const m = /^\s*translate\(\s*([-\d.e]+)[\s,]+([-\d.e]+)\s*\)\s*$/.exec(transform);
  return m ? { dx: Number(m[1]), dy: Number(m[2]), ok: true } : { dx: 0, dy: 0, ok: false };
}

const tagOf = (node) => Object.keys(node).find((k) => k !== ':@');
const attrsOf = (node) => node[':@'] ?? {};
const textOf = (node) => {
  const tag = tagOf(node);
  if (tag === '#text') return String(node['#text']);
  return (node[tag] ?? []).map(textOf).join('');
};

/** Every drawn item of every data mark (`role-mark`, legend symbols), with its absolute box. */
export function collectMarks(svgText) {
  const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', preserveOrder: true, trimValues: false });
  const doc = parser.parse(svgText);
  const items = [];
  const walk = (nodes, ox, oy, markType, exact) => {
    for (const node of nodes) {
      const tag = tagOf(node);
      if (!tag || tag === '#text') continue;
      const a = attrsOf(node);
      const t = translation(a.transform);
      const x = ox + t.dx;
      const y = oy + t.dy;
      const ok = exact && t.ok;
      const cls = String(a.class ?? '');
      if (tag === 'svg') {
        walk(node.svg, x, y, markType, ok);
        continue;
      }
      if (tag === 'g') {
        const mine = /\brole-(mark|legend-symbol)\b/.test(cls) ? /\bmark-(\w+)/.exec(cls)?.[1] : undefined;
        walk(node.g, x, y, mine ?? markType, ok);
        continue;
      }
      if (!markType || !['path', 'line', 'text'].includes(tag)) continue;
      const item = { mark: markType, tag, label: a['aria-label'] ?? '', exact: ok, hidden: a.display === 'none' || a.visibility === 'hidden' };
      if (tag === 'path') {
        const d = String(a.d ?? '').trim();
        const [x0, y0, x1, y1] = d ? svgPathBbox(d) : [0, 0, 0, 0];
        Object.assign(item, { d, box: [x + x0, y + y0, x + x1, y + y1], width: x1 - x0, height: y1 - y0 });
        item.fill = a.fill;
        item.alpha = Number(a.opacity ?? 1) * Number(a['fill-opacity'] ?? 1);
      } else if (tag === 'line') {
        const x2 = Number(a.x2 ?? 0) - Number(a.x1 ?? 0);
        const y2 = Number(a.y2 ?? 0) - Number(a.y1 ?? 0);
        Object.assign(item, { length: Math.hypot(x2, y2) });
      } else {
        Object.assign(item, { text: textOf(node).trim() });
      }
      items.push(item);
    }
  };
  walk(doc, 0, 0, undefined, true);
  return items;
}

/** Why `item` is not drawn, or undefined when it is. */
function geometryProblem(item) {
  if (item.hidden) return 'hidden';
  if (item.tag === 'path' && item.alpha !== undefined && item.alpha < 0.05) return `transparent (opacity ${item.alpha})`;
  if (item.tag === 'path') {
    if (!item.d) return 'empty path';
    if (item.width < MIN_PX || item.height < MIN_PX) {
      const what = item.mark === 'symbol' ? 'symbol of size 0' : 'zero width/height';
      return `${what} (${item.width.toFixed(2)} × ${item.height.toFixed(2)} px, d="${item.d.slice(0, 40)}")`;
    }
  }
  if (item.tag === 'line' && item.length < MIN_PX) return `rule of length ${item.length.toFixed(2)} px`;
  if (item.tag === 'text' && !item.text) return 'empty label';
  return undefined;
}

function hexColour(fill) {
  const m = /^#([0-9a-f]{6}|[0-9a-f]{3})$/i.exec(String(fill ?? ''));
  if (!m) return undefined;
  const h = m[1].length === 3 ? [...m[1]].map((c) => c + c).join('') : m[1];
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16));
}

const dist = (p, q) => Math.max(...p.map((v, i) => Math.abs(v - q[i])));

/** Whether the PNG shows `item`'s fill colour (over white, with its opacity) inside its box. */
function paintedProblem(item, png) {
  const colour = hexColour(item.fill);
  if (item.tag !== 'path' || !colour || !item.exact) return undefined;
  const expected = colour.map((c) => Math.round(c * item.alpha + 255 * (1 - item.alpha)));
  if (dist(expected, WHITE) <= 4) return undefined; // a white mark on white: nothing to see
  const [x0, y0, x1, y1] = item.box;
  for (let y = Math.max(0, Math.floor(y0) - 1); y <= Math.min(png.height - 1, Math.ceil(y1) + 1); y++) {
    for (let x = Math.max(0, Math.floor(x0) - 1); x <= Math.min(png.width - 1, Math.ceil(x1) + 1); x++) {
      const i = (y * png.width + x) * 4;
      const px = [png.data[i], png.data[i + 1], png.data[i + 2]];
      const d = dist(px, expected);
      if (d <= TOLERANCE && d < dist(px, WHITE)) return undefined;
    }
  }
  return `not painted: no pixel of ${item.fill} in [${item.box.map((v) => v.toFixed(1)).join(', ')}]`;
}

/** Checks the chart; returns `{ ok, problems, counts, png }`. */
export function checkChart(svgFile, pngFile) {
  const svgText = fs.readFileSync(svgFile, 'utf8');
  const png = render(svgFile, pngFile);
  const items = collectMarks(svgText);
  const problems = [];
  const counts = {};
  for (const item of items) {
    counts[item.mark] = (counts[item.mark] ?? 0) + 1;
    const why = geometryProblem(item) ?? paintedProblem(item, png);
    if (why) problems.push(`${item.mark} ${item.label ? `"${item.label}"` : `<${item.tag}>`}: ${why}`);
  }
  if (!items.some((i) => (i.mark === 'rect' || i.mark === 'symbol') && i.tag === 'path')) problems.push('the chart has no bar and no dot at all');
  return { ok: problems.length === 0, problems, counts, png: { file: pngFile, width: png.width, height: png.height } };
}

/**
 * The check against charts known to be broken: a chart drawn from made-up figures passes; the
 * same chart with one bar's width set to 0 (`h0`, what a bar on a log scale from 0 gives), one
 * dot of size 0, one bar moved off the canvas, or one bar made transparent fails.
 */
async function selfTest() {
  const { chartSvg } = await import('./lib/chart.mjs');
  const timing = (name, median) => ({ name, median, p90: median * 1.2, p99: median * 1.5, n: 10, spread: { min: median, max: median } });
  const good = await chartSvg({
    machine: { engine: 'self-test', cpus: 1, cpu: 'none', node: process.version },
    finishedAt: new Date().toISOString(),
    plan: { workload: { files: 20, runs: 20 } },
    timings: { exec: [timing('berth', 80), timing('docker CLI', 130), timing("raw (berth's requests)", 78)] },
    targets: [{ name: 'speed-up', goal: '≥ 6.00×', value: 2.5, limit: 6, better: 'higher', unit: '×', measured: '2.50×', met: false }],
  });
  const firstBar = /(aria-roledescription="bar" d="M[-\d.]+,[-\d.]+h)([\d.]+)(v[\d.]+h-)([\d.]+)/;
  const cases = [
    ['a chart drawn from made-up figures', good, true],
    ['a bar of zero width (h0)', good.replace(firstBar, '$10$30'), false],
    ['a dot of size 0', good.replace(/(aria-roledescription="point" transform="[^"]*" d=")[^"]+"/, '$1M0,0A0,0,0,1,1,0,0A0,0,0,1,1,0,0"'), false],
    ['a bar off the canvas', good.replace(/(aria-roledescription="bar" d="M)[-\d.]+/, '$19000'), false],
    ['a transparent bar', good.replace(/(aria-roledescription="bar" d="[^"]+")/, '$1 fill-opacity="0"'), false],
  ];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chart-check-'));
  let ok = true;
  for (const [what, svg, shouldPass] of cases) {
    if (!shouldPass && svg === good) throw new Error(`self-test: the case "${what}" changed nothing`);
    const file = path.join(dir, 'case.svg');
    fs.writeFileSync(file, svg);
    const r = checkChart(file, path.join(dir, 'case.png'));
    const right = r.ok === shouldPass;
    ok &&= right;
    console.log(`self-test ${right ? 'ok' : 'WRONG'}: ${what}: ${r.ok ? 'passes' : `fails (${r.problems[0]})`}`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return ok;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes('--self-test')) {
    process.exitCode = (await selfTest()) ? 0 : 1;
  } else {
    run();
  }
}

function run() {
  const args = parseArgs(process.argv.slice(2));
  try {
    const r = checkChart(args.svg, args.png);
    const counts = Object.entries(r.counts).map(([k, v]) => `${v} ${k}`).join(', ');
    console.log(`chart check ${args.svg}: ${counts}; rendered ${r.png.width} × ${r.png.height} px to ${r.png.file}`);
    for (const p of r.problems) console.log(`  NOT DRAWN ${p}`);
    console.log(r.ok ? 'chart check: every mark is drawn' : `chart check FAILED: ${r.problems.length} marks not drawn`);
    process.exitCode = r.ok ? 0 : 1;
  } catch (error) {
    console.error(`chart check FAILED: ${error?.message ?? error}`);
    process.exitCode = 1;
  }
}
