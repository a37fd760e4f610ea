// The package as an ESM consumer imports it: all three entry points, resolved from node_modules.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSession, peek, resumeSession, SessionExistsError, type Session } from '@berth/core';
import { containerName, createContainerHandle, type ContainerHandle } from '@berth/core/container';
import { createDockerSandboxProvider } from '@berth/core/harness';
import { describe, expect, it } from 'vitest';
import { IMAGE, runLabels, uniqueId } from './run.mjs';

describe('@berth/core from ESM', () => {
  it('resolves every entry point to the installed package (the import condition)', () => {
    for (const [entry, file] of [
      ['@berth/core', 'index.mjs'],
      ['@berth/core/container', 'container.mjs'],
      ['@berth/core/harness', 'harness.mjs'],
    ] as const) {
      expect(fileURLToPath(import.meta.resolve(entry))).toMatch(new RegExp(`/node_modules/@berth/core/${file.replace('.', '\\.')}$`));
    }
    const root = dirname(fileURLToPath(import.meta.resolve('@berth/core')));
    // The binary comes from the platform package, not from the root package.
    expect(existsSync(join(root, 'berth.linux-x64-gnu.node'))).toBe(false);
    expect(existsSync(join(root, '..', 'core-linux-x64-gnu', 'berth.linux-x64-gnu.node'))).toBe(true);
    // As published: one optional platform package per napi target; npm installed this platform's.
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { optionalDependencies?: Record<string, string> };
    expect(Object.keys(manifest.optionalDependencies ?? {}).sort()).toEqual(
      ['darwin-arm64', 'darwin-x64', 'linux-arm64-gnu', 'linux-x64-gnu', 'linux-x64-musl', 'win32-x64-msvc'].map((t) => `@berth/core-${t}`),
    );
  });

  it('creates, refuses a second create, resumes (sharing this process\'s duty) and removes a session once', async () => {
    const sessionId = uniqueId('esm');
    const session: Session = await createSession({ sessionId, image: IMAGE, labels: runLabels() });
    try {
      expect(session.ownership).toBe('created');
      const { exitCode, stdout } = await session.exec(['echo', 'hi']);
      expect([exitCode, stdout.toString()]).toEqual([0, 'hi\n']);
      const refused = await createSession({ sessionId, image: IMAGE, labels: runLabels() }).catch((e: unknown) => e);
      expect(SessionExistsError.isInstance(refused)).toBe(true);
      // The same process resumes: the handle shares the creator's duty to remove.
      const resumed = await resumeSession({ sessionId });
      expect([resumed.ownership, resumed.id]).toEqual(['created', session.id]);
      expect((await peek(sessionId))?.state).toBe('running');
      await expect(resumed.remove()).resolves.toEqual({ removed: true });
    } finally {
      await session.remove();
    }
    await expect(session.remove()).resolves.toEqual({ removed: false, reason: 'already-removed' });
    expect(await peek(sessionId)).toBeNull();
  });

  it('the drop-in handle creates, a second handle adopts, only the creator removes', async () => {
    const sandboxId = uniqueId('esm-handle');
    const owner: ContainerHandle = createContainerHandle(sandboxId, { image: IMAGE, labels: runLabels(), ports: [8080] });
    const other = createContainerHandle(sandboxId, { image: IMAGE, labels: runLabels() });
    try {
      await expect(owner.ready()).resolves.toBe(containerName(sandboxId));
      await expect(other.ready()).resolves.toBe(owner.name);
      expect([owner.ownership, other.ownership]).toEqual(['created', 'adopted']);
      expect(await owner.hostAddress(8080)).toMatch(/^127\.0\.0\.1:\d+$/);
      await expect(other.remove()).resolves.toEqual({ removed: false, reason: 'not-owner' });
      await expect(other.peek()).resolves.toBe(owner.name);
    } finally {
      await expect(owner.remove()).resolves.toEqual({ removed: true });
    }
    await expect(other.peek()).resolves.toBeUndefined();
  });

  it('the harness provider creates and destroys a session', async () => {
    const provider = createDockerSandboxProvider({ image: IMAGE, labels: runLabels() });
    const session = await provider.createSession({ sessionId: uniqueId('esm-harness') });
    try {
      const result = await session.run({ command: 'echo harness' });
      expect(result.stdout.trim()).toBe('harness');
    } finally {
      await session.destroy();
    }
  });
});
