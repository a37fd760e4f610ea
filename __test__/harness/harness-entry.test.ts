// `@berth/core/harness` from both module systems, resolved by package name through the
// `exports` map (a fresh node process for each, as a user's code would load it).
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import * as esm from '../../harness.mjs';
import { runNode } from '../helpers/node-process.js';

const cjs = createRequire(import.meta.url)('../../harness.js') as Record<string, unknown>;
const PACKAGE_DIR = new URL('../..', import.meta.url).pathname;

describe('@berth/core/harness entry', () => {
  it('harness.mjs names exactly the exports of harness.js, with the same values', () => {
    expect(Object.keys(esm).sort()).toEqual(Object.keys(cjs).sort());
    for (const [name, value] of Object.entries(esm)) expect(value, name).toBe(cjs[name]);
    expect(typeof esm.createDockerSandboxProvider).toBe('function');
  });

  it.for([
    [
      'CommonJS',
      [
        '-e',
        "const h = require('@berth/core/harness'); const aiSdk = Object.keys(require.cache).some((k) => k.includes('@ai-sdk')); " +
          "console.log(typeof h.createDockerSandboxProvider, h.createDockerSandboxProvider({ image: 'x' }).specificationVersion, aiSdk)",
      ],
    ],
    ['ESM', ['--input-type=module', '-e', "const h = await import('@berth/core/harness'); console.log(typeof h.createDockerSandboxProvider, h.createDockerSandboxProvider({ image: 'x' }).specificationVersion)"]],
  ] as const)('%s resolves it by package name', async ([kind, args]) => {
    // Self-reference by name works from inside the package directory.
    const run = await runNode([...args], {}, 30_000, PACKAGE_DIR);
    expect(run, run.stderr).toMatchObject({ code: 0 });
    // From CommonJS, also: nothing of @ai-sdk/* was loaded (it is a types-only peer).
    expect(run.stdout.trim()).toBe(kind === 'CommonJS' ? 'function harness-sandbox-v1 false' : 'function harness-sandbox-v1');
  });
});
