// recreateSession: what it keeps and loses, rollback on failure, recovery after a SIGKILL at
// each step (the test-only pause points of BERTH_TEST_PAUSE_AT, read by berth only in tests),
// and ten concurrent recreations across ten OS processes.
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect } from 'vitest';
import {
  AbortedError,
  containerName,
  createSession,
  ImageNotFoundError,
  reapOrphans,
  recreateSession,
  resumeSession,
  SessionBusyError,
  SetupFailedError,
  VerifyFailedError,
} from '../../index.mjs';
import { callTogether, killAllChildren, startChild, startChildren } from '../helpers/child.js';
import { inspectContainer, listContainers } from '../helpers/engine-http.mjs';
import { waitForProcess } from '../helpers/engine-wait.js';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { expectNoRecordLeaks, listVolumes, recordsOf, removeHandMade } from '../helpers/records.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

const PAUSE_ENV = 'BERTH_TEST_PAUSE_AT';
const hostDirs: string[] = [];
function hostDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'berth-recreate-')));
  hostDirs.push(dir);
  return dir;
}

/** Every container whose name contains the session's name (the aside name included). */
async function containersOf(sessionId: string): Promise<{ id: string; name: string; state: string }[]> {
  const name = containerName(sessionId);
  const list = await listContainers({ name: [name] });
  return list.map((c: any) => ({ id: c.Id, name: c.Names[0].replace(/^\//, ''), state: c.State }));
}

/** Replacement records (lock and commit mark) that name the session's container. */
async function replacementRecords(oldId: string): Promise<string[]> {
  return (await recordsOf(oldId)).filter((r) => r.kind === 'replace' || r.kind === 'replaced').map((r) => r.name);
}

/** Polls the engine until `check` holds (the child has reached its pause point). */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting until ${what}`);
}

engineSuite('recreateSession', () => {
  afterEach(killAllChildren);
  afterAll(async () => {
    for (const d of hostDirs) rmSync(d, { recursive: true, force: true });
    await expectNoRecordLeaks();
  });

  test('keeps a file in a bind mount, loses one in the writable layer, and says so', async ({ sessionId, labels, track }) => {
    const dir = hostDir();
    const spec = { sessionId, image: TEST_IMAGE, labels, mounts: [{ source: dir, target: '/keep' }], writablePaths: ['/keep'] };
    const old = await createSession(spec);
    expect((await old.exec(['sh', '-c', 'echo kept > /keep/a && echo lost > /root-layer-file'])).exitCode).toBe(0);

    const fresh = track(await recreateSession(spec));
    expect(fresh.id).not.toBe(old.id);
    expect(fresh).toMatchObject({ name: containerName(sessionId), sessionId, ownership: 'created' });
    expect(fresh.replaced).toEqual({
      previousId: old.id,
      lost: [{ kind: 'writable-layer' }, { kind: 'processes' }],
      kept: [{ kind: 'bind', source: dir, target: '/keep' }],
    });
    expect(fresh.verification).toMatchObject({ id: fresh.id, ok: true });
    expect((await fresh.readFile('/keep/a'))?.toString()).toBe('kept\n');
    expect(readFileSync(join(dir, 'a'), 'utf8')).toBe('kept\n');
    expect(await fresh.readFile('/root-layer-file')).toBeNull();
    expect(await inspectContainer(old.id)).toBeNull();
    expect(await recordsOf(old.id)).toEqual([]);
    expect(await containersOf(sessionId)).toEqual([expect.objectContaining({ id: fresh.id, name: containerName(sessionId), state: 'running' })]);
    // The old handle's container is gone: its removal finds nothing.
    expect(await old.remove()).toEqual({ removed: false, reason: 'absent' });
  });

  test('a missing image, a failing setup and a failing verification leave the old container running under its name', async ({ sessionId, labels, track }) => {
    const spec = { sessionId, image: TEST_IMAGE, labels };
    const old = track(await createSession(spec));
    const unchanged = async (): Promise<void> => {
      const now = await inspectContainer(containerName(sessionId));
      expect(now).toMatchObject({ Id: old.id, Name: `/${containerName(sessionId)}` });
      expect(now.State.Running).toBe(true);
      expect(await containersOf(sessionId)).toHaveLength(1);
      expect(await replacementRecords(old.id)).toEqual([]);
      expect((await old.exec(['true'])).exitCode).toBe(0);
    };

    await expectBerthError(recreateSession({ ...spec, image: 'berth-test/absent:none' }), ImageNotFoundError);
    await unchanged();
    // Renamed aside, created, started, then setup fails: rolled back.
    const setup = await expectBerthError(recreateSession({ ...spec, setupCommands: ['exit 3'] }), SetupFailedError);
    expect(setup.details.exitCode).toBe(3);
    await unchanged();
    // A root filesystem mounted read-only cannot hold a writable path: verification fails, rolled back.
    const verify = await expectBerthError(
      recreateSession({ ...spec, readOnlyRootFilesystem: true, writablePaths: ['/data'] }),
      VerifyFailedError,
    );
    expect(verify.details.findings.map((f) => f.code)).toContain('writable-read-only');
    expect(await inspectContainer(verify.details.id)).toBeNull();
    await unchanged();
  });

  test('an abort during the new container\'s setup rolls back: E_ABORTED, the old container back under its name', async ({ sessionId, labels, track }) => {
    const name = containerName(sessionId);
    const old = track(await createSession({ sessionId, image: TEST_IMAGE, labels }));
    const controller = new AbortController();
    const recreating = recreateSession({ sessionId, image: TEST_IMAGE, labels, setupCommands: [['sleep', '1007']], abortSignal: controller.signal });
    recreating.catch(() => {}); // asserted below
    let newId = '';
    await until('the new container runs under the name', async () => {
      const c = await inspectContainer(name);
      newId = c?.Id ?? '';
      return newId !== '' && newId !== old.id && c.State.Running === true;
    });
    await waitForProcess(newId, 'sleep 1007');
    controller.abort();
    const aborted = await expectBerthError(recreating, AbortedError);
    expect(aborted.details.operation).toBe('recreateSession');
    expect(await inspectContainer(newId)).toBeNull();
    expect(await containersOf(sessionId)).toEqual([{ id: old.id, name, state: 'running' }]);
    expect(await replacementRecords(old.id)).toEqual([]);
  });

  test('only the owner recreates: an adopter gets E_SESSION_BUSY (not-owner)', async ({ sessionId, labels }) => {
    const owner = await startChild();
    const created = await owner.call('createSession', { sessionId, image: TEST_IMAGE, labels });
    try {
      const busy = await expectBerthError(recreateSession({ sessionId, image: TEST_IMAGE, labels }), SessionBusyError);
      expect(busy.details).toMatchObject({ reason: 'not-owner', id: created.id, owner: { pid: owner.pid, liveness: 'alive' } });
      expect((await inspectContainer(created.id)).Name).toBe(`/${containerName(sessionId)}`);
    } finally {
      await owner.call('remove', created.handle);
    }
  });

  for (const [point, next, survivor] of [
    ['after-rename', 'resume', 'old'],
    ['after-create', 'reaper', 'old'],
    ['after-commit', 'resume', 'new'],
  ] as const) {
    test(`SIGKILL ${point.replace('-', ' ')}: the next ${next} leaves exactly one container under the name (the ${survivor} one)`, async ({ sessionId, labels }) => {
      const name = containerName(sessionId);
      const scope = { ...labels, 'berth.test-case': sessionId };
      const recreator = await startChild({ env: { [PAUSE_ENV]: point } });
      const created = await recreator.call('createSession', { sessionId, image: TEST_IMAGE, labels: scope });
      // This process holds the session too, so the reaper keeps it once its creator is dead.
      const holder = await resumeSession({ sessionId });
      const recreating = recreator.call('recreateSession', { sessionId, image: TEST_IMAGE, labels: scope });
      recreating.catch(() => {}); // never settles: the child is killed at its pause point
      await until(`the recreation reached ${point}`, async () => {
        const list = await containersOf(sessionId);
        if (point === 'after-rename') return list.some((c) => c.id === created.id && c.name !== name && c.state !== 'running');
        if (point === 'after-create') return list.some((c) => c.id !== created.id && c.name === name);
        return (await replacementRecords(created.id)).some((r) => r.startsWith('berth-replaced-'));
      });
      expect(await recreator.kill('SIGKILL')).toMatchObject({ signal: 'SIGKILL' });
      if (point === 'after-rename') {
        // The recreation's stop of the old container is berth's own (a stop record): a handle on
        // it is told the container is stopped, never that it died.
        const e = await holder.exec(['true']).catch((error: unknown) => error);
        expect((e as { code?: string }).code).toBe('E_ENGINE');
      }

      let survivorId: string;
      if (next === 'resume') {
        const resumed = await resumeSession({ sessionId });
        survivorId = resumed.id;
        await resumed.release();
      } else {
        const report = await reapOrphans({ labels: scope });
        expect(report.replacements).toEqual([{ name, previousId: created.id, outcome: 'rolled-back' }]);
        expect(report.kept).toEqual([expect.objectContaining({ id: created.id, reason: 'held' })]);
        survivorId = (await inspectContainer(name)).Id;
      }
      const left = await containersOf(sessionId);
      expect(left).toEqual([{ id: survivorId, name, state: 'running' }]);
      if (survivor === 'old') {
        expect(survivorId).toBe(created.id);
      } else {
        expect(survivorId).not.toBe(created.id);
        expect(await inspectContainer(created.id)).toBeNull();
      }
      expect(await replacementRecords(created.id)).toEqual([]);
      expect(await listVolumes({ 'dev.berth.record': 'replace', 'dev.berth.replace.name': name })).toEqual([]);
      await holder.release();
      await removeHandMade(survivorId);
    });
  }

  test('ten concurrent recreations in ten processes: exactly one proceeds, the others get E_SESSION_BUSY', async ({ sessionId, labels }) => {
    const name = containerName(sessionId);
    const owner = await startChild();
    const created = await owner.call('createSession', { sessionId, image: TEST_IMAGE, labels });
    expect(await owner.kill('SIGKILL')).toMatchObject({ signal: 'SIGKILL' });
    const children = await startChildren(10);
    const outcomes = await callTogether(children, 'recreateSession', { sessionId, image: TEST_IMAGE, labels, takeOver: true });
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost.map((o) => o.reason.code)).toEqual(Array(9).fill('E_SESSION_BUSY'));
    const winner = (won[0] as PromiseFulfilledResult<any>).value;
    expect(winner).toMatchObject({ name, ownership: 'created' });
    expect(winner.id).not.toBe(created.id);
    expect(await containersOf(sessionId)).toEqual([{ id: winner.id, name, state: 'running' }]);
    expect(await inspectContainer(created.id)).toBeNull();
    const index = outcomes.findIndex((o) => o.status === 'fulfilled');
    await expect(children[index].call('remove', winner.handle)).resolves.toEqual({ removed: true });
  });
});
