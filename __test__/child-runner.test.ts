// The cross-process runner itself, against the real binding and engine: a session created in
// one child is seen from another, ten children start one call together, and a SIGKILLed child
// leaves its container for the leak check's owner (the test) to remove.
import { afterAll, afterEach, describe, expect } from 'vitest';
import { peek, resumeSession } from '../index.mjs';
import { engineAvailable } from './helpers/engine-available.js';
import { callTogether, killAllChildren, startChild, startChildren } from './helpers/child.js';
import { sessionTest as test } from './helpers/fixtures.js';
import { listContainers } from './helpers/engine-http.mjs';
import { expectNoLeaks } from './helpers/leak-check.mjs';
import { TEST_IMAGE } from './helpers/test-image.mjs';

describe.skipIf(!engineAvailable())('child runner', () => {
  afterEach(killAllChildren);
  afterAll(() => expectNoLeaks());

  test('a child creates and execs; the parent sees it held by the child', async ({ sessionId, labels }) => {
    const child = await startChild();
    const created = await child.call('createSession', { sessionId, image: TEST_IMAGE, labels });
    expect(created).toMatchObject({ sessionId, ownership: 'created' });
    const out = await child.call('exec', created.handle, ['sh', '-c', 'echo hi; echo err >&2; exit 3']);
    expect(out.exitCode).toBe(3);
    expect(Buffer.isBuffer(out.stdout) && out.stdout.toString()).toBe('hi\n');
    expect(out.stderr.toString()).toBe('err\n');
    const seen = await peek(sessionId);
    expect(seen?.owner).toMatchObject({ pid: child.pid, liveness: 'alive' });
    await expect(child.call('remove', created.handle)).resolves.toEqual({ removed: true });
    await child.exit();
  });

  test('ten children create one id at once: one wins, nine see E_SESSION_EXISTS', async ({ sessionId, labels }) => {
    const children = await startChildren(10);
    const results = await callTogether(children, 'createSession', { sessionId, image: TEST_IMAGE, labels });
    const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{ child: children[i]!, session: r.value }] : []));
    try {
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost.map((r) => r.reason.code)).toEqual(Array(9).fill('E_SESSION_EXISTS'));
      // `^/?`: Docker matches names with their leading slash, Podman without.
      expect(await listContainers({ name: [`^/?${won[0]!.session.name}$`] })).toHaveLength(1);
    } finally {
      for (const { child, session } of won) await child.call('remove', session.handle);
    }
  });

  test('a SIGKILLed owner is reported dead and its session can be taken over', async ({ sessionId, labels, track }) => {
    const child = await startChild();
    await child.call('createSession', { sessionId, image: TEST_IMAGE, labels });
    expect(await child.kill('SIGKILL')).toMatchObject({ signal: 'SIGKILL' });
    expect((await peek(sessionId))?.owner?.liveness).toBe('dead');
    const session = track(await resumeSession({ sessionId }));
    expect(session.owner?.liveness).toBe('dead');
  });
});
