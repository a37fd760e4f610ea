/** True when the globalSetup found an engine; use as `describe.skipIf(!engineAvailable())`. */
export function engineAvailable(): boolean {
  return process.env.BERTH_TEST_ENGINE === '1';
}
