// The README's quick start: the AI SDK's HarnessAgent over berth's sandbox provider, with an
// adapter that drives no model and runs one command in the sandbox. Copy it into a project with
// `@berth/core` and `@ai-sdk/harness` installed and run `node harness-quickstart.mjs`.
// Needs a running Docker or Podman engine and the image (pulled when missing); here in the
// repository, `npm run build` first, and `IMAGE=berth-test/busybox:1` runs it on the offline
// test image (`node __test__/helpers/test-image.mjs` builds it).
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { createDockerSandboxProvider } from '@berth/core/harness';

/** @type {import('@ai-sdk/harness').HarnessV1} */
const noModel = {
  specificationVersion: 'harness-v1',
  harnessId: 'no-model',
  builtinTools: {},
  getBootstrap: async () => ({ harnessId: 'no-model', bootstrapDir: '/tmp/no-model', files: [], commands: [] }),
  doStart: async ({ sessionId, sandboxSession }) => {
    const { exitCode, stdout } = await sandboxSession.run({ command: 'echo "hello from $(uname -n)"' });
    console.log(`exit ${exitCode}: ${stdout.trim()}`);
    /** @type {import('@ai-sdk/harness').HarnessV1ResumeSessionState} */
    const state = { type: 'resume-session', specificationVersion: 'harness-v1', harnessId: 'no-model', data: {} };
    const none = async () => Promise.reject(new Error('this adapter drives no model'));
    return { sessionId, isResume: false, doPromptTurn: none, doContinueTurn: none, doCompact: none, doSuspendTurn: none,
      doDetach: async () => state, doStop: async () => state, doDestroy: async () => {} };
  },
};

const agent = new HarnessAgent({
  harness: noModel,
  sandbox: createDockerSandboxProvider({ image: process.env.IMAGE ?? 'alpine:3', workDir: '/workspace' }),
});
const session = await agent.createSession(); // creates and starts the container, then doStart
await session.destroy(); // removes the container (by id)
