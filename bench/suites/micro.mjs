// Single operations, contender by contender, interleaved round by round: peek/inspect,
// create-to-ready, exec of `true`, remove.
import { randomBytes } from 'node:crypto';
import * as berth from '../../index.mjs';
import { interleave } from '../lib/stats.mjs';
import { dockerOk } from '../lib/docker-cli.mjs';
import { overEngine } from '../lib/engine-path.mjs';

const SLEEP_ENTRYPOINT = ['sleep', '2147483647'];

/** A dockerode exec of `argv`, attached, read to the end, then its exit code inspected. */
async function dockerodeExec(container, argv) {
  const exec = await container.exec({ Cmd: argv, AttachStdout: true, AttachStderr: true, Tty: false });
  const stream = await exec.start({ hijack: true, stdin: false });
  await new Promise((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.on('error', reject);
    stream.resume();
  });
  const info = await exec.inspect();
  if (info.ExitCode !== 0) throw new Error(`dockerode exec exit ${info.ExitCode}`);
}

/** A minimal container as dockerode and `docker run` make it (same entrypoint, init, labels). */
function plainBody(ctx) {
  return { Image: ctx.image, Entrypoint: SLEEP_ENTRYPOINT, Labels: ctx.labels, HostConfig: { Init: true } };
}

export async function peekSuite(ctx, plan) {
  const session = await berth.createSession({ sessionId: ctx.sessionId('peek'), image: ctx.image, labels: ctx.labels, socketPath: ctx.socketPath });
  try {
    const c = ctx.dockerode.getContainer(session.name);
    const path = `/containers/${session.name}/json`;
    return await interleave({
      ...plan,
      contenders: [
        { name: 'berth', run: () => berth.peek(session.sessionId, { socketPath: ctx.socketPath }) },
        { name: 'dockerode', run: () => c.inspect() },
        ...(ctx.cli ? [{ name: 'docker CLI', run: () => dockerOk(ctx.socketPath, ['container', 'inspect', session.name]) }] : []),
        { name: 'raw (berth\'s requests)', floor: true, run: () => ctx.replay.peek(session) },
        { name: 'raw GET (keep-alive)', run: () => ctx.raw.ok('GET', path) },
        { name: 'raw GET (new connection)', run: () => ctx.rawFresh.ok('GET', path) },
      ],
    });
  } finally {
    await session.remove();
  }
}

export async function createSuite(ctx, plan) {
  const ids = [];
  const removeRaw = (id) => ctx.raw.request('DELETE', `/containers/${id}?force=1&v=1`);
  return interleave({
    ...plan,
    contenders: [
      {
        name: 'berth',
        run: () => berth.createSession({ sessionId: ctx.sessionId('create'), image: ctx.image, labels: ctx.labels, socketPath: ctx.socketPath }),
      },
      {
        name: 'dockerode',
        run: async () => {
          const c = await ctx.dockerode.createContainer({ name: `bench-dr-${ctx.sessionId('create')}`, ...plainBody(ctx) });
          ids.push(c.id);
          await c.start();
        },
      },
      ...(ctx.cli
        ? [{
            name: 'docker CLI',
            run: async () => {
              const labelArgs = Object.entries(ctx.labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]);
              const id = await dockerOk(ctx.socketPath, [
                'run', '-d', '--init', '--name', `bench-cli-${ctx.sessionId('create')}`, ...labelArgs,
                '--entrypoint', SLEEP_ENTRYPOINT[0], ctx.image, SLEEP_ENTRYPOINT[1],
              ]);
              ids.push(id.trim());
            },
          }]
        : []),
      {
        name: 'raw (berth\'s requests)',
        floor: true,
        run: () => ctx.replay.create(ctx.sessionId('create')),
      },
    ].map((c) => ({
      ...c,
      // Remove after every repetition (untimed), so the engine's container count stays flat.
      cleanup: async (_ctx, made) => {
        if (made && typeof made.remove === 'function') await made.remove();
        while (ids.length) await removeRaw(ids.pop());
        if (made && made.subst) await ctx.replay.remove(made);
      },
    })),
  });
}

export async function execSuite(ctx, plan) {
  const session = await berth.createSession({ sessionId: ctx.sessionId('exec'), image: ctx.image, labels: ctx.labels, socketPath: ctx.socketPath });
  try {
    const c = ctx.dockerode.getContainer(session.id);
    return await interleave({
      ...plan,
      contenders: [
        {
          name: 'berth',
          run: async () => {
            // berth's engine exec (the command channel is measured by the `run` suite).
            const r = await overEngine(() => session.exec(['true']));
            if (r.exitCode !== 0) throw new Error(`berth exec exit ${r.exitCode}`);
          },
        },
        { name: 'dockerode', run: () => dockerodeExec(c, ['true']) },
        ...(ctx.cli ? [{ name: 'docker CLI', run: () => dockerOk(ctx.socketPath, ['exec', session.id, 'true']) }] : []),
        { name: 'raw (berth\'s requests)', floor: true, run: () => ctx.replay.exec(session.id) },
      ],
    });
  } finally {
    await session.remove();
  }
}

export async function removeSuite(ctx, plan) {
  const plainRaw = async () => {
    const name = `bench-rm-${ctx.sessionId('remove')}`;
    const { Id } = await ctx.raw.ok('POST', `/containers/create?name=${name}`, plainBody(ctx));
    await ctx.raw.ok('POST', `/containers/${Id}/start`);
    return Id;
  };
  return interleave({
    ...plan,
    contenders: [
      {
        name: 'berth',
        prepare: () => berth.createSession({ sessionId: ctx.sessionId('remove'), image: ctx.image, labels: ctx.labels, socketPath: ctx.socketPath }),
        run: async (s) => {
          const r = await s.remove();
          if (!r.removed) throw new Error(`berth remove: ${r.reason}`);
        },
      },
      { name: 'dockerode', prepare: plainRaw, run: (id) => ctx.dockerode.getContainer(id).remove({ force: true, v: true }) },
      ...(ctx.cli ? [{ name: 'docker CLI', prepare: plainRaw, run: (id) => dockerOk(ctx.socketPath, ['rm', '-f', '-v', id]) }] : []),
      { name: 'raw DELETE', prepare: plainRaw, run: (id) => ctx.raw.ok('DELETE', `/containers/${id}?force=1&v=1`) },
      {
        name: 'raw (berth\'s requests)',
        floor: true,
        prepare: () => ctx.replay.create(ctx.sessionId('remove')),
        run: (made) => ctx.replay.remove(made),
      },
    ],
  });
}

/** A session id unique to this run: `<run>-<what>-<n>`. */
export function sessionIds(runId) {
  let n = 0;
  return (what) => `${runId}-${what}-${++n}-${randomBytes(2).toString('hex')}`;
}
