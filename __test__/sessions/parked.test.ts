// Parked sessions and handover (issue 22, docs/design.md "Parked sessions and handover"), played
// as a multi-worker agent server: worker processes drive the real HarnessAgent
// (@ai-sdk/harness/agent) over berth's provider with the fake adapter (no model), and a janitor
// runs the CLI's `berth reap --watch` throughout. Conversations are created on one worker,
// detached, resumed (handed over) on another; then destroyed there, parked while that worker
// exits, or parked while it is SIGKILLed. Counted by a label unique to each test.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect } from 'vitest';
import { createDockerSandboxProvider } from '../../harness.mjs';
import { createSession, listSessions, reapOrphans, resumeSession, type Session } from '../../index.mjs';
import { runBerth, startBerth } from '../helpers/berth-cli.js';
import { engineAvailable } from '../helpers/engine-available.js';
import { inspectContainer, labelFilter, listContainers, removeContainer } from '../helpers/engine-http.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { expectNoLeaks } from '../helpers/leak-check.mjs';
import { expectNoRecordLeaks, listVolumes } from '../helpers/records.mjs';
import { testLabels, testSessionId } from '../helpers/run-label.mjs';
import { TEST_HARNESS_ID } from '../helpers/test-harness.mjs';
import { testSocketPath } from '../helpers/test-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';

const WORKER_SCRIPT = fileURLToPath(new URL('../scripts/harness-worker.mjs', import.meta.url));
const PATH_LABEL = 'berth.test-path';
/** The shortened lifetime (the `short` agent's timeoutMs), in milliseconds. */
const SHORT_MS = 15_000;
/** How long a conversation gone by its lifetime may take to disappear: the janitor's rounds on a loaded machine. */
const GONE_WITHIN_MS = SHORT_MS + 45_000;

/** A label unique to one test, beside the run label. */
function pathLabels(): Record<string, string> {
  return { ...testLabels(), [PATH_LABEL]: randomBytes(6).toString('hex') };
}

/** `--label k=v` flags of `labels`. */
function labelFlags(labels: Record<string, string>): string[] {
  return Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]);
}

interface SerializedError {
  code?: string;
  message: string;
  details?: { reason?: string };
  cause?: SerializedError;
}

/** The first error in `e`'s cause chain that carries a berth code. */
function berthError(e: SerializedError | undefined): SerializedError | undefined {
  for (let at = e; at; at = at.cause) if (at.code?.startsWith('E_')) return at;
  return undefined;
}

type Reply = { ok: true; value: any } | { ok: false; error: SerializedError };

/** One worker process (scripts/harness-worker.mjs) driven over IPC. */
class Worker {
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #next = 0;
  readonly #waiting = new Map<number, (r: Reply) => void>();
  private constructor(
    readonly child: ChildProcess,
    readonly pid: number,
  ) {
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    child.on('message', (m: { id: number } & Reply) => {
      this.#waiting.get(m.id)?.(m);
      this.#waiting.delete(m.id);
    });
    void this.exited.then(() => {
      for (const [, reply] of this.#waiting) reply({ ok: false, error: { message: 'the worker exited' } });
      this.#waiting.clear();
    });
  }

  static async start(labels: Record<string, string>, env: Record<string, string> = {}): Promise<Worker> {
    const child = fork(WORKER_SCRIPT, [], {
      env: {
        ...process.env,
        BERTH_WORKER_LABELS: JSON.stringify(labels),
        BERTH_WORKER_SOCKET: testSocketPath(),
        BERTH_WORKER_SHORT_MS: String(SHORT_MS),
        ...env,
      },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    workers.push(child);
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('message', (m: { pid: number }) => resolve(m.pid));
      child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready`)));
    });
    return new Worker(child, pid);
  }

  /** Runs `op` in the worker: its reply, ok or not. */
  tryCall(op: string, args: object = {}): Promise<Reply> {
    const id = ++this.#next;
    return new Promise((resolve) => {
      this.#waiting.set(id, resolve);
      this.child.send({ id, op, args });
    });
  }

  /** Runs `op` in the worker; rejects with its error. */
  async call(op: string, args: object = {}): Promise<any> {
    const r = await this.tryCall(op, args);
    if (!r.ok) throw new Error(`${op} failed in worker ${this.pid}: ${JSON.stringify(r.error)}`);
    return r.value;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/** Every worker started, killed after each test. */
const workers: ChildProcess[] = [];

/** Containers and record volumes of one conversation: by its session id label, and by its container id. */
async function leftOf(sessionId: string, containerId: string): Promise<{ containers: number; records: number }> {
  const socketPath = testSocketPath();
  const containers = await listContainers(labelFilter({ 'dev.berth.session-id': sessionId }), { socketPath });
  const byId = await listVolumes({ 'dev.berth.container-id': containerId }, { socketPath });
  const bySession = await listVolumes({ 'dev.berth.session-id': sessionId, 'dev.berth.record': null }, { socketPath });
  return { containers: containers.length, records: new Set([...byId, ...bySession].map((v) => v.Name)).size };
}

/** Containers and record volumes carrying `labels`' test label. */
async function leftovers(labels: Record<string, string>): Promise<{ containers: number; records: number }> {
  const socketPath = testSocketPath();
  const path = { [PATH_LABEL]: labels[PATH_LABEL]! };
  const containers = await listContainers(labelFilter(path), { socketPath });
  const records = await listVolumes({ ...path, 'dev.berth.record': null }, { socketPath });
  return { containers: containers.length, records: records.length };
}

/** Polls `probe` until it is true, for at most `withinMs` (a bound, not a timing assertion); returns the last answer. */
async function eventually(probe: () => Promise<boolean>, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
}

type Fate = 'destroyed' | 'exited' | 'killed';
interface Conversation {
  sessionId: string;
  fate: Fate;
  short: boolean;
  creator: number;
  resumer: number;
  resumeFrom?: unknown;
  containerId?: string;
  writtenBy?: string;
  /** When its resume started: its renewed deadline is no earlier than this plus its lifetime. */
  resumedFrom?: number;
}

describe.runIf(await engineAvailable())('parked sessions and handover across worker processes', { timeout: 150_000 }, () => {
  afterEach(async () => {
    for (const w of workers.splice(0)) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
  });
  afterAll(async () => {
    await reapOrphans({ socketPath: testSocketPath(), labels: testLabels() });
    await expectNoLeaks();
    await expectNoRecordLeaks();
  });

  test('12 conversations over 3 workers and a reap --watch janitor: destroyed ones gone, parked ones kept until their lifetime ends', async () => {
    const labels = pathLabels();
    const socket = testSocketPath();
    const janitor = startBerth(['--socket', socket, 'reap', '--watch', '500ms', '--json', ...labelFlags(labels)]);
    try {
      const w = await Promise.all([Worker.start(labels), Worker.start(labels), Worker.start(labels)]);
      // W1 will exit normally, W2 be SIGKILLed, W0 lives to the end.
      const fates: Fate[] = ['destroyed', 'exited', 'killed'];
      const convs: Conversation[] = Array.from({ length: 12 }, (_, i) => {
        const fate = fates[i % 3]!;
        const resumer = fate === 'exited' ? 1 : fate === 'killed' ? 2 : Math.floor(Math.random() * 3);
        // A destroyed one's creator is random; a parked one's alternates between W0 (which lives:
        // its old handle keeps holding it) and the worker that goes away too (then it is parked).
        const creator = fate === 'destroyed' ? (resumer + 1 + Math.floor(Math.random() * 2)) % 3 : Math.floor(i / 6) === 0 ? 0 : 3 - resumer;
        return { sessionId: testSessionId(`p${i}`), fate, short: fate !== 'destroyed' && Math.floor(i / 3) % 2 === 0, creator, resumer };
      });

      // Create and detach, each on its creator (a worker serves its ops in turn).
      await Promise.all(
        convs.map(async (c) => {
          const created = await w[c.creator]!.call('create', { sessionId: c.sessionId });
          c.containerId = (await inspectContainer(created.started.sandboxId, { socketPath: socket })).Id;
          c.writtenBy = `written by ${w[c.creator]!.pid}\n`;
          c.resumeFrom = (await w[c.creator]!.call('detach', { sessionId: c.sessionId })).resumeFrom;
        }),
      );
      // Resume each on another worker: a handover, whatever the creator does meanwhile (it lives).
      await Promise.all(
        convs.map(async (c) => {
          c.resumedFrom = Date.now();
          const { started } = await w[c.resumer]!.call('resume', { sessionId: c.sessionId, resumeFrom: c.resumeFrom, agent: c.short ? 'short' : 'long' });
          expect(started.isResume).toBe(true);
          expect(started.seen).toBe(c.writtenBy);
        }),
      );
      // The resumer's destroy() removes the sandbox, though its creator lives.
      const destroyed = convs.filter((c) => c.fate === 'destroyed');
      await Promise.all(destroyed.map((c) => w[c.resumer]!.call('destroy', { sessionId: c.sessionId })));
      for (const c of destroyed) expect(await leftOf(c.sessionId, c.containerId!)).toEqual({ containers: 0, records: 0 });

      // W1 exits normally; W2 is SIGKILLed while it creates one more conversation (short lifetime).
      await w[1]!.call('exit');
      expect(await w[1]!.exited).toEqual({ code: 0, signal: null });
      const extra = testSessionId('pk');
      void w[2]!.tryCall('create', { sessionId: extra, agent: 'short' });
      await new Promise((r) => setTimeout(r, 100 + Math.floor(Math.random() * 500)));
      w[2]!.kill();
      expect((await w[2]!.exited).signal).toBe('SIGKILL');

      // Parked: every conversation with a lifetime still to run stays; the listing says why.
      const long = convs.filter((c) => c.fate !== 'destroyed' && !c.short);
      const short = convs.filter((c) => c.fate !== 'destroyed' && c.short);
      const listed = await listSessions({ socketPath: socket, labels });
      for (const c of long) {
        const entry = listed.find((s) => s.sessionId === c.sessionId);
        expect(entry?.state).toBe('running');
        // Its resumer is gone; a creator that lives still holds it (its old handle acts as adopted).
        expect(entry?.lifecycle).toBe(c.creator === 0 ? 'held' : 'parked');
        expect(entry?.expiresAt).toBeGreaterThan(Date.now() + 30 * 60_000);
        expect(entry?.dutyGeneration).toBe(1);
      }
      // A short one whose renewed deadline is still ahead is kept too (on a slow machine some
      // may have expired already: those are checked below with the others).
      for (const c of short.filter((s) => s.resumedFrom! + SHORT_MS - 2_000 > Date.now())) {
        const entry = listed.find((s) => s.sessionId === c.sessionId);
        expect(['parked', 'held']).toContain(entry?.lifecycle);
      }

      // Past the shortened lifetime (renewed at the resume), the janitor removes them, and the
      // conversation killed during its create is gone too.
      const gone = async (sessionId: string, id?: string) => {
        const left = id ? await leftOf(sessionId, id) : { containers: (await listContainers(labelFilter({ 'dev.berth.session-id': sessionId }), { socketPath: socket })).length, records: (await listVolumes({ 'dev.berth.session-id': sessionId }, { socketPath: socket })).length };
        return left.containers === 0 && left.records === 0;
      };
      const allShortGone = async () => (await Promise.all([...short.map((c) => gone(c.sessionId, c.containerId)), gone(extra)])).every(Boolean);
      expect(await eventually(allShortGone, GONE_WITHIN_MS)).toBe(true);

      // The janitor never removed a long-lived parked conversation, and kept some as parked.
      const reports = janitor
        .stdout()
        .split('\n')
        .filter((l) => l.trim().startsWith('{'))
        .map((l) => JSON.parse(l) as { removed?: { sessionId: string; reason: string }[]; kept?: { sessionId: string; reason: string }[] });
      const removedIds = reports.flatMap((r) => r.removed ?? []).map((e) => e.sessionId);
      for (const c of long) expect(removedIds).not.toContain(c.sessionId);
      expect(reports.flatMap((r) => r.kept ?? []).some((e) => e.reason === 'parked')).toBe(true);

      // Still running with their files: resume each on the surviving worker (a handover from a
      // dead resumer), then destroy.
      for (const c of long) {
        const { started } = await w[0]!.call('resume', { sessionId: c.sessionId, resumeFrom: c.resumeFrom });
        expect(started.seen).toBe(c.writtenBy);
        await w[0]!.call('destroy', { sessionId: c.sessionId });
        expect(await leftOf(c.sessionId, c.containerId!)).toEqual({ containers: 0, records: 0 });
      }
      expect(await eventually(async () => (await leftovers(labels)).containers + (await leftovers(labels)).records === 0, 20_000)).toBe(true);
      await w[0]!.call('exit');
    } finally {
      await janitor.stop('SIGTERM');
    }
  });

  test('two workers resume one payload at once: exactly one gets the session, the other E_SESSION_BUSY taken-over', async () => {
    const labels = pathLabels();
    const socket = testSocketPath();
    const dir = mkdtempSync(join(tmpdir(), 'berth-gate-'));
    const gate = join(dir, 'gate');
    try {
      const creator = await Worker.start(labels);
      const [b, c] = await Promise.all([Worker.start(labels, { BERTH_TEST_HANDOVER_GATE: gate }), Worker.start(labels, { BERTH_TEST_HANDOVER_GATE: gate })]);
      const sessionId = testSessionId('r');
      await creator.call('create', { sessionId });
      const { resumeFrom } = await creator.call('detach', { sessionId });
      const both = [b!.tryCall('resume', { sessionId, resumeFrom }), c!.tryCall('resume', { sessionId, resumeFrom })];
      // Both have read the same duty generation before either claims the next one.
      expect(await eventually(async () => existsSync(`${gate}.${b!.pid}`) && existsSync(`${gate}.${c!.pid}`), 60_000)).toBe(true);
      writeFileSync(gate, '');
      const replies = await Promise.all(both);
      const won = replies.filter((r) => r.ok);
      expect(won).toHaveLength(1);
      const lost = replies.find((r) => !r.ok) as { ok: false; error: SerializedError };
      expect(berthError(lost.error)).toMatchObject({ code: 'E_SESSION_BUSY', details: { reason: 'taken-over' } });
      const winner = replies[0]!.ok ? b! : c!;
      const [listed] = await listSessions({ socketPath: socket, labels });
      expect(listed?.dutyGeneration).toBe(1);
      expect(listed?.holders.find((h) => h.role === 'inheritor')?.pid).toBe(winner.pid);
      await winner.call('destroy', { sessionId });
      expect(await leftovers(labels)).toEqual({ containers: 0, records: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("after a handover the previous process's handle acts as adopted: its remove() and stop() touch nothing", async () => {
    const labels = pathLabels();
    const socket = testSocketPath();
    const sessionId = testSessionId('h');
    const provider = createDockerSandboxProvider({ image: TEST_IMAGE, socketPath: socket, workDir: '/workspace', labels });
    const sandbox = (await provider.createSession({ sessionId })) as unknown as { berthSession: Session; destroy(): Promise<void> };
    const handle = sandbox.berthSession;
    expect(handle.ownership).toBe('created');
    const resumer = await Worker.start(labels);
    const resumeFrom = { type: 'resume-session', specificationVersion: 'harness-v1', harnessId: TEST_HARNESS_ID, data: { note: '/workspace/none.txt' } };
    await resumer.call('resume', { sessionId, resumeFrom });
    expect(await handle.remove()).toEqual({ removed: false, reason: 'not-owner' });
    expect(await handle.stop()).toEqual({ stopped: false, reason: 'not-owner' });
    await expect(handle.setTimeout(1_000)).rejects.toMatchObject({ code: 'E_SESSION_BUSY', details: { reason: 'not-owner' } });
    await expect(handle.setNetworkPolicy({ mode: 'deny-all' })).rejects.toMatchObject({ code: 'E_SESSION_BUSY', details: { reason: 'not-owner' } });
    // A root resume in this process (whose create was handed over) adopts, with a holder record.
    const again = await resumeSession({ sessionId, socketPath: socket });
    expect(again.ownership).toBe('adopted');
    expect((await listSessions({ socketPath: socket, labels }))[0]?.holders.some((h) => h.role === 'adopter' && h.pid === process.pid)).toBe(true);
    await again.release();
    await sandbox.destroy();
    const [listed] = await listSessions({ socketPath: socket, labels });
    expect(listed?.state).toBe('running');
    await resumer.call('destroy', { sessionId });
    expect(await leftovers(labels)).toEqual({ containers: 0, records: 0 });
  });

  test('a worker exiting 0-100 ms into a destroy leaves nothing one janitor round does not remove', async () => {
    const labels = pathLabels();
    const socket = testSocketPath();
    const delays = [0, 50, 100];
    const ws = await Promise.all(delays.map(() => Worker.start(labels)));
    const ids = delays.map(() => testSessionId('e'));
    // No lifetime: a session whose owner died mid-destroy is an orphan, not parked.
    await Promise.all(ws.map((w, i) => w.call('create', { sessionId: ids[i], agent: 'none' })));
    await Promise.all(ws.map((w, i) => w.tryCall('destroyThenExit', { sessionId: ids[i], delayMs: delays[i] })));
    for (const w of ws) expect((await w.exited).code).toBe(0);
    const round = await runBerth(['--socket', socket, 'reap', '--yes', '--json', ...labelFlags(labels)]);
    expect(round.code, round.stderr).toBe(0);
    expect(await leftovers(labels)).toEqual({ containers: 0, records: 0 });
  });

  test('reap --label finds the records of a container that is gone (ready, holder, deadline), by the caller labels', async () => {
    const labels = pathLabels();
    const socket = testSocketPath();
    const sessionId = testSessionId('o');
    const s = await createSession({ socketPath: socket, sessionId, image: TEST_IMAGE, labels, timeoutMs: 600_000 });
    // The container goes behind berth's back: its records stay, each with the caller labels and the session id.
    await removeContainer(s.id, { socketPath: socket });
    const records = await listVolumes({ 'dev.berth.container-id': s.id }, { socketPath: socket });
    expect(records.map((v) => v.Labels['dev.berth.record']).sort()).toEqual(['deadline', 'guard', 'holder', 'ready']);
    for (const v of records) expect(v.Labels).toMatchObject({ ...labels, 'dev.berth.session-id': sessionId });
    const round = await runBerth(['--socket', socket, 'reap', '--yes', '--json', ...labelFlags(labels)]);
    expect(round.code, round.stderr).toBe(0);
    expect((JSON.parse(round.stdout) as { removedRecords: string[] }).removedRecords.sort()).toEqual(records.map((v) => v.Name).sort());
    expect(await leftovers(labels)).toEqual({ containers: 0, records: 0 });
    await s.remove();
  });
  test('2 and 3 workers resume one payload in the same tick (no gate), 6 rounds: exactly one handle can remove it, no loser keeps a record', async () => {
    const labels = pathLabels();
    const socket = testSocketPath();
    const [creator, ...resumers] = await Promise.all([0, 1, 2, 3].map(() => Worker.start(labels)));
    const tally = { won: 0, lost: 0, stale: 0 };
    for (const n of [2, 2, 2, 3, 3, 3]) {
      const sessionId = testSessionId('t');
      await creator!.call('create', { sessionId });
      const { resumeFrom } = await creator!.call('detach', { sessionId });
      const ws = resumers.slice(0, n);
      const replies = await Promise.all(ws.map((w) => w.tryCall('resume', { sessionId, resumeFrom })));
      const [listed] = await listSessions({ socketPath: socket, labels });
      const owner = listed!.holders.find((h) => h.role === 'inheritor' && h.generation === listed!.dutyGeneration)!.pid;
      const fulfilled = ws.filter((_, i) => replies[i]!.ok);
      expect(fulfilled.map((w) => w.pid)).toContain(owner);
      for (const [i, w] of ws.entries()) {
        const r = replies[i]!;
        if (r.ok) continue;
        tally.lost += 1;
        expect(berthError(r.error)).toMatchObject({ code: 'E_SESSION_BUSY', details: { reason: 'taken-over' } });
        // A loser leaves no holder or duty record of its own.
        expect(listed!.holders.filter((h) => h.pid === w.pid)).toEqual([]);
      }
      // Fulfilled but handed over since (one completed before the other claimed): its destroy removes nothing.
      for (const w of fulfilled.filter((f) => f.pid !== owner)) {
        tally.stale += 1;
        await w.call('destroy', { sessionId });
        expect((await listSessions({ socketPath: socket, labels })).length).toBe(1);
      }
      tally.won += 1;
      await fulfilled.find((w) => w.pid === owner)!.call('destroy', { sessionId });
      expect(await leftovers(labels)).toEqual({ containers: 0, records: 0 });
    }
    console.log(`overlapping resumes: ${JSON.stringify(tally)}`);
  });

  // Known failure (the tester's harness-race4): this asks one fulfilled createSession of four
  // started together, but the provider's resumeSession is a small part of HarnessAgent's
  // createSession (measured on Docker: each core handover 25-160 ms, back to back, inside
  // createSession windows of ~900 ms that all overlap), so the four handovers are sequential
  // to the engine (each reads the previous one settled) and all fulfil; each earlier handle
  // loses the duty but is not fenced: its doStart commands still run. Needs the earlier
  // handle's commands fenced once its duty moved (E_SESSION_BUSY taken-over).
  test.skip('4 workers resume one payload at once (no gate), each holding it and then destroying it, 3 rounds: exactly one gets it, the others E_SESSION_BUSY taken-over, nothing left', async () => {
    const labels = pathLabels();
    const socket = testSocketPath();
    const [creator, ...resumers] = await Promise.all([0, 1, 2, 3, 4].map(() => Worker.start(labels)));
    for (let round = 0; round < 3; round += 1) {
      const sessionId = testSessionId('t');
      await creator!.call('create', { sessionId });
      const { resumeFrom } = await creator!.call('detach', { sessionId });
      const replies = await Promise.all(resumers.map((w) => w.tryCall('resume', { sessionId, resumeFrom })));
      const fulfilled = resumers.filter((_, i) => replies[i]!.ok);
      expect(fulfilled, `round ${round}: ${JSON.stringify(replies)}`).toHaveLength(1);
      const [winner] = fulfilled;
      const [listed] = await listSessions({ socketPath: socket, labels });
      expect(listed?.dutyGeneration).toBe(1);
      expect(listed?.holders.find((h) => h.role === 'inheritor' && h.generation === 1)?.pid).toBe(winner!.pid);
      for (const [i, w] of resumers.entries()) {
        const r = replies[i]!;
        if (r.ok) continue;
        expect(berthError(r.error)).toMatchObject({ code: 'E_SESSION_BUSY', details: { reason: 'taken-over' } });
        // A loser leaves no holder or duty record of its own.
        expect(listed!.holders.filter((h) => h.pid === w.pid)).toEqual([]);
      }
      await winner!.call('destroy', { sessionId });
      expect(await leftovers(labels)).toEqual({ containers: 0, records: 0 });
    }
  });

  test('a resume that starts while another handover is past its claim and last check, not yet settled, loses: E_SESSION_BUSY taken-over, the first one keeps it', async () => {
    const labels = pathLabels();
    const socket = testSocketPath();
    const dir = mkdtempSync(join(tmpdir(), 'berth-gate-'));
    const gate = join(dir, 'gate');
    try {
      const [creator, first, second] = await Promise.all([
        Worker.start(labels),
        Worker.start(labels, { BERTH_TEST_HANDOVER_SETTLE_GATE: gate }),
        Worker.start(labels),
      ]);
      const sessionId = testSessionId('s');
      await creator!.call('create', { sessionId });
      const { resumeFrom } = await creator!.call('detach', { sessionId });
      const held = first!.tryCall('resume', { sessionId, resumeFrom });
      // The first handover claimed generation 1, woke the container and passed its last check.
      expect(await eventually(async () => existsSync(`${gate}.${first!.pid}`), 60_000)).toBe(true);
      const late = await second!.tryCall('resume', { sessionId, resumeFrom });
      expect(late.ok).toBe(false);
      expect(berthError((late as { ok: false; error: SerializedError }).error)).toMatchObject({
        code: 'E_SESSION_BUSY',
        details: { reason: 'taken-over' },
      });
      writeFileSync(gate, '');
      expect((await held).ok).toBe(true);
      const [listed] = await listSessions({ socketPath: socket, labels });
      expect(listed?.dutyGeneration).toBe(1);
      expect(listed?.holders.filter((h) => h.pid === second!.pid)).toEqual([]);
      // Settled: a resume after it completed is a sequential handover (generation 2).
      await second!.call('resume', { sessionId, resumeFrom });
      const [after] = await listSessions({ socketPath: socket, labels });
      expect(after?.dutyGeneration).toBe(2);
      await first!.call('destroy', { sessionId });
      expect((await listSessions({ socketPath: socket, labels })).length).toBe(1);
      await second!.call('destroy', { sessionId });
      expect(await leftovers(labels)).toEqual({ containers: 0, records: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('with a live inheritor, a third process resumes with takeOver as adopted, and berth rm --force removes it', async () => {
    const labels = pathLabels();
    const socket = testSocketPath();
    const [creator, resumer] = await Promise.all([Worker.start(labels), Worker.start(labels)]);
    const sessionId = testSessionId('f');
    await creator!.call('create', { sessionId });
    const { resumeFrom } = await creator!.call('detach', { sessionId });
    await resumer!.call('resume', { sessionId, resumeFrom });
    const third = await resumeSession({ sessionId, takeOver: true, socketPath: socket });
    expect(third.ownership).toBe('adopted');
    await third.release();
    const rm = await runBerth(['--socket', socket, 'rm', '--force', sessionId]);
    expect(rm.code, rm.stderr).toBe(0);
    expect(await leftovers(labels)).toEqual({ containers: 0, records: 0 });
  });
});
