import { ENGINE_OPTION_KEYS, type CallOptions, type EngineOptions } from '../types';
import { optionKeys } from '../validate';

/**
 * Options of {@link createContainerHandle}: the old `container.ts` options, plus berth's
 * `labels` and engine selection.
 */
export interface ContainerHandleOptions extends EngineOptions {
  /** Image reference; pulled when missing (only when a container is created). */
  image: string;
  /** Working directory in the container (absolute). @default the image's */
  workDir?: string;
  /** Container TCP ports to publish, each on 127.0.0.1 with an engine-chosen host port. */
  ports?: number[];
  /** Environment of the container; values never reach labels, messages or error `args`. */
  env?: Record<string, string>;
  /** User to run as (`'1000'`, `'node'`, `'1000:1000'`). @default the image's */
  user?: string;
  /** Container name prefix. @default 'please' (the old module's) */
  prefix?: string;
  /** Extra labels on a container this handle creates (keys outside `dev.berth.`). */
  labels?: Record<string, string>;
}

/** @internal Keys of {@link ContainerHandleOptions}. */
export const CONTAINER_HANDLE_OPTION_KEYS = optionKeys<ContainerHandleOptions>()([
  'image',
  'workDir',
  'ports',
  'env',
  'user',
  'prefix',
  'labels',
  ...ENGINE_OPTION_KEYS,
]);

/** How a handle came to hold its container: `created` by this handle, or `adopted`. */
export type ContainerOwnership = 'created' | 'adopted';

/**
 * What {@link ContainerHandle.remove} did. `removed: true` only for the call that removed the
 * container. Otherwise `reason`: `'not-owner'` (adopted: left alone, no engine call),
 * `'not-acquired'` (this handle holds no container: no engine call), `'absent'` (it was gone
 * already), `'already-removed'` (an earlier call removed it: no engine call).
 */
export interface ContainerRemoveResult {
  /** Whether this call removed the container. */
  removed: boolean;
  /** Why nothing was removed when `removed` is false. */
  reason?: 'not-owner' | 'not-acquired' | 'absent' | 'already-removed';
}

/**
 * One sandbox's container, the shape of the old `container.ts` handle. Every method
 * rejects with a berth error (stable `code`, `details`) that also carries the old module's
 * `exitCode`, `stderr` and `args` (see {@link ContainerError}).
 */
export interface ContainerHandle {
  /** The container name, `containerName(sandboxId, prefix)`. */
  readonly name: string;
  /** `created` or `adopted` while the handle holds a container; `null` before `ready()` and after its removal. */
  readonly ownership: ContainerOwnership | null;
  /** The full 64-hex id of the container the handle holds; `null` when it holds none. */
  readonly id: string | null;
  /**
   * Creates the container, or adopts the one that holds the name: a berth session (of
   * another process or handle), or an unlabelled container made by the old module whose
   * image is `options.image`; any other container under the name is refused
   * (`E_FOREIGN_CONTAINER`). A stopped container is started. Concurrent calls share one
   * acquisition; success is memoised, a failure is not (the next call tries again).
   *
   * Engine API: `POST /containers/create?name=…`, `POST /containers/{id}/start`, and when the
   * name is taken `GET /containers/{name}/json` (plus berth's records for a berth session).
   *
   * `abortSignal` bounds the call: it rejects `E_ABORTED` at once, and what its create made is
   * removed by id. A call that joins an acquisition in flight waits for it within its own
   * signal (the acquisition is bounded by the signal of the call that started it).
   *
   * @returns The container name.
   * @throws AbortedError `E_ABORTED` when `abortSignal` fires.
   * @throws InvalidArgumentError `E_INVALID_ARGUMENT` (a session id berth refuses, a bad image reference, ...) before any engine call.
   * @throws ForeignContainerError `E_FOREIGN_CONTAINER` when the name is held by a container this handle may not adopt.
   * @throws ImageNotFoundError `E_IMAGE_NOT_FOUND`, SessionBusyError `E_SESSION_BUSY`, EngineUnavailableError `E_ENGINE_UNAVAILABLE`, EngineError `E_ENGINE`.
   */
  ready(options?: CallOptions): Promise<string>;
  /**
   * `"127.0.0.1:<host port>"` of container `port`/tcp (for a remote engine, its host).
   * Acquires first, as the old module does (`await ready()`): a handle that holds no
   * container yet creates or adopts it, then reads the port from it.
   *
   * Engine API: what `ready()` calls (when nothing is held yet), then `GET /containers/{id}/json`.
   *
   * `abortSignal` bounds both steps (`E_ABORTED`).
   *
   * @throws Whatever `ready()` throws, when it had to acquire.
   * @throws InvalidArgumentError `E_INVALID_ARGUMENT` for a port out of range or not published.
   * @throws SessionNotFoundError `E_SESSION_NOT_FOUND` when the container is gone; EngineError `E_ENGINE` (409) when it is not running.
   */
  hostAddress(port: number, options?: CallOptions): Promise<string>;
  /**
   * Removes, by id, the container this handle created. Waits for a `ready()` in flight first.
   * An adopted container, or a handle that holds none, resolves without any engine call.
   * Idempotent. A failed removal rejects and keeps the duty: calling again retries.
   * After a removal, `ready()` creates again.
   *
   * Engine API: `DELETE /containers/{id}?force=true&v=true` (created containers only).
   * `abortSignal`: an aborted removal rejects `E_ABORTED` at once and keeps the duty.
   *
   * @throws AbortedError `E_ABORTED` when `abortSignal` fires.
   * @throws EngineError `E_ENGINE`, EngineUnavailableError `E_ENGINE_UNAVAILABLE` (retry later: the duty is kept).
   */
  remove(options?: CallOptions): Promise<ContainerRemoveResult>;
  /**
   * The container name when a container under it is running now, else `undefined` (absent,
   * created, paused, exited), as the old module answers. Never creates, starts or unpauses anything.
   *
   * Engine API: `GET /containers/{name}/json`. `abortSignal` bounds it (`E_ABORTED`).
   */
  peek(options?: CallOptions): Promise<string | undefined>;
}
