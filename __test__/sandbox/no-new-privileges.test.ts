// no-new-privileges on by default (issue 13): a non-root session's own execs cannot gain
// privileges through a setuid binary (and can with the documented opt-out), while berth's own
// execs that need more than the user keep working with the default on: the tree kill of a
// timed-out exec and of spawn's kill(), the keep-alive's deadline file (create and
// setTimeout), and verify's repair of a root-owned writable path. On Docker 20.10 an exec as
// user 0 in such a container has no capabilities at all; the tests prove berth does not need
// them. NET_RAW and the pids limit are checked in files-privilege.test.ts.
import { expect } from 'vitest';
import { createSession, ExecTimeoutError, verifySession, type Session } from '../../index.mjs';
import { execIn } from '../helpers/engine-http.mjs';
import { waitForNoProcess, waitForProcess } from '../helpers/engine-wait.js';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

/**
 * A minimal static ELF that exits with its effective uid (low 8 bits): `geteuid` then `exit`.
 * Busybox cannot serve here, since it drops a setuid bit itself; this program does nothing but
 * report what the kernel gave it. x86_64 and aarch64.
 */
function euidProgram(): Buffer {
  const code =
    process.arch === 'arm64'
      ? // mov x8, #175 (geteuid); svc #0; mov x8, #93 (exit); svc #0
        Buffer.from([0xe8, 0x15, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4, 0xa8, 0x0b, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4])
      : // mov eax, 107 (geteuid); syscall; mov edi, eax; mov eax, 60 (exit); syscall
        Buffer.from([0xb8, 0x6b, 0, 0, 0, 0x0f, 0x05, 0x89, 0xc7, 0xb8, 0x3c, 0, 0, 0, 0x0f, 0x05]);
  const base = 0x400000n;
  const elf = Buffer.alloc(64 + 56 + code.length);
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]).copy(elf, 0);
  elf.writeUInt16LE(2, 16); // ET_EXEC
  elf.writeUInt16LE(process.arch === 'arm64' ? 183 : 62, 18);
  elf.writeUInt32LE(1, 20);
  elf.writeBigUInt64LE(base + 120n, 24); // entry: right after the headers
  elf.writeBigUInt64LE(64n, 32); // program headers
  elf.writeUInt16LE(64, 52);
  elf.writeUInt16LE(56, 54);
  elf.writeUInt16LE(1, 56);
  elf.writeUInt32LE(1, 64); // PT_LOAD
  elf.writeUInt32LE(5, 68); // R + X
  elf.writeBigUInt64LE(0n, 72);
  elf.writeBigUInt64LE(base, 80);
  elf.writeBigUInt64LE(base, 88);
  elf.writeBigUInt64LE(BigInt(elf.length), 96);
  elf.writeBigUInt64LE(BigInt(elf.length), 104);
  elf.writeBigUInt64LE(0x1000n, 112);
  code.copy(elf, 120);
  return elf;
}

/** Puts {@link euidProgram} at /tmp/suid/euid, owned by root with mode 4755 (made by the engine's root). */
async function setuidProgram(s: Session): Promise<void> {
  await s.writeFile('/tmp/euid', euidProgram(), { mode: 0o755 });
  const out = await execIn(s.id, ['sh', '-c', 'mkdir /tmp/suid && cp /tmp/euid /tmp/suid/euid && chmod 4755 /tmp/suid/euid'], {
    user: '0',
  });
  expect(out).toMatchObject({ exitCode: 0 });
}

engineSuite('no-new-privileges by default', () => {

  test('an agent exec as the session user cannot elevate through a setuid binary; the opt-out can', async ({ sessionId, labels, track }) => {
    const s = track(await createSession({ sessionId, image: TEST_IMAGE, labels, user: '1000:1000' }));
    expect((await s.exec(['cat', '/proc/self/status'])).stdout.toString()).toMatch(/NoNewPrivs:\s+1/);
    await setuidProgram(s);
    // Not setuid: exits with the caller's uid (1000 & 0xff = 232); setuid root but blocked: the same.
    expect((await s.exec(['/tmp/euid'])).exitCode).toBe(1000 & 0xff);
    expect((await s.exec(['/tmp/suid/euid'])).exitCode).toBe(1000 & 0xff);

    // The same binary elevates with `noNewPrivileges: false`: the check above is not vacuous.
    const open = track(
      await createSession({ sessionId: `${sessionId}-off`, image: TEST_IMAGE, labels, user: '1000:1000', noNewPrivileges: false }),
    );
    expect((await open.exec(['cat', '/proc/self/status'])).stdout.toString()).toMatch(/NoNewPrivs:\s+0/);
    await setuidProgram(open);
    expect((await open.exec(['/tmp/suid/euid'])).exitCode).toBe(0);
  });

  test("a timed-out exec's tree and a killed spawn's tree are killed in a non-root session", async ({ sessionId, labels, track }) => {
    const s: Session = track(await createSession({ sessionId, image: TEST_IMAGE, labels, user: '1000:1000' }));
    await expectBerthError(s.exec(['sh', '-c', 'sleep 1011 & setsid sleep 1012 & sleep 1013'], { timeoutMs: 500 }), ExecTimeoutError);
    await waitForNoProcess(s.id, (p) => ['sleep 1011', 'sleep 1012', 'sleep 1013'].includes(p.args));

    const child = await s.spawn(['sh', '-c', 'sleep 1021 & sleep 1022']);
    await waitForProcess(s.id, (p) => p.args === 'sleep 1022');
    await child.kill();
    await child.wait().catch(() => undefined);
    await waitForNoProcess(s.id, (p) => ['sleep 1021', 'sleep 1022'].includes(p.args));
  });

  test('the deadline keep-alive learns create and setTimeout deadlines in a non-root session', async ({ sessionId, labels, track }) => {
    const s = track(await createSession({ sessionId, image: TEST_IMAGE, labels, user: '1000:1000', timeoutMs: 600_000 }));
    const read = async () => Number((await s.exec(['cat', '/run/berth/deadline'])).stdout.toString().trim());
    expect(await read()).toBe(Math.ceil((s.expiresAt as number) / 1000));
    const later = await s.setTimeout(900_000);
    expect(await read()).toBe(Math.ceil(later / 1000));
  });

  test('verify repairs a root-owned writable path for a non-root session', async ({ sessionId, labels, track }) => {
    const spec = { sessionId, image: TEST_IMAGE, labels, user: '1000:1000' };
    const s = track(await createSession(spec));
    expect(await execIn(s.id, ['sh', '-c', 'mkdir /data && chmod 555 /data'], { user: '0' })).toMatchObject({ exitCode: 0 });
    const withPaths = { ...spec, writablePaths: ['/work', '/data'] };
    const repaired = await verifySession(sessionId, { spec: withPaths });
    expect(repaired.findings.map((f) => [f.code, f.repaired])).toEqual([
      ['writable-missing', true],
      ['writable-denied', true],
    ]);
    expect(repaired.ok).toBe(true);
    const write = await s.exec(['sh', '-c', 'echo hi > /work/a && echo hi > /data/b && stat -c "%a %u %g" /data /work']);
    expect(write).toMatchObject({ exitCode: 0 });
    expect(write.stdout.toString().trim().split('\n')).toEqual(['755 1000 1000', '755 1000 1000']);
  });
});
