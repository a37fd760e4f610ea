// Error classes and native error parsing: no engine and no native build needed (imports lib/).
import { describe, expect, it, vi } from 'vitest';
import { withAbort } from '../../lib/abort.js';
import {
  AbortedError,
  BerthError,
  ERROR_CODES,
  EngineError,
  ExecTimeoutError,
  fromNative,
  InvalidArgumentError,
  NATIVE_ERROR_MARKER,
  SessionExistsError,
  SetupFailedError,
} from '../../lib/errors/index.js';
import * as errors from '../../lib/errors/index.js';

const native = (payload: unknown): Error => new Error(NATIVE_ERROR_MARKER + JSON.stringify(payload));

/** Every subclass with its code, found through the module's exports. */
const subclasses = Object.values(errors).filter(
  (value): value is typeof SessionExistsError => typeof value === 'function' && 'CODE' in value,
);

describe('error classes', () => {
  it('has one subclass per stable code (docs/design.md#errors)', () => {
    expect(subclasses.map((c) => c.CODE).sort()).toEqual([...ERROR_CODES].sort());
  });

  it.each(subclasses.map((c) => [c.name, c] as const))('%s is a BerthError keeping code, details and cause', (name, Class) => {
    const cause = new Error('cleanup failed');
    const error = new Class('boom', { details: { sessionId: 's1' } as never, cause });
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(BerthError);
    expect(error.name).toBe(name);
    expect(error.code).toBe(Class.CODE);
    expect(error.message).toBe('boom');
    expect(error.details).toEqual({ sessionId: 's1' });
    expect(error.cause).toBe(cause);
    expect(Class.isInstance(error)).toBe(true);
    expect(BerthError.isInstance(error)).toBe(true);
    for (const Other of subclasses.filter((c) => c !== Class)) expect(Other.isInstance(error)).toBe(false);
  });

  it('defaults details to {} and leaves cause undefined', () => {
    const error = new EngineError('engine said no');
    expect(error.details).toEqual({});
    expect(error.cause).toBeUndefined();
    expect('cause' in error).toBe(false);
  });

  it('isInstance is false for foreign errors and non-errors', () => {
    const lookalike = Object.assign(new Error('x'), { code: 'E_SESSION_EXISTS', details: {} });
    for (const value of [lookalike, new Error('x'), new TypeError('x'), { code: 'E_ENGINE' }, null, undefined, 'E_ENGINE', 42]) {
      expect(BerthError.isInstance(value)).toBe(false);
      expect(SessionExistsError.isInstance(value)).toBe(false);
    }
    expect(SessionExistsError.isInstance(new BerthError('E_SESSION_EXISTS', 'plain base'))).toBe(false);
  });

  it('isInstance holds across a duplicate copy of the package', async () => {
    vi.resetModules();
    const copy = await import('../../lib/errors/index.js');
    expect(copy.SessionExistsError).not.toBe(SessionExistsError);
    const theirs = new copy.SessionExistsError('taken');
    expect(theirs).not.toBeInstanceOf(SessionExistsError);
    expect(SessionExistsError.isInstance(theirs)).toBe(true);
    expect(BerthError.isInstance(theirs)).toBe(true);
    expect(ExecTimeoutError.isInstance(theirs)).toBe(false);
    expect(copy.BerthError.isInstance(new SessionExistsError('taken'))).toBe(true);
  });
});

describe('fromNative', () => {
  it.each(ERROR_CODES.map((code) => [code]))('builds the subclass for %s', (code) => {
    const error = fromNative(native({ code, message: `failed: ${code}`, details: { name: 'berth-x' } }));
    const Class = subclasses.find((c) => c.CODE === code)!;
    expect(Class.isInstance(error)).toBe(true);
    expect(error).toBeInstanceOf(Class);
    expect(error).toMatchObject({ code, message: `failed: ${code}`, details: { name: 'berth-x' } });
  });

  it('keeps an unknown code on a plain BerthError', () => {
    const error = fromNative(native({ code: 'E_FUTURE', message: 'new', details: {} }));
    expect(BerthError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ name: 'BerthError', code: 'E_FUTURE', message: 'new' });
  });

  it('turns a nested cause into a berth error, keeping the first error in front', () => {
    const error = fromNative(
      native({
        code: 'E_SETUP_FAILED',
        message: 'setup command 0 exited with 1',
        details: { exitCode: 1, cleanupFailed: true },
        cause: {
          code: 'E_ENGINE',
          message: 'remove failed',
          details: { status: 500 },
          cause: { code: 'E_ENGINE_UNAVAILABLE', message: 'socket gone', details: {} },
        },
      }),
    ) as SetupFailedError;
    expect(SetupFailedError.isInstance(error)).toBe(true);
    expect(error.details).toEqual({ exitCode: 1, cleanupFailed: true });
    const cause = error.cause as EngineError;
    expect(EngineError.isInstance(cause)).toBe(true);
    expect(cause).toMatchObject({ code: 'E_ENGINE', message: 'remove failed', details: { status: 500 } });
    expect(cause.cause).toMatchObject({ code: 'E_ENGINE_UNAVAILABLE', message: 'socket gone' });
  });

  it.each(['E_EXEC_TIMEOUT', 'E_ABORTED'])('decodes base64 stdout/stderr of %s into Buffers', (code) => {
    const bytes = Buffer.from([0, 1, 2, 0xff, 0x0a]);
    const error = fromNative(
      native({ code, message: 'stopped', details: { stdout: bytes.toString('base64'), stderr: '', timeoutMs: 500 } }),
    ) as ExecTimeoutError | AbortedError;
    expect(Buffer.isBuffer(error.details.stdout)).toBe(true);
    expect(error.details.stdout).toEqual(bytes);
    expect(error.details.stderr).toEqual(Buffer.alloc(0));
    expect(error.details.timeoutMs).toBe(500);
  });

  it('leaves output of other codes as the native side sent it', () => {
    const error = fromNative(native({ code: 'E_SETUP_FAILED', message: 'x', details: { stdout: 'aGk=' } })) as SetupFailedError;
    expect(error.details.stdout).toBe('aGk=');
  });

  it('returns anything without a well-formed marker unchanged', () => {
    const plain = new Error('GenericFailure: something else');
    const badJson = new Error(`${NATIVE_ERROR_MARKER}{not json`);
    const badShape = native({ message: 'no code' });
    const already = new InvalidArgumentError('x');
    for (const value of [plain, badJson, badShape, already, 'BERTH_ERROR {}', null, undefined]) {
      expect(fromNative(value)).toBe(value);
    }
  });

  it('does not treat the marker as special in the middle of a message', () => {
    const error = new Error(`wrapped: ${NATIVE_ERROR_MARKER}${JSON.stringify({ code: 'E_ENGINE', message: 'x' })}`);
    expect(fromNative(error)).toBe(error);
  });
});

describe('withAbort', () => {
  it('rejects an already aborted signal with E_ABORTED before any native call', async () => {
    const controller = new AbortController();
    controller.abort(new Error('user gave up'));
    const fn = vi.fn(async () => 'ran');
    const failure = await withAbort(controller.signal, 'createSession', fn).catch((e: unknown) => e);
    expect(fn).not.toHaveBeenCalled();
    expect(AbortedError.isInstance(failure)).toBe(true);
    expect(failure).toMatchObject({ code: 'E_ABORTED', details: { operation: 'createSession' } });
    expect((failure as AbortedError).cause).toEqual(new Error('user gave up'));
  });

  it('passes no token when there is no signal', async () => {
    await expect(withAbort(undefined, 'exec', async (token) => token)).resolves.toBeUndefined();
  });
});
