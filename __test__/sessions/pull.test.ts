// Image pulls against a real registry on loopback (127.0.0.1:5055), on the engine under test
// (BERTH_TEST_ENGINE=docker|podman): ensureImage and createSession pull a missing image with
// progress events; a missing tag is E_IMAGE_NOT_FOUND with the registry's reason.
import { randomBytes } from 'node:crypto';
import tar from 'tar-stream';
import { afterAll, beforeAll, expect } from 'vitest';
import { createSession, ensureImage, ImageNotFoundError, type PullProgress } from '../../index.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { ensureRegistry, imageExists, importImage, pushImage, REGISTRY, removeImage, tagImage } from '../helpers/registry.mjs';
import { runId } from '../helpers/run-label.mjs';
import { onPodman, testEngine } from '../helpers/test-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

/** A root filesystem tar holding one file of random bytes (a layer no other image shares). */
async function randomLayer(bytes: number): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    pack.on('end', () => resolve());
    pack.on('error', reject);
  });
  pack.entry({ name: 'data.bin', mode: 0o644, mtime: new Date('2024-01-01T00:00:00Z') }, randomBytes(bytes));
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

engineSuite('image pulls from a loopback registry', () => {
  let stopRegistry = (): void => {};
  const repo = `${REGISTRY}/berth-pull-${runId()}`;
  const randomRef = `${repo}/random:v1`;
  const busyboxRef = `${repo}/busybox:v1`;

  beforeAll(async () => {
    stopRegistry = await ensureRegistry();
    await importImage(randomRef, await randomLayer(512 * 1024));
    await pushImage(randomRef);
    await removeImage(randomRef);
    await tagImage(TEST_IMAGE, busyboxRef);
    await pushImage(busyboxRef);
    await removeImage(busyboxRef);
  });

  afterAll(async () => {
    await Promise.allSettled([removeImage(randomRef), removeImage(busyboxRef)]);
    stopRegistry();
  });

  test('ensureImage pulls a missing image and reports progress', async () => {
    expect(await imageExists(randomRef)).toBe(false);
    const events: PullProgress[] = [];
    await ensureImage(randomRef, { ...testEngine(), onPullProgress: (p) => events.push(p) });
    expect(await imageExists(randomRef)).toBe(true);
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) {
      expect(typeof e.status).toBe('string');
      expect(e.layer === null || typeof e.layer === 'string').toBe(true);
    }
    expect(events.some((e) => e.layer !== null)).toBe(true);
    const sized = events.filter((e) => e.total !== null && e.current !== null);
    for (const e of sized) expect(e.current!).toBeLessThanOrEqual(e.total!);
    // Docker reports bytes per layer; Podman's compat API reports layers without byte counts.
    if (!onPodman()) expect(sized.some((e) => e.total! > 0 && e.current! > 0)).toBe(true);
  });

  test('an image already present is not pulled again (no progress events)', async () => {
    await ensureImage(randomRef, testEngine());
    const events: PullProgress[] = [];
    await ensureImage(randomRef, { ...testEngine(), onPullProgress: (p) => events.push(p) });
    expect(events).toEqual([]);
  });

  test('createSession pulls a missing image, observing progress', async ({ engine, sessionId, labels, track }) => {
    expect(await imageExists(busyboxRef)).toBe(false);
    const events: PullProgress[] = [];
    const session = track(
      await createSession({ ...engine, sessionId, labels, image: busyboxRef, onPullProgress: (p) => events.push(p) }),
    );
    expect(events.length).toBeGreaterThan(0);
    const out = await session.exec(['echo', 'pulled']);
    expect(out.stdout.toString()).toBe('pulled\n');
  });

  test('a missing tag is E_IMAGE_NOT_FOUND with the registry reason, from ensureImage and createSession', async ({ engine, sessionId, labels }) => {
    const missing = `${repo}/random:no-such-tag`;
    const error = await ensureImage(missing, engine).catch((e: unknown) => e);
    expect(ImageNotFoundError.isInstance(error)).toBe(true);
    const details = (error as ImageNotFoundError).details;
    expect(details.image).toBe(missing);
    expect(details.reason.length).toBeGreaterThan(0);
    expect(details.reason).not.toBe('the pull finished but the image is not present');
    const created = await createSession({ ...engine, sessionId, labels, image: missing }).catch((e: unknown) => e);
    expect(created).toMatchObject({ code: 'E_IMAGE_NOT_FOUND', details: { image: missing } });
  });

  test('arguments are checked before any engine call', async () => {
    await expect(ensureImage(randomRef, { platform: 'not a platform' })).rejects.toMatchObject({
      code: 'E_INVALID_ARGUMENT',
      details: { field: 'platform' },
    });
    await expect(ensureImage(randomRef, { onPullProgress: 5 as never })).rejects.toMatchObject({
      code: 'E_INVALID_ARGUMENT',
      details: { field: 'onPullProgress' },
    });
  });

  test('a platform is passed to the pull', async () => {
    await removeImage(randomRef);
    await ensureImage(randomRef, { ...testEngine(), platform: 'linux/amd64' });
    expect(await imageExists(randomRef)).toBe(true);
  });
});
