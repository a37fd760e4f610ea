// When a process dies: liveness, holder records, orphan reaping and take-over, across real OS
// processes (child.ts) on the real engine. Every reaper call is narrowed to this test's own
// label, so other suites' containers on the same engine are never candidates.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect } from 'vitest';
import { listSessions, peek, reapOrphans, resumeSession } from '../../index.mjs';
import { callTogether, killAllChildren, startChild, startChildren } from '../helpers/child.js';
import { engineEvents, inspectContainer, stopContainer } from '../helpers/engine-http.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import {
  deleteVolume,
  expectNoRecordLeaks,
  handMadeSession,
  holderLabels,
  plantRecord,
  recordsOf,
  removeHandMade,
} from '../helpers/records.mjs';
import { onPodman } from '../helpers/test-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

const CASE_LABEL = 'berth.test-case';

/** Labels that put a test's containers (and only them) in its own reaper scope. */
function caseLabels(labels: Record<string, string>, sessionId: string): Record<string, string> {
  return { ...labels, [CASE_LABEL]: sessionId };
}

/** A child that created `sessionId` and was then SIGKILLed; returns the container id and host id. */
async function orphanOf(sessionId: string, labels: Record<string, string>): Promise<{ id: string; hostId: string }> {
  const owner = await startChild();
  const created = await owner.call('createSession', { sessionId, image: TEST_IMAGE, labels });
  expect(await owner.kill('SIGKILL')).toMatchObject({ signal: 'SIGKILL' });
  return { id: created.id, hostId: created.owner.hostId };
}

const byId = (entries: { id: string; reason: string }[]): Record<string, string> =>
  Object.fromEntries(entries.map((e) => [e.id, e.reason]));

engineSuite('when a process dies', () => {
  afterEach(killAllChildren);
  afterAll(async () => {
    await expectNoRecordLeaks();
  });

  test('case 3: a SIGKILLed owner is dead and reaped; live and unknown owners are untouched', async ({ sessionId, labels }) => {
    const scope = caseLabels(labels, sessionId);
    const dead = await orphanOf(`${sessionId}-dead`, scope);
    const liveOwner = await startChild();
    const live = await liveOwner.call('createSession', { sessionId: `${sessionId}-live`, image: TEST_IMAGE, labels: scope });
    const unknownId = await handMadeSession({
      sessionId: `${sessionId}-unknown`,
      image: TEST_IMAGE,
      owner: { hostId: 'f'.repeat(32), pid: process.pid, startTime: '1' },
      extraLabels: scope,
    });
    try {
      expect((await peek(`${sessionId}-dead`))?.owner?.liveness).toBe('dead');
      const listed = await listSessions({ labels: scope });
      expect(Object.fromEntries(listed.map((s) => [s.id, s.owner?.liveness]))).toEqual({
        [dead.id]: 'dead',
        [live.id]: 'alive',
        [unknownId]: 'unknown',
      });
      expect(listed.find((s) => s.id === dead.id)?.holders).toMatchObject([{ role: 'creator', liveness: 'dead' }]);

      const report = await reapOrphans({ labels: scope });
      expect(byId(report.removed)).toEqual({ [dead.id]: 'owner-dead' });
      expect(byId(report.kept)).toEqual({ [live.id]: 'owner-alive', [unknownId]: 'owner-unknown' });
      expect(report.removed[0]).toMatchObject({ sessionId: `${sessionId}-dead`, name: expect.stringContaining('berth-') });
      expect(await inspectContainer(dead.id)).toBeNull();
      expect(await recordsOf(dead.id)).toEqual([]);
      expect((await inspectContainer(live.id))?.State?.Running).toBe(true);
      expect((await inspectContainer(unknownId))?.State?.Running).toBe(true);
      const out = await liveOwner.call('exec', live.handle, ['echo', 'still here']);
      expect(out.stdout.toString()).toBe('still here\n');
    } finally {
      await liveOwner.call('remove', live.handle);
      await removeHandMade(unknownId);
    }
  });

  test('a second process takes over a SIGKILLed owner, uses the container and removes it', async ({ sessionId, labels }) => {
    const { id } = await orphanOf(sessionId, labels);
    const heir = await startChild();
    const taken = await heir.call('resumeSession', { sessionId, takeOver: true });
    expect(taken).toMatchObject({ id, ownership: 'inherited', owner: { liveness: 'dead' } });
    const out = await heir.call('exec', taken.handle, ['sh', '-c', 'echo $$ > /tmp/heir && cat /tmp/heir']);
    expect(out.exitCode).toBe(0);
    const listed = (await listSessions({ labels })).find((s) => s.id === id);
    expect(listed?.dutyGeneration).toBe(1);
    expect(listed?.holders).toContainEqual(expect.objectContaining({ role: 'inheritor', pid: heir.pid, liveness: 'alive', generation: 1 }));
    await expect(heir.call('remove', taken.handle)).resolves.toEqual({ removed: true });
    expect(await inspectContainer(id)).toBeNull();
    expect(await recordsOf(id)).toEqual([]);
  });

  test('the reaper keeps a session a plain adopter holds, and one a take-over holder holds, until it dies', async ({ sessionId, labels }) => {
    const scope = caseLabels(labels, sessionId);
    const { id } = await orphanOf(sessionId, scope);
    const adopter = await startChild();
    const adopted = await adopter.call('resumeSession', { sessionId });
    expect(adopted.ownership).toBe('adopted');
    expect(byId((await reapOrphans({ labels: scope })).kept)).toEqual({ [id]: 'held' });

    await adopter.kill('SIGKILL');
    const heir = await startChild();
    const taken = await heir.call('resumeSession', { sessionId, takeOver: true });
    expect(taken.ownership).toBe('inherited');
    expect(byId((await reapOrphans({ labels: scope })).kept)).toEqual({ [id]: 'owner-alive' });
    expect((await inspectContainer(id))?.State?.Running).toBe(true);

    await heir.kill('SIGKILL');
    const report = await reapOrphans({ labels: scope });
    expect(byId(report.removed)).toEqual({ [id]: 'owner-dead' });
    expect(report.kept).toEqual([]);
    expect(await inspectContainer(id)).toBeNull();
    expect(await recordsOf(id)).toEqual([]);
  });

  test('ten concurrent take-overs: exactly one inherits; the others get E_SESSION_BUSY, or adopt once the heir lives', async ({ sessionId, labels }) => {
    const { id } = await orphanOf(sessionId, labels);
    const takers = await startChildren(10);
    const results = await callTogether(takers, 'resumeSession', { sessionId, takeOver: true });
    const fulfilled = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{ child: takers[i]!, session: r.value }] : []));
    const won = fulfilled.filter((w) => w.session.ownership === 'inherited');
    try {
      expect(won).toHaveLength(1);
      // One that read the records after the heir's claim adopts (a live inheritor keeps the duty).
      expect(fulfilled.filter((w) => w.session.ownership !== 'inherited').every((w) => w.session.ownership === 'adopted')).toBe(true);
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(lost.length + fulfilled.length).toBe(10);
      for (const r of lost) expect([r.reason.code, r.reason.details.reason]).toEqual(['E_SESSION_BUSY', 'taken-over']);
      expect(lost.every((r) => r.reason.details.owner?.pid === won[0]!.child.pid)).toBe(true);
      const duty = (await recordsOf(id)).filter((r) => r.kind === 'duty');
      expect(duty.map((r) => r.name)).toEqual([`berth-duty-${id}-1`]);
    } finally {
      for (const { child, session } of won) await child.call('remove', session.handle);
    }
    expect(await inspectContainer(id)).toBeNull();
    expect(await recordsOf(id)).toEqual([]);
  });

  test('a take-over that fails after winning the duty drops its duty record; the reaper still reaps', async ({ sessionId, labels }) => {
    // The container cannot start again: its bind-mount source is gone. The take-over wins
    // generation 1, then starting the stopped container fails: the claim must not outlive it.
    const scope = caseLabels(labels, sessionId);
    const hostDir = mkdtempSync(join(tmpdir(), 'berth-takeover-'));
    const owner = await startChild();
    const created = await owner.call('createSession', {
      sessionId,
      image: TEST_IMAGE,
      labels: scope,
      mounts: [{ source: hostDir, target: '/data' }],
    });
    await owner.kill('SIGKILL');
    await stopContainer(created.id);
    rmSync(hostDir, { recursive: true });

    const since = Math.floor(Date.now() / 1000);
    const failed = await resumeSession({ sessionId, takeOver: true }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 'E_ENGINE' });
    expect((failed as { details: { cleanup?: unknown } }).details.cleanup).toBeUndefined();
    // The claim was won (the record was created), then dropped again.
    const duty = `berth-duty-${created.id}-1`;
    const events = await engineEvents({ type: 'volume', since, until: Math.ceil(Date.now() / 1000) + 1 });
    expect(events.filter((e) => e.id === duty).map((e) => e.action)).toEqual(['create', onPodman() ? 'remove' : 'destroy']);
    expect((await recordsOf(created.id)).filter((r) => r.kind === 'duty')).toEqual([]);
    expect((await listSessions({ labels: scope }))[0]).toMatchObject({ id: created.id, dutyGeneration: 0 });

    const report = await reapOrphans({ labels: scope });
    expect(byId(report.removed)).toEqual({ [created.id]: 'owner-dead' });
    expect(await inspectContainer(created.id)).toBeNull();
    expect(await recordsOf(created.id)).toEqual([]);
  });

  test('exclusive resume against a live owner is E_SESSION_BUSY and leaves no record', async ({ sessionId, labels, track }) => {
    const owner = await startChild();
    const created = await owner.call('createSession', { sessionId, image: TEST_IMAGE, labels });
    const before = await recordsOf(created.id);
    const error = await resumeSession({ sessionId, exclusive: true }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'E_SESSION_BUSY', details: { reason: 'held', owner: { pid: owner.pid, liveness: 'alive' } } });
    expect(await recordsOf(created.id)).toEqual(before);
    // A plain adopter of a live owner is fine, and an exclusive one then sees that adopter too.
    const adopter = await startChild();
    await adopter.call('resumeSession', { sessionId });
    await owner.kill('SIGKILL');
    await expect(resumeSession({ sessionId, exclusive: true })).rejects.toMatchObject({
      code: 'E_SESSION_BUSY',
      details: { owner: { pid: adopter.pid } },
    });
    await adopter.kill('SIGKILL');
    const mine = track(await resumeSession({ sessionId, exclusive: true }));
    expect(mine.ownership).toBe('adopted');
  });

  test('an adopter that removes touches nothing; release() drops only its own hold', async ({ sessionId, labels }) => {
    const owner = await startChild();
    const created = await owner.call('createSession', { sessionId, image: TEST_IMAGE, labels });
    const adopter = await startChild();
    const adopted = await adopter.call('resumeSession', { sessionId });
    expect((await recordsOf(created.id)).map((r) => r.role ?? r.kind).sort()).toEqual(['adopter', 'creator', 'guard', 'ready']);
    await expect(adopter.call('remove', adopted.handle)).resolves.toEqual({ removed: false, reason: 'not-owner' });
    expect((await recordsOf(created.id)).map((r) => r.role ?? r.kind).sort()).toEqual(['adopter', 'creator', 'guard', 'ready']);
    await expect(owner.call('release', created.handle)).resolves.toEqual({ released: false, reason: 'owner' });
    await expect(adopter.call('release', adopted.handle)).resolves.toEqual({ released: true });
    await expect(adopter.call('release', adopted.handle)).resolves.toEqual({ released: false, reason: 'already-released' });
    expect((await recordsOf(created.id)).map((r) => r.role ?? r.kind).sort()).toEqual(['creator', 'guard', 'ready']);
    expect((await inspectContainer(created.id))?.State?.Running).toBe(true);
    await expect(owner.call('remove', created.handle)).resolves.toEqual({ removed: true });
    expect(await recordsOf(created.id)).toEqual([]);
  });

  test('pid reuse: an owner or holder whose pid now belongs to another process is dead', async ({ sessionId, labels }) => {
    const scope = caseLabels(labels, sessionId);
    const witness = await startChild();
    const { hostId } = await witness.call('createSession', { sessionId: `${sessionId}-w`, image: TEST_IMAGE, labels }).then(async (s) => {
      await witness.call('remove', s.handle);
      return s.owner;
    });
    // The pid of a process alive right now, with a start time that is not its own.
    const reused = { hostId, pid: witness.pid, startTime: '1' };
    const id = await handMadeSession({ sessionId, image: TEST_IMAGE, owner: reused, extraLabels: scope });
    const record = await plantRecord(id, holderLabels(id, { ...reused, pid: process.pid }));
    const [listed] = await listSessions({ labels: scope });
    expect(listed?.owner).toMatchObject({ pid: witness.pid, liveness: 'dead' });
    expect(listed?.holders).toEqual([expect.objectContaining({ role: 'adopter', pid: process.pid, liveness: 'dead', record })]);
    expect(byId((await reapOrphans({ labels: scope })).removed)).toEqual({ [id]: 'owner-dead' });
    expect(await recordsOf(id)).toEqual([]);
  });

  test('a corrupt or foreign holder record counts as unknown and protects the container', async ({ sessionId, labels }) => {
    const scope = caseLabels(labels, sessionId);
    const { id, hostId } = await orphanOf(sessionId, scope);
    const good = holderLabels(id, { hostId, pid: process.pid, startTime: '1' });
    const foreign = await plantRecord(id, { ...good, 'dev.berth.record.schema': '2' });
    try {
      const [listed] = await listSessions({ labels: scope });
      expect(listed?.holders).toContainEqual(
        expect.objectContaining({ record: foreign, role: 'unknown', liveness: 'unknown', invalid: expect.stringContaining('schema') }),
      );
      expect(byId((await reapOrphans({ labels: scope })).kept)).toEqual({ [id]: 'held' });
      await deleteVolume(foreign);
      const truncated = { ...good };
      delete (truncated as Record<string, string>)['dev.berth.holder.start-time'];
      const broken = await plantRecord(id, truncated);
      expect(byId((await reapOrphans({ labels: scope })).kept)).toEqual({ [id]: 'held' });
      await deleteVolume(broken);
      expect(byId((await reapOrphans({ labels: scope })).removed)).toEqual({ [id]: 'owner-dead' });
    } finally {
      await removeHandMade(id);
    }
  });

  test('a dry run removes nothing; the real run decides on what it reads then', async ({ sessionId, labels }) => {
    const scope = caseLabels(labels, sessionId);
    const { id } = await orphanOf(sessionId, scope);
    const records = await recordsOf(id);
    const dry = await reapOrphans({ labels: scope, dryRun: true });
    expect(byId(dry.removed)).toEqual({ [id]: 'owner-dead' });
    expect((await inspectContainer(id))?.State?.Running).toBe(true);
    expect(await recordsOf(id)).toEqual(records);
    // Between the dry run and the real one an adopter arrives: the real run re-reads and keeps it.
    const adopter = await startChild();
    const adopted = await adopter.call('resumeSession', { sessionId });
    expect(byId((await reapOrphans({ labels: scope })).kept)).toEqual({ [id]: 'held' });
    await adopter.call('remove', adopted.handle, { force: true });
    expect(await inspectContainer(id)).toBeNull();
  });

  test('an unnarrowed dry run finds record volumes whose container is gone', async () => {
    const gone = 'e'.repeat(64);
    const orphan = await plantRecord(gone, holderLabels(gone, { hostId: 'h', pid: 1, startTime: '1' }));
    try {
      const dry = await reapOrphans({ dryRun: true });
      expect(dry.removedRecords).toContain(orphan);
    } finally {
      await deleteVolume(orphan);
    }
  });
});
