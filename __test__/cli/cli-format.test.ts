// The command line's pure pieces (no engine): column fitting, durations, relative ages, labels.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { collectLabel, formatInterval, parseAge, parseInterval } from '../../dist/cli/arguments.js';
import { colours } from '../../dist/cli/colour.js';
import { renderSessions } from '../../dist/cli/commands/ls.js';
import { renderTop, topJson } from '../../dist/cli/commands/top.js';
import { age, bytes, expiry, ports, state, until } from '../../dist/cli/format.js';
import { cut, fitWidths, renderTable, shorten } from '../../dist/cli/table.js';
import { fakeListing, fakeListings } from '../helpers/fake-listings.mjs';
import { runNode } from '../helpers/node-process.js';

const MIB = 1_048_576;
/** How far the table's peak may go over --json's, in bytes. */
const LS_MEMORY_MARGIN = 8 * MIB;

describe('berth command line helpers', () => {
  it('fits columns: natural widths when they fit, the widest shrinkable first, optional ones dropped last', () => {
    const columns = [{ head: 'ID' }, { head: 'NAME', shrink: 2, optional: true }, { head: 'IMAGE', shrink: 1 }];
    const rows = [['a', 'x'.repeat(30), 'y'.repeat(20)]];
    expect(fitWidths(columns, rows, Infinity)).toEqual({ keep: [0, 1, 2], widths: [2, 30, 20] });
    // 2 + 2 + 30 + 2 + 20 = 56: fitting 46 takes 10 from the widest (NAME) alone.
    expect(fitWidths(columns, rows, 46)).toEqual({ keep: [0, 1, 2], widths: [2, 20, 20] });
    // Both shrink evenly once NAME is down to IMAGE's width.
    expect(fitWidths(columns, rows, 36)).toEqual({ keep: [0, 1, 2], widths: [2, 15, 15] });
    // Below both floors (8), NAME goes, and IMAGE gets the room back.
    expect(fitWidths(columns, rows, 20)).toEqual({ keep: [0, 2], widths: [2, 16] });
  });

  it('renders aligned rows without trailing spaces, cutting cells short with …', () => {
    const table = renderTable([{ head: 'A' }, { head: 'B', shrink: 1 }], [['1', 'long value here'], ['22', 'v']], { maxWidth: 12 });
    expect(table.split('\n')).toEqual(['A   B', '1   long va…', '22  v']);
  });

  it('parses --watch intervals and --label pairs, refusing anything else', () => {
    expect([parseInterval('30'), parseInterval('30s'), parseInterval('5m'), parseInterval('1h'), parseInterval('500ms')]).toEqual([
      30_000, 30_000, 300_000, 3_600_000, 500,
    ]);
    expect([formatInterval(60_000), formatInterval(1500), formatInterval(500)]).toEqual(['1m', '1.5s', '500ms']);
    for (const bad of ['soon', '-1s', '10ms', '5 minutes']) expect(() => parseInterval(bad), bad).toThrow();
    expect(collectLabel('b=2', collectLabel('a=1=x'))).toEqual({ a: '1=x', b: '2' });
    expect(() => collectLabel('=v')).toThrow(/key=value/);
  });

  it('writes ages, sizes and ports as docker does', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(['2026-01-01T12:00:00Z', '2026-01-01T11:59:30Z', '2026-01-01T11:57:00Z', '2026-01-01T07:00:00Z', '2025-12-25T12:00:00Z'].map((t) => age(t, now))).toEqual([
      'just now', '30s ago', '3m ago', '5h ago', '7d ago',
    ]);
    expect([until('2026-01-01T12:05:00Z', now), until('2026-01-01T11:00:00Z', now)]).toEqual(['in 5m', 'expired']);
    expect([bytes(512), bytes(1_400_000), bytes(25_000_000)]).toEqual(['512 B', '1.4 MB', '25 MB']);
    expect(ports({ '8080/tcp': '127.0.0.1:49153' })).toBe('127.0.0.1:49153->8080/tcp');
    expect(ports({})).toBe('-');
  });

  it('ages for --unused-for: ms, s, m, h, d or 0; anything else refused', () => {
    expect(['0', '500ms', '45s', '30m', '12h', '7d', '1.5h'].map(parseAge)).toEqual([0, 500, 45_000, 1_800_000, 43_200_000, 604_800_000, 5_400_000]);
    for (const bad of ['7', '-1d', '7x', 'soon', '1.5ms', '1e3d', '36501d', '']) expect(() => parseAge(bad), bad).toThrow();
  });

  it('expiry from the API\'s number (ms since the epoch): in 42m, expired, -', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    const c = colours(false);
    expect([until(now + 42 * 60_000 + 500, now), until(now, now), until(now - 1, now)]).toEqual(['in 42m', 'expired', 'expired']);
    expect([expiry(c, now + 3 * 3_600_000, now), expiry(c, now - 5, now), expiry(c, null, now)]).toEqual(['in 3h', 'expired', '-']);
    // A state word the listing adds later (parked) is shown as given.
    expect([state(c, 'running'), state(c, 'parked')]).toEqual(['running', 'parked']);
  });

  it('shortens ids head…tail and cuts coloured cells without breaking their colour codes', () => {
    const id = `${'a'.repeat(50)}-tail-123`;
    const short = shorten(id, 40);
    expect(short).toHaveLength(40);
    expect(short.endsWith('tail-123')).toBe(true);
    expect(short).toContain('…');
    expect(shorten('short', 40)).toBe('short');
    const red = '\x1b[31mexpired-long\x1b[39m';
    expect(cut(red, 5)).toBe('\x1b[31mexpi…\x1b[0m');
    expect(cut('漢字漢字', 5)).toBe('漢字…');
  });

  it('renders the top table: figures as docker stats writes them, `-` for what the engine did not report', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    const running = {
      running: true,
      sampledAt: now,
      cpu: { percent: 87.456, usedMs: 1234.5, onlineCpus: 2, limit: 1 },
      memory: { usedBytes: 14_237_696, limitBytes: 134_217_728 },
      pids: { current: 3, limit: 64 },
      network: { rxBytes: 1_500, txBytes: 524_288 },
      blockIo: { readBytes: 0, writeBytes: 4_096 },
    };
    const stopped = {
      running: false,
      sampledAt: null,
      cpu: { percent: null, usedMs: null, onlineCpus: null, limit: null },
      memory: { usedBytes: null, limitBytes: null },
      pids: { current: null, limit: null },
      network: { rxBytes: null, txBytes: null },
      blockIo: { readBytes: null, writeBytes: null },
    };
    // Podman sends no pids limit when none was set, and a first sample no CPU share.
    const first = { ...running, cpu: { ...running.cpu, percent: null }, pids: { current: 2, limit: null } };
    const rows = [
      { session: fakeListing(1, now), metrics: running },
      { session: fakeListing(2, now, { state: 'exited' }), metrics: stopped },
      { session: fakeListing(3, now), metrics: first },
    ];
    const lines = renderTop(rows, { c: colours(false) }).split('\n');
    expect(lines[0]).toMatch(/^SESSION +NAME +STATE +CPU % +MEM USAGE \/ LIMIT +MEM % +PIDS +NET I\/O +BLOCK I\/O$/);
    expect(lines[1]).toMatch(/^agent-session-1 +berth-agent-session-1-0a1b2c3d +running +87\.46% +14 MB \/ 134 MB +10\.61% +3 \/ 64 +1\.5 kB \/ 524 kB +0 B \/ 4\.1 kB$/);
    expect(lines[2]).toMatch(/^agent-session-2 +\S+ +exited +- +- \/ - +- +- +- \/ - +- \/ -$/);
    expect(lines[3]).toMatch(/ running +- +14 MB \/ 134 MB +10\.61% +2 +1\.5 kB/);
    expect(renderTop([], { c: colours(false) })).toBe('no sessions');
    expect(topJson(rows[0]!)).toEqual({ sessionId: 'agent-session-1', name: 'berth-agent-session-1-0a1b2c3d', id: rows[0]!.session.id, state: 'running', ...running });
  });

  it('renders the ls table of 10,000 sessions, every row whole and aligned (numbers printed, no timing assertion)', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    const list = fakeListings(now);
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    const table = renderSessions(list, { c: colours(false), now });
    const ms = performance.now() - started;
    const rss = (process.memoryUsage().rss - rssBefore) / 1_048_576;
    const started2 = performance.now();
    const jsonChars = JSON.stringify({ sessions: list }).length;
    const jsonMs = performance.now() - started2;
    console.log(`[cli-format] ls table of 10,000 rows: ${ms.toFixed(0)} ms, RSS +${rss.toFixed(1)} MiB, ${table.length} chars (JSON.stringify of the same: ${jsonMs.toFixed(0)} ms, ${jsonChars} chars)`);

    const lines = table.split('\n');
    expect(lines).toHaveLength(10_001);
    expect(lines[0]).toMatch(/^SESSION +NAME +STATE +READY +OWNER +HOLDERS +AGE +IMAGE +PORTS +EXPIRES$/);
    const at = (h: string) => lines[0]!.indexOf(h);
    // The long id is shortened: SESSION is as wide as its widest shortened cell (40), no more.
    expect(at('NAME')).toBe(42);
    expect(lines[8]).toMatch(/^long-x+…x+-end7 +berth-long-x+…x+-0a1b2c3d +exited +yes +1007 alive +1 \(alive\) +5m ago +berth-test\/busybox:1 +127\.0\.0\.1:49153->8080\/tcp +expired$/);
    expect(lines[2]).toBe(
      `${'agent-session-1'.padEnd(42)}${'berth-agent-session-1-0a1b2c3d'.padEnd(at('STATE') - at('NAME'))}${'running'.padEnd(at('READY') - at('STATE'))}` +
        `${'yes'.padEnd(at('OWNER') - at('READY'))}${'1001 alive'.padEnd(at('HOLDERS') - at('OWNER'))}${'1 (alive)'.padEnd(at('AGE') - at('HOLDERS'))}` +
        `${'5m ago'.padEnd(at('IMAGE') - at('AGE'))}${'berth-test/busybox:1'.padEnd(at('PORTS') - at('IMAGE'))}${'127.0.0.1:49153->8080/tcp'.padEnd(at('EXPIRES') - at('PORTS'))}in 42m`,
    );
    expect(lines[10_000]).toMatch(/^agent-session-9999 .* in 42m$/);
    expect(lines[1]).toMatch(/^agent-session-0 .* -$/);
    for (const line of lines) expect(line).toBe(line.trimEnd());
    // --wide: whole ids.
    expect(renderSessions(list.slice(7, 8), { c: colours(false), now, wide: true })).toContain(list[7]!.sessionId);
  });

  it('ls: the table of 10,000 sessions peaks no higher in memory than --json of the same (numbers printed)', async () => {
    // Each mode in a fresh process, measured from once the listings exist (what the engine's
    // answer costs is the same for both): the process's peak RSS as getrusage gives it.
    const script = fileURLToPath(new URL('../scripts/ls-memory.mjs', import.meta.url));
    const peak = async (mode: string) => {
      const run = await runNode(['--expose-gc', script], { BERTH_LS_MODE: mode }, 60_000);
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stderr.trim().split('\n').at(-1)!);
      expect(run.stdout.length).toBe(report.chars + 1);
      console.log(`[cli-format] ls ${mode}, 10,000 sessions: peak RSS +${(report.peakGrowth / MIB).toFixed(1)} MiB, ${report.ms.toFixed(0)} ms, ${report.chars} chars`);
      return report.peakGrowth as number;
    };
    const json = await peak('json');
    const table = await peak('table');
    // The margin is the allocator's noise between two processes; the table took 100 MB more.
    expect(table).toBeLessThanOrEqual(json + LS_MEMORY_MARGIN);
  }, 120_000);

  it('the STATE cell adds the lifecycle a reader must notice: parked, expired, orphan (held adds nothing)', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    const rows = (['held', 'parked', 'expired', 'orphan', null] as const).map((lifecycle, i) => fakeListing(i, now, { lifecycle }));
    const lines = renderSessions(rows, { c: colours(false), now }).split('\n');
    expect(lines.slice(1).map((l) => l.split(/ {2,}/)[2])).toEqual(['running', 'running parked', 'running expired', 'running orphan', 'running']);
  });
});
