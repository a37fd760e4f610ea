// ESM entry of `@berth/core/container`: the named exports of the CommonJS build.
import { createRequire } from 'node:module';

const cjs = createRequire(import.meta.url)('./container.js');

export const {
  ACQUIRE_ATTEMPTS,
  containerName,
  createContainerHandle,
  INITIALISING_POLL_MS,
  INITIALISING_WAIT_MS,
  LEGACY_PREFIX,
  REDACTED,
} = cjs;
