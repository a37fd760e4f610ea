// Commands over the session's command channel (docs/design.md#exec): that commands went over
// it is proved by counting engine exec creates through a proxy; that nothing a command prints
// can be taken for the channel's framing; and the edges a long-lived helper could get wrong:
// stdout closed early, a daemon keeping stdout, the helper killed mid-command, 20 concurrent
// runs, stdin read and never read (on Podman too), timeouts and aborts with the tree kill,
// back-pressure, users, and the per-command fallbacks to the engine exec.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { createDockerSandboxProvider } from '../../harness.mjs';
import { AbortedError, createSession, EngineError, ExecTimeoutError, InvalidArgumentError, type Session } from '../../index.mjs';
import { engineRequest, execIn, expectStreamOk } from '../helpers/engine-http.mjs';
import { request, startEngineProxy } from '../helpers/engine-proxy.mjs';
import { processesIn, waitForNoProcess, waitForProcess } from '../helpers/engine-wait.js';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { runId, testLabels, testSessionId } from '../helpers/run-label.mjs';
import { onPodman } from '../helpers/test-engine.mjs';
import { buildRootfsTar, TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

type Proxy = Awaited<ReturnType<typeof startEngineProxy>>;
const EXEC_CREATE = request('POST', /^\/containers\/[^/]+\/exec$/);
const execCreates = (requests: { method: string; path: string }[]) => requests.filter(EXEC_CREATE).length;

async function bytes(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** A script killing the processes whose command line starts with `$1` (never the keep-alive), outside berth. */
const KILL_MATCHING =
  'for p in /proc/[0-9]*; do case "$(tr "\\0" " " < $p/cmdline 2>/dev/null)" in "$1"*) kill -9 ${p#/proc/} ;; esac; done; exit 0';
const killMatching = (id: string, prefix: string) => execIn(id, ['sh', '-c', KILL_MATCHING, 'kill-matching', prefix]);

/** Kills (SIGKILL) every berth helper process in the container, outside berth. */
const KILL_HELPERS =
  'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null | grep -q "^/run/berth/agen[t]-" && kill -9 ${p#/proc/}; done; exit 0';

engineSuite('command channel', () => {
  let proxy: Proxy;
  let shared: Session;
  beforeAll(async () => {
    delete process.env.BERTH_COMMAND_CHANNEL;
    proxy = await startEngineProxy();
    shared = await createSession({ sessionId: testSessionId('cmdch'), image: TEST_IMAGE, labels: testLabels(), socketPath: proxy.socketPath });
  });
  afterAll(async () => {
    await shared?.remove();
    await proxy?.close();
  });

  test('20 runs after the first cost no engine exec, with the same results', async () => {
    await shared.exec(['true']); // installs the helper and opens the channel
    const { value, requests } = await proxy.during(async () => {
      const out = [];
      for (let i = 0; i < 20; i++) out.push(await shared.exec(['sh', '-c', `echo out ${i}; echo err ${i} >&2; exit ${i % 4}`]));
      return out;
    });
    expect(execCreates(requests)).toBe(0);
    value.forEach((out, i) => {
      expect(out).toMatchObject({ exitCode: i % 4, truncated: false });
      expect(out.stdout.toString()).toBe(`out ${i}\n`);
      expect(out.stderr.toString()).toBe(`err ${i}\n`);
    });
    // A signal's exit code is 128 + n, as the engines report it.
    expect((await shared.exec(['sh', '-c', 'kill -9 $$'])).exitCode).toBe(137);
  });

  test('20 concurrent runs get their own outputs over the one channel', async () => {
    const { value, requests } = await proxy.during(() =>
      Promise.all(Array.from({ length: 20 }, (_, i) => shared.exec(['sh', '-c', `sleep 0.3; printf "run-%s" ${i}; printf "e%s" ${i} >&2; exit ${i}`]))),
    );
    expect(execCreates(requests)).toBe(0);
    value.forEach((out, i) => {
      expect(out.exitCode).toBe(i);
      expect(out.stdout.toString()).toBe(`run-${i}`);
      expect(out.stderr.toString()).toBe(`e${i}`);
    });
  });

  test("a command printing the channel's framing and arbitrary binary gets exactly its bytes back", async () => {
    // An EXIT frame for stream 1 (code 0), the helper's HELLO, and every byte value.
    const fake = Buffer.concat([
      Buffer.from([1, 0, 0, 0, 22, 4, 0, 0, 0, 0, 0, 0, 0]),
      Buffer.from([0, 0, 0, 0, 16, 13, 0, 0, 0]),
      Buffer.from('berth-agent/1'),
      Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
    ]);
    const out = await shared.exec(['sh', '-c', 'cat; cat /tmp/fake-frames 2>/dev/null; printf "\\026\\000\\377" >&2'], { stdin: fake });
    expect(out.stdout.equals(fake)).toBe(true);
    expect(out.stderr).toEqual(Buffer.from([0o26, 0, 0o377]));
    const random = randomBytes(3 * 1024 * 1024);
    expect((await shared.exec(['cat'], { stdin: random })).stdout.equals(random)).toBe(true);
    expect((await shared.exec(['echo', 'next'])).stdout.toString()).toBe('next\n');
  });

  test('a command that closes its stdout early still reports stderr and its exit code', async () => {
    const out = await shared.exec(['sh', '-c', 'exec >&-; sleep 0.3; echo late >&2; exit 5']);
    expect(out).toMatchObject({ exitCode: 5 });
    expect(out.stdout.length).toBe(0);
    expect(out.stderr.toString()).toBe('late\n');
  });

  test('a daemon: the run returns; a timeout kills it only when it is in the tree', async () => {
    const detached = await shared.exec(['sh', '-c', 'sleep 1011 </dev/null >/dev/null 2>&1 & echo started']);
    expect(detached).toMatchObject({ exitCode: 0 });
    expect(detached.stdout.toString()).toBe('started\n');
    // One that keeps stdout open: the run still returns, with the output written before the exit.
    const holding = await shared.exec(['sh', '-c', 'sleep 1012 & echo holding']);
    expect(holding).toMatchObject({ exitCode: 0 });
    expect(holding.stdout.toString()).toBe('holding\n');
    expect((await processesIn(shared.id)).some((p) => p.args === 'sleep 1011')).toBe(true);
    await killMatching(shared.id, 'sleep 101');
    // In the tree (its session and marker): killed on timeout. Escaped (setsid and env -i): not.
    await expectBerthError(
      shared.exec(['sh', '-c', 'sleep 1013 & setsid env -i sleep 1014 </dev/null >/dev/null 2>&1 & sleep 1015'], { timeoutMs: 1000 }),
      ExecTimeoutError,
    );
    await waitForNoProcess(shared.id, (p) => p.args === 'sleep 1013' || p.args === 'sleep 1015');
    expect((await processesIn(shared.id)).some((p) => p.args === 'sleep 1014')).toBe(true);
    await killMatching(shared.id, 'sleep 1014');
  });

  test('the helper killed mid-command: that command fails with E_ENGINE (command channel); the next run works', async () => {
    const running = shared.exec(['sh', '-c', 'echo before; sleep 1021']).then(
      (v) => v,
      (e: unknown) => e,
    );
    await waitForProcess(shared.id, 'sleep 1021');
    await execIn(shared.id, ['sh', '-c', KILL_HELPERS]);
    const error = await running;
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).details.operation).toBe('command channel');
    await waitForNoProcess(shared.id, 'sleep 1021');
    // The next run opens a new channel (one engine exec) and works; the one after reuses it.
    const { value, requests } = await proxy.during(async () => [await shared.exec(['echo', 'again']), await shared.exec(['echo', 'and again'])]);
    expect(value.map((v) => v.stdout.toString())).toEqual(['again\n', 'and again\n']);
    expect(execCreates(requests)).toBe(1);
  });

  test('stdin is delivered, and a command that never reads it keeps its output (Podman too)', async () => {
    const data = randomBytes(2 * 1024 * 1024);
    expect((await shared.exec(['cat'], { stdin: data })).stdout.equals(data)).toBe(true);
    for (const stdin of ['unread', randomBytes(4 * 1024 * 1024)]) {
      const out = await shared.exec(['sh', '-c', 'echo ignored the input; exit 4'], { stdin });
      expect(out).toMatchObject({ exitCode: 4 });
      expect(out.stdout.toString()).toBe('ignored the input\n');
    }
    const spawned = await shared.spawn(['sh', '-c', 'echo ignoring; exit 3'], { stdin: randomBytes(1024 * 1024) });
    expect((await bytes(spawned.stdout)).toString()).toBe('ignoring\n');
    expect(await spawned.wait()).toEqual({ exitCode: 3, oomKilled: false });
  });

  test('cwd, env, a channel per user that cannot do more than its user, maxBufferBytes', async () => {
    const { value, requests } = await proxy.during(async () => [
      await shared.exec(['sh', '-c', 'pwd; echo "$ONLY_HERE"; id -u'], { cwd: '/tmp', env: { ONLY_HERE: 'x\ny' }, user: '65534' }),
      await shared.exec(['sh', '-c', 'id -u; touch /etc/owned-by-root; echo $?'], { user: '65534' }),
      await shared.exec(['sh', '-c', 'for f in /run/berth/agent-*; do echo x > "$f"; done; echo $?'], { user: '65534' }),
    ]);
    expect(value[0].stdout.toString()).toBe('/tmp\nx\ny\n65534\n');
    expect(value[1].stdout.toString()).toMatch(/^65534\n[1-9]\d*\n$/);
    expect(value[2].stdout.toString()).toMatch(/^[1-9]\d*\n$/); // the helper is root's, 0755
    expect(execCreates(requests)).toBe(1); // the channel of user 65534
    expect((await execIn(shared.id, ['test', '-e', '/etc/owned-by-root'])).exitCode).toBe(1);
    const capped = await shared.exec(['sh', '-c', 'head -c 200000 /dev/zero; head -c 50 /dev/zero >&2'], { maxBufferBytes: 1000 });
    expect(capped).toMatchObject({ exitCode: 0, truncated: true });
    // One cap for both streams, in arrival order: stdout filled it, stderr came after.
    expect(capped.stdout).toEqual(Buffer.alloc(1000));
    expect(capped.stderr).toEqual(Buffer.alloc(0));
  });

  test('timeout and abort kill the tree with the output so far; the channel stays usable', async () => {
    const timedOut = await expectBerthError(shared.exec(['sh', '-c', 'printf partial; sleep 1031 & sleep 1032'], { timeoutMs: 800 }), ExecTimeoutError);
    expect(timedOut.details.stdout).toEqual(Buffer.from('partial'));
    await waitForNoProcess(shared.id, (p) => p.args === 'sleep 1031' || p.args === 'sleep 1032');
    const controller = new AbortController();
    const p = await shared.spawn(['sh', '-c', 'echo go; sleep 1033'], { abortSignal: controller.signal });
    const reader = p.stdout.getReader();
    expect(Buffer.from((await reader.read()).value ?? []).toString()).toBe('go\n');
    reader.releaseLock();
    controller.abort();
    await expectBerthError(p.wait(), AbortedError);
    await waitForNoProcess(shared.id, 'sleep 1033');
    const { value, requests } = await proxy.during(() => shared.exec(['echo', 'still']));
    expect(value.stdout.toString()).toBe('still\n');
    expect(execCreates(requests)).toBe(0);
  });

  test('spawn streams with back-pressure: an unread stdout holds the writer back', async () => {
    const p = await shared.spawn(['sh', '-c', 'head -c 8388608 /dev/zero; touch /tmp/ch-bp-done']);
    await waitForProcess(shared.id, (x) => x.args.startsWith('{head}') || x.args.startsWith('head -c 8388608'));
    expect((await execIn(shared.id, ['test', '-e', '/tmp/ch-bp-done'])).exitCode).toBe(1);
    expect((await bytes(p.stdout)).length).toBe(8 * 1024 * 1024);
    expect(await p.wait()).toEqual({ exitCode: 0, oomKilled: false });
    expect((await execIn(shared.id, ['test', '-e', '/tmp/ch-bp-done'])).exitCode).toBe(0);
  });

  test('fallbacks, per command, give the same results as the engine path', async () => {
    const outcome = (argv: string[], options: { cwd?: string } = {}) =>
      shared.exec(argv, options).then(
        // (stderr is left out: the engine's own messages vary from one call to the next on Podman)
        (o) => ({ exitCode: o.exitCode, stdout: o.stdout.toString() }),
        (e: { code?: string; details?: { status?: number } }) => ({ code: e.code, status: e.details?.status }),
      );
    const cases: [string[], { cwd?: string }][] = [
      [['/no/such/program'], {}],
      [['pwd'], { cwd: '/no/such/dir' }],
      [['nosuchcmd-on-path'], {}],
    ];
    const { value: viaChannel, requests } = await proxy.during(() => Promise.all(cases.map(([a, o]) => outcome(a, o))));
    expect(execCreates(requests)).toBeGreaterThanOrEqual(cases.length); // each went through the engine
    process.env.BERTH_COMMAND_CHANNEL = '0';
    try {
      const viaEngine = await proxy.during(() => Promise.all(cases.map(([a, o]) => outcome(a, o))));
      expect(viaChannel).toEqual(viaEngine.value);
      // Switched off, every command is an engine exec.
      const off = await proxy.during(() => shared.exec(['echo', 'engine']));
      expect(off.value.stdout.toString()).toBe('engine\n');
      expect(execCreates(off.requests)).toBe(1);
    } finally {
      delete process.env.BERTH_COMMAND_CHANNEL;
    }
    expect(viaChannel[0]).toMatchObject({ exitCode: onPodman() ? 127 : 126 });
  });

  test('a container the helper cannot be copied into (a read-only /run/berth): every command takes the engine path', async ({ sessionId, track }) => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-ro-run-'));
    try {
      const ro = track(
        await createSession({
          sessionId,
          image: TEST_IMAGE,
          labels: testLabels(),
          socketPath: proxy.socketPath,
          mounts: [{ source: dir, target: '/run/berth', readOnly: true }],
        }),
      );
      const { value, requests } = await proxy.during(async () => [
        await ro.exec(['sh', '-c', 'echo a; exit 2']),
        await ro.exec(['cat'], { stdin: 'b' }),
        await ro.exec(['sh', '-c', 'echo c >&2']),
      ]);
      expect(value.map((v) => [v.exitCode, v.stdout.toString(), v.stderr.toString()])).toEqual([
        [2, 'a\n', ''],
        [0, 'b', ''],
        [0, '', 'c\n'],
      ]);
      expect(execCreates(requests)).toBe(3); // one engine exec per command, no channel
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Only Podman keeps an import's `platform`: an image labelled arm64 whose files are this
  // host's busybox (so it runs), which berth must not try its amd64 helper in.
  test.skipIf(!onPodman())('an image of another architecture: every command takes the engine path', async ({ sessionId, track }) => {
    const ref = `berth-test/busybox-arm64-label:${runId()}`;
    const changes = ['ENV PATH=/bin', 'CMD ["sh"]'].map((c) => `&changes=${encodeURIComponent(c)}`).join('');
    const imported = await engineRequest('POST', `/images/create?fromSrc=-&repo=${encodeURIComponent(ref)}&platform=linux%2Farm64${changes}`, {
      body: await buildRootfsTar(),
      headers: { 'Content-Type': 'application/x-tar' },
    });
    expectStreamOk(imported, `import ${ref}`);
    try {
      expect((await engineRequest('GET', `/images/${ref}/json`)).body?.Architecture).toBe('arm64');
      const other = track(await createSession({ sessionId, image: ref, labels: testLabels(), socketPath: proxy.socketPath }));
      const { value, requests } = await proxy.during(async () => [await other.exec(['sh', '-c', 'echo a; exit 2']), await other.exec(['echo', 'b'])]);
      expect(value.map((v) => [v.exitCode, v.stdout.toString()])).toEqual([
        [2, 'a\n'],
        [0, 'b\n'],
      ]);
      expect(execCreates(requests)).toBe(2); // one engine exec per command, no channel
      expect(requests.some((r) => r.method === 'PUT' && r.path.includes('/archive'))).toBe(false);
      await other.remove({ force: true });
    } finally {
      await engineRequest('DELETE', `/images/${encodeURIComponent(ref)}`);
    }
  });

  test('a root create with setup commands and a timeout makes one engine exec (the channel); the deadline file is written', async ({ sessionId, track }) => {
    const { value: s, requests } = await proxy.during(() =>
      createSession({
        sessionId,
        image: TEST_IMAGE,
        labels: testLabels(),
        socketPath: proxy.socketPath,
        workDir: '/workspace',
        timeoutMs: 600_000,
        setupCommands: ['mkdir -p src', 'echo ready > .setup', ['test', '-f', '.setup']],
      }),
    );
    track(s);
    // No user-directory probe of a root container (no `id -u`/`id -g` execs, no diff).
    expect(requests.filter(request('GET', /^\/containers\/[^/]+\/changes/))).toEqual([]);
    expect(execCreates(requests)).toBe(1);
    const deadline = Number((await execIn(s.id, ['cat', '/run/berth/deadline'], { user: '0' })).stdout.trim());
    expect(Math.abs(deadline * 1000 - s.expiresAt!)).toBeLessThan(2_000);
    // setTimeout writes it over the same channel: no engine exec.
    const { requests: later } = await proxy.during(() => s.setTimeout(1_200_000));
    expect(execCreates(later)).toBe(0);
    const moved = Number((await execIn(s.id, ['cat', '/run/berth/deadline'], { user: '0' })).stdout.trim());
    expect(moved).toBeGreaterThan(deadline + 500);
    expect((await execIn(s.id, ['stat', '-c', '%u %a', '/run/berth/deadline'], { user: '0' })).stdout.trim()).toBe('0 644');
  });

  test('the harness provider runs and spawns over the channel', async ({ sessionId }) => {
    const sandbox = await createDockerSandboxProvider({ image: TEST_IMAGE, labels: testLabels(), socketPath: proxy.socketPath }).createSession({
      sessionId,
    });
    try {
      await sandbox.run({ command: 'true' });
      const { value, requests } = await proxy.during(async () => {
        const out = [];
        for (let i = 0; i < 10; i++) out.push(await sandbox.run({ command: `echo ${i}; echo e >&2; exit ${i % 2}` }));
        const proc = await sandbox.spawn({ command: 'echo spawned; exit 6' });
        out.push({ stdout: (await bytes(proc.stdout)).toString(), exit: await proc.wait() });
        return out;
      });
      value.slice(0, 10).forEach((r, i) => expect(r).toEqual({ exitCode: i % 2, stdout: `${i}\n`, stderr: 'e\n', truncated: false, oomKilled: false }));
      expect(value[10]).toEqual({ stdout: 'spawned\n', exit: { exitCode: 6, oomKilled: false } });
      expect(execCreates(requests)).toBe(0);
      // An abort kills the tree and rejects wait() (and run) with the signal's reason.
      const controller = new AbortController();
      const proc = await sandbox.spawn({ command: 'echo up; sleep 1041', abortSignal: controller.signal });
      const reader = proc.stdout.getReader();
      expect(Buffer.from((await reader.read()).value ?? []).toString()).toBe('up\n');
      reader.releaseLock();
      const reason = new Error('the user stopped it');
      controller.abort(reason);
      await expect(proc.wait()).rejects.toBe(reason);
      await waitForNoProcess(sandbox.id, 'sleep 1041');
      const early = new AbortController();
      early.abort(reason);
      await expect(sandbox.run({ command: 'true', abortSignal: early.signal })).rejects.toBe(reason);
      // A run aborted mid-command: the tree is killed and the run rejects with the reason.
      const late = new AbortController();
      const running = sandbox.run({ command: 'sleep 1042', abortSignal: late.signal });
      await waitForProcess(sandbox.id, 'sleep 1042');
      late.abort(reason);
      await expect(running).rejects.toBe(reason);
      await waitForNoProcess(sandbox.id, 'sleep 1042');
      // run answers the head of the output (both streams together, in arrival order) up to the
      // provider's maxOutputBytes (64 MiB),
      // flagged, as UTF-8 text (a leading BOM kept, bytes that are not UTF-8 replaced); a
      // command that writes less than 16 MiB past the cap ends on its own (exit code 0).
      const big = await sandbox.run({ command: "head -c 70000000 /dev/zero | tr '\\0' a; printf 'tail\\n' >&2" });
      expect(big.exitCode).toBe(0);
      expect((big as { truncated?: boolean }).truncated).toBe(true);
      expect(big.stdout.length).toBe(64 * 1024 * 1024);
      expect(big.stdout.startsWith('aaaa') && big.stdout.endsWith('aaaa')).toBe(true);
      expect(big.stderr).toBe(''); // came after the cap was full
      expect(await sandbox.run({ command: "printf '\\357\\273\\277bom \\377'" })).toEqual({ exitCode: 0, stdout: '\uFEFFbom \uFFFD', stderr: '', truncated: false, oomKilled: false });
      // A command of the wrong type is E_INVALID_ARGUMENT before any engine call.
      const bad = await proxy.during(async () => {
        await expectBerthError(Promise.resolve(sandbox.run({ command: 42 as unknown as string })), InvalidArgumentError);
        await expectBerthError(Promise.resolve(sandbox.spawn({ command: 'true', workingDirectory: 7 as unknown as string })), InvalidArgumentError);
        await expectBerthError(Promise.resolve(sandbox.run({ command: 'true', env: 'A=1' as unknown as Record<string, string> })), InvalidArgumentError);
      });
      expect(bad.requests).toEqual([]);
    } finally {
      await sandbox.destroy();
    }
  });
});
