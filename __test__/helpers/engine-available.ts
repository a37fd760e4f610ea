/** Env flag the globalSetup sets for the test processes: `'1'` when the engine under test answered. */
export const ENGINE_UP_ENV = 'BERTH_TEST_ENGINE_UP';

/** True when the globalSetup found the engine under test; use as `describe.skipIf(!engineAvailable())`. */
export function engineAvailable(): boolean {
  return process.env[ENGINE_UP_ENV] === '1';
}
