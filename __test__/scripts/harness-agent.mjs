// Run by harness.test.ts as its own OS process. BERTH_AGENT_STEP=create: HarnessAgent.createSession
// through the berth provider, then detach; prints the resume state. BERTH_AGENT_STEP=resume:
// createSession with `resumeFrom` (JSON in BERTH_AGENT_RESUME), reports what the resumed adapter
// found in the sandbox, then destroy(). One JSON line on stdout either way.
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { createDockerSandboxProvider } from '../../harness.mjs';
import { createTestHarness } from '../helpers/test-harness.mjs';

const sessionId = process.env.BERTH_AGENT_SESSION ?? '';
/** @type {import('../helpers/test-harness.mjs').StartInfo | undefined} */
let started;
const agent = new HarnessAgent({
  harness: createTestHarness({ onStart: (info) => (started = info) }),
  sandbox: createDockerSandboxProvider({
    image: 'berth-test/busybox:1',
    workDir: '/workspace',
    labels: JSON.parse(process.env.BERTH_AGENT_LABELS ?? '{}'),
  }),
});

if (process.env.BERTH_AGENT_STEP === 'create') {
  const session = await agent.createSession({ sessionId });
  const resumeFrom = await session.detach();
  console.log(JSON.stringify({ resumeFrom, started, pid: process.pid }));
} else {
  const resumeFrom = JSON.parse(process.env.BERTH_AGENT_RESUME ?? 'null');
  const session = await agent.createSession({ sessionId, resumeFrom });
  await session.destroy();
  console.log(JSON.stringify({ started }));
}
