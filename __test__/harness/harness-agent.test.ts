// The real HarnessAgent (@ai-sdk/harness/agent) over berth's provider on the real engine, with a
// fake HarnessV1 adapter (no model), through every lifecycle path the framework drives. After
// each path the engine holds zero containers and zero record volumes of it, counted by a label
// unique to the path (a documented retention is shortened through the provider option and
// waited out).
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { HarnessV1 } from '@ai-sdk/harness';
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { afterAll, describe, expect } from 'vitest';
import { createDockerSandboxProvider, DEFAULT_REMOVE_AFTER_STOP_MS } from '../../harness.mjs';
import { pruneTemplates } from '../../index.mjs';
import { engineAvailable } from '../helpers/engine-available.js';
import { labelFilter, listContainers } from '../helpers/engine-http.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { expectNoLeaks } from '../helpers/leak-check.mjs';
import { lastJsonLine, runNode } from '../helpers/node-process.js';
import { listVolumes } from '../helpers/records.mjs';
import { testLabels, testSessionId } from '../helpers/run-label.mjs';
import { createTestHarness, type StartInfo } from '../helpers/test-harness.mjs';
import { testSocketPath } from '../helpers/test-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';

const AGENT_SCRIPT = fileURLToPath(new URL('../scripts/harness-agent.mjs', import.meta.url));
const PATH_LABEL = 'berth.test-path';
/** The retention a failed-start test passes through the provider option, in milliseconds. */
const SHORT_RETENTION_MS = 1_500;

/** A label unique to one lifecycle path, beside the run label. */
function pathLabels(): Record<string, string> {
  return { ...testLabels(), [PATH_LABEL]: randomBytes(6).toString('hex') };
}

/** Containers (any state) and record volumes carrying this path's label. */
async function leftovers(labels: Record<string, string>): Promise<{ containers: number; volumes: number }> {
  const socketPath = testSocketPath();
  const path = { [PATH_LABEL]: labels[PATH_LABEL]! };
  const containers = await listContainers(labelFilter(path), { socketPath });
  const volumes = await listVolumes({ ...path, 'dev.berth.record': null }, { socketPath });
  return { containers: containers.length, volumes: volumes.length };
}

/** Polls until nothing of the path is left, for at most `withinMs` (a bound, not a timing assertion). */
async function expectNothingLeft(labels: Record<string, string>, withinMs = 0): Promise<void> {
  const until = Date.now() + withinMs;
  let left = await leftovers(labels);
  while ((left.containers > 0 || left.volumes > 0) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 250));
    left = await leftovers(labels);
  }
  expect(left).toEqual({ containers: 0, volumes: 0 });
}

/** An agent over a berth provider; `provider` adds provider options, `agent` HarnessAgent options. */
function agentWith(
  labels: Record<string, string>,
  harness: HarnessV1 = createTestHarness(),
  { provider = {}, agent = {} }: { provider?: object; agent?: object } = {},
) {
  return new HarnessAgent({
    harness,
    sandbox: createDockerSandboxProvider({ image: TEST_IMAGE, socketPath: testSocketPath(), workDir: '/workspace', labels, ...provider }),
    ...agent,
  } as ConstructorParameters<typeof HarnessAgent>[0]);
}

/** The fake adapter whose doStart rejects. */
function failingHarness(): HarnessV1 {
  const base = createTestHarness();
  return {
    ...base,
    doStart: async () => {
      throw new Error('doStart failed on purpose');
    },
  };
}

describe.runIf(await engineAvailable())('HarnessAgent over berth: every lifecycle path leaves nothing', () => {
  afterAll(() => expectNoLeaks());

  test('the provider default retention is finite (10 minutes)', () => {
    expect(DEFAULT_REMOVE_AFTER_STOP_MS).toBe(600_000);
  });

  test('create -> destroy', async () => {
    const labels = pathLabels();
    const agent = agentWith(labels);
    const session = await agent.createSession({ sessionId: testSessionId('a') });
    expect((await leftovers(labels)).containers).toBe(1);
    await session.destroy();
    await expectNothingLeft(labels);
  });

  test('create -> detach -> resume in the same process -> destroy', async () => {
    const labels = pathLabels();
    const agent = agentWith(labels);
    const sessionId = testSessionId('d');
    const first = await agent.createSession({ sessionId });
    const resumeFrom = await first.detach();
    const second = await agent.createSession({ sessionId, resumeFrom });
    await second.destroy();
    await expectNothingLeft(labels);
  });

  test('create -> detach in one OS process, resume -> destroy in another', async () => {
    const labels = pathLabels();
    const sessionId = testSessionId('x');
    const env = { BERTH_AGENT_SESSION: sessionId, BERTH_AGENT_LABELS: JSON.stringify(labels) };
    const first = await runNode([AGENT_SCRIPT], { ...env, BERTH_AGENT_STEP: 'create' }, 120_000);
    expect(first.code, first.stderr).toBe(0);
    const { resumeFrom } = lastJsonLine(first);
    const second = await runNode([AGENT_SCRIPT], { ...env, BERTH_AGENT_STEP: 'resume', BERTH_AGENT_RESUME: JSON.stringify(resumeFrom) }, 120_000);
    expect(second.code, second.stderr).toBe(0);
    expect(lastJsonLine(second).started.isResume).toBe(true);
    await expectNothingLeft(labels);
  });

  test('a non-root sandbox (user 1000:1000): bootstrap, detach -> resume, its files, destroy', async () => {
    const labels = pathLabels();
    let seen: StartInfo | undefined;
    // The bootstrap directory does not exist yet: its marker reads as absent (not denied), and
    // the user creates it under /tmp; the work dir the image lacks is the user's.
    const harness = createTestHarness({ bootstrapDir: '/tmp/berth-bootstrap/harness', onStart: (info) => (seen = info) });
    const agent = agentWith(labels, harness, { provider: { user: '1000:1000' } });
    const sessionId = testSessionId('u');
    const first = await agent.createSession({ sessionId });
    const resumeFrom = await first.detach();
    const second = await agent.createSession({ sessionId, resumeFrom });
    expect(seen?.seen).toMatch(/^written by \d+/);
    expect(seen?.bridge).toBe('bridge ready\n');
    await second.destroy();
    await expectNothingLeft(labels);
  });

  test('create -> stop -> resume -> use -> destroy', async () => {
    const labels = pathLabels();
    let seen: string | null | undefined;
    const agent = agentWith(labels, createTestHarness({ onStart: (info) => (seen = info.seen) }));
    const sessionId = testSessionId('s');
    const first = await agent.createSession({ sessionId });
    const resumeFrom = await first.stop();
    const [stopped] = await listContainers(labelFilter({ [PATH_LABEL]: labels[PATH_LABEL]! }), { socketPath: testSocketPath() });
    expect(stopped?.State).not.toBe('running');
    const second = await agent.createSession({ sessionId, resumeFrom: resumeFrom as never });
    expect(seen).toMatch(/^written by \d+/);
    await second.destroy();
    await expectNothingLeft(labels);
  });

  for (const named of [true, false]) {
    test(`doStart rejects (${named ? 'named' : 'unnamed'} session): the stopped container expires after removeAfterStopMs`, async () => {
      const labels = pathLabels();
      const agent = agentWith(labels, failingHarness(), { provider: { removeAfterStopMs: SHORT_RETENTION_MS } });
      await expect(agent.createSession(named ? { sessionId: testSessionId('f') } : {})).rejects.toThrow('doStart failed on purpose');
      // HarnessAgent cleaned up with stop() only: the container is still there, stopped.
      expect((await leftovers(labels)).containers).toBe(1);
      await expectNothingLeft(labels, SHORT_RETENTION_MS + 20_000);
    });
  }

  test('onBootstrap with bootstrapHash (identity template) for two sessions', async () => {
    const labels = pathLabels();
    const bootstrapped: string[] = [];
    const agent = agentWith(labels, createTestHarness(), {
      agent: {
        sandboxConfig: {
          bootstrapHash: `h-${labels[PATH_LABEL]}`,
          onBootstrap: async ({ session }: { session: { writeTextFile: (o: { path: string; content: string }) => Promise<void> } }) => {
            bootstrapped.push('run');
            await session.writeTextFile({ path: '/opt/berth-test-harness/extra.txt', content: 'extra\n' });
          },
        },
      },
    });
    const a = await agent.createSession({ sessionId: testSessionId('b') });
    const b = await agent.createSession({ sessionId: testSessionId('b') });
    expect(bootstrapped).toEqual(['run']);
    await Promise.all([a.destroy(), b.destroy()]);
    await expectNothingLeft(labels);
    // The template image carries the path's labels: prune exactly it.
    const pruned = await pruneTemplates({ socketPath: testSocketPath(), labels });
    expect(pruned.removed).toHaveLength(1);
  });

  test('concurrent destroy() and stop()', async () => {
    const labels = pathLabels();
    const agent = agentWith(labels);
    const session = await agent.createSession({ sessionId: testSessionId('c') });
    const results = await Promise.allSettled([session.destroy(), session.stop()]);
    expect(results[0]!.status).toBe('fulfilled');
    await expectNothingLeft(labels);
  });
});
