// The `berth` command line, run as users run it: the built bin as a child process, against the
// real engine. Sessions come from other OS processes (child.ts) so that owner liveness is real.
// Every command is narrowed to this test's own labels, so other suites' containers are never
// listed or reaped.
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect } from 'vitest';
import { containerName, createSession, reapOrphans } from '../../index.mjs';
import { runBerth, startBerth, BERTH_BIN } from '../helpers/berth-cli.js';
import { killAllChildren, startChild } from '../helpers/child.js';
import { inspectContainer, stopContainer } from '../helpers/engine-http.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { expectNoRecordLeaks, recordsOf } from '../helpers/records.mjs';
import { onPodman, testSocketPath } from '../helpers/test-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

const CASE_LABEL = 'berth.test-case';
const NO_STACK = /^\s+at .+:\d+:\d+\)?$/m;

/** Scopes handed out; after each test their orphans are reaped (a failed test leaves none behind). */
const scopes: Record<string, string>[] = [];

/** This test's scope: the run label plus a per-test case label, as `--label` flags and as labels. */
function scopeOf(labels: Record<string, string>, sessionId: string) {
  const all = { ...labels, [CASE_LABEL]: sessionId };
  scopes.push(all);
  return { labels: all, flags: Object.entries(all).flatMap(([k, v]) => ['--label', `${k}=${v}`]) };
}

/** A child process that created `sessionId` and stays. */
async function ownerOf(sessionId: string, labels: Record<string, string>) {
  const child = await startChild();
  const created = await child.call('createSession', { sessionId, image: TEST_IMAGE, labels, ports: [8080] });
  return { child, created: created as { id: string; handle: string } };
}

engineSuite('berth command line', () => {
  afterEach(async () => {
    await killAllChildren();
    for (const labels of scopes.splice(0)) await reapOrphans({ labels });
  });
  afterAll(async () => {
    await expectNoRecordLeaks();
  });

  test('ls shows another process\'s session, owner alive then dead; reap --dry-run lists it, reap --yes removes it', async ({ sessionId, labels }) => {
    const scope = scopeOf(labels, sessionId);
    const { child, created } = await ownerOf(sessionId, scope.labels);

    const alive = await runBerth(['ls', ...scope.flags]);
    expect(alive).toMatchObject({ code: 0, stderr: '' });
    const [head, row, ...rest] = alive.stdout.trimEnd().split('\n');
    expect(rest).toEqual([]);
    expect(head).toMatch(/^SESSION +NAME +STATE +READY +OWNER +HOLDERS +AGE +IMAGE +PORTS$/);
    expect(row).toContain(sessionId);
    expect(row).toContain(containerName(sessionId));
    expect(row).toMatch(new RegExp(`running +yes +${child.pid} alive +1 \\(alive\\) +(just now|\\d+s ago)`));
    expect(row).toMatch(/127\.0\.0\.1:\d+->8080\/tcp$/);

    const json = await runBerth(['--json', 'ls', ...scope.flags]);
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc.sessions).toHaveLength(1);
    expect(doc.sessions[0]).toMatchObject({
      sessionId,
      id: created.id,
      name: containerName(sessionId),
      managed: true,
      state: 'running',
      ready: true,
      owner: { pid: child.pid, liveness: 'alive' },
      duty: { role: 'creator', pid: child.pid, liveness: 'alive' },
      dutyGeneration: 0,
      holders: [{ role: 'creator', pid: child.pid, liveness: 'alive' }],
      ports: { '8080/tcp': expect.stringMatching(/^127\.0\.0\.1:\d+$/) },
      expiresAt: null,
    });
    expect(Date.parse(doc.sessions[0].createdAt)).not.toBeNaN();
    expect(doc.sessions[0].image).toContain('berth-test/busybox');

    const peeked = await runBerth(['peek', sessionId]);
    expect(peeked.code).toBe(0);
    expect(peeked.stdout).toMatch(new RegExp(`^id +${created.id}$`, 'm'));
    expect(peeked.stdout).toMatch(new RegExp(`^duty +creator pid ${child.pid} alive \\(generation 0\\)$`, 'm'));
    expect(peeked.stdout).toMatch(new RegExp(`^holders +creator pid ${child.pid} alive`, 'm'));
    const peekJson = JSON.parse((await runBerth(['peek', sessionId, '--json'])).stdout);
    expect(peekJson).toMatchObject({ session: { id: created.id, owner: { pid: child.pid, liveness: 'alive' } } });

    expect(await child.kill('SIGKILL')).toMatchObject({ signal: 'SIGKILL' });
    const dead = await runBerth(['ls', ...scope.flags]);
    expect(dead.stdout).toMatch(new RegExp(`${child.pid} dead +1 \\(dead\\)`));

    const plan = await runBerth(['reap', '--dry-run', ...scope.flags]);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/^ACTION +SESSION +CONTAINER +NAME +REASON$/m);
    expect(plan.stdout).toMatch(new RegExp(`^would remove +${sessionId} +${created.id.slice(0, 12)} +${containerName(sessionId)} +owner dead, no live holder$`, 'm'));
    expect(plan.stdout).toContain('1 would be removed, 0 kept (dry run: nothing removed)');
    expect(await inspectContainer(created.id)).not.toBeNull();
    const planJson = JSON.parse((await runBerth(['reap', '--dry-run', '--json', ...scope.flags])).stdout);
    expect(planJson).toMatchObject({ dryRun: true, removed: [{ id: created.id, sessionId, reason: 'owner-dead' }], kept: [] });

    const reaped = await runBerth(['reap', '--yes', ...scope.flags]);
    expect(reaped.code).toBe(0);
    expect(reaped.stdout).toMatch(new RegExp(`^removed +${sessionId} +${created.id.slice(0, 12)} +${containerName(sessionId)} +owner dead`, 'm'));
    expect(reaped.stdout).toContain('1 removed, 0 kept');
    expect(await inspectContainer(created.id)).toBeNull();
    expect(await recordsOf(created.id)).toEqual([]);
    expect((await runBerth(['ls', ...scope.flags])).stdout.trim()).toBe('no sessions');
  });

  test('rm refuses a live owner\'s session and removes it with --force; a dead owner\'s without; says what it did', async ({ sessionId, labels }) => {
    const scope = scopeOf(labels, sessionId);
    const live = await ownerOf(`${sessionId}-live`, scope.labels);
    const gone = await ownerOf(`${sessionId}-dead`, scope.labels);
    await gone.child.kill('SIGKILL');

    const refused = await runBerth(['rm', `${sessionId}-live`]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`E_SESSION_BUSY: ${sessionId}-live: refused: creator pid ${live.child.pid} is alive (--force removes it anyway)`);
    expect(refused.stderr).not.toMatch(NO_STACK);
    expect((await inspectContainer(live.created.id))?.State?.Running).toBe(true);

    const both = await runBerth(['rm', '--json', `${sessionId}-dead`, `${sessionId}-absent`]);
    expect(both.code).toBe(1);
    expect(JSON.parse(both.stdout).results).toMatchObject([
      { sessionId: `${sessionId}-dead`, id: gone.created.id, outcome: 'removed', code: null },
      { sessionId: `${sessionId}-absent`, outcome: 'absent', code: 'E_SESSION_NOT_FOUND' },
    ]);
    expect(await inspectContainer(gone.created.id)).toBeNull();
    expect(await recordsOf(gone.created.id)).toEqual([]);

    const forced = await runBerth(['rm', '--force', `${sessionId}-live`]);
    expect(forced).toMatchObject({ code: 0, stderr: '' });
    expect(forced.stdout).toContain(`${sessionId}-live: removed`);
    expect(forced.stdout).toContain(`forced: creator pid ${live.child.pid} is alive`);
    expect(await inspectContainer(live.created.id)).toBeNull();
    expect(await recordsOf(live.created.id)).toEqual([]);
  });

  test('reap --watch reaps an orphan made while it runs and stops cleanly on SIGINT', async ({ sessionId, labels }) => {
    const scope = scopeOf(labels, sessionId);
    const watcher = startBerth(['reap', '--watch', '500ms', '--json', ...scope.flags]);
    try {
      await watcher.waitForLine((l) => 'removed' in JSON.parse(l));
      const { child, created } = await ownerOf(sessionId, scope.labels);
      await child.kill('SIGKILL');
      const line = await watcher.waitForLine((l) => JSON.stringify(JSON.parse(l).removed ?? []).includes(created.id));
      expect(JSON.parse(line)).toMatchObject({ dryRun: false, removed: [{ id: created.id, sessionId, reason: 'owner-dead' }] });
      expect(await inspectContainer(created.id)).toBeNull();
      expect(await watcher.stop('SIGINT')).toEqual({ code: 0, signal: null });
      for (const l of watcher.stdout().trim().split('\n')) expect(() => JSON.parse(l)).not.toThrow();
    } finally {
      await watcher.stop('SIGKILL');
    }
    const human = startBerth(['reap', '--watch', '1s', ...scope.flags]);
    await human.waitForLine((l) => /removed 0, kept 0$/.test(l));
    expect(await human.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(human.stderr()).toContain('stopped (SIGTERM)');
  });

  test('ls and peek show expiry and remove nothing; rm and peek take the NAME column; long ids are shortened unless --wide', async ({ sessionId, labels }) => {
    const scope = scopeOf(labels, sessionId);
    const long = `${sessionId}-${'x'.repeat(60)}`;
    const lived = await createSession({ sessionId: `${sessionId}-lived`, image: TEST_IMAGE, labels: scope.labels, timeoutMs: 3_600_000 });
    const past = await createSession({ sessionId: long, image: TEST_IMAGE, labels: scope.labels, removeAfterStopMs: 0 });
    try {
      // Stopped through the engine (not past.stop(): no timer of this process removes it): expired.
      await stopContainer(past.id);

      const table = await runBerth(['ls', ...scope.flags]);
      expect(table).toMatchObject({ code: 0, stderr: '' });
      const [head, ...rows] = table.stdout.trimEnd().split('\n');
      expect(head).toMatch(/^SESSION +NAME +STATE +READY +OWNER +HOLDERS +AGE +IMAGE +PORTS +EXPIRES$/);
      expect(rows).toHaveLength(2);
      expect(rows.find((r) => r.startsWith(`${sessionId}-lived `))).toMatch(/ in (59m|1h)$/);
      const expiredRow = rows.find((r) => !r.startsWith(`${sessionId}-lived `))!;
      expect(expiredRow).toMatch(/ exited +.* expired$/);
      // Shortened (head…tail), so no column is padded to the long id of another row.
      expect(expiredRow).not.toContain(long);
      expect(expiredRow).toContain('…');
      expect(head!.indexOf('NAME')).toBeLessThanOrEqual(40 + 2);
      // Listing removed nothing: the expired session's container is still there.
      expect(await inspectContainer(past.id)).not.toBeNull();

      const wide = await runBerth(['ls', '--wide', ...scope.flags]);
      expect(wide.stdout).toContain(long);
      expect(wide.stdout).toContain(containerName(long));

      const doc = JSON.parse((await runBerth(['ls', '--json', ...scope.flags])).stdout);
      const byId = Object.fromEntries(doc.sessions.map((x: { id: string }) => [x.id, x]));
      expect(byId[lived.id]).toMatchObject({ expiresAt: expect.any(Number), expired: false });
      expect(byId[lived.id].expiresAt).toBeGreaterThan(Date.now() + 3_000_000);
      expect(byId[past.id]).toMatchObject({ expiresAt: expect.any(Number), expired: true });
      expect(await inspectContainer(past.id)).not.toBeNull();

      // peek by the NAME column; its expiry as words and as the time.
      const peeked = await runBerth(['peek', lived.name]);
      expect(peeked.code, peeked.stderr).toBe(0);
      expect(peeked.stdout).toMatch(new RegExp(`^session +${sessionId}-lived$`, 'm'));
      expect(peeked.stdout).toMatch(/^expires +in (59m|1h) \(\d{4}-\d\d-\d\dT[\d:.]+Z\)$/m);
      expect(JSON.parse((await runBerth(['peek', '--json', past.name])).stdout).session).toMatchObject({ id: past.id, expired: true });
      expect((await runBerth(['peek', past.name])).stdout).toMatch(/^expires +expired \(/m);

      // rm by the NAME column: this process owns both (alive), so --force.
      const refused = await runBerth(['rm', lived.name]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('E_SESSION_BUSY');
      const removed = await runBerth(['rm', '--force', '--json', lived.name, past.name]);
      expect(JSON.parse(removed.stdout).results).toMatchObject([
        { sessionId: lived.name, id: lived.id, outcome: 'removed', code: null },
        { sessionId: past.name, id: past.id, outcome: 'removed', code: null },
      ]);
      expect(await inspectContainer(lived.id)).toBeNull();
      expect(await inspectContainer(past.id)).toBeNull();
    } finally {
      await Promise.allSettled([lived.remove(), past.remove()]);
    }
  });

  test('ls --all marks a container under a berth name that berth does not manage', async ({ sessionId, labels, handMade }) => {
    const scope = scopeOf(labels, sessionId);
    const id = await handMade(containerName(sessionId), { labels: { [CASE_LABEL]: sessionId } });
    expect((await runBerth(['ls', ...scope.flags])).stdout.trim()).toBe('no sessions');
    const all = await runBerth(['ls', '--all', ...scope.flags]);
    expect(all.stdout).toMatch(new RegExp(`^\\(unmanaged\\) +${containerName(sessionId)} +running +- +- +- `, 'm'));
    const doc = JSON.parse((await runBerth(['ls', '--all', '--json', ...scope.flags])).stdout);
    expect(doc.sessions).toMatchObject([{ id, managed: false, sessionId: null, owner: null, duty: null, holders: [] }]);
    const refused = await runBerth(['rm', '--force', sessionId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('E_FOREIGN_CONTAINER');
    expect(await inspectContainer(id)).not.toBeNull();
  });

  test('engine reports kind, endpoint and the discovery rule that chose it', async () => {
    const socket = testSocketPath();
    const viaEnv = JSON.parse((await runBerth(['engine', '--json'], { DOCKER_HOST: `unix://${socket}` })).stdout);
    expect(viaEnv.engine).toMatchObject({
      kind: onPodman() ? 'podman' : 'docker',
      endpoint: `unix://${socket}`,
      strategy: 'DOCKER_HOST',
      remote: false,
      rootless: expect.any(Boolean),
      version: expect.any(String),
    });
    const human = await runBerth(['engine', '--socket', socket]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^chosen by +socketPath option$/m);
    expect(human.stdout).toMatch(new RegExp(`^endpoint +unix://${socket}$`, 'm'));
  });

  test('templates: ls and prune in an empty scope, rm of a missing key', async ({ sessionId, labels }) => {
    const scope = scopeOf(labels, sessionId);
    expect((await runBerth(['templates', 'ls', ...scope.flags])).stdout.trim()).toBe('no templates');
    expect(JSON.parse((await runBerth(['templates', 'ls', '--json', ...scope.flags])).stdout)).toEqual({ templates: [] });
    expect(JSON.parse((await runBerth(['templates', 'prune', '--json', ...scope.flags])).stdout)).toEqual({ removed: [], kept: [], recent: [] });
    const missing = await runBerth(['templates', 'rm', `${sessionId}-none`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no such template');
  });

  test('a berth error exits 1 with its code and no stack trace', async ({ sessionId }) => {
    const nothing = `/tmp/nothing-${sessionId}.sock`;
    for (const run of [
      await runBerth(['ls', '--socket', nothing]),
      await runBerth(['engine'], { DOCKER_HOST: `unix://${nothing}` }),
    ]) {
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(new RegExp(`^E_ENGINE_UNAVAILABLE: .*${nothing.replace(/[.]/g, '\\.')}`, 'm'));
      expect(run.stderr).not.toMatch(NO_STACK);
      expect(run.stdout).toBe('');
    }
    const json = await runBerth(['--json', 'ls', '--socket', nothing]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).error).toMatchObject({ code: 'E_ENGINE_UNAVAILABLE', details: { reason: expect.any(String) } });
    const absent = await runBerth(['peek', `${sessionId}-absent`]);
    expect(absent.code).toBe(1);
    expect(absent.stderr).toMatch(/^E_SESSION_NOT_FOUND: no container named berth-/m);
  });
});

describe('berth command line without an engine', () => {
  test('unknown commands, bad flags and missing arguments exit 2 with the usage, never a stack', async () => {
    const cases: [string[], RegExp][] = [
      [['nope'], /unknown command 'nope'/],
      [['ls', '--bogus'], /unknown option '--bogus'/],
      [['peek'], /missing required argument 'session'/],
      [['rm'], /missing required argument 'session'/],
      [['ls', '--label', 'novalue'], /expected key=value, got 'novalue'/],
      [['reap', '--watch', 'soon'], /expected a duration/],
      [['--engine', 'lxc', 'ls'], /Allowed choices are docker, podman/],
      [['templates', 'rm'], /missing required argument 'key'/],
      [[], /Usage: berth/],
    ];
    for (const [args, message] of cases) {
      const run = await runBerth(args);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stderr).toMatch(message);
      expect(run.stderr).toMatch(/Usage: berth/);
      expect(run.stderr).not.toMatch(NO_STACK);
    }
  });

  test('--help for every command, --version, and the bin in package.json', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(pkg.bin).toEqual({ berth: 'dist/cli/main.js' });
    expect(readFileSync(BERTH_BIN, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(await runBerth(['--version'])).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
    for (const args of [['--help'], ['ls', '--help'], ['list', '--help'], ['peek', '--help'], ['rm', '--help'], ['reap', '--help'], ['templates', '--help'], ['templates', 'rm', '--help'], ['engine', '--help'], ['help', 'reap']]) {
      const run = await runBerth(args);
      expect({ args, code: run.code }).toEqual({ args, code: 0 });
      expect(run.stdout).toMatch(/^Usage: berth/);
    }
    expect((await runBerth(['reap', '--help'])).stdout).toMatch(/--watch \[interval\]/);
    expect((await runBerth(['--help'])).stdout).toMatch(/--no-color/);
  });
});
