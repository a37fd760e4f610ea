import type { Command } from 'commander';
import { listSessions, type SessionListing } from '../../index';
import { collectLabel } from '../arguments';
import { contextOf, type Context } from '../context';
import { age, ports, state, until } from '../format';
import { withProgress } from '../progress';
import { dutyHolder, expiresAt, holdersSummary, processWord, sessionJson } from '../session-view';
import { renderTable, type Column } from '../table';

interface LsOptions {
  prefix?: string;
  label?: Record<string, string>;
  all?: boolean;
}

/** `berth ls` (alias `list`): one row per session. */
export function registerLs(program: Command): void {
  program
    .command('ls')
    .alias('list')
    .description('list berth sessions: state, readiness, owner and holders with their liveness')
    .option('--prefix <prefix>', 'only sessions created with this name prefix')
    .option('--label <key=value>', 'only sessions carrying this label (repeatable)', collectLabel)
    .option('-a, --all', 'also containers under berth names that berth does not manage')
    .action(async (options: LsOptions, command: Command) => {
      const ctx = contextOf(command);
      const list = await withProgress(ctx, 'listing sessions', () =>
        listSessions({ ...ctx.engine, prefix: options.prefix, labels: options.label, includeUnmanaged: options.all === true }),
      );
      if (ctx.json) return ctx.out.json({ sessions: list.map(sessionJson) });
      printTable(ctx, list);
    });
}

function printTable(ctx: Context, list: SessionListing[]): void {
  const { c } = ctx.out;
  if (list.length === 0) {
    ctx.out.line(c.dim('no sessions'));
    return;
  }
  const withExpiry = list.some((s) => expiresAt(s) !== null);
  const columns: Column[] = [
    { head: 'SESSION', shrink: 3 },
    { head: 'NAME', shrink: 5, optional: true },
    { head: 'STATE' },
    { head: 'READY' },
    { head: 'OWNER' },
    { head: 'HOLDERS', shrink: 1 },
    { head: 'AGE' },
    { head: 'IMAGE', shrink: 4 },
    { head: 'PORTS', shrink: 2 },
    ...(withExpiry ? [{ head: 'EXPIRES' }] : []),
  ];
  const now = Date.now();
  const rows = list.map((s) => {
    const duty = dutyHolder(s);
    const expiry = expiresAt(s);
    return [
      s.managed ? (s.sessionId ?? '?') : c.magenta('(unmanaged)'),
      s.name,
      state(c, s.state),
      s.managed ? (s.ready ? 'yes' : c.yellow('no')) : '-',
      duty ? processWord(c, duty) + (duty.role === 'inheritor' ? ' (inherited)' : '') : '-',
      s.managed ? holdersSummary(c, s.holders) : '-',
      age(s.createdAt, now),
      s.image,
      ports(s.ports),
      ...(withExpiry ? [expiry ? until(expiry, now) : '-'] : []),
    ];
  });
  ctx.out.line(renderTable(columns, rows, { maxWidth: ctx.columns, bold: c.bold }));
}
