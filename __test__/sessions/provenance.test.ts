// Containers that only inherited berth's labels (run from an image committed from a berth
// container) are not berth sessions: the reaper never removes them, listSessions leaves them
// out, resumeSession refuses them. Every reaper call is narrowed to this test's own label.
import { expect } from 'vitest';
import { containerName, createSession, listSessions, reapOrphans, resumeSession } from '../../index.mjs';
import { startChild } from '../helpers/child.js';
import { createContainer, engineRequest, inspectContainer, removeContainer, startContainer } from '../helpers/engine-http.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

engineSuite('provenance', () => {

  test('a snapshot of a dead owner’s session, run by hand, is never reaped, listed or resumed', async ({ sessionId, labels }) => {
    const scope = { ...labels, 'berth.test-case': sessionId };
    const owner = await startChild();
    const created = await owner.call('createSession', { sessionId, image: TEST_IMAGE, labels: scope });
    const snapshot = `berth-test/snapshot:${sessionId.toLowerCase().replace(/[^a-z0-9_.-]/g, '-')}`;
    const [repo, tag] = snapshot.split(':');
    const commit = await engineRequest('POST', `/commit?container=${created.id}&repo=${encodeURIComponent(repo!)}&tag=${tag}`, { body: {} });
    expect(commit.status).toBe(201);
    await owner.kill('SIGKILL');
    const handMade: string[] = [];
    try {
      // The session itself is an orphan now: the reaper takes it.
      expect((await reapOrphans({ labels: scope })).removed.map((e) => e.id)).toEqual([created.id]);
      // Two containers from the snapshot, by hand: one under another name, one under the derived name.
      for (const name of [`${sessionId}-copy`, containerName(sessionId)]) {
        const id = await createContainer(name, { Image: snapshot, Entrypoint: ['sleep'], Cmd: ['600'] });
        handMade.push(id);
        await startContainer(id);
        expect((await inspectContainer(id))?.Config?.Labels?.['dev.berth.managed']).toBe('true');
      }
      const report = await reapOrphans({ labels: scope });
      expect(report.removed).toEqual([]);
      expect(await listSessions({ labels: scope })).toEqual([]);
      await expect(resumeSession({ sessionId })).rejects.toMatchObject({ code: 'E_FOREIGN_CONTAINER' });
      for (const id of handMade) expect((await inspectContainer(id))?.State?.Running).toBe(true);
      // A fresh berth session from that snapshot image is berth's own again.
      const fresh = await createSession({ sessionId: `${sessionId}-fresh`, image: snapshot, labels: scope });
      try {
        expect((await listSessions({ labels: scope })).map((s) => s.id)).toEqual([fresh.id]);
      } finally {
        await fresh.remove();
      }
    } finally {
      for (const id of handMade) await removeContainer(id);
      await engineRequest('DELETE', `/images/${encodeURIComponent(snapshot)}?force=1`);
    }
  });
});
