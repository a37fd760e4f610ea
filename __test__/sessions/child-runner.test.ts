// The cross-process runner itself, against the real binding and engine: a session created in a
// child is seen from the parent, N children start one call together, and a SIGKILLed child
// leaves its container behind (the test removes it). The cross-process cases are in cases.test.ts.
import { afterEach, expect } from 'vitest';
import { peek, resumeSession } from '../../index.mjs';
import { callTogether, killAllChildren, startChild, startChildren } from '../helpers/child.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { inspectContainer } from '../helpers/engine-http.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

engineSuite('child runner', () => {
  afterEach(killAllChildren);

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

  test('a SIGKILLed owner is reported dead; resuming its session adopts it (no take-over yet)', async ({ sessionId, labels, track }) => {
    const child = await startChild();
    const created = await child.call('createSession', { sessionId, image: TEST_IMAGE, labels });
    expect(await child.kill('SIGKILL')).toMatchObject({ signal: 'SIGKILL' });
    expect((await peek(sessionId))?.owner).toMatchObject({ pid: child.pid, liveness: 'dead' });
    const session = track(await resumeSession({ sessionId }));
    expect(session).toMatchObject({ id: created.id, ownership: 'adopted' });
    expect(session.owner).toMatchObject({ pid: child.pid, liveness: 'dead' });
    // Adopted, not inherited: without `force` this handle removes nothing.
    await expect(session.remove()).resolves.toEqual({ removed: false, reason: 'not-owner' });
    expect((await inspectContainer(created.id))?.State.Running).toBe(true);
  });

  test('callTogether releases prepared calls in every child and collects each outcome', async () => {
    const children = await startChildren(3);
    const results = await callTogether(children, 'pid');
    expect(results).toEqual(children.map((c) => ({ status: 'fulfilled', value: c.pid })));
    const failing = await callTogether(children, 'hold', 'no-such-handle');
    expect(failing.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
  });
});
