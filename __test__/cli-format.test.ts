// The command line's pure pieces (no engine): column fitting, durations, relative ages, labels.
import { describe, expect, it } from 'vitest';
import { collectLabel, formatInterval, parseInterval } from '../dist/cli/arguments.js';
import { age, bytes, ports, until } from '../dist/cli/format.js';
import { fitWidths, renderTable } from '../dist/cli/table.js';

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
});
