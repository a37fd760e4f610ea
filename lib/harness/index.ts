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
