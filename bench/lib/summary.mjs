// The benchmark's report on stdout: one table per suite, then the targets, leaks and failures.
import { timingTable, plainTable, targetsTable } from './report.mjs';

const signed = (v, unit) => `${v >= 0 ? '+' : ''}${v.toFixed(2)} ${unit}`;
const delays = (d) => `p50 ${d.p50Ms.toFixed(2)} ms, p99 ${d.p99Ms.toFixed(2)} ms, max ${d.maxMs.toFixed(2)} ms`;

/** The sections of timing tables, in the order of the run: `[title, results]`. */
export function timingSections(results) {
  const t = results.timings ?? {};
  const w = results.plan ?? {};
  return [
    ['peek / inspect', t.peek],
    ['create-to-ready', t.create],
    ['exec `true`', t.exec],
    ['remove', t.remove],
    ['one command (`true`)', t.run],
    ['4 KiB file write vs one command', t.write],
    [`agent turn (${w.workload?.files} files, ${w.workload?.runs} runs)`, t.turn],
    [`agent turn (${w.workload200?.files} files, ${w.workload200?.runs} runs)`, t.turn200],
  ].filter(([, r]) => r);
}

/** Prints every table of `results` (as `bench/run.mjs` collects them). */
export function printReport(results) {
  for (const [title, r] of timingSections(results)) console.log(`\n${timingTable(title, r)}`);
  for (const p of results.profile ?? []) {
    console.log(`\n${plainTable(`where a turn's time goes: ${p.name} (${p.wallMs.toFixed(0)} ms wall, ${p.requests} engine requests)`, p.byEndpoint.map((e) => [e.endpoint, `${e.calls} × ${e.meanMs.toFixed(1)} ms = ${e.totalMs.toFixed(0)} ms`]))}`);
  }
  if (results.concurrency) {
    console.log(`\n${plainTable(`${results.plan.concurrency} concurrent create+remove`, results.concurrency.map((c) => [c.name, `${(c.wallMs / 1000).toFixed(2)} s wall, ${c.failed} failed, ${c.leaked} leaked`]))}`);
  }
  const rt = results.runTail;
  if (rt) {
    console.log(`\n${plainTable(`one command alone: ${rt.n} harness runs of \`true\` in a row`, [['median / p90 / p99 / max', `${rt.median.toFixed(2)} / ${rt.p90.toFixed(2)} / ${rt.p99.toFixed(2)} / ${rt.max.toFixed(2)} ms`]])}`);
  }
  const loop = [];
  const e = results.eventLoop;
  if (e) {
    for (const [i, round] of (e.rounds ?? [e]).entries()) {
      const tag = e.rounds?.length > 1 ? `round ${i + 1}: ` : '';
      loop.push([`${tag}during ${e.calls} berth peeks, ${e.inFlight} in flight`, delays(round)]);
      loop.push([`${tag}idle for as long (the machine's own noise)`, delays(round.idle)]);
    }
  }
  const er = results.eventLoopRuns;
  if (er) {
    for (const [i, round] of (er.rounds ?? [er]).entries()) {
      const tag = er.rounds?.length > 1 ? `round ${i + 1}: ` : '';
      loop.push([`${tag}during ${er.runs} harness runs of \`true\`, ${er.inFlight} in flight (${(round.wallMs / 1000).toFixed(1)} s${round.failed ? `, ${round.failed} FAILED` : ''})`, delays(round)]);
      loop.push([`${tag}idle for ${(round.idle.ms / 1000).toFixed(1)} s right after`, delays(round.idle)]);
    }
    if (er.failed) loop.push(['first failure', er.firstFailure]);
  }
  if (loop.length) console.log(`\n${plainTable('event-loop delay', loop)}`);
  const mem = [];
  const trend = (m) =>
    m.per
      ? `${m.rssBeforeMB.toFixed(1)} → ${m.rssAfterMB.toFixed(1)} MiB; trend ${signed(m.growthMB, 'MiB')} per ${m.per}, first ${m.per}: ${signed(m.firstWindowMB, 'MiB')}`
      : `${m.rssBeforeMB.toFixed(1)} → ${m.rssAfterMB.toFixed(1)} MiB (${signed(m.growthMB, 'MiB')})`;
  const r = results.rss;
  if (r) mem.push([`${r.peeks} peeks after ${r.warmup} to warm up${r.gcExposed ? ' (GC before each reading)' : ''}`, trend(r)]);
  const rr = results.rssRuns;
  if (rr) {
    mem.push([
      `${rr.runs} harness runs, ${rr.inFlight} in flight, after ${rr.warmup} to warm up (${(rr.wallMs / 1000).toFixed(1)} s${rr.failed ? `, ${rr.failed} FAILED: ${rr.firstFailure}` : ''})`,
      trend(rr),
    ]);
  }
  const so = results.spawnOutput;
  if (so) {
    mem.push([
      `${(so.bytes / 2 ** 20).toFixed(0)} MiB printed through spawn (${so.received} bytes received, exit ${so.exitCode}, ${(so.wallMs / 1000).toFixed(1)} s, ${so.mbPerS.toFixed(0)} MiB/s)`,
      `peak ${so.rssPeakMB.toFixed(1)} MiB over ${so.rssBeforeMB.toFixed(1)} before (${signed(so.peakGrowthMB, 'MiB')})`,
    ]);
  }
  if (mem.length) console.log(`\n${plainTable('resident memory', mem)}`);
  const q = results.requests ?? {};
  console.log(`\nrequests berth makes (recorded this run): create ${q.create?.length ?? 0}, peek ${q.peek?.length ?? 0}, exec ${q.exec?.length ?? 0}, remove ${q.remove?.length ?? 0}`);
  console.log(`\n${targetsTable(results.targets, results.quick)}`);
  if (results.quick) console.log('QUICK RUN: the figures above are a smoke test with scaled-down counts; met or missed here says nothing. Run `npm run bench` for the measurement.');
  const leaks = results.leaks;
  console.log(`\nleaks: ${leaks.containers.length} containers, ${leaks.volumes.length} volumes${leaks.containers.length + leaks.volumes.length ? ' (removed now)' : ''}`);
  for (const f of results.failures) console.log(`FAILED ${f.suite}: ${f.error.split('\n')[0]}`);
}
