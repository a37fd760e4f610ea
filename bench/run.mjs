// berth's benchmark: berth against dockerode, the docker CLI and raw requests on the engine
// socket, in one run on one engine, contenders interleaved round by round.
//
//   npm run bench                 full run; results in bench/results/ (JSON, SVG) and on stdout
//   npm run bench -- --quick      a smoke run of a minute or two (counts scaled down, results in
//                                 a temp dir): it proves every suite works, its figures mean nothing
//   options: --socket <path> (default: $BERTH_BENCH_SOCKET, $DOCKER_HOST's unix path, or
//            /var/run/docker.sock), --out <dir>, --only <suite,...> (see SUITES)
//
// Every container carries the label `berth-bench=<run id>`; at the end every container and
// volume with it is listed (leaks, reported and counted as a failure), then removed.
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import * as berth from '../index.mjs';
import { ensureTestImage, TEST_IMAGE } from '../__test__/helpers/test-image.mjs';
import { rawEngine } from './lib/raw-engine.mjs';
import { hasDockerCli } from './lib/docker-cli.mjs';
import { recordBerthRequests, replayer, describe } from './lib/berth-requests.mjs';
import { writeJson } from './lib/report.mjs';
import { printReport } from './lib/summary.mjs';
import { chartSvg } from './lib/chart.mjs';
import { peekSuite, createSuite, execSuite, removeSuite, sessionIds } from './suites/micro.mjs';
import { agentTurnSuite } from './suites/agent-turn.mjs';
import { profileTurns } from './suites/profile.mjs';
import { concurrencySuite, eventLoopSuite, rssSuite } from './suites/load.mjs';
import { runSuite, runTailSuite, harnessSession } from './suites/run.mjs';
import { writeSuite } from './suites/write.mjs';
import { lsSuite } from './suites/ls.mjs';
import { eventLoopRunsSuite, rssRunsSuite, spawnOutputSuite } from './suites/run-load.mjs';
import { evaluateTargets } from './lib/targets.mjs';

const LABEL_KEY = 'berth-bench';
const here = path.dirname(fileURLToPath(import.meta.url));

/** The suites `--only` selects, in the order they run. */
const SUITES = {
  peek: 'peek / inspect: berth vs dockerode vs the docker CLI vs raw requests',
  create: 'create-to-ready',
  exec: 'exec of `true` (berth, dockerode, docker CLI, the same raw requests)',
  remove: 'remove',
  run: 'one command: harness `run` of `true` vs session.exec vs the raw 3-request exec vs docker exec',
  write: 'a 4 KiB harness writeTextFile vs a harness `run` of `true` (same session)',
  'run-tail': 'one command alone: 2,000 harness `run`s of `true` in a row (its p99 over its median)',
  turn: 'agent turn (20 files, 20 runs): harness provider vs the CLI backend',
  turn200: 'agent turn (20 files, 200 runs): harness provider vs the CLI backend',
  profile: "where one agent turn's time goes (engine requests by endpoint)",
  concurrency: 'concurrent create+remove (berth, dockerode): wall time, leaks',
  eventloop: 'event-loop delay during berth peeks vs idle (median of 5 rounds)',
  rss: 'RSS growth per 10,000 peeks (trend over 20,000)',
  'rss-runs': 'RSS growth per 10,000 harness runs (trend over 20,000)',
  'eventloop-runs': 'event-loop delay during 1,000 concurrent harness runs vs idle (median of 5 rounds)',
  'spawn-output': 'peak RSS growth while a command prints 100 MiB through spawn',
  ls: '`berth ls` of 10,000 sessions once listed: the table vs --json (time, peak RSS), fresh processes, no engine',
};

function parseArgs(argv) {
  const get = (flag) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const quick = argv.includes('--quick') || process.env.BERTH_BENCH_QUICK === '1';
  const fromHost = (process.env.DOCKER_HOST ?? '').startsWith('unix://') ? process.env.DOCKER_HOST.slice(7) : undefined;
  return {
    quick,
    socketPath: get('--socket') ?? process.env.BERTH_BENCH_SOCKET ?? fromHost ?? '/var/run/docker.sock',
    out: get('--out') ?? (quick ? path.join(os.tmpdir(), 'berth-bench-quick') : path.join(here, 'results')),
    only: get('--only')?.split(',').map((s) => s.trim()).filter(Boolean),
  };
}

const MiB = 2 ** 20;

/** Repetitions: full run and quick smoke run. */
const PLANS = {
  full: {
    peek: { warmup: 10, rounds: 10, perRound: 20 },
    create: { warmup: 2, rounds: 8, perRound: 2 },
    exec: { warmup: 5, rounds: 10, perRound: 10 },
    remove: { warmup: 1, rounds: 8, perRound: 2 },
    run: { warmup: 5, rounds: 10, perRound: 20 },
    write: { warmup: 5, rounds: 10, perRound: 20 },
    runTail: { warmup: 50, count: 2000 },
    turn: { warmup: 1, rounds: 5, perRound: 1 },
    workload: { files: 20, runs: 20 },
    turn200: { warmup: 0, rounds: 3, perRound: 1 },
    workload200: { files: 20, runs: 200 },
    concurrency: 50,
    eventLoopCalls: 1000,
    eventLoopRounds: 5,
    // RSS: readings every 1,000 calls over 20,000 after a warm-up, the trend per 10,000.
    rssPeeks: { peeks: 20000, warmup: 1000, every: 1000, per: 10000 },
    // All 1,000 at once: over the command channel each run is one process in the container
    // (with BERTH_COMMAND_CHANNEL=0 each would be a runc process: lower inFlight then).
    // Five rounds, each beside an idle baseline; the median round is the figure.
    eventLoopRuns: { runs: 1000, inFlight: 1000, rounds: 5 },
    rssRuns: { runs: 20000, warmup: 2000, inFlight: 10, every: 1000, per: 10000 },
    spawnOutput: { bytes: 100 * MiB },
    ls: { sessions: 10_000, rounds: 5 },
  },
  quick: {
    peek: { warmup: 2, rounds: 2, perRound: 3 },
    create: { warmup: 0, rounds: 1, perRound: 1 },
    exec: { warmup: 1, rounds: 2, perRound: 2 },
    remove: { warmup: 0, rounds: 1, perRound: 1 },
    run: { warmup: 1, rounds: 2, perRound: 5 },
    write: { warmup: 1, rounds: 2, perRound: 5 },
    runTail: { warmup: 5, count: 50 },
    turn: { warmup: 0, rounds: 1, perRound: 1 },
    workload: { files: 3, runs: 3 },
    turn200: { warmup: 0, rounds: 1, perRound: 1 },
    workload200: { files: 3, runs: 20 },
    concurrency: 5,
    eventLoopCalls: 100,
    eventLoopRounds: 3,
    rssPeeks: { peeks: 300, warmup: 20, every: 100, per: 300 },
    eventLoopRuns: { runs: 50, inFlight: 25, rounds: 3 },
    rssRuns: { runs: 200, warmup: 20, inFlight: 10, every: 50, per: 200 },
    spawnOutput: { bytes: 16 * MiB },
    ls: { sessions: 1_000, rounds: 1 },
  },
};

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const list = Object.entries(SUITES).map(([k, v]) => `  ${k.padEnd(15)} ${v}`).join('\n');
  if (args.only?.includes('help')) {
    console.log(`suites (--only a,b,...), in the order they run:\n${list}`);
    return;
  }
  const unknown = (args.only ?? []).filter((s) => !(s in SUITES));
  if (unknown.length || (args.only && args.only.length === 0)) {
    console.error(`--only: unknown suite ${unknown.join(', ') || '(none given)'}; the suites are:\n${list}`);
    process.exitCode = 2;
    return;
  }
  const plan = args.quick ? PLANS.quick : PLANS.full;
  const wants = (s) => !args.only || args.only.includes(s);
  const runId = `b${randomBytes(4).toString('hex')}`;
  const labels = { [LABEL_KEY]: runId };
  const raw = rawEngine(args.socketPath);
  const rawFresh = rawEngine(args.socketPath, { keepAlive: false });
  const dockerode = new Docker({ socketPath: args.socketPath });
  const image = process.env.BERTH_BENCH_IMAGE ?? (await ensureTestImage({ socketPath: args.socketPath }));
  const info = await berth.engineInfo({ socketPath: args.socketPath });
  const cli = await hasDockerCli(args.socketPath);
  const machine = {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cpus: os.cpus().length,
    memoryGB: +(os.totalmem() / 2 ** 30).toFixed(1),
    kernel: os.release(),
    node: process.version,
    engine: `${info.kind} ${info.version} (API ${info.apiVersion})`,
    endpoint: info.endpoint,
    dockerCli: cli,
    loadAverage: os.loadavg(),
  };
  console.log(`berth bench ${args.quick ? '(quick) ' : ''}run ${runId}: ${machine.engine} on ${machine.endpoint}, ${machine.cpus} × ${machine.cpu}, node ${machine.node}`);
  if (args.quick) console.log('QUICK RUN: counts scaled down (e.g. 200 runs instead of 10,000); its figures are a smoke test only, never a measurement');
  if (!cli) console.log('docker CLI not found: the CLI contenders are skipped');

  const ctx = {
    socketPath: args.socketPath,
    image,
    labels,
    labelsFor: (suite) => ({ ...labels, [`${LABEL_KEY}.suite`]: suite }),
    raw,
    rawFresh,
    dockerode,
    cli,
    sessionId: sessionIds(runId),
    listBySuite: async (suite) =>
      raw.ok('GET', `/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify({ label: [`${LABEL_KEY}=${runId}`, `${LABEL_KEY}.suite=${suite}`] }))}`),
  };

  const results = { runId, quick: args.quick, startedAt: new Date().toISOString(), machine, plan, requests: {}, timings: {}, failures: [] };
  const step = async (name, fn) => {
    if (!wants(name)) return;
    const t0 = Date.now();
    process.stdout.write(`… ${name}\n`);
    try {
      await fn();
    } catch (error) {
      results.failures.push({ suite: name, error: String(error?.stack ?? error) });
      console.error(`${name} failed: ${error?.stack ?? error}`);
    }
    process.stdout.write(`  ${name} done in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  };

  try {
    const rec = await recordBerthRequests({ socketPath: args.socketPath, image, labels, sessionId: ctx.sessionId('record') });
    ctx.replay = replayer(raw, rec);
    results.requests = { create: describe(rec.create), peek: describe(rec.peek), exec: describe(rec.exec), remove: describe(rec.remove) };

    await step('peek', async () => (results.timings.peek = await peekSuite(ctx, plan.peek)));
    await step('create', async () => (results.timings.create = await createSuite(ctx, plan.create)));
    await step('exec', async () => (results.timings.exec = await execSuite(ctx, plan.exec)));
    await step('remove', async () => (results.timings.remove = await removeSuite(ctx, plan.remove)));
    await step('run', async () => (results.timings.run = await runSuite(ctx, plan.run)));
    await step('write', async () => (results.timings.write = await writeSuite(ctx, plan.write)));
    await step('run-tail', async () => (results.runTail = await runTailSuite(ctx, plan.runTail)));
    await step('turn', async () => (results.timings.turn = await agentTurnSuite(ctx, plan.turn, plan.workload)));
    await step('turn200', async () => (results.timings.turn200 = await agentTurnSuite(ctx, plan.turn200, plan.workload200)));
    await step('profile', async () => (results.profile = await profileTurns(ctx, plan.workload)));
    await step('concurrency', async () => (results.concurrency = await concurrencySuite(ctx, plan.concurrency)));
    if (['eventloop', 'rss'].some(wants)) {
      const probe = await berth.createSession({ sessionId: ctx.sessionId('probe'), image, labels, socketPath: args.socketPath });
      try {
        await step('eventloop', async () => (results.eventLoop = await eventLoopSuite(ctx, probe.sessionId, plan.eventLoopCalls, { rounds: plan.eventLoopRounds })));
        await step('rss', async () => (results.rss = await rssSuite(ctx, probe.sessionId, plan.rssPeeks)));
      } finally {
        await probe.remove();
      }
    }
    if (['eventloop-runs', 'rss-runs', 'spawn-output'].some(wants)) {
      const session = await harnessSession(ctx, 'load');
      try {
        // Memory first: the 1,000-run bursts grow the heap once, which a trend read after them
        // would have to wait out.
        await step('rss-runs', async () => (results.rssRuns = await rssRunsSuite(session, plan.rssRuns)));
        await step('eventloop-runs', async () => (results.eventLoopRuns = await eventLoopRunsSuite(session, plan.eventLoopRuns)));
        await step('spawn-output', async () => (results.spawnOutput = await spawnOutputSuite(session, plan.spawnOutput)));
      } finally {
        await session.destroy();
      }
    }
    await step('ls', async () => (results.ls = await lsSuite(plan.ls)));
  } finally {
    results.leaks = await sweep(raw, runId);
    raw.close();
    rawFresh.close();
  }
  results.finishedAt = new Date().toISOString();
  results.targets = evaluateTargets(results);
  await report(results, args);
  const failedRuns = [results.eventLoopRuns, results.rssRuns].some((r) => r?.failed);
  const failed = results.failures.length > 0 || results.leaks.containers.length > 0 || failedRuns || (results.concurrency ?? []).some((c) => c.leaked || c.failed);
  process.exitCode = failed ? 1 : 0;
}

/** Lists, then removes, every container and volume labelled with this run. */
async function sweep(raw, runId) {
  const filter = encodeURIComponent(JSON.stringify({ label: [`${LABEL_KEY}=${runId}`] }));
  const containers = await raw.ok('GET', `/containers/json?all=1&filters=${filter}`);
  for (const c of containers) await raw.request('DELETE', `/containers/${c.Id}?force=1&v=1`);
  const { Volumes: volumes = [] } = await raw.ok('GET', `/volumes?filters=${filter}`);
  for (const v of volumes ?? []) await raw.request('DELETE', `/volumes/${encodeURIComponent(v.Name)}`);
  return { containers: containers.map((c) => ({ id: c.Id, name: c.Names?.[0] })), volumes: (volumes ?? []).map((v) => v.Name) };
}

async function report(results, args) {
  printReport(results);
  fs.mkdirSync(args.out, { recursive: true });
  const jsonFile = path.join(args.out, 'bench-results.json');
  writeJson(jsonFile, results);
  const svgFile = path.join(args.out, 'ratios.svg');
  fs.writeFileSync(svgFile, await chartSvg(results));
  console.log(`\nresults: ${jsonFile}, ${svgFile} (check it: node bench/check-chart.mjs ${svgFile})`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
