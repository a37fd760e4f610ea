// The wiring every engine test file needs, in one place: the engine guard (skip when the engine
// under test did not answer the globalSetup) and the leak check (no container of this run left
// when the suite ends). Files call `engineSuite` instead of `describe`.
import { afterAll, describe } from 'vitest';
import { engineAvailable } from './engine-available.js';
import { expectNoLeaks } from './leak-check.mjs';

type DescribeOptions = Parameters<typeof describe>[1];

/**
 * `describe(name, [options], body)`, skipped when the engine under test is down, with
 * `expectNoLeaks()` as the suite's last `afterAll` (registered first: vitest runs "after" hooks
 * in reverse order, so the body's own cleanup runs before it).
 */
export function engineSuite(name: string, body: () => void): void;
export function engineSuite(name: string, options: DescribeOptions, body: () => void): void;
export function engineSuite(name: string, a: DescribeOptions | (() => void), b?: () => void): void {
  const body = typeof a === 'function' ? a : b!;
  const options = typeof a === 'function' ? {} : a;
  describe.skipIf(!engineAvailable())(name, options as object, () => {
    afterAll(() => expectNoLeaks());
    body();
  });
}
