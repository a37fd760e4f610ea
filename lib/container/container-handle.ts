import { AbortedError } from '../errors/aborted-error';
import type { Session } from '../session';
import { CALL_OPTION_KEYS, type CallOptions } from '../types';
import {
  compact,
  expectOptionalOptions,
  expectOptions,
  expectOptionalSignal,
  expectOptionalString,
  expectOptionalStringRecord,
  expectPort,
  expectString,
  invalid,
} from '../validate';
import { engineOptions } from '../engine-option';
import { acquire, type AcquireSpec } from './acquire';
import { containerName, LEGACY_PREFIX } from './container-name';
import { inspectArgv, portArgv, removeArgv } from './docker-argv';
import { withLegacyFields } from './legacy-error';
import { peek } from '../peek';
import {
  CONTAINER_HANDLE_OPTION_KEYS,
  type ContainerHandle,
  type ContainerHandleOptions,
  type ContainerOwnership,
  type ContainerRemoveResult,
} from './types';

/**
 * A drop-in for the old `container.ts` handle: the same shape and adopt-or-create `ready()`,
 * with berth's ownership rule. The handle records whether it created or adopted its
 * container, and `remove()` removes (by id) only what it created, so a second process
 * that adopted a live sandbox can never remove it, and a failed removal is retried.
 *
 * Nothing touches the engine until a method is called.
 *
 * @param sandboxId The sandbox id (for `ready()`: 1 to 256 UTF-16 code units, no control
 *   characters, no lone surrogates; `name` accepts any string).
 * @param options `image` and the container's `workDir`, `ports`, `env`, `user`, the name
 *   `prefix` (default `'please'`), extra `labels`, and engine selection.
 * @returns The handle; `name` is `containerName(sandboxId, prefix)`.
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` (synchronously) when an option has the wrong type.
 * @example
 * ```ts
 * import { createContainerHandle } from '@berth/core/container';
 *
 * const handle = createContainerHandle('ticket-812', { image: 'node:22', ports: [3000] });
 * await handle.ready();                 // creates, or adopts the sandbox another process runs
 * await handle.hostAddress(3000);       // '127.0.0.1:49153'
 * await handle.remove();                // removes it only if this handle created it
 * ```
 */
export function createContainerHandle(sandboxId: string, options: ContainerHandleOptions): ContainerHandle {
  try {
    return new LegacyContainerHandle(checkOptions(sandboxId, options));
  } catch (error) {
    throw withLegacyFields(error, []);
  }
}

function checkOptions(sandboxId: unknown, options: ContainerHandleOptions): AcquireSpec {
  expectString(sandboxId, 'sandboxId', { wellFormed: false });
  expectOptions(options, 'options', CONTAINER_HANDLE_OPTION_KEYS);
  const { image, workDir, ports, env, user, prefix = LEGACY_PREFIX, labels } = options;
  expectString(image, 'image');
  expectOptionalString(workDir, 'workDir');
  expectOptionalString(user, 'user');
  expectString(prefix, 'prefix', { wellFormed: false });
  expectOptionalStringRecord(env, 'env');
  expectOptionalStringRecord(labels, 'labels');
  if (ports !== undefined && !Array.isArray(ports)) invalid('ports', 'expected an array');
  ports?.forEach((port, i) => expectPort(port, `ports[${i}]`));
  engineOptions(options);
  const { engine, socketPath, connectTimeoutMs } = options;
  return compact({
    sandboxId,
    name: containerName(sandboxId, prefix),
    prefix,
    image,
    workDir,
    ports: ports && [...ports],
    env: env && { ...env },
    user,
    labels: labels && { ...labels },
    engine,
    socketPath,
    connectTimeoutMs,
  });
}

class LegacyContainerHandle implements ContainerHandle {
  readonly name: string;
  readonly #spec: AcquireSpec;
  /** The container this handle holds, once acquired. */
  #session: Session | undefined;
  /** The acquisition in flight (shared by concurrent `ready()` calls). */
  #acquiring: Promise<Session> | undefined;
  /** The removal in flight (shared by concurrent `remove()` calls). */
  #removing: Promise<ContainerRemoveResult> | undefined;
  /** Set once a removal through this handle finished. */
  #removed = false;

  constructor(spec: AcquireSpec) {
    this.#spec = spec;
    this.name = spec.name;
  }

  get ownership(): ContainerOwnership | null {
    return (this.#session?.ownership as ContainerOwnership | undefined) ?? null;
  }

  get id(): string | null {
    return this.#session?.id ?? null;
  }

  async ready(options: CallOptions = {}): Promise<string> {
    const abortSignal = callSignal(options, []);
    // No await before the acquisition is registered when nothing is being removed: a
    // remove() called right after ready() must find it in flight and wait for it.
    if (this.#removing) await this.#removalSettled();
    for (;;) {
      if (this.#session) return this.name;
      // The acquisition is bounded by the signal of the call that starts it; a call that joins
      // one in flight waits for it within its own signal, and acquires again when another
      // caller's abort ended it.
      const joined = this.#acquiring !== undefined;
      this.#acquiring ??= acquire(this.#spec, abortSignal)
        .then((session) => {
          this.#session = session;
          this.#removed = false;
          return session;
        })
        .finally(() => {
          this.#acquiring = undefined;
        });
      try {
        await (joined ? within(this.#acquiring, abortSignal, 'ready', []) : this.#acquiring);
        return this.name;
      } catch (error) {
        if (joined && AbortedError.isInstance(error) && abortSignal?.aborted !== true) continue;
        throw error;
      }
    }
  }

  async hostAddress(port: number, options: CallOptions = {}): Promise<string> {
    let abortSignal: AbortSignal | undefined;
    try {
      expectPort(port, 'port');
      abortSignal = callSignal(options, []);
    } catch (error) {
      throw withLegacyFields(error, portArgv(this.name, port));
    }
    const bound = abortSignal ? { abortSignal } : {};
    // The old module acquires first; ready()'s own errors carry its own step's fields.
    let session = this.#session;
    while (!session) {
      await this.ready(bound);
      session = this.#session; // undefined only when a remove() ran in between: acquire again
    }
    try {
      return await session.hostAddress(port, bound);
    } catch (error) {
      throw withLegacyFields(error, portArgv(this.name, port));
    }
  }

  async remove(options: CallOptions = {}): Promise<ContainerRemoveResult> {
    const abortSignal = callSignal(options, []);
    await within(this.#acquisitionSettled(), abortSignal, 'remove', []);
    // One removal at a time, bounded by the signal of the call that starts it (an aborted
    // removal keeps the duty: the next call removes).
    const joined = this.#removing !== undefined;
    this.#removing ??= this.#removeHeld(abortSignal).finally(() => {
      this.#removing = undefined;
    });
    return joined ? within(this.#removing, abortSignal, 'remove', []) : this.#removing;
  }

  async #removeHeld(abortSignal: AbortSignal | undefined): Promise<ContainerRemoveResult> {
    const session = this.#session;
    if (!session) return { removed: false, reason: this.#removed ? 'already-removed' : 'not-acquired' };
    // Adopted: someone else's container, never touched (not even released: no engine call).
    if (session.ownership !== 'created') return { removed: false, reason: 'not-owner' };
    let result;
    try {
      result = await session.remove(abortSignal ? { abortSignal } : {});
    } catch (error) {
      // The native session keeps its duty: the next remove() retries by id.
      throw withLegacyFields(error, removeArgv(session.id));
    }
    this.#session = undefined;
    this.#removed = true;
    return result.removed ? { removed: true } : { removed: false, reason: result.reason as ContainerRemoveResult['reason'] };
  }

  async peek(options: CallOptions = {}): Promise<string | undefined> {
    const abortSignal = callSignal(options, inspectArgv(this.name));
    const { sandboxId, prefix, engine, socketPath, connectTimeoutMs } = this.#spec;
    try {
      const seen = await peek(sandboxId, compact({ prefix, engine, socketPath, connectTimeoutMs, abortSignal }));
      return seen?.state === 'running' ? this.name : undefined;
    } catch (error) {
      throw withLegacyFields(error, inspectArgv(this.name));
    }
  }

  /** Waits until no acquisition is in flight (its failure is the caller of `ready()`'s to see). */
  async #acquisitionSettled(): Promise<void> {
    while (this.#acquiring) await this.#acquiring.catch(() => {});
  }

  /** Waits until no removal is in flight. */
  async #removalSettled(): Promise<void> {
    while (this.#removing) await this.#removing.catch(() => {});
  }
}

/** The `abortSignal` of a handle method's options, checked (`E_INVALID_ARGUMENT` with `args`). */
function callSignal(options: CallOptions, args: string[]): AbortSignal | undefined {
  try {
    expectOptionalOptions(options, 'options', CALL_OPTION_KEYS);
    expectOptionalSignal(options.abortSignal, 'abortSignal');
  } catch (error) {
    throw withLegacyFields(error, args);
  }
  const { abortSignal } = options;
  return abortSignal;
}

/**
 * `work`, or `E_ABORTED` (naming `operation`) as soon as `signal` fires: a call waiting for work
 * another call started settles by its own signal; the work itself goes on.
 */
function within<T>(work: Promise<T>, signal: AbortSignal | undefined, operation: string, args: string[]): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(withLegacyFields(aborted(`${operation} aborted`, operation, signal), args));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function aborted(message: string, operation: string, signal: AbortSignal): AbortedError {
  return new AbortedError(message, { details: { operation }, cause: signal.reason });
}
