import type { Session } from '../session';
import {
  compact,
  expectObject,
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
import type { ContainerHandle, ContainerHandleOptions, ContainerOwnership, ContainerRemoveResult } from './types';

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
  expectObject(options, 'options');
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

  async ready(): Promise<string> {
    // No await before the acquisition is registered when nothing is being removed: a
    // remove() called right after ready() must find it in flight and wait for it.
    if (this.#removing) await this.#removalSettled();
    if (this.#session) return this.name;
    this.#acquiring ??= acquire(this.#spec)
      .then((session) => {
        this.#session = session;
        this.#removed = false;
        return session;
      })
      .finally(() => {
        this.#acquiring = undefined;
      });
    await this.#acquiring;
    return this.name;
  }

  async hostAddress(port: number): Promise<string> {
    try {
      expectPort(port, 'port');
    } catch (error) {
      throw withLegacyFields(error, portArgv(this.name, port));
    }
    // The old module acquires first; ready()'s own errors carry its own step's fields.
    let session = this.#session;
    while (!session) {
      await this.ready();
      session = this.#session; // undefined only when a remove() ran in between: acquire again
    }
    try {
      return await session.hostAddress(port);
    } catch (error) {
      throw withLegacyFields(error, portArgv(this.name, port));
    }
  }

  async remove(): Promise<ContainerRemoveResult> {
    await this.#acquisitionSettled();
    this.#removing ??= this.#removeHeld().finally(() => {
      this.#removing = undefined;
    });
    return this.#removing;
  }

  async #removeHeld(): Promise<ContainerRemoveResult> {
    const session = this.#session;
    if (!session) return { removed: false, reason: this.#removed ? 'already-removed' : 'not-acquired' };
    // Adopted: someone else's container, never touched (not even released: no engine call).
    if (session.ownership !== 'created') return { removed: false, reason: 'not-owner' };
    let result;
    try {
      result = await session.remove();
    } catch (error) {
      // The native session keeps its duty: the next remove() retries by id.
      throw withLegacyFields(error, removeArgv(session.id));
    }
    this.#session = undefined;
    this.#removed = true;
    return result.removed ? { removed: true } : { removed: false, reason: result.reason as ContainerRemoveResult['reason'] };
  }

  async peek(): Promise<string | undefined> {
    const { sandboxId, prefix, engine, socketPath, connectTimeoutMs } = this.#spec;
    try {
      const seen = await peek(sandboxId, compact({ prefix, engine, socketPath, connectTimeoutMs }));
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
