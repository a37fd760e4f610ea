// `@berth/core/container` from both module systems (a fresh node process each, resolved by
// package name through the `exports` map), its names against the old module's vectors, and
// the old module's error fields on a berth error (no engine needed).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import * as esm from '../../container.mjs';
import { EngineError, SetupFailedError } from '../../index.mjs';
import { withLegacyFields } from '../../dist/container/legacy-error.js';
import { runNode } from '../helpers/node-process.js';

const cjs = createRequire(import.meta.url)('../../container.js') as Record<string, unknown>;
const PACKAGE_DIR = new URL('../..', import.meta.url).pathname;
const VECTORS = JSON.parse(readFileSync(new URL('../fixtures/container-names.json', import.meta.url), 'utf8')) as {
  vectors: { sandboxId: string; prefix: string | null; name: string }[];
};

describe('@berth/core/container entry', () => {
  it('container.mjs names exactly the exports of container.js, with the same values', () => {
    expect(Object.keys(esm).sort()).toEqual(Object.keys(cjs).sort());
    for (const [name, value] of Object.entries(esm)) expect(value, name).toBe(cjs[name]);
    expect(typeof esm.createContainerHandle).toBe('function');
  });

  it.for([
    ['CommonJS', ['-e', "const c = require('@berth/core/container'); console.log(require.resolve('@berth/core/container').split('/').pop(), c.containerName('x'), c.createContainerHandle('x', { image: 'busybox' }).name)"]],
    [
      'ESM',
      ['--input-type=module', '-e', "const c = await import('@berth/core/container'); console.log(import.meta.resolve('@berth/core/container').split('/').pop(), c.containerName('x'), c.createContainerHandle('x', { image: 'busybox' }).name)"],
    ],
  ] as const)('%s resolves it by package name', async ([kind, args]) => {
    const run = await runNode([...args], {}, 30_000, PACKAGE_DIR);
    expect(run, run.stderr).toMatchObject({ code: 0 });
    expect(run.stdout.trim()).toBe(`${kind === 'ESM' ? 'container.mjs' : 'container.js'} please-x-f714455f please-x-f714455f`);
  });

  it("names follow the old module's vectors ('please' for a null prefix), for containerName and handles", () => {
    expect(VECTORS.vectors.length).toBeGreaterThan(10);
    for (const v of VECTORS.vectors) {
      const name = v.prefix === null ? esm.containerName(v.sandboxId) : esm.containerName(v.sandboxId, v.prefix);
      expect(name, JSON.stringify(v)).toBe(v.name);
      const options = v.prefix === null ? { image: 'busybox' } : { image: 'busybox', prefix: v.prefix };
      expect(esm.createContainerHandle(v.sandboxId, options).name).toBe(v.name);
    }
  });

  it('errors keep exitCode (only of a process that exited), stderr and args beside code and details', () => {
    const engine = withLegacyFields(
      new EngineError('engine said no', { details: { operation: 'remove container', status: 500, message: 'no' } }),
      ['rm', '-f', 'abc'],
    );
    expect(engine).toMatchObject({ code: 'E_ENGINE', exitCode: null, stderr: 'engine said no', args: ['rm', '-f', 'abc'] });
    const setup = withLegacyFields(
      new SetupFailedError('setup failed', {
        details: { sessionId: 's', name: 'n', index: 0, argv: ['false'], exitCode: 3, stdout: Buffer.from(''), stderr: Buffer.from('boom\n') },
      }),
      ['run'],
    );
    expect(setup).toMatchObject({ code: 'E_SETUP_FAILED', exitCode: 3, stderr: 'boom\n', args: ['run'] });
    expect(withLegacyFields('not an error', [])).toBe('not an error');
  });
});
