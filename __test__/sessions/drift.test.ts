// Case 6, drift on resume: the fields a resume spec names are compared with the creation
// digests (images by resolved id); `onDrift: 'error'` rejects and adopts nothing.
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { resumeSession } from '../../index.mjs';
import { killAllChildren, startChild } from '../helpers/child.js';
import { ALIAS_IMAGE, ensureDriftImages, OTHER_IMAGE } from '../helpers/drift-images.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { expectNoRecordLeaks, recordsOf } from '../helpers/records.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

engineSuite('drift on resume', () => {
  beforeAll(() => ensureDriftImages());
  afterEach(killAllChildren);
  afterAll(async () => {
    await expectNoRecordLeaks();
  });

  test('case 6: image J drifts, env A=1 does not; strict resume rejects and adopts nothing', async ({ sessionId, labels }) => {
    const owner = await startChild();
    const created = await owner.call('createSession', { sessionId, image: TEST_IMAGE, env: { A: '1' }, labels });
    try {
      const before = await recordsOf(created.id);

      const reported = await resumeSession({ sessionId, spec: { image: OTHER_IMAGE, env: { A: '1' } } });
      expect(reported.drift).toEqual(['image']);
      expect(reported.ownership).toBe('adopted');
      // An adopted handle's remove() makes no engine call; release() drops its holder record.
      expect(await reported.remove()).toEqual({ removed: false, reason: 'not-owner' });
      await reported.release();

      const error = await resumeSession({ sessionId, spec: { image: OTHER_IMAGE, env: { A: '2' } }, onDrift: 'error' }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'E_SPEC_DRIFT', details: { sessionId, fields: ['image', 'env'] } });
      expect(String((error as Error).message)).not.toContain('A=2');
      expect(await recordsOf(created.id)).toEqual(before);

      // The same image under another reference is no drift; neither is a spec naming nothing that differs.
      const same = await resumeSession({ sessionId, spec: { image: ALIAS_IMAGE, ports: [] }, onDrift: 'error' });
      expect(same.drift).toEqual([]);
      await same.release();
      expect(await recordsOf(created.id)).toEqual(before);
    } finally {
      await owner.call('remove', created.handle);
    }
  });
});
