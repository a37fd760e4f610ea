// Case 4, a removal that fails keeps the duty: the owner's engine is really stopped (a second
// dockerd of this test's own, never the main one), remove() rejects with a code, and once the
// engine is back the same handle's second remove() removes the container and its records.
import { afterAll, afterEach, beforeAll, describe, expect } from 'vitest';
import { killAllChildren, startChild } from '../helpers/child.js';
import { engineAvailable } from '../helpers/engine-available.js';
import { inspectContainer } from '../helpers/engine-http.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { expectNoLeaks } from '../helpers/leak-check.mjs';
import { expectNoRecordLeaks, recordsOf } from '../helpers/records.mjs';
import { secondEngine, secondEngineUnavailable } from '../helpers/second-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';

const unavailable = secondEngineUnavailable();

describe.skipIf(!engineAvailable() || unavailable !== null)(
  `case 4 on a second dockerd${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    const engine = secondEngine();
    const on = { socketPath: engine.socketPath };
    beforeAll(() => engine.start(), 120_000);
    afterEach(killAllChildren);
    afterAll(async () => {
      try {
        await engine.start();
        await expectNoLeaks(on);
        await expectNoRecordLeaks(on);
      } finally {
        await engine.destroy();
      }
    }, 120_000);

    test('a remove that fails while the engine is down keeps the duty; the retry removes', async ({ sessionId, labels }) => {
      const owner = await startChild();
      const created = await owner.call('createSession', { sessionId, image: TEST_IMAGE, labels, ...on });
      const records = await recordsOf(created.id, on);
      expect(records.map((r) => r.role ?? r.kind).sort()).toEqual(['creator', 'guard', 'ready']);

      await engine.stop();
      const failed = await owner.call('remove', created.handle).catch((e: unknown) => e);
      expect(failed).toMatchObject({ code: 'E_ENGINE_UNAVAILABLE' });

      await engine.start();
      expect(await inspectContainer(created.id, on)).not.toBeNull();
      expect(await recordsOf(created.id, on)).toEqual(records);
      await expect(owner.call('remove', created.handle)).resolves.toEqual({ removed: true });
      expect(await inspectContainer(created.id, on)).toBeNull();
      expect(await recordsOf(created.id, on)).toEqual([]);
      await expect(owner.call('remove', created.handle)).resolves.toEqual({ removed: false, reason: 'already-removed' });
    }, 180_000);
  },
);
