// The agent-turn workload on one session: create with 3 setup commands, write N files of
// 4 KiB, read them back (checked), M `run`s (20 files and 20 or 200 runs in the full run),
// destroy. berth through its harness provider
// (`@berth/core/harness`) against a backend driving the `docker` CLI as the old TypeScript
// backend does.
import { randomBytes } from 'node:crypto';
import { createDockerSandboxProvider } from '../../harness.mjs';
import { cliBackend } from '../lib/cli-backend.mjs';
import { interleave } from '../lib/stats.mjs';
import { TURN_CONTENDERS } from '../lib/names.mjs';

export const WORK_DIR = '/workspace';
export const SETUP_COMMANDS = ['mkdir -p src', 'echo ready > .setup', 'test -f .setup'];
export const FILE_BYTES = 4096;

/** One turn on a provider-shaped backend (`createSession` → session with the harness methods). */
export async function agentTurn(provider, sessionId, { files, runs }) {
  const session = await provider.createSession({ sessionId });
  try {
    const contents = [];
    for (let i = 0; i < files; i++) {
      // 4 KiB of printable text, different per file
      const content = randomBytes(FILE_BYTES / 2).toString('hex');
      contents.push(content);
      await session.writeTextFile({ path: `src/file-${i}.txt`, content });
    }
    for (let i = 0; i < files; i++) {
      const back = await session.readTextFile({ path: `src/file-${i}.txt` });
      if (back !== contents[i]) throw new Error(`file ${i} read back differs`);
    }
    for (let i = 0; i < runs; i++) {
      const r = await session.run({ command: `wc -c src/file-${i % files}.txt` });
      if (r.exitCode !== 0 || !r.stdout.includes(String(FILE_BYTES))) {
        throw new Error(`run ${i}: exit ${r.exitCode} ${r.stdout} ${r.stderr}`);
      }
    }
  } finally {
    await session.destroy();
  }
}

/** The berth harness provider and the CLI backend with the same spec. */
export function agentBackends(ctx) {
  const spec = { image: ctx.image, workDir: WORK_DIR, labels: ctx.labels, setupCommands: SETUP_COMMANDS };
  return {
    berth: createDockerSandboxProvider({ ...spec, socketPath: ctx.socketPath }),
    cli: cliBackend({ ...spec, socketPath: ctx.socketPath }),
  };
}

export async function agentTurnSuite(ctx, plan, workload) {
  const { berth, cli } = agentBackends(ctx);
  return interleave({
    ...plan,
    contenders: [
      { name: TURN_CONTENDERS.berth, run: () => agentTurn(berth, ctx.sessionId('turn'), workload) },
      ...(ctx.cli ? [{ name: TURN_CONTENDERS.cli, floor: true, run: () => agentTurn(cli, ctx.sessionId('turn'), workload) }] : []),
    ],
  });
}
