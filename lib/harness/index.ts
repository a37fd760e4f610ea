/**
 * The AI SDK harness sandbox provider: {@link createDockerSandboxProvider} returns a
 * `HarnessV1SandboxProvider` for `HarnessAgent`, each harness session in its own container.
 * Guide: `docs/harness.md`.
 *
 * @module @berth/core/harness
 */
export {
  createDockerSandboxProvider,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_REMOVE_AFTER_STOP_MS,
  DEFAULT_TIMEOUT_MS,
  type DockerSandboxProviderOptions,
} from './provider';
export {
  BerthSandboxSession,
  restrictedView,
  type SandboxCaps,
  type SandboxProcess,
  type SandboxSession,
  type SandboxSessionLifecycle,
} from './sandbox-session';
export { builderSessionId, templateKey, TEMPLATE_WAIT_TIMEOUT_MS, type ProviderSpec } from './template-flow';
export { sliceLines } from './text-range';
