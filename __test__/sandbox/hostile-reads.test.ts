// Issue 21, item 3: reads are capped and read what they checked. In a child process (its RSS is
// berth's alone), as root and as uid 1000: a 4 GB sparse file is E_FILE_TOO_LARGE naming the
// cap and its size (the host stops at the tar header or the size line), a link to /dev/zero is
// not a regular file, and reads racing a loop that swaps the file for a link to /dev/zero get
// the file or E_INVALID_ARGUMENT, never a hang; host RSS never grows more than 200 MiB.
import { beforeAll, expect, test } from 'vitest';
import { runHostile, type HostileReport } from '../helpers/hostile.js';
import { engineSuite } from '../helpers/suite.js';

const MIB = 1024 * 1024;
const RSS_BOUND = 200 * MIB;
const CASES = [
  'read-4g-root',
  'read-4g-user',
  'read-4g-root-stream',
  'read-zero-root',
  'read-zero-user',
  'race-root',
  'race-user',
];

engineSuite('hostile reads', () => {
  let reports: Map<string, HostileReport>;
  beforeAll(async () => {
    reports = await runHostile(CASES, 150_000);
  }, 160_000);
  const report = (name: string): HostileReport => {
    const r = reports.get(name);
    if (!r) throw new Error(`no report for ${name}`);
    return r;
  };

  test.for(['read-4g-root', 'read-4g-user'])('%s: a 4 GB file is E_FILE_TOO_LARGE naming the cap and the size', (name) => {
    const r = report(name);
    expect(r.error?.code).toBe('E_FILE_TOO_LARGE');
    expect(r.error?.details).toEqual({ path: '/var/h/big', size: 4 * 1024 * MIB, maxBytes: 64 * MIB });
    expect(r.rssGrowth).toBeLessThan(RSS_BOUND);
  });

  test('openFile with maxBytes refuses a larger file before its body', () => {
    const r = report('read-4g-root-stream');
    expect(r.error?.code).toBe('E_FILE_TOO_LARGE');
    expect(r.error?.details).toMatchObject({ path: '/var/h/big', maxBytes: 1024 });
  });

  test.for(['read-zero-root', 'read-zero-user'])('%s: a link to /dev/zero is not a regular file', (name) => {
    const r = report(name);
    expect(r.error?.code).toBe('E_INVALID_ARGUMENT');
    expect(r.rssGrowth).toBeLessThan(RSS_BOUND);
  });

  test.for(['race-root', 'race-user'])('%s: reads racing a swap to /dev/zero get the file or a typed error', (name) => {
    const r = report(name);
    expect(r.error).toBeUndefined();
    const outcomes = r.value as Record<string, number>;
    expect(Object.values(outcomes).reduce((a, b) => a + b, 0)).toBe(200);
    // The file (the old content: a file and a link are swapped by rename), or
    // E_INVALID_ARGUMENT (the link to /dev/zero was opened). Every read opens the file once and
    // reads what it checked (root too: never the archive endpoint's stat-then-open), so never
    // bytes that are neither file's content.
    const allowed = (key: string) => ['bytes:hello\n', 'E_INVALID_ARGUMENT'].includes(key);
    for (const key of Object.keys(outcomes)) expect(allowed(key), key).toBe(true);
    expect(r.rssGrowth).toBeLessThan(RSS_BOUND);
  });
});
