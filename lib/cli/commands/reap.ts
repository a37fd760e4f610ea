import type { Command } from 'commander';
import { reapOrphans, type ReapOptions } from '../../index';
import { collectLabel, parseInterval } from '../arguments';
import { confirm } from '../confirm';
import { contextOf, type Context } from '../context';
import { withProgress } from '../progress';
import { reapJson, renderReap } from '../reap-view';
import { watch } from '../watch';

interface ReapFlags {
  prefix?: string;
  label?: Record<string, string>;
  dryRun?: boolean;
  yes?: boolean;
  watch?: number | true;
}

/** `--watch` without a value: every minute. */
export const DEFAULT_WATCH_MS = 60_000;

/** `berth reap`: removes orphaned sessions (reapOrphans). */
export function registerReap(program: Command): void {
  program
    .command('reap')
    .description(
      'remove orphans: sessions whose owner is dead and that no live or unknown process holds. On a terminal it shows the plan and asks first (unless --yes)',
    )
    .option('--prefix <prefix>', 'only sessions created with this name prefix')
    .option('--label <key=value>', 'only sessions carrying this label (repeatable)', collectLabel)
    .option('-n, --dry-run', 'show what would be removed; remove nothing')
    .option('-y, --yes', 'remove without asking')
    .option('-w, --watch [interval]', 'keep running, reaping every interval (30s, 5m, 1h; default 60s) until SIGINT or SIGTERM', parseInterval)
    .action(async (flags: ReapFlags, command: Command) => {
      const ctx = contextOf(command);
      const scope: ReapOptions = { ...ctx.engine, prefix: flags.prefix, labels: flags.label };
      if (flags.watch !== undefined) {
        const intervalMs = flags.watch === true ? DEFAULT_WATCH_MS : flags.watch;
        return watch(ctx, { ...scope, dryRun: flags.dryRun === true }, intervalMs);
      }
      // On a terminal, removing needs --yes or an answer; with --json there is no prompt, only the plan.
      const byDefault = !flags.dryRun && !flags.yes && ctx.interactive;
      const dryRun = flags.dryRun === true || byDefault;
      const ask = byDefault && !ctx.json;
      const plan = await run(ctx, { ...scope, dryRun });
      if (ctx.json) return ctx.out.json(reapJson(plan, dryRun));
      ctx.out.line(renderReap(ctx.out.c, plan, { dryRun, maxWidth: ctx.columns }));
      const leftovers = plan.removedRecords.length + plan.removedHelpers.length + plan.removedImages.length;
      if (!ask || plan.removed.length + leftovers === 0) return;
      if (!(await confirm(`Remove ${plan.removed.length} session(s)${leftovers ? ' and the stale leftovers' : ''}?`))) {
        ctx.out.line('nothing removed');
        return;
      }
      // The reaper checks every candidate again right before removing it.
      const done = await run(ctx, { ...scope, dryRun: false });
      ctx.out.line(renderReap(ctx.out.c, done, { dryRun: false, maxWidth: ctx.columns }));
    });
}

function run(ctx: Context, options: ReapOptions) {
  return withProgress(ctx, options.dryRun ? 'surveying sessions' : 'reaping orphans', () => reapOrphans(options));
}
