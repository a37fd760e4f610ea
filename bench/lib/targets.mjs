// The targets, checked against this run's figures (reported, never asserted). Each target says
// its goal as text and as a number (`limit`, in `unit`, `better` lower or higher), so that the
// chart can draw the measured value beside the goal.
import { RUN_CONTENDERS, TURN_CONTENDERS, WRITE_CONTENDERS } from './names.mjs';

const find = (rs, pred) => rs?.find(pred);
const isBerth = (r) => r.name.startsWith('berth');
const byName = (name) => (r) => r.name === name;
const x = (v) => `${v.toFixed(2)}×`;
const fmtMs = (v) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));

/**
 * @typedef {object} Target
 * @property {string} name what is measured
 * @property {string} goal the goal as text
 * @property {number} value the measured figure, in `unit`
 * @property {number} limit the goal's bound, in `unit`
 * @property {'lower' | 'higher'} better which side of `limit` meets the goal
 * @property {boolean} strict whether `value === limit` misses
 * @property {string} unit '×', 'ms' or 'MiB'
 * @property {string} measured the measured figure as text (with what it comes from)
 * @property {boolean} met
 */

/** One entry per target this run has figures for. @returns {Target[]} */
export function evaluateTargets(results) {
  const t = results.timings ?? {};
  const plan = results.plan ?? {};
  const out = [];
  const push = (target) => {
    const { value, limit, better, strict } = target;
    if (value === undefined || Number.isNaN(value)) return;
    const met = better === 'lower' ? (strict ? value < limit : value <= limit) : strict ? value > limit : value >= limit;
    out.push({ ...target, met: met && target.valid !== false });
  };
  const ratio = (rs, a, b) => {
    const ma = find(rs, a)?.median;
    const mb = find(rs, b)?.median;
    return ma && mb ? ma / mb : undefined;
  };
  const ratioTarget = (name, value, cmp, limit, measured) =>
    push({
      name,
      goal: `${cmp} ${x(limit)}`,
      value,
      limit,
      better: cmp === '≤' || cmp === '<' ? 'lower' : 'higher',
      strict: cmp === '<' || cmp === '>',
      unit: '×',
      measured: measured ?? (value === undefined ? '' : x(value)),
    });

  // One operation against the same requests made raw, and against dockerode.
  const raw = byName("raw (berth's requests)");
  ratioTarget('peek vs the same raw requests', ratio(t.peek, isBerth, raw), '≤', 1.2);
  ratioTarget('peek vs dockerode', ratio(t.peek, isBerth, byName('dockerode')), '<', 1);
  ratioTarget('create-to-ready vs same raw requests', ratio(t.create, isBerth, raw), '≤', 1.05);
  ratioTarget('exec vs same raw requests', ratio(t.exec, isBerth, raw), '≤', 1.1);

  // A command: the harness `run` of `true` against the floor of an engine exec.
  const harness = find(t.run, byName(RUN_CONTENDERS.harness));
  const floor = find(t.run, byName(RUN_CONTENDERS.raw));
  if (harness && floor) {
    ratioTarget('`run` of `true`: median vs raw exec (3 requests)', harness.median / floor.median, '≤', 0.1,
      `${x(harness.median / floor.median)} (${fmtMs(harness.median)} vs ${fmtMs(floor.median)} ms)`);
    // The tail from the run of `run` alone when there is one (many samples, nothing between
    // them); from the interleaved samples otherwise.
    const tail = results.runTail ?? harness;
    const alone = results.runTail ? `, ${tail.n} runs in a row` : `, n ${tail.n}`;
    ratioTarget('`run` of `true`: p99 vs its median', tail.p99 / tail.median, '<', 3,
      `${x(tail.p99 / tail.median)} (p99 ${fmtMs(tail.p99)} ms over ${fmtMs(tail.median)} ms${alone})`);
  }

  // A 4 KiB file write against a command on the same session.
  const write = find(t.write, byName(WRITE_CONTENDERS.write));
  const run = find(t.write, byName(WRITE_CONTENDERS.run));
  if (write && run) {
    ratioTarget('4 KiB `writeFile` vs `run` of `true`', write.median / run.median, '≤', 1.5,
      `${x(write.median / run.median)} (${fmtMs(write.median)} vs ${fmtMs(run.median)} ms)`);
  }

  // Agent turns against the CLI backend: speed-up = CLI median / berth median.
  const turn = (rs, workload, limit) => {
    const b = find(rs, isBerth)?.median;
    const c = find(rs, byName(TURN_CONTENDERS.cli))?.median;
    if (!b || !c || !workload) return;
    ratioTarget(`agent turn (${workload.files} files, ${workload.runs} runs) speed-up over the CLI backend`, c / b, '≥', limit,
      `${x(c / b)} (${fmtMs(b)} vs ${fmtMs(c)} ms)`);
  };
  turn(t.turn, plan.workload, 6);
  turn(t.turn200, plan.workload200, 10);

  // The event loop and memory.
  const el = results.eventLoop;
  if (el) push({ name: `event-loop delay p99 during ${el.calls} peeks`, goal: '< 5 ms', value: el.p99Ms, limit: 5, better: 'lower', strict: true, unit: 'ms', measured: `${el.p99Ms.toFixed(2)} ms${el.rounds?.length > 1 ? ` (median of ${el.rounds.length} rounds)` : ''}` });
  const elr = results.eventLoopRuns;
  if (elr) {
    const over = elr.p99Ms - elr.idle.p99Ms;
    const rounds = elr.rounds?.length > 1 ? `, median of ${elr.rounds.length} rounds` : '';
    push({
      name: `event-loop delay p99 during ${elr.runs} runs (${elr.inFlight} in flight) over idle`,
      goal: '≤ idle + 1 ms',
      value: over,
      limit: 1,
      better: 'lower',
      strict: false,
      unit: 'ms',
      valid: elr.failed === 0,
      measured: `${over >= 0 ? '+' : ''}${over.toFixed(2)} ms (${elr.p99Ms.toFixed(2)} vs idle ${elr.idle.p99Ms.toFixed(2)} ms${rounds})${elr.failed ? `, ${elr.failed} runs failed` : ''}`,
    });
  }
  const mb = (v) => `${v >= 0 ? '+' : ''}${v.toFixed(2)} MiB`;
  const trend = (m) => (m.per ? `, trend over ${m.calls} after ${m.warmup}; first ${m.per}: ${mb(m.firstWindowMB)}` : '');
  const per = (m, what) => (m.per ? `RSS growth per ${m.per} ${what}` : `RSS growth over ${m.calls ?? m.runs ?? m.peeks} ${what}`);
  if (results.rss) {
    const m = results.rss;
    push({ name: per(m, 'peeks'), goal: '< 5 MiB', value: m.growthMB, limit: 5, better: 'lower', strict: true, unit: 'MiB', measured: `${mb(m.growthMB)}${trend(m)}` });
  }
  const rr = results.rssRuns;
  if (rr) {
    push({ name: per(rr, 'runs'), goal: '< 5 MiB', value: rr.growthMB, limit: 5, better: 'lower', strict: true, unit: 'MiB', valid: rr.failed === 0, measured: `${mb(rr.growthMB)}${trend(rr)}${rr.failed ? `, ${rr.failed} runs failed` : ''}` });
  }
  const so = results.spawnOutput;
  if (so) {
    const whole = so.received === so.bytes && so.exitCode === 0;
    push({
      name: `peak RSS growth while ${(so.bytes / 2 ** 20).toFixed(0)} MiB come through \`spawn\``,
      goal: '< 8 MiB (a few)',
      value: so.peakGrowthMB,
      limit: 8,
      better: 'lower',
      strict: true,
      unit: 'MiB',
      valid: whole,
      measured: `${mb(so.peakGrowthMB)} (${so.mbPerS.toFixed(0)} MiB/s)${whole ? '' : `, only ${so.received} of ${so.bytes} bytes, exit ${so.exitCode}`}`,
    });
  }
  const ls = results.ls;
  if (ls) {
    const n = ls.sessions.toLocaleString('en-US');
    ratioTarget(`\`berth ls\` table vs --json, ${n} sessions: time`, ls.timeRatio, '≤', 1, `${x(ls.timeRatio)} (${fmtMs(ls.table.ms)} vs ${fmtMs(ls.json.ms)} ms)`);
    ratioTarget(`\`berth ls\` table vs --json, ${n} sessions: peak RSS`, ls.memoryRatio, '≤', 1, `${x(ls.memoryRatio)} (+${ls.table.peakGrowthMB.toFixed(1)} vs +${ls.json.peakGrowthMB.toFixed(1)} MiB)`);
  }
  for (const c of results.concurrency ?? []) {
    if (c.name === 'berth') push({ name: `${c.count} concurrent create+remove: leaks`, goal: '0', value: c.leaked + c.failed, limit: 0, better: 'lower', strict: false, unit: '', measured: `${c.leaked} leaked, ${c.failed} failed` });
  }
  return out;
}
