// Renders a bench-results.json as the Markdown tables of bench/README.md.
//   node bench/markdown.mjs [bench/results/bench-results.json]
import fs from 'node:fs';
import { timingSections } from './lib/summary.mjs';

const file = process.argv[2] ?? new URL('./results/bench-results.json', import.meta.url).pathname;
const r = JSON.parse(fs.readFileSync(file, 'utf8'));
const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));
const out = [];

const m = r.machine;
out.push(`Run ${r.runId}, ${r.finishedAt.slice(0, 16).replace('T', ' ')} UTC: ${m.engine}, ${m.cpus} × ${m.cpu}, ${m.memoryGB} GB, Linux ${m.kernel}, Node ${m.node}; load average at the start ${m.loadAverage.map((x) => x.toFixed(1)).join(' / ')}.`);
out.push('');
if (r.quick) out.push('**Quick run: scaled-down counts, smoke figures only; not a measurement.**', '');
const sections = timingSections(r);
out.push('| operation | contender | median ms | p90 ms | p99 ms | round medians ms | n | × berth |');
out.push('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const [title, rs] of sections) {
  if (!rs) continue;
  const b = rs.find((x) => x.name.startsWith('berth'));
  for (const x of rs) {
    out.push(`| ${title} | ${x.name} | ${fmt(x.median)} | ${fmt(x.p90)} | ${fmt(x.p99)} | ${fmt(x.spread.min)}–${fmt(x.spread.max)} | ${x.n} | ${(x.median / b.median).toFixed(2)} |`);
  }
}
out.push('');
out.push('| target | goal | measured | met |');
out.push('| --- | --- | --- | --- |');
for (const t of r.targets) out.push(`| ${t.name} | ${t.goal} | ${t.measured} | ${t.met ? 'yes' : '**no**'} |`);
out.push('');
for (const c of r.concurrency ?? []) out.push(`- ${c.count} concurrent create+remove, ${c.name}: ${(c.wallMs / 1000).toFixed(2)} s wall, ${c.failed} failed, ${c.leaked} leaked.`);
if (r.runTail) {
  const t = r.runTail;
  out.push(`- One command alone: ${t.n} harness \`run\`s of \`true\` in a row on one session (after ${t.warmup} untimed): median ${t.median.toFixed(2)} ms, p90 ${t.p90.toFixed(2)} ms, p99 ${t.p99.toFixed(2)} ms, max ${t.max.toFixed(2)} ms.`);
}
if (r.eventLoop) {
  const e = r.eventLoop;
  const rounds = e.rounds?.length > 1 ? ` (the median of ${e.rounds.length} rounds by p99; their p99s ${e.rounds.map((x) => x.p99Ms.toFixed(2)).join(', ')} ms)` : '';
  out.push(`- Event-loop delay during ${e.calls} berth peeks (${e.inFlight} in flight)${rounds}: p50 ${e.p50Ms.toFixed(2)} ms, p99 ${e.p99Ms.toFixed(2)} ms, max ${e.maxMs.toFixed(2)} ms${e.idle ? `; the same process idling for as long: p50 ${e.idle.p50Ms.toFixed(2)} ms, p99 ${e.idle.p99Ms.toFixed(2)} ms, max ${e.idle.maxMs.toFixed(2)} ms` : ''}.`);
}
if (r.eventLoopRuns) {
  const e = r.eventLoopRuns;
  const rounds = e.rounds ?? [e];
  out.push(`- Event-loop delay during ${e.runs} harness runs of \`true\` (${e.inFlight} in flight${e.failed ? `, ${e.failed} failed` : ''}), ${rounds.length} round${rounds.length > 1 ? 's' : ''}, each beside the same process idling for as long right after; busy p99 over idle p99 per round: ${rounds.map((x) => `${x.overMs >= 0 ? '+' : ''}${x.overMs.toFixed(2)}`).join(', ')} ms. The median round: p50 ${e.p50Ms.toFixed(2)} ms, p99 ${e.p99Ms.toFixed(2)} ms, max ${e.maxMs.toFixed(2)} ms, in ${(e.wallMs / 1000).toFixed(1)} s; idle p50 ${e.idle.p50Ms.toFixed(2)} ms, p99 ${e.idle.p99Ms.toFixed(2)} ms, max ${e.idle.maxMs.toFixed(2)} ms.`);
}
const rssLine = (m, what) =>
  m.per
    ? `- RSS over ${m.calls} ${what} after ${m.warmup} to warm up (${m.inFlight} in flight, GC and a reading every ${m.every}${m.failed ? `, ${m.failed} failed` : ''}): ${m.rssBeforeMB.toFixed(1)} → ${m.rssAfterMB.toFixed(1)} MiB; least-squares trend ${m.growthMB.toFixed(2)} MiB per ${m.per}; the first ${m.per} alone ${m.firstWindowMB.toFixed(2)} MiB.`
    : `- RSS over ${m.runs ?? m.peeks} ${what}: ${m.rssBeforeMB.toFixed(1)} → ${m.rssAfterMB.toFixed(1)} MiB (${m.growthMB.toFixed(2)} MiB).`;
if (r.rss) out.push(rssLine(r.rss, 'peeks'));
if (r.rssRuns) out.push(rssLine(r.rssRuns, 'harness runs'));
if (r.spawnOutput) {
  const so = r.spawnOutput;
  out.push(`- ${(so.bytes / 2 ** 20).toFixed(0)} MiB printed through \`spawn\` (${so.received} bytes received, exit ${so.exitCode}, ${so.mbPerS.toFixed(0)} MiB/s): RSS peaked ${so.peakGrowthMB.toFixed(2)} MiB over the ${so.rssBeforeMB.toFixed(1)} MiB before.`);
}
out.push(`- Leaks at the end: ${r.leaks.containers.length} containers, ${r.leaks.volumes.length} volumes.`);
out.push('');
for (const p of r.profile ?? []) {
  out.push(`Where one agent turn's time goes, ${p.name}: ${p.wallMs.toFixed(0)} ms wall, ${p.requests} engine requests (request to last byte of the answer; requests overlap, so the sum can exceed the wall time):`);
  out.push('');
  out.push('| endpoint | calls | mean ms | total ms |');
  out.push('| --- | ---: | ---: | ---: |');
  for (const e of p.byEndpoint) out.push(`| \`${e.endpoint}\` | ${e.calls} | ${e.meanMs.toFixed(1)} | ${e.totalMs.toFixed(0)} |`);
  out.push('');
}
console.log(out.join('\n'));
