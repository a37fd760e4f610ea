// Resident memory over many calls, read as a trend: RSS (after a GC when `--expose-gc` is on)
// every `every` calls, and the least-squares slope of those readings scaled to `per` calls.
// A slope, not the last reading minus the first: an allocator keeps freed pages for reuse, so
// one before/after pair mixes the heap's one-off plateau with what each call leaves behind;
// the slope over many readings is the growth that goes on call after call (a leak).

const MiB = 2 ** 20;

/** Runs `count` calls of `fn`, `inFlight` at a time; resolves the number that rejected and the first error. */
export async function pool(count, inFlight, fn) {
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

/** A GC (three, when exposed) and 100 ms for the allocator to return what it freed. */
export async function settle() {
  if (globalThis.gc) for (let i = 0; i < 3; i++) globalThis.gc();
  await new Promise((r) => setTimeout(r, 100));
}

/** Least-squares slope of `ys` over `xs` (same length, at least two points). */
export function slope(xs, ys) {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/**
 * `warmup` calls of `fn` (not read), then `calls` more, `inFlight` at a time, reading RSS after
 * a settle before them and after every `every`. Resolves the readings (MiB), the trend
 * `growthMB` (MiB per `per` calls, from the slope), the plain growth over the first `per`
 * calls (`firstWindowMB`), the wall time of the measured calls (ms) and the failures.
 */
export async function rssTrend(fn, { warmup, calls, every, per, inFlight }) {
  const warm = await pool(warmup, inFlight, fn);
  const xs = [];
  const ys = [];
  const read = async (done) => {
    await settle();
    xs.push(done);
    ys.push(process.memoryUsage().rss / MiB);
  };
  await read(0);
  let failed = warm.failed;
  let firstFailure = warm.firstFailure;
  const t0 = performance.now();
  let busyMs = 0;
  for (let done = 0; done < calls; ) {
    const n = Math.min(every, calls - done);
    const t = performance.now();
    const r = await pool(n, inFlight, fn);
    busyMs += performance.now() - t;
    failed += r.failed;
    firstFailure ??= r.firstFailure;
    done += n;
    await read(done);
  }
  const at = (k) => ys[xs.findIndex((x) => x >= k)] ?? ys[ys.length - 1];
  return {
    warmup,
    calls,
    every,
    per,
    inFlight,
    wallMs: performance.now() - t0,
    busyMs,
    failed,
    firstFailure,
    gcExposed: Boolean(globalThis.gc),
    readingsMB: ys,
    rssBeforeMB: ys[0],
    rssAfterMB: ys[ys.length - 1],
    firstWindowMB: at(per) - ys[0],
    growthMB: xs.length > 1 ? slope(xs, ys) * per : 0,
  };
}
