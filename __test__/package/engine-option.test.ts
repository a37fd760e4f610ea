// The TS side of engine selection and pull progress: argument checks and the shapes handed to
// the native binding. No engine and no native build needed.
import { describe, expect, it, vi } from 'vitest';
import { engineOptions } from '../../lib/engine-option.js';
import { InvalidArgumentError } from '../../lib/errors/index.js';
import { progressCallback } from '../../lib/pull-progress.js';

function fieldOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(InvalidArgumentError.isInstance(error)).toBe(true);
    return (error as InvalidArgumentError).details.field;
  }
  throw new Error('expected E_INVALID_ARGUMENT');
}

describe('engineOptions', () => {
  it('passes names, maps without undefined entries, socket paths and timeouts through', () => {
    expect(engineOptions({})).toEqual({});
    expect(engineOptions({ engine: 'podman' })).toEqual({ engine: 'podman' });
    expect(engineOptions({ engine: { linux: 'podman', darwin: undefined } })).toEqual({ engine: { linux: 'podman' } });
    expect(engineOptions({ socketPath: 'tcp://10.0.0.5:2375', connectTimeoutMs: 500 })).toEqual({
      socketPath: 'tcp://10.0.0.5:2375',
      connectTimeoutMs: 500,
    });
  });

  it('names the bad field and the valid values', () => {
    expect(fieldOf(() => engineOptions({ engine: 'rkt' as never }))).toBe('engine');
    expect(fieldOf(() => engineOptions({ engine: { solaris: 'docker' } as never }))).toBe('engine.solaris');
    expect(fieldOf(() => engineOptions({ engine: { linux: 'lxc' } as never }))).toBe('engine.linux');
    expect(fieldOf(() => engineOptions({ engine: 3 as never }))).toBe('engine');
    expect(fieldOf(() => engineOptions({ socketPath: 1 as never }))).toBe('socketPath');
    expect(fieldOf(() => engineOptions({ connectTimeoutMs: '5' as never }))).toBe('connectTimeoutMs');
    expect(fieldOf(() => engineOptions({ connectTimeoutMs: 1.5 }))).toBe('connectTimeoutMs');
    // The range (1 to 2^31 - 1) is the core's: 0 passes the type check here and is refused
    // before any connection (__test__/sandbox/validation.test.ts covers it at its bounds).
    expect(engineOptions({ connectTimeoutMs: 0 })).toEqual({ connectTimeoutMs: 0 });
    try {
      engineOptions({ engine: 'rkt' as never });
    } catch (error) {
      expect((error as Error).message).toContain('docker, podman');
    }
  });
});

describe('progressCallback', () => {
  it('is absent without a callback and rejects a non-function', () => {
    expect(progressCallback(undefined)).toBeUndefined();
    expect(fieldOf(() => progressCallback('x'))).toBe('onPullProgress');
  });

  it('gives events their public shape', () => {
    const seen = vi.fn();
    const wrapped = progressCallback(seen)!;
    wrapped({ status: 'Downloading', layer: 'abc', current: 10, total: 20 });
    wrapped({ status: 'Pulling from x' });
    expect(seen.mock.calls).toEqual([
      [{ layer: 'abc', current: 10, total: 20, status: 'Downloading' }],
      [{ layer: null, current: null, total: null, status: 'Pulling from x' }],
    ]);
  });

  it('turns an exception in the callback into a process warning', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      progressCallback(() => {
        throw new Error('boom');
      })!({ status: 's' });
      expect(warn).toHaveBeenCalledWith('berth: onPullProgress threw: boom');
    } finally {
      warn.mockRestore();
    }
  });
});
