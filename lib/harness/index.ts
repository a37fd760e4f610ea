export { createDockerSandboxProvider, type DockerSandboxProviderOptions } from './provider';
export {
  BerthSandboxSession,
  restrictedView,
  type SandboxProcess,
  type SandboxSession,
  type SandboxSessionLifecycle,
} from './sandbox-session';
export { sliceLines } from './text-range';
