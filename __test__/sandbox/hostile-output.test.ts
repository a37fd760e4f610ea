// Issue 21, item 1: what a sandbox writes cannot bloat or crash the host process. In a child
// process (its RSS is berth's alone): an endless `yes` through Session.exec and the harness's
// `run` settles, truncated and flagged, keeping the head of the output; a 50 MB flood that is
// then aborted or timed out rejects with a small error (at most the last 64 KiB of each
// stream); host RSS never grows more than 200 MiB over its start in any case (default caps).
import { beforeAll, expect, test } from 'vitest';
import { runHostile, type HostileReport } from '../helpers/hostile.js';
import { engineSuite } from '../helpers/suite.js';

const MIB = 1024 * 1024;
const KIB = 1024;
const RSS_BOUND = 200 * MIB;
const CASES = [
  'exec-yes',
  'exec-yes-small-cap',
  'harness-yes',
  'exec-both',
  'harness-both',
  'harness-urandom',
  'harness-three',
  'exec-abort',
  'exec-timeout',
  'harness-abort',
];

engineSuite('hostile output', () => {
  let reports: Map<string, HostileReport>;
  beforeAll(async () => {
    reports = await runHostile(CASES, 150_000);
  }, 160_000);
  const report = (name: string): HostileReport => {
    const r = reports.get(name);
    if (!r) throw new Error(`no report for ${name}`);
    return r;
  };

  test('an endless yes through Session.exec settles with the head of its output, truncated at 64 MiB', () => {
    const r = report('exec-yes');
    expect(r.error).toBeUndefined();
    expect(r.value).toMatchObject({ truncated: true, stdout: 64 * MIB, stderr: 0 });
    // Killed past the cap: the exit code is the engine's for the killed process, never made up.
    expect(r.value.exitCode).not.toBe(0);
    expect(r.rssGrowth).toBeLessThan(RSS_BOUND);
  });

  test('an endless writer past a small cap is cut and killed too', () => {
    const r = report('exec-yes-small-cap');
    expect(r.value).toMatchObject({ truncated: true, stdout: 0, stderr: 1000 });
    expect(r.rssGrowth).toBeLessThan(RSS_BOUND);
  });

  test("an endless yes through the harness's run settles as text, truncated and flagged", () => {
    const r = report('harness-yes');
    expect(r.error).toBeUndefined();
    expect(r.value).toMatchObject({ truncated: true, stdout: 64 * MIB, head: 'y\ny\n' });
    expect(r.rssGrowth).toBeLessThan(RSS_BOUND);
  });

  test('both streams flooding through Session.exec share one cap of 64 MiB', () => {
    const r = report('exec-both');
    expect(r.error).toBeUndefined();
    expect(r.value.truncated).toBe(true);
    expect(r.value.stdout + r.value.stderr).toBe(64 * MIB);
    expect(r.rssGrowth).toBeLessThan(64 * MIB + 64 * MIB);
  });

  test("both streams flooding through the harness's run share one cap; the text is held once", () => {
    const r = report('harness-both');
    expect(r.error).toBeUndefined();
    expect(r.value.truncated).toBe(true);
    expect(r.value.stdout + r.value.stderr).toBe(64 * MIB);
    expect(r.rssGrowth).toBeLessThan(64 * MIB + 64 * MIB);
  });

  test("/dev/urandom on both streams through the harness's run: capped, text at most two bytes a byte", () => {
    const r = report('harness-urandom');
    expect(r.error).toBeUndefined();
    expect(r.value.truncated).toBe(true);
    // Each malformed byte is one U+FFFD: at most one character per byte.
    expect(r.value.stdout + r.value.stderr).toBeLessThanOrEqual(64 * MIB);
    // A two-byte string of up to 64 Mi characters (128 MiB), the bytes freed as it was made.
    expect(r.rssGrowth).toBeLessThan(2 * 64 * MIB + 64 * MIB);
  });

  test('three runs at once hold no more than the process-wide budget together', () => {
    const r = report('harness-three');
    expect(r.error).toBeUndefined();
    expect(r.value.truncated).toBe(true);
    // A run that settles gives its share back, so the three results may add up to more than
    // the budget; what they held at once is bounded by it (host RSS).
    expect(r.value.total).toBeLessThanOrEqual(3 * 64 * MIB);
    expect(r.rssGrowth).toBeLessThan(128 * MIB + 64 * MIB);
  });

  test.for(['exec-abort', 'exec-timeout'])('%s of a 50 MB flood rejects with at most 64 KiB of output', (name) => {
    const r = report(name);
    expect(r.error?.code).toBe(name === 'exec-abort' ? 'E_ABORTED' : 'E_EXEC_TIMEOUT');
    expect(r.error?.details?.stdout?.bytes).toBeLessThanOrEqual(64 * KIB);
    expect(r.error?.details?.stdout?.bytes).toBeGreaterThan(0);
    expect(r.error?.messageLength).toBeLessThan(4 * KIB);
    expect(r.error?.details?.stderr?.bytes).toBeLessThanOrEqual(64 * KIB);
    expect(r.rssGrowth).toBeLessThan(RSS_BOUND);
  });

  test("an aborted harness run rejects with the signal's reason, small", () => {
    const r = report('harness-abort');
    expect(r.error?.name).toBe('TimeoutError');
    expect(r.rssGrowth).toBeLessThan(RSS_BOUND);
  });
});
