import { BerthError, reapOrphans, type ReapOptions } from '../index';
import { formatInterval } from './arguments';
import type { Context } from './context';
import { shortId } from './format';
import { reapJson, reasonWords } from './reap-view';

/**
 * `reap --watch`: runs the reaper now and then every `intervalMs` until SIGINT or SIGTERM, then
 * resolves (exit 0). A run in progress when the signal comes finishes first; a second signal
 * exits at once (130). A failed run (engine down, ...) is reported and the next one tries
 * again; bad input (`E_INVALID_ARGUMENT`) stops the watch. Human output: one line per run,
 * one more per container removed; `--json`: one JSON document per run, one a line.
 */
export async function watch(ctx: Context, options: ReapOptions, intervalMs: number): Promise<void> {
  let stopping: NodeJS.Signals | null = null;
  let wake: () => void = () => {};
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) process.exit(130);
    stopping = signal;
    wake();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const { out } = ctx;
  if (!ctx.json) out.note(out.ce.dim(`reaping every ${formatInterval(intervalMs)}${options.dryRun ? ' (dry run)' : ''}; Ctrl-C stops`));
  try {
    while (!stopping) {
      await round(ctx, options);
      if (stopping) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (!ctx.json) out.note(out.ce.dim(`stopped (${stopping})`));
}

async function round(ctx: Context, options: ReapOptions): Promise<void> {
  const { out } = ctx;
  const at = new Date().toISOString();
  const stamp = out.c.dim(`[${at.slice(11, 19)}]`);
  try {
    const report = await reapOrphans(options);
    const dryRun = options.dryRun === true;
    if (ctx.json) return out.json({ at, ...reapJson(report, dryRun) });
    const verb = dryRun ? 'would remove' : 'removed';
    out.line(`${stamp} ${verb} ${report.removed.length}, kept ${report.kept.length}${report.removedRecords.length ? `, ${report.removedRecords.length} stale record(s)` : ''}${report.removedHelpers.length ? `, ${report.removedHelpers.length} helper container(s)` : ''}${report.removedImages.length ? `, ${report.removedImages.length} helper image(s)` : ''}`);
    for (const e of report.removed) {
      out.line(`${stamp}   ${verb} ${e.sessionId ?? '?'} (${e.name} ${shortId(e.id)}): ${reasonWords(e.reason)}`);
    }
  } catch (error) {
    if (BerthError.isInstance(error) && error.code === 'E_INVALID_ARGUMENT') throw error;
    const code = BerthError.isInstance(error) ? error.code : null;
    const message = error instanceof Error ? error.message : String(error);
    if (ctx.json) return out.json({ at, error: { code, message } });
    out.note(`${stamp} ${out.ce.red(code ?? 'error')}: ${message} (next run in a while)`);
  }
}
