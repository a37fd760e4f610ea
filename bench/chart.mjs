// Redraws the chart from a bench-results.json, with this code's targets (no engine needed).
//   node bench/chart.mjs [bench/results/bench-results.json] [out.svg]
// The SVG goes next to the JSON (ratios.svg) unless `out.svg` is given.
import fs from 'node:fs';
import path from 'node:path';
import { chartSvg } from './lib/chart.mjs';
import { evaluateTargets } from './lib/targets.mjs';

const file = process.argv[2] ?? new URL('./results/bench-results.json', import.meta.url).pathname;
const out = process.argv[3] ?? path.join(path.dirname(file), 'ratios.svg');
const results = JSON.parse(fs.readFileSync(file, 'utf8'));
results.targets = evaluateTargets(results);
fs.writeFileSync(out, await chartSvg(results));
console.log(`chart: ${out}`);
