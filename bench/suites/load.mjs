// Load: many concurrent creates and removes (wall time, leaks), the event loop's delay while
// berth works, and resident memory over many peeks.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { performance } from 'node:perf_hooks';
import * as berth from '../../index.mjs';
import { rssTrend } from '../lib/rss.mjs';

/** Runs `count` calls of `fn`, `inFlight` at a time. */
async function pool(count, inFlight, fn) {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
}

/** `count` concurrent create+remove with berth and with dockerode; leaks counted by label. */
export async function concurrencySuite(ctx, count) {
  const out = [];
  const contenders = [
    {
      name: 'berth',
      one: async () => {
        const s = await berth.createSession({ sessionId: ctx.sessionId('conc'), image: ctx.image, labels: ctx.labelsFor('conc-berth'), socketPath: ctx.socketPath });
        const r = await s.remove();
        if (!r.removed) throw new Error(`remove: ${r.reason}`);
      },
      suite: 'conc-berth',
    },
    {
      name: 'dockerode',
      one: async () => {
        const c = await ctx.dockerode.createContainer({
          name: `bench-dr-${ctx.sessionId('conc')}`,
          Image: ctx.image,
          Entrypoint: ['sleep', '2147483647'],
          Labels: ctx.labelsFor('conc-dockerode'),
          HostConfig: { Init: true },
        });
        await c.start();
        await c.remove({ force: true, v: true });
      },
      suite: 'conc-dockerode',
    },
  ];
  for (const c of contenders) {
    const t0 = performance.now();
    const results = await Promise.allSettled(Array.from({ length: count }, () => c.one()));
    const wallMs = performance.now() - t0;
    const failed = results.filter((r) => r.status === 'rejected');
    const leaked = await ctx.listBySuite(c.suite);
    out.push({
      name: c.name,
      count,
      wallMs,
      failed: failed.length,
      firstFailure: failed[0] ? String(failed[0].reason?.message ?? failed[0].reason) : null,
      leaked: leaked.length,
    });
  }
  return out;
}

/**
 * Event-loop delay (ms) while `calls` berth peeks run, `inFlight` at a time; then, as a
 * baseline, the delay of this process idling for as long (what the machine's other load
 * alone costs the event loop). `rounds` rounds; the figure is the round with the median busy
 * p99 (every round is kept in `rounds`).
 */
export async function eventLoopSuite(ctx, sessionId, calls, { inFlight = 10, rounds = 1 } = {}) {
  const ms = (ns) => ns / 1e6;
  const delays = (h) => ({ p50Ms: ms(h.percentile(50)), p99Ms: ms(h.percentile(99)), maxMs: ms(h.max) });
  const all = [];
  for (let r = 0; r < rounds; r++) {
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    const t0 = performance.now();
    await pool(calls, inFlight, () => berth.peek(sessionId, { socketPath: ctx.socketPath }));
    const wallMs = performance.now() - t0;
    h.disable();
    const idle = monitorEventLoopDelay({ resolution: 1 });
    idle.enable();
    await new Promise((r) => setTimeout(r, wallMs));
    idle.disable();
    all.push({ wallMs, ...delays(h), idle: delays(idle) });
  }
  const median = [...all].sort((a, b) => a.p99Ms - b.p99Ms)[Math.floor(all.length / 2)];
  return { calls, inFlight, ...median, rounds: all };
}

/** RSS over many berth peeks (see `rssTrend`): the trend per `per` peeks, after a warm-up. */
export async function rssSuite(ctx, sessionId, { peeks, warmup, every, per, inFlight = 10 }) {
  const trend = await rssTrend(() => berth.peek(sessionId, { socketPath: ctx.socketPath }), { warmup, calls: peeks, every, per, inFlight });
  return { peeks, ...trend };
}
