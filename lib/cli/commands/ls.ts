import type { Command } from 'commander';
import { listSessions, type SessionListing } from '../../index';
import { collectLabel } from '../arguments';
import type { Colours } from '../colour';
import { contextOf } from '../context';
import { age, expiry, ports, state } from '../format';
import { withProgress } from '../progress';
import { deathWord, dutyHolder, expiresAt, holdersSummary, processWord, sessionJson } from '../session-view';
import { renderTable, shorten, type Column } from '../table';

/** Session ids longer than this are shortened in the table (`head…tail`) unless `--wide`; a UUID fits. */
export const SESSION_CELL_MAX = 40;
/** Container names longer than this are shortened in the table unless `--wide`; a UUID's name fits. */
export const NAME_CELL_MAX = 60;

interface LsOptions {
  prefix?: string;
  label?: Record<string, string>;
  all?: boolean;
  wide?: boolean;
}

/** `berth ls` (alias `list`): one row per session. Changes nothing. */
export function registerLs(program: Command): void {
  program
    .command('ls')
    .alias('list')
    .description('list berth sessions: state, readiness, owner and holders with their liveness, expiry (changes nothing)')
    .option('--prefix <prefix>', 'only sessions created with this name prefix')
    .option('--label <key=value>', 'only sessions carrying this label (repeatable)', collectLabel)
    .option('-a, --all', 'also containers under berth names that berth does not manage')
    .option('-w, --wide', `whole session ids and names (else over ${SESSION_CELL_MAX} / ${NAME_CELL_MAX} characters they are shortened), and no fitting to the terminal's width`)
    .action(async (options: LsOptions, command: Command) => {
      const ctx = contextOf(command);
      const list = await withProgress(ctx, 'listing sessions', () =>
        listSessions({ ...ctx.engine, prefix: options.prefix, labels: options.label, includeUnmanaged: options.all === true }),
      );
      const now = Date.now();
      if (ctx.json) return ctx.out.json({ sessions: list.map((s) => sessionJson(s, now)) });
      const wide = options.wide === true;
      ctx.out.line(renderSessions(list, { c: ctx.out.c, maxWidth: wide ? Infinity : ctx.columns, wide, now }));
    });
}

/**
 * The `ls` table of `list` (or `no sessions`): one row per session, the STATE column as the
 * listing gives it (any word: `running`, `exited`), followed by the `lifecycle` when it is
 * `parked`, `expired` or `orphan`, an
 * EXPIRES column (`in 42m`, `expired`, `-`) when any session has a lifetime. Pure: no engine call.
 * @param options `maxWidth`: the terminal's columns (Infinity when piped or `--wide`); `wide`:
 *   whole ids and names; `now`: ms since the epoch, for ages and expiry.
 */
export function renderSessions(
  list: SessionListing[],
  { c, maxWidth = Infinity, wide = false, now = Date.now() }: { c: Colours; maxWidth?: number; wide?: boolean; now?: number },
): string {
  if (list.length === 0) return c.dim('no sessions');
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
  const id = (v: string, max: number): string => (wide ? v : shorten(v, max));
  const rows = list.map((s) => {
    const duty = dutyHolder(s);
    return [
      s.managed ? id(s.sessionId ?? '?', SESSION_CELL_MAX) : c.magenta('(unmanaged)'),
      id(s.name, NAME_CELL_MAX),
      stateCell(c, s),
      s.managed ? (s.ready ? 'yes' : c.yellow('no')) : '-',
      duty ? processWord(c, duty) + (duty.role === 'inheritor' ? ' (inherited)' : '') : '-',
      s.managed ? holdersSummary(c, s.holders) : '-',
      age(s.createdAt, now),
      s.image,
      ports(s.ports),
      ...(withExpiry ? [expiry(c, expiresAt(s), now)] : []),
    ];
  });
  return renderTable(columns, rows, { maxWidth, bold: c.bold });
}

/**
 * The STATE cell: the container's state, then the session's `lifecycle` when it is one a
 * reader must notice (`running parked`: its owner gone, kept until its lifetime ends;
 * `running expired`; `exited orphan`); `held` adds nothing.
 */
function stateCell(c: Colours, s: SessionListing): string {
  const life = s.lifecycle;
  if (s.death) return `${state(c, s.state)} ${c.red(deathWord(s.death))}${life === 'expired' || life === 'orphan' ? ` ${c.red(life)}` : ''}`;
  if (life === 'parked') return `${state(c, s.state)} ${c.yellow('parked')}`;
  if (life === 'expired' || life === 'orphan') return `${state(c, s.state)} ${c.red(life)}`;
  return state(c, s.state);
}
