/**
 * A drop-in for the old `container.ts` module (the docker-CLI backend):
 * {@link createContainerHandle} gives the same handle shape and container names over the
 * Engine API. Guide: `docs/migrating.md`.
 *
 * @module @berth/core/container
 */
export { createContainerHandle } from './container-handle';
export { containerName, LEGACY_PREFIX } from './container-name';
export { REDACTED } from './docker-argv';
export type { ContainerError, LegacyErrorFields } from './legacy-error';
export type { ContainerHandle, ContainerHandleOptions, ContainerOwnership, ContainerRemoveResult } from './types';
export { ACQUIRE_ATTEMPTS, INITIALISING_POLL_MS, INITIALISING_WAIT_MS } from './acquire';
