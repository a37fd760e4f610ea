// Commands under load, through the harness provider's session: the event loop's delay while
// many `run`s are in flight (beside the same process idling), resident memory over many
// `run`s, and resident memory while one command prints a large output through `spawn`.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { runTrue } from './run.mjs';

const MiB = 2 ** 20;
const ms = (ns) => ns / 1e6;
/** The longest idle baseline: enough samples for a p99 at 1 ms resolution. */
const MAX_IDLE_MS = 20_000;

/** Runs `count` calls of `fn`, `inFlight` at a time; resolves the number that rejected and the first error. */
async function pool(count, inFlight, fn) {
  let next = 0;
  let failed = 0;
  let firstFailure = null;
  const worker = async () => {
    while (next < count) {
      next += 1;
      try {
        await fn();
      } catch (error) {
        failed += 1;
        firstFailure ??= String(error?.message ?? error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
  return { failed, firstFailure };
}

async function settle() {
  if (globalThis.gc) for (let i = 0; i < 3; i++) globalThis.gc();
  await new Promise((r) => setTimeout(r, 100));
}

const delays = (h) => ({ p50Ms: ms(h.percentile(50)), p99Ms: ms(h.percentile(99)), maxMs: ms(h.max) });

/**
 * Event-loop delay (ms, `monitorEventLoopDelay` at 1 ms resolution) while `runs` harness `run`s
 * of `true` go, `inFlight` at a time; then the same process idling for as long (at most 20 s),
 * the machine's own noise to compare with. Failed runs are counted, not thrown.
 */
export async function eventLoopRunsSuite(session, { runs, inFlight }) {
  const busy = monitorEventLoopDelay({ resolution: 1 });
  busy.enable();
  const t0 = performance.now();
  const { failed, firstFailure } = await pool(runs, inFlight, () => runTrue(session));
  const wallMs = performance.now() - t0;
  busy.disable();
  const idleMs = Math.min(wallMs, MAX_IDLE_MS);
  const idle = monitorEventLoopDelay({ resolution: 1 });
  idle.enable();
  await new Promise((r) => setTimeout(r, idleMs));
  idle.disable();
  return { runs, inFlight, failed, firstFailure, wallMs, ...delays(busy), idle: { ms: idleMs, ...delays(idle) } };
}

/** RSS (MiB) before and after `runs` harness `run`s of `true`, `inFlight` at a time, after a warm-up, GC before each reading. */
export async function rssRunsSuite(session, { runs, warmup, inFlight }) {
  const warm = await pool(warmup, inFlight, () => runTrue(session));
  await settle();
  const before = process.memoryUsage().rss;
  const t0 = performance.now();
  const done = await pool(runs, inFlight, () => runTrue(session));
  const wallMs = performance.now() - t0;
  await settle();
  const after = process.memoryUsage().rss;
  return {
    runs,
    warmup,
    inFlight,
    wallMs,
    failed: warm.failed + done.failed,
    firstFailure: warm.firstFailure ?? done.firstFailure,
    gcExposed: Boolean(globalThis.gc),
    rssBeforeMB: before / MiB,
    rssAfterMB: after / MiB,
    growthMB: (after - before) / MiB,
  };
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
