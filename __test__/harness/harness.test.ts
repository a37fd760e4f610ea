// @berth/core/harness on the real engine, through the real @ai-sdk/harness code: the provider's
// sessions (the whole HarnessV1NetworkSandboxSession surface), ownership across OS processes
// (cases 1 and 11), take-over after the owner died, prepareHarnessSandboxTemplate, and
// HarnessAgent.createSession resumed by a second process that destroys the sandbox.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HarnessV1SandboxProvider } from '@ai-sdk/harness';
import { prepareHarnessSandboxTemplate } from '@ai-sdk/harness/agent';
import { extractLines } from '@ai-sdk/provider-utils';
import { afterAll, afterEach, describe, expect } from 'vitest';
import { createDockerSandboxProvider, sliceLines } from '../../harness.mjs';
import { containerName, InvalidArgumentError, listTemplates, pruneTemplates, SessionExistsError } from '../../index.mjs';
import { killAllChildren, startChild } from '../helpers/child.js';
import { engineRequest, execIn, inspectContainer } from '../helpers/engine-http.mjs';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { lastJsonLine, runNode } from '../helpers/node-process.js';
import { testLabels } from '../helpers/run-label.mjs';
import { createTestHarness } from '../helpers/test-harness.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

const AGENT_SCRIPT = fileURLToPath(new URL('../scripts/harness-agent.mjs', import.meta.url));
const TEMPLATE_SCRIPT = fileURLToPath(new URL('../scripts/harness-template.mjs', import.meta.url));

/** The provider every test uses: the offline image, labelled for the leak check. */
function provider(extra: Partial<Parameters<typeof createDockerSandboxProvider>[0]> = {}): HarnessV1SandboxProvider {
  // Typed as the harness's own interface: no cast.
  const p: HarnessV1SandboxProvider = createDockerSandboxProvider({ image: TEST_IMAGE, labels: testLabels(), ...extra });
  return p;
}

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

describe('sliceLines (readTextFile line ranges), exactly as the AI SDK\'s extractLines', () => {
  test.for([
    [undefined, undefined, 'a\nb\nc\n'],
    [2, undefined, 'b\nc\n'],
    [2, 2, 'b'],
    [2, 3, 'b\nc'],
    [1, 99, 'a\nb\nc\n'],
    [3, 5, 'c\n'],
    [0, 1, 'a'],
    [-5, 2, 'a\nb'],
    [4, 9, ''],
    [9, undefined, ''],
    [3, 2, ''],
  ] as const)('lines %s..%s', ([start, end, expected]) => {
    const text = 'a\nb\nc\n';
    expect(sliceLines(text, start, end)).toBe(expected);
    expect(sliceLines(text, start, end)).toBe(extractLines({ text, startLine: start, endLine: end }));
  });
  test('CRLF text, no trailing newline, and the issue\'s own example', () => {
    expect(sliceLines('a\r\nb\r\nc', 2, 3)).toBe('b\r\nc');
    expect(sliceLines('a\nb', 2, 10)).toBe('b');
    expect(sliceLines('one\ntwo\nthree\nfour\n', 2, 3)).toBe('two\nthree');
  });
  test('bad bounds are E_INVALID_ARGUMENT, never a bare RangeError', async () => {
    for (const bad of [Number.NaN, 1.5, '2', Number.POSITIVE_INFINITY]) {
      await expectBerthError((async () => sliceLines('a', bad as number))(), InvalidArgumentError);
      await expectBerthError((async () => sliceLines('a', 1, bad as number))(), InvalidArgumentError);
    }
  });
});

engineSuite('harness provider', () => {
  afterEach(killAllChildren);
  afterAll(async () => {
    // Templates this run made carry its run label (copied from the containers they came from).
    const pruned = await pruneTemplates({ labels: testLabels() });
    expect(pruned.kept).toEqual([]);
    expect(await listTemplates({ labels: testLabels() })).toEqual([]);
  });

  test('a created session implements the whole network sandbox session surface', async ({ sessionId }) => {
    const sandbox = await provider({ workDir: '/workspace', ports: [8080] }).createSession({ sessionId });
    try {
      expect(sandbox.id).toBe(containerName(sessionId));
      expect(sandbox.defaultWorkingDirectory).toBe('/workspace');
      expect(sandbox.ports).toEqual([8080]);
      expect(sandbox.description).toContain(sandbox.id);

      expect(await sandbox.run({ command: 'pwd; echo "$GREETING" >&2; exit 2', env: { GREETING: 'hi' } })).toEqual({
        exitCode: 2,
        stdout: '/workspace\n',
        stderr: 'hi\n',
        truncated: false,
        oomKilled: false,
      });
      expect((await sandbox.run({ command: 'pwd', workingDirectory: '/tmp' })).stdout).toBe('/tmp\n');

      const proc = await sandbox.spawn({ command: 'for i in 1 2 3; do echo $i; done' });
      expect(await text(proc.stdout)).toBe('1\n2\n3\n');
      expect(await proc.wait()).toEqual({ exitCode: 0, oomKilled: false });
      await proc.kill();

      await sandbox.writeTextFile({ path: 'notes/a.txt', content: 'one\ntwo\nthree\n' });
      expect(await sandbox.readTextFile({ path: '/workspace/notes/a.txt' })).toBe('one\ntwo\nthree\n');
      expect(await sandbox.readTextFile({ path: 'notes/a.txt', startLine: 2, endLine: 2 })).toBe('two');
      expect(await sandbox.readTextFile({ path: 'notes/a.txt', startLine: 3, endLine: 50 })).toBe('three\n');
      expect(await sandbox.readTextFile({ path: 'notes/a.txt', startLine: 7 })).toBe('');
      expect(await sandbox.readTextFile({ path: 'notes/missing.txt' })).toBeNull();

      const bytes = new Uint8Array([0, 1, 2, 250, 255]);
      await sandbox.writeBinaryFile({ path: '/tmp/bin/x.bin', content: bytes });
      expect(await sandbox.readBinaryFile({ path: '/tmp/bin/x.bin' })).toEqual(bytes);
      expect(await sandbox.readBinaryFile({ path: '/tmp/bin/none' })).toBeNull();

      const source = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('streamed '));
          controller.enqueue(new TextEncoder().encode('in'));
          controller.close();
        },
      });
      await sandbox.writeFile({ path: '/tmp/s.txt', content: source });
      expect(await text((await sandbox.readFile({ path: '/tmp/s.txt' }))!)).toBe('streamed in');
      expect(await sandbox.readFile({ path: '/tmp/none' })).toBeNull();

      const endpoint = await sandbox.getPortEndpoint({ port: 8080 });
      expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await sandbox.getPortUrl({ port: 8080, protocol: 'ws' })).toBe(endpoint.url.replace(/^http/, 'ws'));

      const restricted = sandbox.restricted();
      expect(Object.keys(restricted).sort()).toEqual(
        ['description', 'readBinaryFile', 'readFile', 'readTextFile', 'run', 'spawn', 'writeBinaryFile', 'writeFile', 'writeTextFile'].sort(),
      );
      expect((await restricted.run({ command: 'cat /tmp/s.txt' })).stdout).toBe('streamed in');

      await sandbox.stop();
      await sandbox.stop();
      expect((await inspectContainer(sandbox.id))?.State.Running).toBe(false);
    } finally {
      await sandbox.destroy();
      await sandbox.destroy();
    }
    expect(await inspectContainer(containerName(sessionId))).toBeNull();
  });

  test('a session without a sessionId gets a random UUID and is removed by stop()', async () => {
    const sandbox = await provider().createSession();
    const name = sandbox.id;
    expect((await inspectContainer(name))?.State.Running).toBe(true);
    const labels = (await inspectContainer(name))?.Config.Labels;
    expect(labels['dev.berth.session-id']).toMatch(/^[0-9a-f-]{36}$/);
    // No workDir anywhere: the default is where execs start, as `pwd` says.
    expect(sandbox.defaultWorkingDirectory).toBe('/');
    expect((await sandbox.run({ command: 'pwd' })).stdout).toBe('/\n');
    await sandbox.stop();
    expect(await inspectContainer(name)).toBeNull();
  });

  test('onFirstCreate runs on the restricted view; when it throws, the container it made is removed', async ({ sessionId }) => {
    let seenKeys: string[] = [];
    const failure = new Error('first-create failed');
    const rejection = await provider()
      .createSession({
        sessionId,
        onFirstCreate: async (session) => {
          seenKeys = Object.keys(session);
          await session.writeTextFile({ path: '/tmp/marker', content: 'x' });
          throw failure;
        },
      })
      .then(
        () => expect.fail('expected a rejection'),
        (error: unknown) => error,
      );
    expect(rejection).toBe(failure);
    expect(seenKeys).not.toContain('stop');
    expect(seenKeys).not.toContain('destroy');
    expect(await inspectContainer(containerName(sessionId))).toBeNull();
  });

  test('case 1: B\'s create (onFirstCreate throws) next to A\'s live session: E_SESSION_EXISTS, A untouched', async ({
    sessionId,
    labels,
  }) => {
    const a = await startChild();
    const created = await a.call('createSession', { sessionId, image: TEST_IMAGE, labels });
    try {
      let ran = false;
      const error = await expectBerthError(
        Promise.resolve(
          provider().createSession({
            sessionId,
            onFirstCreate: async () => {
              ran = true;
              throw new Error('B setup fails');
            },
          }),
        ),
        SessionExistsError,
      );
      expect(ran).toBe(false);
      expect(error.details).toMatchObject({ id: created.id, managed: true, owner: { pid: a.pid, liveness: 'alive' } });
      const seen = await inspectContainer(created.name);
      expect(seen).toMatchObject({ Id: created.id, State: { Running: true } });
      expect((await a.call('exec', created.handle, ['echo', 'alive'])).stdout.toString()).toBe('alive\n');
    } finally {
      await a.call('remove', created.handle);
    }
  });

  test('case 11: B resumes A\'s live session through the provider: a handover; A\'s handle acts as adopted, B\'s destroy() removes it', async ({
    sessionId,
    labels,
  }) => {
    const a = await startChild();
    const created = await a.call('createSession', { sessionId, image: TEST_IMAGE, labels });
    try {
      const b = await provider().resumeSession!({ sessionId });
      expect(b.id).toBe(created.name);
      // The duty moved to B: A's remove() and stop() touch nothing.
      expect(await a.call('remove', created.handle)).toEqual({ removed: false, reason: 'not-owner' });
      expect(await a.call('stop', created.handle)).toEqual({ stopped: false, reason: 'not-owner' });
      expect((await execIn(created.id, ['echo', 'still'])).stdout).toBe('still\n');
      await b.destroy();
      expect(await inspectContainer(created.id)).toBeNull();
    } finally {
      await a.call('remove', created.handle, { force: true });
    }
  });

  test('resume after the owner died takes the duty over: destroy() removes the container', async ({ sessionId, labels }) => {
    const a = await startChild();
    const created = await a.call('createSession', { sessionId, image: TEST_IMAGE, labels });
    await a.kill('SIGKILL');
    const b = await provider().resumeSession!({ sessionId });
    await b.writeTextFile({ path: '/tmp/after', content: 'taken over' });
    await b.destroy();
    expect(await inspectContainer(created.id)).toBeNull();
  });

  test('prepareHarnessSandboxTemplate, twice: the first run builds the template, the second reuses it', async () => {
    const hostDir = mkdtempSync(join(tmpdir(), 'berth-harness-'));
    try {
      const labels = { ...testLabels(), 'berth.test-case': 'prepare-template' };
      const sandboxProvider = provider({ labels, mounts: [{ source: hostDir, target: '/host' }] });
      const harness = createTestHarness({ bootstrapLog: '/host/bootstrap.log' });
      await prepareHarnessSandboxTemplate({ harness, sandboxProvider });
      expect(await listTemplates({ labels })).toHaveLength(1);
      await prepareHarnessSandboxTemplate({ harness, sandboxProvider });
      // The recipe ran once: the second run started from the template (its marker was there).
      expect(readFileSync(join(hostDir, 'bootstrap.log'), 'utf8')).toBe('bootstrapped\n');
      expect(await listTemplates({ labels })).toHaveLength(1);
      // Each run's sandbox had no sessionId: stop() removed it, and the builder is gone too.
    } finally {
      rmSync(hostDir, { recursive: true, force: true });
    }
  });

  test('identity templates across processes: onFirstCreate runs exactly once for three concurrent creators', async () => {
    const hostDir = mkdtempSync(join(tmpdir(), 'berth-harness-'));
    try {
      const labels = { ...testLabels(), 'berth.test-case': 'template-race' };
      const env = {
        BERTH_TEMPLATE_LABELS: JSON.stringify(labels),
        BERTH_TEMPLATE_HOST_DIR: hostDir,
        BERTH_TEMPLATE_IDENTITY: `identity-${Date.now()}`,
      };
      const runs = await Promise.all([1, 2, 3].map(() => runNode([TEMPLATE_SCRIPT], env, 180_000)));
      for (const run of runs) expect(run, run.stderr).toMatchObject({ code: 0, killed: false });
      const reports = runs.map(lastJsonLine);
      // Every session saw the file onFirstCreate wrote, made by one and the same process.
      expect(new Set(reports.map((r) => r.prepared)).size).toBe(1);
      expect(reports[0].prepared).toMatch(/^prepared by \d+\n$/);
      expect(readFileSync(join(hostDir, 'first-create.log'), 'utf8')).toBe('first-create\n');
      expect(await listTemplates({ labels })).toHaveLength(1);
    } finally {
      rmSync(hostDir, { recursive: true, force: true });
    }
  });

  test('a session from a template has labels of its own; the template stores no env value', async ({ sessionId }) => {
    const labels = { ...testLabels(), 'berth.test-case': 'template-labels' };
    const p = provider({ labels, env: { SECRET_TOKEN: 'hunter2-not-in-images' } });
    let buildSaw = '';
    const sandbox = await p.createSession({
      sessionId,
      identity: 'labels-check',
      onFirstCreate: async (s) => {
        await s.writeTextFile({ path: '/opt/from-template', content: 'yes' });
        buildSaw = (await s.run({ command: 'echo "${SECRET_TOKEN-unset}"' })).stdout;
      },
    });
    try {
      const [template] = await listTemplates({ labels });
      const image = await engineRequest('GET', `/images/${template!.reference}/json`);
      // The build ran without the provider's env, so no value reached the image's metadata.
      expect(buildSaw).toBe('unset\n');
      expect(image.text).not.toContain('hunter2');
      const c = await inspectContainer(sandbox.id);
      expect(c.Config.Image).toBe(template!.reference);
      expect(c.Config.Labels).toMatchObject({ 'dev.berth.session-id': sessionId, 'dev.berth.owner.pid': String(process.pid) });
      expect(c.Config.Labels['dev.berth.created-at']).not.toBe(image.body.Config.Labels['dev.berth.created-at']);
      expect(await sandbox.readTextFile({ path: '/opt/from-template' })).toBe('yes');
      expect((await sandbox.run({ command: 'echo "$SECRET_TOKEN"' })).stdout).toBe('hunter2-not-in-images\n');
    } finally {
      await sandbox.destroy();
    }
  });

  test('HarnessAgent: process 1 creates and detaches; process 2 resumes from its state, finds its files, destroys', async ({
    sessionId,
    labels,
  }) => {
    const env = { BERTH_AGENT_SESSION: sessionId, BERTH_AGENT_LABELS: JSON.stringify(labels) };
    const first = await runNode([AGENT_SCRIPT], { ...env, BERTH_AGENT_STEP: 'create' }, 120_000);
    expect(first, first.stderr).toMatchObject({ code: 0, killed: false });
    const created = lastJsonLine(first);
    expect(created.started).toMatchObject({ isResume: false, sandboxId: containerName(sessionId) });
    // Process 1 has exited: its container runs on, owned by a dead process.
    expect((await inspectContainer(containerName(sessionId)))?.State.Running).toBe(true);

    const second = await runNode(
      [AGENT_SCRIPT],
      { ...env, BERTH_AGENT_STEP: 'resume', BERTH_AGENT_RESUME: JSON.stringify(created.resumeFrom) },
      120_000,
    );
    expect(second, second.stderr).toMatchObject({ code: 0, killed: false });
    const resumed = lastJsonLine(second);
    expect(resumed.started).toMatchObject({
      isResume: true,
      sandboxId: containerName(sessionId),
      seen: `written by ${created.pid}\n`,
      bridge: 'bridge ready\n',
    });
    expect(await inspectContainer(containerName(sessionId))).toBeNull();
  });
});
