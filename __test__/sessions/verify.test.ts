// verifySession and resumeSession({ verify }): every finding code produced by a really broken
// container (a different mount, a writable path made read-only or not the user's, a stopped or
// paused container, labels that differ from the creation record, a foreign container, no init),
// repair in place, and the bind-source check of createSession.
import { mkdtempSync, rmSync, symlinkSync, mkdirSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import {
  containerName,
  createSession,
  InvalidArgumentError,
  peek,
  resumeSession,
  verifySession,
  VerifyFailedError,
  type Finding,
} from '../../index.mjs';
import {
  createContainer,
  engineRequest,
  execIn,
  inspectContainer,
  inspectVolume,
  listContainers,
  pauseContainer,
  removeContainer,
  startContainer,
  stopContainer,
} from '../helpers/engine-http.mjs';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { createVolume, deleteVolume, expectNoRecordLeaks, recordsOf } from '../helpers/records.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

/** A host directory for bind mounts, removed after the file. */
const hostDirs: string[] = [];
function hostDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'berth-verify-')));
  hostDirs.push(dir);
  return dir;
}

const codes = (findings: Finding[]): string[] => findings.map((f) => f.code).sort();

/** `POST /containers/{id}/rename?name=…` through the raw Engine API. */
async function renameContainer(id: string, name: string): Promise<void> {
  const res = await engineRequest('POST', `/containers/${id}/rename?name=${encodeURIComponent(name)}`);
  if (res.status !== 204) throw new Error(`rename ${id}: HTTP ${res.status} ${res.text}`);
}

engineSuite('verifySession', () => {
  afterAll(async () => {
    for (const d of hostDirs) rmSync(d, { recursive: true, force: true });
    await expectNoRecordLeaks();
  });

  test('a healthy session verifies ok; a missing and a root-owned writable path are repaired for the user', async ({ sessionId, labels, track }) => {
    const dir = hostDir();
    const spec = {
      sessionId,
      image: TEST_IMAGE,
      labels,
      user: '1000',
      ports: [8080],
      mounts: [{ source: dir, target: '/host' }],
    };
    const s = track(await createSession(spec));
    expect(await verifySession(sessionId, { spec })).toEqual({ id: s.id, ok: true, findings: [] });

    // /data exists but belongs to root with mode 555; /work does not exist at all.
    expect((await execIn(s.id, ['sh', '-c', 'mkdir /data && chmod 555 /data'], { user: '0' })).exitCode).toBe(0);
    const withPaths = { ...spec, writablePaths: ['/work', '/data'] };
    const report = await verifySession(sessionId, { spec: withPaths, repair: false });
    expect(report.ok).toBe(false);
    expect(report.findings).toEqual([
      expect.objectContaining({ code: 'writable-missing', kind: 'repairable', path: '/work', field: 'writablePaths[0]', repaired: false }),
      expect.objectContaining({ code: 'writable-denied', kind: 'repairable', path: '/data', field: 'writablePaths[1]', repaired: false }),
    ]);
    expect(report.findings[1].message).toContain('/data');
    // Report only: nothing was changed.
    expect((await s.exec(['test', '-e', '/work'])).exitCode).not.toBe(0);

    const repaired = await verifySession(sessionId, { spec: withPaths });
    expect(repaired.ok).toBe(true);
    expect(repaired.findings.map((f) => [f.code, f.repaired])).toEqual([
      ['writable-missing', true],
      ['writable-denied', true],
    ]);
    const write = await s.exec(['sh', '-c', 'echo hi > /work/a && echo hi > /data/b && id -u']);
    expect(write).toMatchObject({ exitCode: 0 });
    expect(write.stdout.toString().trim()).toBe('1000');
  });

  test('a stopped and a paused container: state findings, repaired by start and unpause', async ({ sessionId, labels, track, session }) => {
    const s = session;
    await stopContainer(s.id);
    const stopped = await verifySession(sessionId, { repair: false });
    expect(stopped.findings).toEqual([expect.objectContaining({ code: 'state-stopped', kind: 'repairable' })]);
    const started = await verifySession(sessionId);
    expect(started).toMatchObject({ ok: true, findings: [{ code: 'state-stopped', repaired: true }] });
    expect((await inspectContainer(s.id)).State.Running).toBe(true);

    await pauseContainer(s.id);
    const unpaused = await verifySession(sessionId);
    expect(unpaused).toMatchObject({ ok: true, findings: [{ code: 'state-paused', repaired: true }] });
    expect((await peek(sessionId))?.state).toBe('running');
  });

  test('created with a different mount than the spec: mount-source, mount-mode, mount-missing, port-unmapped (hard)', async ({ sessionId, labels, track }) => {
    const [a, b] = [hostDir(), hostDir()];
    const s = track(await createSession({ sessionId, image: TEST_IMAGE, labels, mounts: [{ source: a, target: '/m' }] }));
    const spec = {
      mounts: [
        { source: b, target: '/m', readOnly: true },
        { source: a, target: '/elsewhere' },
      ],
      ports: [9090],
    };
    const report = await verifySession(sessionId, { spec, repair: false });
    expect(report.ok).toBe(false);
    expect(report.findings.map((f) => [f.code, f.kind, f.field])).toEqual([
      ['mount-source', 'hard', 'mounts[0].source'],
      ['mount-mode', 'hard', 'mounts[0].readOnly'],
      ['mount-missing', 'hard', 'mounts[1]'],
      ['port-unmapped', 'hard', 'ports[0]'],
    ]);
    expect(report.findings[0].message).toContain(a);
    expect(report.findings[0].message).toContain(b);

    const failed = await expectBerthError(verifySession(sessionId, { spec }), VerifyFailedError);
    expect(failed.details).toMatchObject({ sessionId, id: s.id, name: containerName(sessionId) });
    expect(codes(failed.details.findings)).toEqual(['mount-missing', 'mount-mode', 'mount-source', 'port-unmapped']);
  });

  test('a writable path made read-only: writable-read-only is hard and rejects', async ({ sessionId, labels, track }) => {
    const dir = hostDir();
    track(await createSession({ sessionId, image: TEST_IMAGE, labels, mounts: [{ source: dir, target: '/ro', readOnly: true }] }));
    const spec = { writablePaths: ['/ro'] };
    const report = await verifySession(sessionId, { spec, repair: false });
    expect(report.findings).toEqual([
      expect.objectContaining({ code: 'writable-read-only', kind: 'hard', path: '/ro', field: 'writablePaths[0]' }),
    ]);
    const failed = await expectBerthError(verifySession(sessionId, { spec }), VerifyFailedError);
    expect(codes(failed.details.findings)).toEqual(['writable-read-only']);
  });

  test('a container whose labels or id do not match the creation record, a foreign one, one without init and with a tmpfs', async ({ sessionId, labels, track }) => {
    const s = track(await createSession({ sessionId, image: TEST_IMAGE, labels: { ...labels, team: 'a' } }));
    const name = containerName(sessionId);
    const original = await inspectContainer(s.id);
    const ready = await inspectVolume(`berth-ready-${s.id}`);
    // Put the real one aside and a look-alike under its name: same labels but `team`.
    await renameContainer(s.id, `${name}-aside`);
    const made: string[] = [];
    const lookAlike = async (extraLabels: Record<string, string>, hostConfig: Record<string, unknown> = { Init: true }): Promise<string> => {
      const id = await createContainer(name, {
        Image: TEST_IMAGE,
        Entrypoint: ['sleep', '2147483647'],
        Cmd: [],
        Labels: { ...original.Config.Labels, ...extraLabels },
        HostConfig: hostConfig,
      });
      made.push(id);
      await startContainer(id);
      return id;
    };
    try {
      const unrecorded = await lookAlike({});
      const noRecord = await verifySession(sessionId, { repair: false });
      expect(noRecord.findings).toEqual([expect.objectContaining({ code: 'identity-unrecorded', kind: 'hard', field: 'id' })]);
      expect(noRecord.findings[0].message).toContain(unrecorded);
      await removeContainer(unrecorded);

      // A record for the look-alike's id that says what the labels were at creation.
      const relabelled = await lookAlike({ team: 'b' });
      await createVolume(`berth-ready-${relabelled}`, { ...ready.Labels, 'dev.berth.container-id': relabelled });
      const mismatch = await verifySession(sessionId, { repair: false });
      expect(mismatch.findings).toEqual([expect.objectContaining({ code: 'identity-labels', kind: 'hard', field: 'labels.team' })]);
      // Identity findings are never repaired: even a stopped look-alike stays stopped.
      await stopContainer(relabelled);
      const refused = await expectBerthError(verifySession(sessionId), VerifyFailedError);
      expect(codes(refused.details.findings)).toEqual(['identity-labels']);
      expect((await inspectContainer(relabelled)).State.Running).toBe(false);
      await removeContainer(relabelled);
      await deleteVolume(`berth-ready-${relabelled}`);

      // The same labels, recorded, but no init process, and a tmpfs where the spec binds a host path.
      // Started by hand, it also has no network guard record for its run.
      const noInit = await lookAlike({}, { Init: false, Tmpfs: { '/t': '' } });
      await createVolume(`berth-ready-${noInit}`, { ...ready.Labels, 'dev.berth.container-id': noInit });
      const init = await verifySession(sessionId, { repair: false, spec: { mounts: [{ source: hostDir(), target: '/t' }] } });
      expect(init.findings.map((f) => [f.code, f.kind])).toEqual([
        ['init-missing', 'hard'],
        ['mount-type', 'hard'],
        ['network-unguarded', 'repairable'],
      ]);
      await removeContainer(noInit);
      await deleteVolume(`berth-ready-${noInit}`);

      // Not berth's at all.
      const foreign = await createContainer(name, { Image: TEST_IMAGE, Cmd: ['sleep', '2147483647'], Labels: labels });
      made.push(foreign);
      const notOurs = await verifySession(sessionId, { repair: false });
      expect(notOurs.findings).toEqual([expect.objectContaining({ code: 'identity-foreign', kind: 'hard' })]);
      await removeContainer(foreign);
    } finally {
      for (const id of made) {
        await removeContainer(id);
        await deleteVolume(`berth-ready-${id}`);
      }
      await renameContainer(s.id, name);
    }
    expect(await verifySession(sessionId)).toMatchObject({ id: s.id, ok: true });
  });

  test('resumeSession({ verify }) repairs what it can and drops its hold on a hard finding', async ({ sessionId, labels, track }) => {
    const dir = hostDir();
    const s = track(await createSession({ sessionId, image: TEST_IMAGE, labels, mounts: [{ source: dir, target: '/ro', readOnly: true }] }));
    const resumed = await resumeSession({ sessionId, verify: true, spec: { writablePaths: ['/w'] } });
    // The creating process's resume shares its duty: no hold of its own to drop.
    expect(resumed.ownership).toBe('created');
    expect(resumed.verification).toMatchObject({ id: s.id, ok: true, findings: [{ code: 'writable-missing', repaired: true }] });
    await resumed.release();

    const before = await recordsOf(s.id);
    const failed = await expectBerthError(resumeSession({ sessionId, verify: true, spec: { writablePaths: ['/ro'] } }), VerifyFailedError);
    expect(codes(failed.details.findings)).toEqual(['writable-read-only']);
    expect(await recordsOf(s.id)).toEqual(before);
  });

  test('bind sources are checked before any engine change: absent, and a symlink escaping mountRoots, name the segment', async ({ sessionId, labels }) => {
    const root = hostDir();
    const outside = hostDir();
    mkdirSync(join(root, 'ok'));
    symlinkSync(outside, join(root, 'escape'));
    const missing = await expectBerthError(
      createSession({ sessionId, image: TEST_IMAGE, labels, mounts: [{ source: join(root, 'nope', 'x'), target: '/m' }] }),
      InvalidArgumentError,
    );
    expect(missing.details.field).toBe('mounts[0].source');
    expect(missing.message).toContain(`segment \`${join(root, 'nope')}\` is missing`);
    const escape = await expectBerthError(
      createSession({
        sessionId,
        image: TEST_IMAGE,
        labels,
        mountRoots: [root],
        mounts: [
          { source: join(root, 'ok'), target: '/ok' },
          { source: join(root, 'escape'), target: '/m' },
        ],
      }),
      InvalidArgumentError,
    );
    expect(escape.details.field).toBe('mounts[1].source');
    expect(escape.message).toContain(`segment \`${join(root, 'escape')}\` is a symlink to \`${outside}\``);
    expect(await listContainers({ name: [containerName(sessionId)] })).toEqual([]);
    const bad = await expectBerthError(verifySession(sessionId, { spec: { writablePaths: ['relative'] } }), InvalidArgumentError);
    expect(bad.details.field).toBe('spec.writablePaths[0]');
  });
});
