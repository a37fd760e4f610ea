// File writes over the command helper (docs/design.md, "File writes over the command helper"):
// a buffered writeFile of up to 1 MiB is done by the helper the session's commands already use,
// with no engine request once the channel is open, and keeps every promise of the other write
// paths: atomic rename, modes, owners, parents, the as-the-user rules. A forged helper that
// claims a write it did not make is not believed: the file is written by another path.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import { createSession, InvalidArgumentError, PermissionDeniedError, type Session } from '../../index.mjs';
import { execIn } from '../helpers/engine-http.mjs';
import { startEngineProxy } from '../helpers/engine-proxy.mjs';
import { waitForNoProcess } from '../helpers/engine-wait.js';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { testLabels, testSessionId } from '../helpers/run-label.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

type Proxy = Awaited<ReturnType<typeof startEngineProxy>>;

async function statIn(id: string, path: string): Promise<string> {
  const out = await execIn(id, ['stat', '-c', '%a %u %g', path], { user: '0' });
  if (out.exitCode !== 0) throw new Error(`stat ${path}: ${out.stderr}`);
  return out.stdout.trim();
}

/** Files named `.berth-tmp-*` under `dir` (none may be left). */
async function temps(id: string, dir: string): Promise<string> {
  return (await execIn(id, ['sh', '-c', 'find "$1" -name ".berth-tmp-*"', 'temps', dir], { user: '0' })).stdout.trim();
}

engineSuite('file writes over the command helper', () => {
  let proxy: Proxy;
  let user: Session;
  beforeAll(async () => {
    delete process.env.BERTH_COMMAND_CHANNEL;
    proxy = await startEngineProxy();
    user = await createSession({
      sessionId: testSessionId('hw-user'),
      image: TEST_IMAGE,
      labels: testLabels(),
      user: '65534:65534',
      socketPath: proxy.socketPath,
    });
  });
  afterAll(async () => {
    await user?.remove();
    await proxy?.close();
  });

  test('20 writes after the first cost no engine request: bytes, modes, parents and owners as the other paths make them', async () => {
    await user.exec(['true']); // installs the helper and opens the channel
    const files = Array.from({ length: 20 }, (_, i) => ({ path: `/tmp/hw/d ${i % 3}/f-${i}`, data: randomBytes(i === 19 ? 1024 * 1024 : 4096 + i) }));
    const { requests } = await proxy.during(async () => {
      for (const f of files) await user.writeFile(f.path, f.data);
    });
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([]);
    for (const f of files) expect((await user.readFile(f.path))!.equals(f.data)).toBe(true);
    expect(await statIn(user.id, '/tmp/hw/d 1/f-4')).toBe('644 65534 65534');
    expect(await statIn(user.id, '/tmp/hw/d 1')).toBe('755 65534 65534');
    // A mode given, then kept by a write without one; an empty file.
    await user.writeFile('/tmp/hw/mode', 'x', { mode: 0o600 });
    await user.writeFile('/tmp/hw/mode', 'y');
    expect(await statIn(user.id, '/tmp/hw/mode')).toBe('600 65534 65534');
    await user.writeFile('/tmp/hw/empty', new Uint8Array(0));
    expect((await user.readFile('/tmp/hw/empty'))!.length).toBe(0);
    // Over 1 MiB: the engine's path, same result.
    const big = randomBytes(1024 * 1024 + 1);
    await user.writeFile('/tmp/hw/big', big);
    expect((await user.readFile('/tmp/hw/big'))!.equals(big)).toBe(true);
    expect(await temps(user.id, '/tmp/hw')).toBe('');
  });

  test('root files stay out of reach of a non-root user; a directory is E_INVALID_ARGUMENT', async () => {
    const passwd = (await execIn(user.id, ['cat', '/etc/passwd'])).stdout;
    await expectBerthError(user.writeFile('/etc/passwd', 'owned\n'), PermissionDeniedError);
    await expectBerthError(user.writeFile('/etc/new-file', 'x'), PermissionDeniedError);
    expect((await execIn(user.id, ['cat', '/etc/passwd'])).stdout).toBe(passwd);
    expect((await execIn(user.id, ['test', '-e', '/etc/new-file'])).exitCode).not.toBe(0);
    // A root-owned file in a directory the user may write (/tmp, sticky): not replaced either.
    expect((await execIn(user.id, ['sh', '-c', 'echo root > /tmp/root-file; chmod 644 /tmp/root-file'], { user: '0' })).exitCode).toBe(0);
    await expectBerthError(user.writeFile('/tmp/root-file', 'mine'), PermissionDeniedError);
    expect(await statIn(user.id, '/tmp/root-file')).toBe('644 0 0');
    await expectBerthError(user.writeFile('/tmp', 'x'), InvalidArgumentError);
    expect(await temps(user.id, '/tmp')).toBe('');
  });

  test('a forged helper claiming a write it did not make is not believed: another path writes the file', async ({ engine, sessionId, labels, track, session }) => {
    const s = session;
    expect((await s.exec(['echo', 'genuine'])).stdout.toString()).toBe('genuine\n');
    const path = (await execIn(s.id, ['sh', '-c', 'ls /run/berth/agent-*'])).stdout.trim();
    // Hello, then for the first request (stream 1): WRITTEN ok, 0 bytes written, without writing.
    const frame = (id: number, kind: number, payload: Buffer) => {
      const h = Buffer.alloc(9);
      h.writeUInt32LE(id, 0);
      h.writeUInt8(kind, 4);
      h.writeUInt32LE(payload.length, 5);
      return Buffer.concat([h, payload]);
    };
    const printf = (b: Buffer) => `printf '${[...b].map((x) => `\\${x.toString(8).padStart(3, '0')}`).join('')}'`;
    const script = `${printf(frame(0, 16, Buffer.from('berth-agent/1')))}; head -c 1 >/dev/null; ${printf(frame(1, 24, Buffer.from([1, 0, 0, 0, 0, 0, 0, 0, 0])))}; exec sleep 1041`;
    const forge = await execIn(s.id, ['sh', '-c', 'rm -f "$1" && printf "%s\\n" "#!/bin/sh" "$2" > "$1" && chmod 755 "$1"', 'forge', path, script]);
    expect(forge.exitCode).toBe(0);
    const kill = 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null | grep -q "^/run/berth/agen[t]-" && kill -9 ${p#/proc/}; done; exit 0';
    await execIn(s.id, ['sh', '-c', kill]);
    await waitForNoProcess(s.id, (p) => p.args.startsWith('/run/berth/agent-'));
    const data = randomBytes(4096);
    await s.writeFile('/tmp/forged/f', data);
    expect((await execIn(s.id, ['sh', '-c', 'base64 /tmp/forged/f | tr -d "\\n"'])).stdout).toBe(data.toString('base64'));
    // The forgery is cut and killed; later calls work (the user backs off to the engine).
    await waitForNoProcess(s.id, (p) => p.args === 'sleep 1041' || p.args.includes('/run/berth/agent-'));
    await s.writeFile('/tmp/forged/g', 'later');
    expect((await s.readFile('/tmp/forged/g'))!.toString()).toBe('later');
    expect((await s.exec(['echo', 'later'])).stdout.toString()).toBe('later\n');
  });
});
