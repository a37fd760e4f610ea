import { ENGINE_UP_ENV } from './helpers/engine-available.js';
import { ping, resolveSocketPath } from './helpers/engine-http.mjs';
import { expectNoLeaks } from './helpers/leak-check.mjs';
import { expectNoRecordLeaks } from './helpers/records.mjs';
import { initRunId, RUN_ENV } from './helpers/run-label.mjs';
import { pinTestEngine } from './helpers/test-engine.mjs';
import { ensureTestImage } from './helpers/test-image.mjs';

/**
 * vitest globalSetup: the engine under test (BERTH_TEST_ENGINE=docker|podman, pinned for every
 * process of the run), one run id for the whole run (inherited by workers and their children),
 * the offline test image, and on teardown a leak check that fails the run.
 *
 * Without a reachable engine the engine tests are skipped locally; under CI (`CI=true`) that
 * is an error instead, so a CI run never passes on skipped engine tests.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const id = initRunId();
  const pinned = pinTestEngine();
  const engine = await ping();
  process.env[ENGINE_UP_ENV] = engine ? '1' : '0';
  if (engine) {
    await ensureTestImage();
  } else if (process.env.CI) {
    throw new Error(`no container engine answers at ${resolveSocketPath()} (CI requires one)`);
  } else {
    console.warn(`[berth tests] no engine at ${resolveSocketPath()}: engine tests are skipped`);
  }
  console.log(`[berth tests] ${RUN_ENV}=${id} engine=${pinned.engine} socket=${pinned.socketPath}`);
  return async () => {
    if (!engine) return;
    try {
      await expectNoLeaks();
      await expectNoRecordLeaks();
    } catch (error) {
      // vitest only logs a teardown error ("error during close") and still exits 0: fail the run.
      process.exitCode = 1;
      throw error;
    }
  };
}
