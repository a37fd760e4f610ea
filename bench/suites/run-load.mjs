// Commands under load, through the harness provider's session: the event loop's delay while
// many `run`s are in flight (beside the same process idling), resident memory over many
// `run`s, and resident memory while one command prints a large output through `spawn`.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { runTrue } from './run.mjs';
import { pool, rssTrend, settle } from '../lib/rss.mjs';

const MiB = 2 ** 20;
const ms = (ns) => ns / 1e6;
/** The longest idle baseline: enough samples for a p99 at 1 ms resolution. */
const MAX_IDLE_MS = 20_000;

const delays = (h) => ({ p50Ms: ms(h.percentile(50)), p99Ms: ms(h.percentile(99)), maxMs: ms(h.max) });

/** One round: the delay while the runs go, then the same process idling for as long (at most 20 s). */
async function eventLoopRound(session, runs, inFlight) {
  const busy = monitorEventLoopDelay({ resolution: 1 });
  busy.enable();
  const t0 = performance.now();
  const { failed, firstFailure } = await pool(runs, inFlight, () => runTrue(session));
  const wallMs = performance.now() - t0;
  busy.disable();
  await settle();
  const idleMs = Math.min(wallMs, MAX_IDLE_MS);
  const idle = monitorEventLoopDelay({ resolution: 1 });
  idle.enable();
  await new Promise((r) => setTimeout(r, idleMs));
  idle.disable();
  const b = delays(busy);
  const i = delays(idle);
  return { failed, firstFailure, wallMs, ...b, idle: { ms: idleMs, ...i }, overMs: b.p99Ms - i.p99Ms };
}

/**
 * Event-loop delay (ms, `monitorEventLoopDelay` at 1 ms resolution) while `runs` harness `run`s
 * of `true` go, `inFlight` at a time, each round beside the same process idling for as long
 * right after it (the machine's own noise). `rounds` rounds; the figure is the round with the
 * median `overMs` (busy p99 minus idle p99), since one round's p99 is ten samples and a single
 * scheduler hiccup of the machine moves it. Every round is kept in `rounds`. Failed runs are
 * counted, not thrown.
 */
export async function eventLoopRunsSuite(session, { runs, inFlight, rounds = 1 }) {
  const all = [];
  for (let r = 0; r < rounds; r++) all.push(await eventLoopRound(session, runs, inFlight));
  const median = [...all].sort((a, b) => a.overMs - b.overMs)[Math.floor(all.length / 2)];
  const failed = all.reduce((n, r) => n + r.failed, 0);
  const firstFailure = all.find((r) => r.firstFailure)?.firstFailure ?? null;
  return { runs, inFlight, ...median, failed, firstFailure, rounds: all.map(({ firstFailure: _, ...r }) => r) };
}

/**
 * RSS over many harness `run`s of `true` (see `rssTrend`): `warmup` runs, then `runs` more,
 * `inFlight` at a time, read every `every`; `growthMB` is the trend per `per` runs.
 */
export async function rssRunsSuite(session, { runs, warmup, inFlight, every, per }) {
  const trend = await rssTrend(() => runTrue(session), { warmup, calls: runs, every, per, inFlight });
  return { runs, ...trend };
}

/**
 * One command printing `bytes` bytes (`head -c <bytes> /dev/zero`) through the harness
 * `spawn`, stdout read to the end as fast as it comes and dropped, stderr too. RSS is sampled
 * at every chunk and every 5 ms (`peak`), and right after a GC every 4 MiB read when GC is
 * exposed, so that the chunks the reader dropped do not pile up as garbage (`held`: the
 * highest of those post-GC samples). Growth is over the RSS just before (after a 4 MiB warm-up
 * spawn and a GC); the bytes received are counted.
 */
export async function spawnOutputSuite(session, { bytes }) {
  const gc = globalThis.gc;
  // Warm-up (untimed): 4 MiB through a spawn first, so that one-off allocations of a process's
  // first large output are not counted as what an output holds.
  const warm = await session.spawn({ command: `head -c ${4 * MiB} /dev/zero` });
  await Promise.all([warm.stdout.pipeTo(new WritableStream()), warm.stderr.pipeTo(new WritableStream())]);
  await warm.wait();
  await settle();
  const before = process.memoryUsage().rss;
  let peak = before;
  let held = before;
  const sample = () => {
    const rss = process.memoryUsage().rss;
    if (rss > peak) peak = rss;
    return rss;
  };
  const timer = setInterval(sample, 5);
  let chunks = 0;
  let sinceGc = 0;
  const drain = async (stream) => {
    let n = 0;
    const reader = stream.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      n += next.value.byteLength;
      chunks += 1;
      sinceGc += next.value.byteLength;
      sample();
      if (gc && sinceGc >= 4 * MiB) {
        sinceGc = 0;
        gc();
        held = Math.max(held, sample());
      }
    }
    return n;
  };
  const t0 = performance.now();
  try {
    const proc = await session.spawn({ command: `head -c ${bytes} /dev/zero` });
    const [received, stderrBytes] = await Promise.all([drain(proc.stdout), drain(proc.stderr)]);
    const { exitCode } = await proc.wait();
    const wallMs = performance.now() - t0;
    sample();
    return {
      bytes,
      received,
      stderrBytes,
      exitCode,
      chunks,
      wallMs,
      mbPerS: received / MiB / (wallMs / 1000),
      gcExposed: Boolean(gc),
      rssBeforeMB: before / MiB,
      rssPeakMB: peak / MiB,
      peakGrowthMB: (peak - before) / MiB,
      heldGrowthMB: gc ? (held - before) / MiB : undefined,
    };
  } finally {
    clearInterval(timer);
  }
}
