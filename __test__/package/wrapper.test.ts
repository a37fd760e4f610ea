// The TS wrapper over the binding: argument checks and error mapping, with a fake native
// session. No engine and no native build needed (imports lib/; rejected calls never load the binding).
import { describe, expect, it, vi } from 'vitest';
import { createSession } from '../../lib/create-session.js';
import { InvalidArgumentError, SessionBusyError } from '../../lib/errors/index.js';
import { NATIVE_ERROR_MARKER } from '../../lib/errors/from-native.js';
import { peek } from '../../lib/peek.js';
import { resumeSession } from '../../lib/resume-session.js';
import { Session } from '../../lib/session.js';
import type { NativeSession } from '../../lib/binding.js';
import { closestKey } from '../../lib/validate.js';

function fakeNative(overrides: Partial<Record<keyof NativeSession, unknown>> = {}) {
  const defaults = {
    id: 'c'.repeat(64),
    name: 'berth-s1-abc',
    sessionId: 's1',
    ownership: 'created',
    owner: null,
    drift: ['image'],
    exec: vi.fn(async () => ({ exitCode: 0, stdout: Buffer.from('out'), stderr: Buffer.alloc(0) })),
    hostAddress: vi.fn(async () => '127.0.0.1:49153'),
    stop: vi.fn(async () => ({ stopped: true })),
    remove: vi.fn(async () => ({ removed: true })),
  };
  const native = { ...defaults, ...overrides } as typeof defaults;
  return { native, session: new Session(native as unknown as NativeSession) };
}

async function rejection(promise: Promise<unknown>): Promise<InvalidArgumentError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
  expect(InvalidArgumentError.isInstance(error)).toBe(true);
  return error as InvalidArgumentError;
}

describe('argument checks reject before any native call', () => {
  it.each([
    [{ image: 'i' }, 'sessionId'],
    [{ sessionId: 's', image: 3 }, 'image'],
    [{ sessionId: 's', image: 'i', ports: [0] }, 'ports[0]'],
    [{ sessionId: 's', image: 'i', ports: '80' }, 'ports'],
    [{ sessionId: 's', image: 'i', env: { A: 1 } }, 'env.A'],
    [{ sessionId: 's', image: 'i', setupCommands: [['ok'], 7] }, 'setupCommands[1]'],
    [{ sessionId: 's', image: 'i', setupCommands: [[]] }, 'setupCommands[0]'],
    [{ sessionId: 's', image: 'i', mounts: [{ source: '/a' }] }, 'mounts[0].target'],
    [{ sessionId: 's', image: 'i', memoryBytes: 1.5 }, 'memoryBytes'],
    [{ sessionId: 's', image: 'i', engine: 'lxc' }, 'engine'],
    [{ sessionId: 's', image: 'i', engine: { linux: 'rkt' } }, 'engine.linux'],
    [{ sessionId: 's', image: 'i', abortSignal: {} }, 'abortSignal'],
  ])('createSession(%j) names %s', async (options, field) => {
    const error = await rejection(createSession(options as never));
    expect(error.details.field).toBe(field);
    expect(error.message).toContain(field);
  });

  it('resumeSession and peek check theirs', async () => {
    expect((await rejection(resumeSession({ sessionId: 's', onDrift: 'ignore' } as never))).details.field).toBe('onDrift');
    expect((await rejection(resumeSession({ sessionId: 's', spec: { env: { A: 1 } } } as never))).details.field).toBe('spec.env.A');
    expect((await rejection(peek(5 as never))).details.field).toBe('sessionId');
  });

  it('exec checks argv and options', async () => {
    const { native, session } = fakeNative();
    for (const [argv, options, field] of [
      ['ls', {}, 'argv'],
      [[], {}, 'argv'],
      [['ls', 1], {}, 'argv[1]'],
      // A type error; the range (at least 1 ms) is the core's, see __test__/sandbox/validation.test.ts.
      [['ls'], { timeoutMs: '5' }, 'timeoutMs'],
      [['ls'], { timeoutMs: 1.5 }, 'timeoutMs'],
      [['ls'], { stdin: 12 }, 'stdin'],
      [['ls'], { env: { A: null } }, 'env.A'],
    ] as const) {
      expect((await rejection(session.exec(argv as never, options as never))).details.field).toBe(field);
    }
    expect((await rejection(session.hostAddress(70000))).details.field).toBe('port');
    expect(native.exec).not.toHaveBeenCalled();
    expect(native.hostAddress).not.toHaveBeenCalled();
  });
});

describe('unknown option keys', () => {
  it('are rejected naming the key, the known ones and a near one, before any native call', async () => {
    const resumed = await rejection(resumeSession({ sessionId: 's', takeover: true } as never));
    expect(resumed.details).toMatchObject({ field: 'takeover', reason: 'unknown option; did you mean `takeOver`?', suggestion: 'takeOver' });
    expect(resumed.details.allowed).toContain('takeOver');
    expect(resumed.message).toContain('did you mean `takeOver`?');
    const created = await rejection(createSession({ sessionId: 's', image: 'i', mounts: [{ source: '/a', target: '/b', ro: true }] } as never));
    expect(created.details).toMatchObject({ field: 'mounts[0].ro', allowed: ['readOnly', 'source', 'target'] });
    expect(created.details.suggestion).toBeUndefined();
    const { native, session } = fakeNative();
    expect((await rejection(session.stop({ forse: true } as never))).details.suggestion).toBe('force');
    expect((await rejection(session.remove({ forse: true } as never))).details.field).toBe('forse');
    expect((await rejection(session.exec(['ls'], { cwdd: '/' } as never))).details.suggestion).toBe('cwd');
    expect(native.stop).not.toHaveBeenCalled();
    expect(native.remove).not.toHaveBeenCalled();
    expect(native.exec).not.toHaveBeenCalled();
  });

  it('a known key set to undefined passes', async () => {
    const { native, session } = fakeNative();
    await session.stop({ force: undefined, timeoutMs: undefined, abortSignal: undefined });
    expect(native.stop).toHaveBeenCalledOnce();
  });

  it.each([
    ['dryrun', ['prefix', 'dryRun'], 'dryRun'],
    ['takeover', ['takeOver', 'exclusive'], 'takeOver'],
    ['imagee', ['image', 'user'], 'image'],
    ['sesionId', ['sessionId', 'image'], 'sessionId'],
    ['reapir', ['repair', 'prefix'], 'repair'],
    ['timeout', ['timeoutMs', 'cwd'], 'timeoutMs'],
    ['bogus', ['image', 'user', 'ports', 'labels', 'force'], undefined],
    ['x', ['y', 'env'], undefined],
  ] as const)('closestKey(%s) is %s', (key, allowed, expected) => {
    expect(closestKey(key, allowed)).toBe(expected);
  });
});

describe('Session over a native handle', () => {
  it('exposes the native getters', () => {
    const { session } = fakeNative();
    expect(session).toMatchObject({ id: 'c'.repeat(64), name: 'berth-s1-abc', sessionId: 's1', ownership: 'created', owner: null });
    expect(session.drift).toEqual(['image']);
  });

  it('passes exec options through, stdin as a Buffer, without undefined members', async () => {
    const { native, session } = fakeNative();
    const result = await session.exec(['cat'], { stdin: 'héllo', timeoutMs: 1000, cwd: undefined });
    expect(result.stdout.toString()).toBe('out');
    const [argv, options, token] = native.exec.mock.calls[0] as unknown as [string[], Record<string, unknown>, unknown];
    expect(argv).toEqual(['cat']);
    expect(options).toEqual({ stdin: Buffer.from('héllo'), timeoutMs: 1000 });
    expect(token).toBeUndefined();
  });

  it('maps marked native rejections to berth errors and rethrows unmarked ones unchanged', async () => {
    const busy = new Error(NATIVE_ERROR_MARKER + JSON.stringify({ code: 'E_SESSION_BUSY', message: 'busy', details: { reason: 'x' } }));
    const bug = new Error('Panic in async function');
    const { session } = fakeNative({
      remove: vi.fn(async () => {
        throw busy;
      }),
      stop: vi.fn(async () => {
        throw bug;
      }),
    });
    const removed = await session.remove().catch((e: unknown) => e);
    expect(SessionBusyError.isInstance(removed)).toBe(true);
    expect(removed).toMatchObject({ code: 'E_SESSION_BUSY', details: { reason: 'x' } });
    await expect(session.stop()).rejects.toBe(bug);
  });

  it('asyncDispose removes', async () => {
    const { native, session } = fakeNative();
    await session[Symbol.asyncDispose]();
    // No signal: no cancel token goes with it.
    expect(native.remove).toHaveBeenCalledWith({}, undefined);
  });
});
