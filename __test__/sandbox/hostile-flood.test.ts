// Issue 21's finite flood, `yes | head -c 2147483648` (2 GiB, then the command ends by itself),
// on every surface, with and without an abort, in a child process (its RSS is berth's alone):
// Session.exec, Session.execText and the harness's `run` as the real HarnessAgent hands the
// sandbox session to its adapter settle truncated at the default cap (64 MiB), the writer killed
// 16 MiB past it; an abort 300 ms in rejects with at most the last 64 KiB of each stream. A spawn
// nobody reads holds the writer back until kill() or its signal. A spawn that is read gets every
// byte (a stream has no cap), at the rate its reader takes them (about 45 MiB/s on this project's
// machine: 2 GiB would take most of a minute per engine), so it is read from an endless `yes`
// until 64 MiB came, then killed or aborted. Every call settles and host RSS never grows more than
// 200 MiB over its start (the target), counted both from each case's start and from the
// first case's.
import { beforeAll, expect, test } from 'vitest';
import { runHostile, type HostileReport } from '../helpers/hostile.js';
import { engineSuite } from '../helpers/suite.js';

const MIB = 1024 * 1024;
const KIB = 1024;
const RSS_BOUND = 200 * MIB;
const BUFFERED = ['exec-2g', 'exectext-2g', 'agent-2g'];
const CASES = [
  ...BUFFERED.flatMap((c) => [c, `${c}-abort`]),
  'spawn-2g-unread',
  'spawn-2g-unread-abort',
  'spawn-yes-read',
  'spawn-yes-read-abort',
];

engineSuite('a finite 2 GiB flood on every surface', () => {
  let reports: Map<string, HostileReport>;
  beforeAll(async () => {
    reports = await runHostile(CASES, 170_000);
  }, 180_000);
  const report = (name: string): HostileReport => {
    const r = reports.get(name);
    if (!r) throw new Error(`no report for ${name}`);
    expect(r.rssGrowth).toBeLessThan(RSS_BOUND);
    expect(r.rssOverStart).toBeLessThan(RSS_BOUND);
    return r;
  };

  test.for(BUFFERED)('%s: settles with the head of the output, truncated at 64 MiB, the writer killed', (name) => {
    const r = report(name);
    expect(r.error).toBeUndefined();
    expect(r.value).toMatchObject({ truncated: true, stdout: 64 * MIB, stderr: 0 });
    // Killed past the cap (TERM from the tree kill): never the 0 of a flood that ran to its end.
    expect(r.value.exitCode).not.toBe(0);
    if (name !== 'exec-2g') expect(r.value.head).toBe('y\ny\n');
  });

  test.for(BUFFERED)('%s-abort: an abort during the flood rejects, with at most 64 KiB of each stream', (name) => {
    const r = report(`${name}-abort`);
    if (name === 'agent-2g') {
      // The harness rejects with the signal's own reason (AbortSignal.timeout's TimeoutError).
      expect(r.error?.name).toBe('TimeoutError');
      expect(r.error?.messageLength).toBeLessThan(4 * KIB);
      return;
    }
    expect(r.error?.code).toBe('E_ABORTED');
    expect(r.error?.messageLength).toBeLessThan(4 * KIB);
    expect(r.error?.details?.stdout?.bytes).toBeLessThanOrEqual(64 * KIB);
    expect(r.error?.details?.stderr?.bytes).toBeLessThanOrEqual(64 * KIB);
  });

  test('spawn, its output unread: back-pressure holds the writer; kill() settles wait() with the killed code', () => {
    const r = report('spawn-2g-unread');
    expect(r.value.waited.exitCode).toBe(143);
  });

  test("spawn, its output unread: the spawn's signal settles wait() with E_ABORTED", () => {
    expect(report('spawn-2g-unread-abort').value.waited).toEqual({ code: 'E_ABORTED' });
  });

  test('spawn read as fast as it comes: nothing is kept; kill() after 64 MiB settles wait() and ends the streams', () => {
    const r = report('spawn-yes-read');
    expect(r.value.waited.exitCode).toBe(143);
    expect(r.value.read[0]).toBeGreaterThanOrEqual(64 * MIB);
    expect(r.value.read[1]).toBe(0);
    expect(r.value.killed).toBeUndefined();
  });

  test("spawn read as fast as it comes: the spawn's signal after 64 MiB settles wait() and the streams with E_ABORTED", () => {
    const r = report('spawn-yes-read-abort');
    expect(r.value).toEqual({ waited: { code: 'E_ABORTED' }, read: 'E_ABORTED' });
  });
});
