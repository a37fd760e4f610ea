// Order statistics of timing samples, and the interleaved round-by-round runner.
import { performance } from 'node:perf_hooks';

/** The q-quantile (0..1) of `values` (linear interpolation between order statistics). */
export function quantile(values, q) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

/** Median, p90, p99, min, max, mean of `values` and their count. */
export function summarize(values) {
  return {
    n: values.length,
    median: quantile(values, 0.5),
    p90: quantile(values, 0.9),
    p99: quantile(values, 0.99),
    min: Math.min(...values),
    max: Math.max(...values),
    mean: values.reduce((a, b) => a + b, 0) / values.length,
  };
}

/**
 * @typedef {object} Contender
 * @property {string} name
 * @property {() => Promise<unknown>} [prepare] untimed, before each repetition; its result is passed to run
 * @property {(ctx: any) => Promise<unknown>} run the timed call
 * @property {(ctx: any, result: any) => Promise<unknown>} [cleanup] untimed, after each repetition (given run's result)
 * @property {boolean} [floor] the raw floor the others are compared with
 */

/**
 * Runs every contender `warmup` times (unrecorded), then `rounds` rounds; in each round every
 * contender runs `perRound` repetitions, the order rotating from round to round so that no
 * contender always runs first or after the same one. Returns, per contender, all samples (ms),
 * the summary, and the median of each round (the spread across rounds).
 * @param {{ contenders: Contender[], rounds: number, perRound: number, warmup: number, onRound?: (r: number) => void }} plan
 */
export async function interleave({ contenders, rounds, perRound, warmup, onRound }) {
  const once = async (c) => {
    const ctx = c.prepare ? await c.prepare() : undefined;
    const t0 = performance.now();
    let result;
    try {
      result = await c.run(ctx);
      return performance.now() - t0;
    } finally {
      if (c.cleanup) await c.cleanup(ctx, result);
    }
  };
  for (let i = 0; i < warmup; i++) for (const c of contenders) await once(c);
  const samples = new Map(contenders.map((c) => [c.name, []]));
  const roundMedians = new Map(contenders.map((c) => [c.name, []]));
  for (let r = 0; r < rounds; r++) {
    const order = contenders.map((_, i) => contenders[(i + r) % contenders.length]);
    for (const c of order) {
      const mine = [];
      for (let i = 0; i < perRound; i++) mine.push(await once(c));
      samples.get(c.name).push(...mine);
      roundMedians.get(c.name).push(quantile(mine, 0.5));
    }
    onRound?.(r);
  }
  return contenders.map((c) => {
    const rm = roundMedians.get(c.name);
    return {
      name: c.name,
      floor: Boolean(c.floor),
      ...summarize(samples.get(c.name)),
      roundMedians: rm,
      spread: { min: Math.min(...rm), max: Math.max(...rm) },
    };
  });
}
