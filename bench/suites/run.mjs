// One command at a time on one session, contender by contender, interleaved round by round:
// the harness provider's `run` of `true` (what an agent's tool call costs), berth's
// `session.exec(['true'])` over the engine exec (`BERTH_COMMAND_CHANNEL=0`), the engine's exec as three raw requests (the floor of any engine
// exec: create, start attached, inspect) and `docker exec`. All four run in the same container.
import { dockerOk } from '../lib/docker-cli.mjs';
import { interleave, summarize } from '../lib/stats.mjs';
import { RUN_CONTENDERS } from '../lib/names.mjs';
import { agentBackends } from './agent-turn.mjs';
import { overEngine } from '../lib/engine-path.mjs';

/** The harness session the run suites share: made through the provider, as an agent would. */
export async function harnessSession(ctx, what) {
  const { berth } = agentBackends(ctx);
  return berth.createSession({ sessionId: ctx.sessionId(what) });
}

/** A harness `run` that must exit 0 (anything else is a failure of the benchmark). */
export async function runTrue(session) {
  const r = await session.run({ command: 'true' });
  if (r.exitCode !== 0) throw new Error(`run true: exit ${r.exitCode}: ${r.stderr}`);
}

export async function runSuite(ctx, plan) {
  const session = await harnessSession(ctx, 'run');
  try {
    const inner = session.berthSession;
    return await interleave({
      ...plan,
      contenders: [
        { name: RUN_CONTENDERS.harness, run: () => runTrue(session) },
        {
          name: RUN_CONTENDERS.exec,
          run: async () => {
            const r = await overEngine(() => inner.exec(['true']));
            if (r.exitCode !== 0) throw new Error(`berth exec exit ${r.exitCode}`);
          },
        },
        { name: RUN_CONTENDERS.raw, floor: true, run: () => ctx.raw.execSequence(inner.id, ['true']) },
        ...(ctx.cli ? [{ name: RUN_CONTENDERS.cli, run: () => dockerOk(ctx.socketPath, ['exec', inner.id, 'true']) }] : []),
      ],
    });
  } finally {
    await session.destroy();
  }
}

/**
 * The tail of one command on its own: `count` harness `run`s of `true` one after another on
 * one session (after `warmup` untimed), nothing else running in this process. The p99 target
 * is a property of `run` alone, so it is read here, from many samples, and not from the
 * interleaved comparison above, where each batch of 20 starts right after another
 * contender's work (a `docker exec` process, an engine exec) that the engine is still
 * finishing. Resolves the summary (ms) of the samples.
 */
export async function runTailSuite(ctx, { warmup, count }) {
  const session = await harnessSession(ctx, 'run-tail');
  try {
    for (let i = 0; i < warmup; i++) await runTrue(session);
    const samples = [];
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      await runTrue(session);
      samples.push(performance.now() - t0);
    }
    return { warmup, ...summarize(samples) };
  } finally {
    await session.destroy();
  }
}
