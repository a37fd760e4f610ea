// berth's benchmark: berth against dockerode, the docker CLI and raw requests on the engine
// socket, in one run on one engine, contenders interleaved round by round.
//
//   npm run bench                 full run; results in bench/results/ (JSON, SVG) and on stdout
//   npm run bench -- --quick      a smoke run of about a minute (results in a temp dir)
//   options: --socket <path> (default: $BERTH_BENCH_SOCKET, $DOCKER_HOST's unix path, or
//            /var/run/docker.sock), --out <dir>, --only <suite,...>
//   suites: peek, create, exec, remove, turn, profile, concurrency, eventloop, rss
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
import { ratioChartSvg, timingTable, plainTable, targetsTable, writeJson } from './lib/report.mjs';
import { peekSuite, createSuite, execSuite, removeSuite, sessionIds } from './suites/micro.mjs';
import { agentTurnSuite } from './suites/agent-turn.mjs';
import { profileTurns } from './suites/profile.mjs';
import { concurrencySuite, eventLoopSuite, rssSuite } from './suites/load.mjs';
import { evaluateTargets } from './lib/targets.mjs';

const LABEL_KEY = 'berth-bench';
const here = path.dirname(fileURLToPath(import.meta.url));

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
    only: get('--only')?.split(','),
  };
}

/** Repetitions: full run and quick smoke run. */
const PLANS = {
  full: {
    peek: { warmup: 10, rounds: 10, perRound: 20 },
    create: { warmup: 2, rounds: 8, perRound: 2 },
    exec: { warmup: 5, rounds: 10, perRound: 10 },
    remove: { warmup: 1, rounds: 8, perRound: 2 },
    turn: { warmup: 1, rounds: 5, perRound: 1 },
    workload: { files: 20, runs: 20 },
    concurrency: 50,
    eventLoopCalls: 1000,
    rssPeeks: 10000,
  },
  quick: {
    peek: { warmup: 2, rounds: 2, perRound: 3 },
    create: { warmup: 0, rounds: 1, perRound: 1 },
    exec: { warmup: 1, rounds: 2, perRound: 2 },
    remove: { warmup: 0, rounds: 1, perRound: 1 },
    turn: { warmup: 0, rounds: 1, perRound: 1 },
    workload: { files: 3, runs: 3 },
    concurrency: 5,
    eventLoopCalls: 100,
    rssPeeks: 300,
  },
};

async function main() {
  const args = parseArgs(process.argv.slice(2));
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
    await step('turn', async () => (results.timings.turn = await agentTurnSuite(ctx, plan.turn, plan.workload)));
    await step('profile', async () => (results.profile = await profileTurns(ctx, plan.workload)));
    await step('concurrency', async () => (results.concurrency = await concurrencySuite(ctx, plan.concurrency)));
    const probe = await berth.createSession({ sessionId: ctx.sessionId('probe'), image, labels, socketPath: args.socketPath });
    try {
      await step('eventloop', async () => (results.eventLoop = await eventLoopSuite(ctx, probe.sessionId, plan.eventLoopCalls)));
      await step('rss', async () => (results.rss = await rssSuite(ctx, probe.sessionId, plan.rssPeeks)));
    } finally {
      await probe.remove();
    }
  } finally {
    results.leaks = await sweep(raw, runId);
    raw.close();
    rawFresh.close();
  }
  results.finishedAt = new Date().toISOString();
  results.targets = evaluateTargets(results);
  await report(results, args);
  const failed = results.failures.length > 0 || results.leaks.containers.length > 0 || (results.concurrency ?? []).some((c) => c.leaked || c.failed);
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
  const t = results.timings;
  const sections = [
    ['peek / inspect', t.peek],
    ['create-to-ready', t.create],
    ['exec `true`', t.exec],
    ['remove', t.remove],
    [`agent turn (${results.plan.workload.files} files, ${results.plan.workload.runs} runs)`, t.turn],
  ];
  for (const [title, r] of sections) if (r) console.log(`\n${timingTable(title, r)}`);
  if (results.profile) {
    for (const p of results.profile) {
      console.log(`\n${plainTable(`where a turn's time goes: ${p.name} (${p.wallMs.toFixed(0)} ms wall, ${p.requests} engine requests)`, p.byEndpoint.map((e) => [e.endpoint, `${e.calls} × ${e.meanMs.toFixed(1)} ms = ${e.totalMs.toFixed(0)} ms`]))}`);
    }
  }
  if (results.concurrency) {
    console.log(`\n${plainTable(`${results.plan.concurrency} concurrent create+remove`, results.concurrency.map((c) => [c.name, `${(c.wallMs / 1000).toFixed(2)} s wall, ${c.failed} failed, ${c.leaked} leaked`]))}`);
  }
  if (results.eventLoop) {
    const e = results.eventLoop;
    console.log(`\n${plainTable('event-loop delay', [
      [`during ${e.calls} berth peeks, ${e.inFlight} in flight`, `p50 ${e.p50Ms.toFixed(2)} ms, p99 ${e.p99Ms.toFixed(2)} ms, max ${e.maxMs.toFixed(2)} ms`],
      ['idle for as long (the machine\'s own noise)', `p50 ${e.idle.p50Ms.toFixed(2)} ms, p99 ${e.idle.p99Ms.toFixed(2)} ms, max ${e.idle.maxMs.toFixed(2)} ms`],
    ])}`);
  }
  if (results.rss) {
    const r = results.rss;
    console.log(`\n${plainTable('resident memory', [[`${r.peeks} peeks${r.gcExposed ? ' (GC before each reading)' : ''}`, `${r.rssBeforeMB.toFixed(1)} → ${r.rssAfterMB.toFixed(1)} MB (${r.growthMB >= 0 ? '+' : ''}${r.growthMB.toFixed(2)} MB)`]])}`);
  }
  console.log(`\nrequests berth makes (recorded this run): create ${results.requests.create?.length ?? 0}, peek ${results.requests.peek?.length ?? 0}, exec ${results.requests.exec?.length ?? 0}, remove ${results.requests.remove?.length ?? 0}`);
  console.log(`\n${targetsTable(results.targets)}`);
  const leaks = results.leaks;
  console.log(`\nleaks: ${leaks.containers.length} containers, ${leaks.volumes.length} volumes${leaks.containers.length + leaks.volumes.length ? ' (removed now)' : ''}`);
  for (const f of results.failures) console.log(`FAILED ${f.suite}: ${f.error.split('\n')[0]}`);

  fs.mkdirSync(args.out, { recursive: true });
  const jsonFile = path.join(args.out, 'bench-results.json');
  writeJson(jsonFile, results);
  const rows = chartRows(results);
  if (rows.length) {
    const m = results.machine;
    const svg = await ratioChartSvg(rows, `${m.engine}, ${m.cpus} × ${m.cpu}, node ${m.node}, ${results.finishedAt.slice(0, 10)}`);
    fs.writeFileSync(path.join(args.out, 'ratios.svg'), svg);
  }
  console.log(`\nresults: ${jsonFile}${rows.length ? `, ${path.join(args.out, 'ratios.svg')}` : ''}`);
}

function chartRows(results) {
  const ops = [
    ['peek', results.timings.peek],
    ['create-to-ready', results.timings.create],
    ['exec true', results.timings.exec],
    ['remove', results.timings.remove],
    ['agent turn', results.timings.turn],
  ];
  const rows = [];
  for (const [op, r] of ops) {
    const b = r?.find((x) => x.name.startsWith('berth'));
    if (!b) continue;
    for (const x of r) {
      const kind = x.name.startsWith('berth') ? 'berth' : x.name.startsWith('raw') ? 'raw floor' : 'other client';
      rows.push({ op, contender: x.name, ratio: +(x.median / b.median).toFixed(3), kind });
    }
  }
  return rows;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
