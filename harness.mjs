// ESM entry of `@berth/core/harness`: the named exports of the CommonJS build.
import { createRequire } from 'node:module';

const cjs = createRequire(import.meta.url)('./harness.js');

export const {
  BerthSandboxSession,
  builderSessionId,
  createDockerSandboxProvider,
  DEFAULT_REMOVE_AFTER_STOP_MS,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_OUTPUT_BYTES,
  restrictedView,
  sliceLines,
  TEMPLATE_WAIT_TIMEOUT_MS,
  templateKey,
} = cjs;
