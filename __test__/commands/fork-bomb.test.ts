// A fork bomb inside a session with `timeoutMs` (issue 21, part 6): the deadline keep-alive
// never forks, so the bomb (bounded by `pidsLimit`) does not end the session; once the bomb is
// stopped the session answers `exec`, its keep-alive still runs, and it still expires at its
// deadline; host RSS stays under its start + 200 MiB throughout. The bomb stops itself when the
// host creates a file on a bind mount (no process in the container is needed to stop it: at the
// pids limit none can be started).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { createSession } from '../../index.mjs';
import { inspectContainer } from '../helpers/engine-http.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

const MIB = 1_048_576;
/** Host RSS may grow at most this far over its start, in bytes (issue 21's target). */
const RSS_BOUND = 200 * MIB;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 250 ms until it is true or `ms` passed; returns the last answer. */
async function eventually(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return true;
    if (Date.now() > end) return false;
    await sleep(250);
  }
}

engineSuite('a fork bomb in a session with timeoutMs', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test('the session survives the bomb, answers exec after it, and expires at its deadline', async ({
    sessionId,
    labels,
    track,
  }) => {
    const ctl = mkdtempSync(join(tmpdir(), 'berth-forkbomb-'));
    dirs.push(ctl);
    const timeoutMs = 25_000;
    const session = track(
      await createSession({
        sessionId,
        image: TEST_IMAGE,
        labels,
        timeoutMs,
        pidsLimit: 64,
        // The bomb spins: half a CPU keeps it from starving the machine.
        cpus: 0.5,
        mounts: [{ source: ctl, target: '/ctl' }],
      }),
    );
    const readyAt = Date.now();
    // Host RSS (this test process) through the bomb and after: never 200 MiB over its start
    // (issue 21's target). Sampled every 50 ms until the session has ended.
    const rssStart = process.memoryUsage.rss();
    let rssPeak = rssStart;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 50).unref();
    // Every copy forks copies until the stop file appears (`[` is a builtin: no fork); a copy
    // whose fork fails exits, as the old keep-alive did ("can't fork": it died within ~5 s).
    const bomb = 'b() { while [ ! -e /ctl/stop ]; do b & done; }; b';
    await session.exec(['sh', '-c', `(${bomb}) >/dev/null 2>&1 </dev/null &`]);
    // Let it sit at the pids limit for a few seconds: the keep-alive must not fork meanwhile.
    await sleep(6_000);
    expect((await inspectContainer(session.id))?.State.Running).toBe(true);
    writeFileSync(join(ctl, 'stop'), '');
    // The bomb dies out; exec answers again (the engine's exec needs a free pid).
    const answered = await eventually(async () => {
      const out = await session.exec(['sh', '-c', 'echo alive'], { timeoutMs: 5_000 });
      return out.stdout.toString() === 'alive\n';
    }, 15_000);
    expect(answered).toBe(true);
    // The keep-alive is still the one berth started (its argv names it).
    const ps = await session.exec(['sh', '-c', 'cat /proc/[0-9]*/cmdline | tr "\\0" " "']);
    expect(ps.stdout.toString()).toContain('berth-keepalive');
    expect((await inspectContainer(session.id))?.State.Running).toBe(true);
    // And it still expires: at its deadline the container stops (keep-alive) or is removed
    // (this process's deadline timer).
    const left = readyAt + timeoutMs - Date.now();
    expect(left).toBeGreaterThan(0);
    const ended = await eventually(async () => {
      const c = await inspectContainer(session.id);
      return !c || c.State.Running === false;
    }, left + 15_000);
    expect(ended).toBe(true);
    expect(Date.now()).toBeGreaterThanOrEqual(readyAt + timeoutMs - 5_000);
    clearInterval(sampler);
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
    console.info(`[fork-bomb] host RSS: +${((rssPeak - rssStart) / MIB).toFixed(1)} MiB at its peak`);
    expect(rssPeak - rssStart).toBeLessThan(RSS_BOUND);
  }, 60_000);
});
