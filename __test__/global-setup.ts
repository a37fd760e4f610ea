import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkBuild } from '../scripts/build-stamp.mjs';
import { ENGINE_UP_ENV } from './helpers/engine-available.js';
import { expectNoLeaks } from './helpers/leak-check.mjs';
import { initRunId, RUN_ENV } from './helpers/run-label.mjs';
import { pinTestEngine } from './helpers/test-engine.mjs';
import { ensureTestImage } from './helpers/test-image.mjs';

/**
 * vitest globalSetup: first the build check (the native module and dist/ must be the build of
 * the sources as they are now, by their build stamps: see `scripts/build-stamp.mjs`; a stale
 * build fails the run before any test loads it), then the engine under test (BERTH_TEST_ENGINE=docker|podman, pinned for every
 * process of the run), one run id for the whole run (inherited by workers and their children),
 * the offline test image, and on teardown a leak check that fails the run.
 *
 * The engine is asked for through berth first (`engineInfo()`), so an engine that is not running
 * reads as berth's `E_ENGINE_UNAVAILABLE` (what was tried, how to fix it). Without a reachable
 * engine the engine tests are skipped locally; under CI (`CI=true`) that is an error instead, so
 * a CI run never passes on skipped engine tests.
 */
export default async function setup(): Promise<() => Promise<void>> {
  expectFreshBuild();
  const id = initRunId();
  const pinned = pinTestEngine();
  const unreachable = await unreachableReason(pinned.socketPath);
  const engine = unreachable === null;
  process.env[ENGINE_UP_ENV] = engine ? '1' : '0';
  if (engine) {
    await ensureTestImage();
  } else if (process.env.CI) {
    throw new Error(`${unreachable} (CI requires an engine)`);
  } else {
    console.warn(`[berth tests] ${unreachable}: engine tests are skipped`);
  }
  console.log(`[berth tests] ${RUN_ENV}=${id} engine=${pinned.engine} socket=${pinned.socketPath}`);
  return async () => {
    if (!engine) return;
    try {
      await expectNoLeaks();
      const { expectNoRecordLeaks } = await import('./helpers/records.mjs');
      await expectNoRecordLeaks();
    } catch (error) {
      // vitest only logs a teardown error ("error during close") and still exits 0: fail the run.
      process.exitCode = 1;
      throw error;
    }
  };
}

/** Null when berth reaches the engine at `socketPath`; else berth's `E_ENGINE_UNAVAILABLE: message`. */
async function unreachableReason(socketPath: string): Promise<string | null> {
  // Imported here, after the build check: the package entry loads dist/ and the native module.
  const { BerthError, engineInfo } = await import('../index.mjs');
  try {
    await engineInfo({ socketPath });
    return null;
  } catch (error) {
    if (!BerthError.isInstance(error) || error.code !== 'E_ENGINE_UNAVAILABLE') throw error;
    return `${error.code}: ${error.message}`;
  }
}

/**
 * Throws when the native module or dist/ is not the build of the current sources (Rust: `src/`,
 * `crates/`, `Cargo.toml`, `Cargo.lock`, `build.rs`; TypeScript: `lib/`, `tsconfig.build.json`,
 * `binding.d.ts`), e.g. "native module older than its sources: run npm run build".
 */
function expectFreshBuild(): void {
  const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
  const reasons = checkBuild(root);
  if (reasons.length === 0) return;
  const error = new Error(`[berth tests] stale build, no test ran:\n  ${reasons.join('\n  ')}`);
  error.stack = error.message; // the reasons are the whole story: no stack under them
  throw error;
}
