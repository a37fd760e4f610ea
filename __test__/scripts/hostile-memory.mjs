// Run by hostile-output.test.ts, hostile-flood.test.ts and hostile-reads.test.ts in its own
// process (with --expose-gc), so its RSS is berth's alone: plays a sandbox's hostile code (floods,
// endless writers, huge and endless files, a file swapped for a link to /dev/zero while it is
// read) against berth, one case after another on its sessions (root, uid 1000, a harness
// provider's, a HarnessAgent's), and prints one JSON line per case:
// { case, ms, rssGrowth, rssOverStart, value?, error? }. rssGrowth is the peak RSS (sampled every
// 10 ms and after the call) over the RSS before the case (after a gc); rssOverStart the same peak
// over the RSS before the first case (what the allocator kept of earlier cases counts too).
// Errors are summarised: name, code, message length, details with byte fields as their lengths.
import { createSession, setBufferBudget } from '../../index.mjs';
import { createDockerSandboxProvider } from '../../harness.mjs';

const labels = JSON.parse(process.env.BERTH_HOSTILE_LABELS ?? '{}');
const prefix = process.env.BERTH_HOSTILE_SESSION ?? 'hostile';
const cases = (process.env.BERTH_HOSTILE_CASES ?? '').split(',').filter(Boolean);
const image = 'berth-test/busybox:1';

/** @param {any} details */
function summarize(details) {
  if (!details || typeof details !== 'object') return details;
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const [k, v] of Object.entries(details)) {
    out[k] = Buffer.isBuffer(v) || v instanceof Uint8Array ? { bytes: v.byteLength } : v;
  }
  return out;
}

/** RSS once the sessions exist, before the first case (after a gc): `rssOverStart` counts from it. @type {number | undefined} */
let startRss;

/**
 * @param {string} name
 * @param {() => Promise<unknown>} fn
 */
async function measure(name, fn) {
  globalThis.gc?.();
  await new Promise((r) => setTimeout(r, 50));
  globalThis.gc?.();
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
  const t0 = Date.now();
  let value;
  let error;
  try {
    value = await fn();
  } catch (/** @type {any} */ e) {
    error = {
      name: e?.name,
      code: e?.code,
      messageLength: String(e?.message ?? '').length,
      details: summarize(e?.details),
    };
  }
  peak = Math.max(peak, process.memoryUsage.rss());
  clearInterval(timer);
  const ms = Date.now() - t0;
  console.log(JSON.stringify({ case: name, ms, rssGrowth: peak - base, rssOverStart: peak - (startRss ?? base), value, error }));
}

/**
 * @param {import('../../index.mjs').Session} session
 * @param {string} script
 */
async function asRoot(session, script) {
  const out = await session.exec(['sh', '-c', script], { user: '0' });
  if (out.exitCode !== 0) throw new Error(`${script}: ${out.stderr}`);
}

const MIB = 1048576;
/** The finite flood: 2 GiB of `y\n`, then the command ends by itself. */
const GIB2 = 'yes | head -c 2147483648';
/** The abort of an `-abort` case: 300 ms into the call (the flood runs by then; with the default cap it is cut within a second). */
const abortAfter = (/** @type {string} */ c) => (c.endsWith('-abort') ? { abortSignal: AbortSignal.timeout(300) } : {});

/**
 * Reads `stream` to its end, dropping every chunk; calls `onLimit` once `limit` bytes were read
 * (and goes on reading). Answers the byte count.
 * @param {ReadableStream<Uint8Array>} stream
 */
async function drain(stream, limit = Infinity, onLimit = () => {}) {
  let n = 0;
  let called = false;
  for await (const chunk of stream) {
    n += chunk.byteLength;
    if (!called && n >= limit) {
      called = true;
      onLimit();
    }
  }
  return n;
}

/** Reads `path` `n` times; counts each outcome: the bytes as text, or the error's code. */
/**
 * @param {import('../../index.mjs').Session} session
 * @param {string} path
 * @param {number} n
 */
async function raceReads(session, path, n) {
  /** @type {Record<string, number>} */
  const seen = {};
  for (let i = 0; i < n; i++) {
    let key;
    try {
      const bytes = await session.readFile(path);
      key = bytes === null ? 'null' : `bytes:${bytes.toString('latin1').slice(0, 16)}`;
    } catch (/** @type {any} */ e) {
      key = e?.code === 'E_ENGINE' && /changed while it was read/.test(e.message) ? 'E_ENGINE:changed' : (e?.code ?? `other:${e?.message}`);
    }
    seen[key] = (seen[key] ?? 0) + 1;
  }
  return seen;
}

const need = (/** @type {string} */ c) => cases.some((x) => x.startsWith(c));
const root = await createSession({ sessionId: `${prefix}-root`, image, labels });
/** @type {import('../../index.mjs').Session} */
let user = root;
/** @type {any} */
let harnessSession;
/** @type {any} */
let agentSession;
/** The sandbox session HarnessAgent handed its adapter (what an adapter's tool calls run on). @type {any} */
let agentSandbox;
let userMade = false;
try {
  if (need('read-') || need('race')) {
    user = await createSession({ sessionId: `${prefix}-user`, image, labels, user: '1000:1000', noNewPrivileges: false });
    userMade = true;
    // Files on the container's own filesystem (not a tmpfs): the root path reads through the archive API.
    await asRoot(user, 'mkdir -p /var/h /var/race && truncate -s 4G /var/h/big && chmod 644 /var/h/big && ln -s /dev/zero /var/h/zero && chmod 777 /var/race');
    await asRoot(root, 'mkdir -p /var/h /var/race && truncate -s 4G /var/h/big && ln -s /dev/zero /var/h/zero');
  }
  if (need('harness-')) {
    const harness = createDockerSandboxProvider({ image, labels, timeoutMs: null });
    harnessSession = await harness.createSession({ sessionId: `${prefix}-harness` });
  }
  if (need('agent-')) {
    // The real HarnessAgent over berth's provider (default options: a session lifetime, the
    // default caps), with the test adapter; its doStart keeps the sandbox session it is given.
    const { HarnessAgent } = await import('@ai-sdk/harness/agent');
    const { createTestHarness } = await import('../helpers/test-harness.mjs');
    const base = createTestHarness();
    const agent = new HarnessAgent({
      harness: { ...base, doStart: async (/** @type {any} */ o) => ((agentSandbox = o.sandboxSession), base.doStart(o)) },
      sandbox: createDockerSandboxProvider({ image, labels, workDir: '/workspace' }),
    });
    agentSession = await agent.createSession({ sessionId: `${prefix}-agent` });
  }
  globalThis.gc?.();
  startRss = process.memoryUsage.rss();
  // A flood that stays under the cap, then waits: the abort or timeout comes while it sleeps.
  const FLOOD = 'head -c 50000000 /dev/zero; sleep 60';
  // The race: /var/race/f is a 6-byte file, then a link to /dev/zero, then the file again... (renames).
  const SWAP = 'cd /var/race && while :; do echo hello > f.n; mv -f f.n f; ln -sf /dev/zero l.n; mv -f l.n f; done';
  for (const c of cases) {
    switch (c) {
      case 'exec-2g':
      case 'exec-2g-abort':
        await measure(c, async () => {
          const r = await root.exec(['sh', '-c', GIB2], abortAfter(c));
          return { exitCode: r.exitCode, truncated: r.truncated, stdout: r.stdout.length, stderr: r.stderr.length };
        });
        break;
      case 'exectext-2g':
      case 'exectext-2g-abort':
        await measure(c, async () => {
          const r = await root.execText(['sh', '-c', GIB2], abortAfter(c));
          return { exitCode: r.exitCode, truncated: r.truncated, stdout: r.stdout.length, stderr: r.stderr.length, head: r.stdout.slice(0, 4) };
        });
        break;
      case 'agent-2g':
      case 'agent-2g-abort':
        await measure(c, async () => {
          const r = await agentSandbox.run({ command: GIB2, ...abortAfter(c) });
          return { exitCode: r.exitCode, truncated: r.truncated, stdout: r.stdout.length, stderr: r.stderr.length, head: r.stdout.slice(0, 4) };
        });
        break;
      case 'spawn-yes-read': // an endless writer read as fast as it comes (every chunk dropped); kill() once 64 MiB were read
      case 'spawn-yes-read-abort': // the same, ended by the spawn's signal
        await measure(c, async () => {
          const abort = new AbortController();
          const p = await root.spawn(['yes'], { abortSignal: abort.signal });
          /** @type {Promise<unknown> | undefined} */
          let killed;
          const stop = () => (c.endsWith('-abort') ? abort.abort() : (killed = p.kill().catch((e) => e?.code ?? String(e))));
          const read = Promise.all([drain(p.stdout, 64 * MIB, stop), drain(p.stderr)]).catch((e) => e?.code ?? String(e));
          const waited = await p.wait().catch((e) => ({ code: e?.code }));
          return { waited, read: await read, killed: await killed };
        });
        break;
      case 'spawn-2g-unread': // nobody reads: back-pressure holds the writer; kill() after 2 s
      case 'spawn-2g-unread-abort': // the same, ended by the spawn's signal
        await measure(c, async () => {
          const abort = new AbortController();
          const p = await root.spawn(['sh', '-c', GIB2], { abortSignal: abort.signal });
          await new Promise((r) => setTimeout(r, 2000));
          if (c.endsWith('-abort')) abort.abort();
          else await p.kill();
          return { waited: await p.wait().catch((e) => ({ code: e?.code })) };
        });
        break;
      case 'exec-yes':
        await measure(c, async () => {
          const r = await root.exec(['yes']);
          return { exitCode: r.exitCode, truncated: r.truncated, stdout: r.stdout.length, stderr: r.stderr.length };
        });
        break;
      case 'exec-yes-small-cap':
        await measure(c, async () => {
          const r = await root.exec(['sh', '-c', 'yes >&2'], { maxBufferBytes: 1000 });
          return { exitCode: r.exitCode, truncated: r.truncated, stdout: r.stdout.length, stderr: r.stderr.length };
        });
        break;
      case 'harness-yes':
        await measure(c, async () => {
          const r = await harnessSession.run({ command: 'yes' });
          return { exitCode: r.exitCode, truncated: r.truncated, stdout: r.stdout.length, head: r.stdout.slice(0, 4) };
        });
        break;
      case 'exec-both': // both streams flood: one cap for the two together
        await measure(c, async () => {
          const r = await root.exec(['sh', '-c', 'yes & yes >&2; wait']);
          return { exitCode: r.exitCode, truncated: r.truncated, stdout: r.stdout.length, stderr: r.stderr.length };
        });
        break;
      case 'harness-both':
        await measure(c, async () => {
          const r = await harnessSession.run({ command: 'yes & yes >&2; wait' });
          return { truncated: r.truncated, stdout: r.stdout.length, stderr: r.stderr.length };
        });
        break;
      case 'harness-urandom': // not UTF-8: every malformed byte becomes U+FFFD (a two-byte string)
        await measure(c, async () => {
          const r = await harnessSession.run({ command: 'cat /dev/urandom & cat /dev/urandom >&2; wait' });
          return { truncated: r.truncated, stdout: r.stdout.length, stderr: r.stderr.length };
        });
        break;
      case 'harness-three': // three at once, under a process-wide budget of 128 MiB
        await measure(c, async () => {
          const before = setBufferBudget(128 * 1048576);
          try {
            const runs = await Promise.all([0, 1, 2].map(() => harnessSession.run({ command: 'yes & yes >&2; wait' })));
            return {
              truncated: runs.every((r) => r.truncated),
              total: runs.reduce((n, r) => n + r.stdout.length + r.stderr.length, 0),
            };
          } finally {
            setBufferBudget(before);
          }
        });
        break;
      case 'exec-abort':
        await measure(c, () => root.exec(['sh', '-c', FLOOD], { abortSignal: AbortSignal.timeout(4000) }));
        break;
      case 'exec-timeout':
        await measure(c, () => root.exec(['sh', '-c', FLOOD], { timeoutMs: 4000 }));
        break;
      case 'harness-abort':
        await measure(c, () => harnessSession.run({ command: FLOOD, abortSignal: AbortSignal.timeout(4000) }));
        break;
      case 'read-4g-root':
        await measure(c, () => root.readFile('/var/h/big'));
        break;
      case 'read-4g-user':
        await measure(c, () => user.readFile('/var/h/big'));
        break;
      case 'read-4g-root-stream': // openFile with a cap: the stream errors at once
        await measure(c, () => root.openFile('/var/h/big', { maxBytes: 1024 }));
        break;
      case 'read-zero-root':
        await measure(c, () => root.readFile('/var/h/zero'));
        break;
      case 'read-zero-user':
        await measure(c, () => user.readFile('/var/h/zero'));
        break;
      case 'race-root':
      case 'race-user': {
        const session = c === 'race-root' ? root : user;
        const swapper = await session.spawn(['sh', '-c', SWAP], { user: '0' });
        try {
          await measure(c, () => raceReads(session, '/var/race/f', 200));
        } finally {
          await swapper.kill();
        }
        break;
      }
      default:
        throw new Error(`unknown case ${c}`);
    }
  }
} finally {
  await Promise.allSettled([root.remove(), userMade ? user.remove() : undefined, harnessSession?.destroy(), agentSession?.destroy()]);
}
