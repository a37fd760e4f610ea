// Templates keyed by what makes them differ, and pruned by age (issue 22, part 4): two
// providers under different labels share one template image; a template records its last use
// (a labelled volume, no image rewrite); pruneTemplates({ unusedForMs }) and
// `berth templates prune --unused-for` remove stale ones by image id, never one a container uses.
import { afterAll, describe, expect } from 'vitest';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { builderSessionId, createDockerSandboxProvider, templateKey } from '../../harness.mjs';
import { InvalidArgumentError, listTemplates, pruneTemplates, type TemplateInfo } from '../../index.mjs';
import { runBerth } from '../helpers/berth-cli.js';
import { engineRequest, labelFilter, listContainers } from '../helpers/engine-http.mjs';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { runId, testLabels, testSessionId } from '../helpers/run-label.mjs';
import { testSocketPath } from '../helpers/test-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

const DAY_MS = 86_400_000;
const USED_KEY = 'dev.berth.template.key';
const USED_AT = 'dev.berth.template.used-at';

/** The use records (volumes) of template `key`, as `{ name, at }`. */
async function useRecords(key: string): Promise<{ name: string; at: number }[]> {
  const filters = encodeURIComponent(JSON.stringify({ label: [`${USED_KEY}=${key}`] }));
  const res = await engineRequest('GET', `/volumes?filters=${filters}`, { socketPath: testSocketPath() });
  expect(res.status).toBe(200);
  return ((res.body?.Volumes ?? []) as { Name: string; Labels: Record<string, string> | null }[])
    .filter((v) => v.Labels?.[USED_KEY] === key)
    .map((v) => ({ name: v.Name, at: Number(v.Labels![USED_AT]) }));
}

/** This run's template whose key is `key`, or undefined. */
async function templateOf(key: string): Promise<TemplateInfo | undefined> {
  return (await listTemplates({ socketPath: testSocketPath() })).find((t) => t.key === key);
}

/** The image id `ref` resolves to. */
async function imageIdOf(ref: string): Promise<string> {
  const res = await engineRequest('GET', `/images/${encodeURIComponent(ref)}/json`, { socketPath: testSocketPath() });
  expect(res.status).toBe(200);
  return res.body.Id as string;
}

describe('template keys (pure)', () => {
  test('the key ignores labels, env, prefix and limits; the image id, user, setup and bootstrap identity change it', () => {
    const spec = { image: 'img:1', labels: { app: 'tplA' }, env: { A: '1' }, user: '1000' };
    const key = templateKey('boot-1', spec, 'sha256:aaa');
    expect(templateKey('boot-1', { ...spec, labels: { app: 'tplB', run: 'x' } }, 'sha256:aaa')).toBe(key);
    expect(templateKey('boot-1', { ...spec, env: { A: '2' }, prefix: 'other', memoryBytes: 1 << 30, ports: [80] }, 'sha256:aaa')).toBe(key);
    // The same tag resolving to another image, another user, setup or identity: another template.
    for (const other of [
      templateKey('boot-1', spec, 'sha256:bbb'),
      templateKey('boot-1', { ...spec, user: 'root' }, 'sha256:aaa'),
      templateKey('boot-1', { ...spec, setupCommands: ['true'] }, 'sha256:aaa'),
      templateKey('boot-2', spec, 'sha256:aaa'),
    ]) {
      expect(other).not.toBe(key);
    }
    expect(key).toMatch(/^[0-9a-f]{40}$/);
  });
});

engineSuite('templates on the engine', () => {
  afterAll(async () => {
    // Whatever a failed test left of this run's templates.
    await pruneTemplates({ labels: testLabels(), socketPath: testSocketPath() });
  });

  test('a builder left incomplete by a dead creator is removed, and the next create builds the template (settles within a bound)', async () => {
    const identity = `tpl-${runId()}-stuck`;
    const socketPath = testSocketPath();
    // A label of this case alone: the reap that removes the stuck builder is narrowed to it.
    const labels = { ...testLabels(), 'berth.test-case': randomBytes(6).toString('hex') };
    const key = templateKey(identity, { image: TEST_IMAGE }, await imageIdOf(TEST_IMAGE));
    const builderId = builderSessionId(key);
    const child = spawn(process.execPath, [fileURLToPath(new URL('../scripts/stuck-builder.mjs', import.meta.url))], {
      env: { ...process.env, BERTH_STUCK_SESSION: builderId, BERTH_STUCK_LABELS: JSON.stringify(labels), BERTH_STUCK_SOCKET: socketPath },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      // Killed while its builder runs setup: the container exists, never ready, its creator dead.
      const until = Date.now() + 30_000;
      while ((await listContainers(labelFilter({ 'dev.berth.session-id': builderId }), { socketPath })).length === 0) {
        expect(Date.now() < until).toBe(true);
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const builds: string[] = [];
    const provider = createDockerSandboxProvider({ image: TEST_IMAGE, labels, socketPath });
    const started = Date.now();
    const s = await provider.createSession({
      sessionId: testSessionId('stuck'),
      identity,
      abortSignal: AbortSignal.timeout(60_000),
      onFirstCreate: async (b: { writeTextFile: (o: { path: string; content: string }) => PromiseLike<void> }) => {
        builds.push('build');
        await b.writeTextFile({ path: '/opt/from-template', content: 'yes' });
      },
    });
    try {
      console.log(`stuck builder: the create settled in ${Date.now() - started} ms`);
      expect(builds).toEqual(['build']);
      expect(await s.readTextFile({ path: '/opt/from-template' })).toBe('yes');
      expect(await listContainers(labelFilter({ 'dev.berth.session-id': builderId }), { socketPath })).toHaveLength(0);
    } finally {
      await s.destroy();
    }
  });

  test('two providers under different labels build one template; it is pruned by age, never while a container uses it', async () => {
    const identity = `tpl-${runId()}-labels`;
    const builds: string[] = [];
    const providerWith = (app: string) =>
      createDockerSandboxProvider({ image: TEST_IMAGE, labels: { ...testLabels(), app }, socketPath: testSocketPath() });
    const onFirstCreate = async (s: { writeTextFile: (o: { path: string; content: string }) => PromiseLike<void> }) => {
      builds.push('build');
      await s.writeTextFile({ path: '/opt/from-template', content: 'yes' });
    };
    const a = await providerWith('tplA').createSession({ sessionId: testSessionId('tplA'), identity, onFirstCreate });
    const b = await providerWith('tplB').createSession({ sessionId: testSessionId('tplB'), identity, onFirstCreate });
    let removedAll = false;
    try {
      expect(builds).toEqual(['build']);
      expect(await b.readTextFile({ path: '/opt/from-template' })).toBe('yes');
      // One image for both label sets (Podman's repo tags carry a registry prefix: keys are compared).
      const key = templateKey(identity, { image: TEST_IMAGE }, await imageIdOf(TEST_IMAGE));
      const mine = (await listTemplates({ labels: testLabels(), socketPath: testSocketPath() })).filter((t) => t.key === key);
      expect(mine).toHaveLength(1);
      expect(mine[0]!.labels.app).toBe('tplA');
      // Its last use is recorded (the commit, then at most once a minute per create).
      const records = await useRecords(key);
      expect(records.length).toBeGreaterThanOrEqual(1);
      expect(mine[0]!.lastUsedMs).toBe(Math.max(...records.map((r) => r.at)));

      // Used just now: a week's prune leaves it alone; an unconditional one keeps it (in use).
      const recent = await pruneTemplates({ labels: testLabels(), unusedForMs: 7 * DAY_MS, socketPath: testSocketPath() });
      expect(recent).toMatchObject({ removed: [], kept: [] });
      expect(recent.recent).toContain(key);
      const inUse = await pruneTemplates({ labels: testLabels(), unusedForMs: 0, socketPath: testSocketPath() });
      expect(inUse.kept).toContain(key);
      expect(inUse.removed).not.toContain(key);
      expect(await templateOf(key)).toBeDefined();

      await Promise.all([a.destroy(), b.destroy()]);
      removedAll = true;

      // Its last use eight days ago, written through the engine: `--unused-for 30d` keeps it,
      // `--unused-for 7d` removes it, with its use records.
      const past = Date.now() - 8 * DAY_MS;
      for (const r of records) await engineRequest('DELETE', `/volumes/${r.name}`, { socketPath: testSocketPath() });
      for (const r of await useRecords(key)) await engineRequest('DELETE', `/volumes/${r.name}`, { socketPath: testSocketPath() });
      const made = await engineRequest('POST', '/volumes/create', {
        socketPath: testSocketPath(),
        body: { Name: `berth-template-used-${key}-${past}`, Labels: { [USED_KEY]: key, [USED_AT]: String(past) } },
      });
      expect(made.status).toBe(201);
      expect((await templateOf(key))?.lastUsedMs).toBe(past);

      const scope = Object.entries(testLabels()).flatMap(([k, v]) => ['--label', `${k}=${v}`]);
      const engine = ['--socket', testSocketPath()];
      const kept = await runBerth([...engine, '--json', 'templates', 'prune', '--unused-for', '30d', ...scope]);
      expect(kept.code, kept.stderr).toBe(0);
      expect(JSON.parse(kept.stdout).recent).toContain(key);
      expect(await templateOf(key)).toBeDefined();

      const pruned = await runBerth([...engine, 'templates', 'prune', '--unused-for', '7d', ...scope]);
      expect(pruned.code, pruned.stderr).toBe(0);
      expect(pruned.stdout).toMatch(new RegExp(`^berth-template:${key}: removed$`, 'm'));
      expect(await templateOf(key)).toBeUndefined();
      expect(await useRecords(key)).toEqual([]);
    } finally {
      if (!removedAll) await Promise.allSettled([a.destroy(), b.destroy()]);
    }
  });

  test('a bad unusedForMs or --unused-for is refused before any engine call', async () => {
    for (const bad of [-1, 1.5, Number.NaN, '7d']) {
      await expectBerthError(pruneTemplates({ unusedForMs: bad as number, socketPath: '/nonexistent/berth.sock' }), InvalidArgumentError);
    }
    for (const bad of ['7', '7x', '-1d', 'soon', '1.5ms']) {
      const run = await runBerth(['--socket', '/nonexistent/berth.sock', 'templates', 'prune', '--unused-for', bad]);
      expect(run.code, `${bad}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(/--unused-for/);
    }
  });
});
