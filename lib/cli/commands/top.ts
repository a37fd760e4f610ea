import type { Command } from 'commander';
import type { BindingMetrics } from '../../../binding';
import { BerthError, listSessions, type SessionListing, type SessionMetrics } from '../../index';
import { containerMetrics } from '../../metrics';
import { collectLabel, formatInterval, parseInterval } from '../arguments';
import type { Colours } from '../colour';
import { contextOf, type Context } from '../context';
import { bytes, state } from '../format';
import { NAME_CELL_MAX, SESSION_CELL_MAX } from './ls';
import { renderTable, shorten, type Column } from '../table';

/** `--interval` when not given: a new sample every 2 s. */
export const DEFAULT_TOP_INTERVAL_MS = 2000;
/** The longest wait between a first sample and the one that gives its CPU share, in ms. */
export const PRIME_MS = 1000;
/** Sessions sampled at once in a round (one stats request each). */
const CONCURRENCY = 8;

interface TopOptions {
  prefix?: string;
  label?: Record<string, string>;
  interval?: number;
  once?: boolean;
  wide?: boolean;
}

/** One session of a round and its sample (`null`: gone since the listing). */
export interface TopRow {
  session: SessionListing;
  metrics: SessionMetrics | null;
}

/**
 * `berth top`: usage figures of berth's sessions, refreshed each interval until SIGINT/SIGTERM,
 * or one round with `--once`. Changes nothing.
 */
export function registerTop(program: Command): void {
  program
    .command('top')
    .alias('stats')
    .description("usage figures of berth sessions, like docker stats: CPU, memory, processes, network and block I/O, refreshed until Ctrl-C (changes nothing)")
    .option('--prefix <prefix>', 'only sessions created with this name prefix')
    .option('--label <key=value>', 'only sessions carrying this label (repeatable)', collectLabel)
    .option('--interval <duration>', `time between samples: 500ms, 2s, 1m (a bare number is seconds; default ${formatInterval(DEFAULT_TOP_INTERVAL_MS)})`, parseInterval)
    .option('--once', 'one round (after the short wait a CPU share needs), then exit')
    .option('-w, --wide', `whole session ids and names, no fitting to the terminal's width`)
    .addHelpText(
      'after',
      '\nCPU % is of one CPU (200% = two CPUs busy), over the time since the previous sample.\n' +
        'MEM is the memory in use without the page cache, over the limit the engine reports.\n' +
        'NET and BLOCK I/O are totals since the container started (received / sent, read / written).\n' +
        '--json: one JSON object per session per sample, one a line.',
    )
    .action(async (options: TopOptions, command: Command) => {
      const ctx = contextOf(command);
      await top(ctx, options);
    });
}

/** The loop: list, sample, print; each interval until a signal (a second one exits 130 at once). */
async function top(ctx: Context, options: TopOptions): Promise<void> {
  const intervalMs = options.interval ?? DEFAULT_TOP_INTERVAL_MS;
  const previous = new Map<string, BindingMetrics>();
  const abort = new AbortController();
  let stopping = false;
  let wake: () => void = () => {};
  const onSignal = (): void => {
    if (stopping) process.exit(130);
    stopping = true;
    abort.abort();
    wake();
  };
  const sleep = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const live = !ctx.json && !options.once && ctx.interactive;
  try {
    let first = true;
    while (!stopping) {
      let rows: TopRow[];
      try {
        rows = await round(ctx, options, previous, abort.signal);
        // A share needs two readings: the first round samples again a moment later.
        if (first && rows.some((r) => r.metrics?.running && r.metrics.cpu.percent === null)) {
          await sleep(Math.min(intervalMs, PRIME_MS));
          if (stopping) break;
          rows = await round(ctx, options, previous, abort.signal);
        }
      } catch (error) {
        if (stopping && BerthError.isInstance(error) && error.code === 'E_ABORTED') break;
        throw error;
      }
      first = false;
      print(ctx, rows, options, live);
      if (options.once || stopping) break;
      await sleep(intervalMs);
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** One round: the selection listed again (sessions come and go), then one sample each. */
async function round(
  ctx: Context,
  options: TopOptions,
  previous: Map<string, BindingMetrics>,
  abortSignal: AbortSignal,
): Promise<TopRow[]> {
  const list = await listSessions({ ...ctx.engine, prefix: options.prefix, labels: options.label, abortSignal });
  const rows: TopRow[] = list.map((session) => ({ session, metrics: null }));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < rows.length) {
      const row = rows[next++]!;
      // A container going away under the round (the engine's 409/500 while it is removed)
      // drops its row; the engine down, an abort or bad input ends the command.
      const sample = await containerMetrics(row.session.id, previous.get(row.session.id), { ...ctx.engine, abortSignal }).catch(
        (error: unknown) => {
          if (BerthError.isInstance(error) && error.code === 'E_ENGINE') return null;
          throw error;
        },
      );
      if (sample?.metrics.running) previous.set(row.session.id, sample.native);
      else previous.delete(row.session.id);
      row.metrics = sample?.metrics ?? null;
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, rows.length) }, worker));
  const seen = new Set(list.map((s) => s.id));
  for (const id of previous.keys()) if (!seen.has(id)) previous.delete(id);
  return rows.filter((r) => r.metrics !== null);
}

function print(ctx: Context, rows: TopRow[], options: TopOptions, live: boolean): void {
  const { out } = ctx;
  if (ctx.json) {
    for (const r of rows) out.json(topJson(r));
    return;
  }
  const wide = options.wide === true;
  const table = renderTop(rows, { c: out.c, maxWidth: wide ? Infinity : ctx.columns, wide });
  // Live in a terminal: redraw in place, as `docker stats` does; piped: one table per round.
  if (live) process.stdout.write('\x1b[2J\x1b[H');
  else if (!options.once) out.line(out.c.dim(`[${new Date().toISOString().slice(11, 19)}]`));
  out.line(table);
}

/** The `--json` line of one sample: the session's identity, its state, and the figures. */
export function topJson(r: TopRow): Record<string, unknown> {
  const s = r.session;
  return { sessionId: s.sessionId, name: s.name, id: s.id, state: s.state, ...r.metrics };
}

/**
 * The `top` table (or `no sessions`): one row per session, `docker stats`'s columns. Pure.
 * @param options `maxWidth`: the terminal's columns (Infinity when piped or `--wide`); `wide`: whole ids and names.
 */
export function renderTop(rows: TopRow[], { c, maxWidth = Infinity, wide = false }: { c: Colours; maxWidth?: number; wide?: boolean }): string {
  if (rows.length === 0) return c.dim('no sessions');
  const columns: Column[] = [
    { head: 'SESSION', shrink: 3 },
    { head: 'NAME', shrink: 5, optional: true },
    { head: 'STATE' },
    { head: 'CPU %' },
    { head: 'MEM USAGE / LIMIT' },
    { head: 'MEM %' },
    { head: 'PIDS' },
    { head: 'NET I/O' },
    { head: 'BLOCK I/O' },
  ];
  const id = (v: string, max: number): string => (wide ? v : shorten(v, max));
  const body = rows.map(({ session: s, metrics: m }) => {
    const mem = m?.memory;
    return [
      id(s.sessionId ?? '?', SESSION_CELL_MAX),
      id(s.name, NAME_CELL_MAX),
      state(c, s.state),
      percent(m?.cpu.percent ?? null),
      `${size(mem?.usedBytes)} / ${size(mem?.limitBytes)}`,
      mem?.usedBytes != null && mem.limitBytes ? percent((mem.usedBytes / mem.limitBytes) * 100) : '-',
      m?.pids.current == null ? '-' : `${m.pids.current}${m.pids.limit != null ? ` / ${m.pids.limit}` : ''}`,
      `${size(m?.network.rxBytes)} / ${size(m?.network.txBytes)}`,
      `${size(m?.blockIo.readBytes)} / ${size(m?.blockIo.writeBytes)}`,
    ];
  });
  return renderTable(columns, body, { maxWidth, bold: c.bold });
}

function percent(v: number | null): string {
  return v === null ? '-' : `${v.toFixed(2)}%`;
}

function size(v: number | null | undefined): string {
  return v == null ? '-' : bytes(v);
}
