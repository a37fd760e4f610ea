// The package as a CommonJS consumer requires it: all three entry points, resolved from node_modules.
import { describe, expect, it } from 'vitest';
import { IMAGE, runLabels, uniqueId } from './run.mjs';

const berth: typeof import('@berth/core') = require('@berth/core');
const dropIn: typeof import('@berth/core/container') = require('@berth/core/container');
const harness: typeof import('@berth/core/harness') = require('@berth/core/harness');

describe('@berth/core from CommonJS', () => {
  it('resolves every entry point to the installed package (the require condition)', () => {
    for (const [entry, file] of [
      ['@berth/core', 'index.js'],
      ['@berth/core/container', 'container.js'],
      ['@berth/core/harness', 'harness.js'],
    ] as const) {
      expect(require.resolve(entry)).toMatch(new RegExp(`/node_modules/@berth/core/${file.replace('.', '\\.')}$`));
    }
    expect(typeof harness.createDockerSandboxProvider).toBe('function');
  });

  it('creates, resumes (sharing the duty) and removes a session; errors are the classes require() exports', async () => {
    const sessionId = uniqueId('cjs');
    const session = await berth.createSession({ sessionId, image: IMAGE, labels: runLabels() });
    try {
      const refused = await berth.createSession({ sessionId, image: IMAGE, labels: runLabels() }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(berth.SessionExistsError);
      // Same process: the resumed handle shares the creator's duty.
      const resumed = await berth.resumeSession({ sessionId });
      expect(resumed.ownership).toBe('created');
      await expect(resumed.remove()).resolves.toEqual({ removed: true });
    } finally {
      await session.remove();
    }
    await expect(session.remove()).resolves.toEqual({ removed: false, reason: 'already-removed' });
    expect(await berth.peek(sessionId)).toBeNull();
  });

  it('the drop-in handle: errors keep exitCode, stderr and args beside code', async () => {
    const sandboxId = uniqueId('cjs-handle');
    const handle = dropIn.createContainerHandle(sandboxId, { image: IMAGE, labels: runLabels(), env: { TOKEN: 'secret-value' } });
    try {
      await expect(handle.ready()).resolves.toBe(dropIn.containerName(sandboxId));
      expect(handle.ownership).toBe('created');
      // A sandbox id berth refuses: E_INVALID_ARGUMENT before any engine call, with the old fields.
      const bad = dropIn.createContainerHandle('', { image: IMAGE, env: { TOKEN: 'secret-value' } });
      const error = (await bad.ready().catch((e: unknown) => e)) as import('@berth/core/container').ContainerError;
      expect(error).toBeInstanceOf(berth.InvalidArgumentError);
      expect(error).toMatchObject({ code: 'E_INVALID_ARGUMENT', exitCode: null });
      expect(error.args).toEqual(['run', '-d', '--name', bad.name, '--init', '-e', 'TOKEN=<redacted>', IMAGE, 'sleep', 'infinity']);
      expect(error.stderr).toEqual(expect.any(String));
    } finally {
      await expect(handle.remove()).resolves.toEqual({ removed: true });
    }
  });
});
