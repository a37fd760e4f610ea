// berth demo: create a sandbox, use it, let a second OS process try to create it (refused)
// and resume it (adopted: its remove() is a no-op), then remove it as its owner.
//
//   npm run demo        (builds first; needs a running engine, see README)
//
// Runs offline on the busybox test image, or on any local image given as BERTH_DEMO_IMAGE.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BerthError, containerName, createSession, engineInfo, peek, resumeSession } from '../index.mjs';
import { ensureTestImage } from '../__test__/helpers/test-image.mjs';

const self = fileURLToPath(import.meta.url);

try {
  if (process.argv[2] === '--second') {
    await second(process.argv[3], process.argv[4]);
  } else {
    await first();
  }
} catch (error) {
  // A berth error is the answer a user needs (what was tried, the likely fix): its code and
  // message, exit 1, no stack trace.
  if (!BerthError.isInstance(error)) throw error;
  console.error(`${error.code}: ${error.message}`);
  process.exitCode = 1;
}

async function first() {
  const step = (/** @type {string} */ text) => console.log(`[owner, pid ${process.pid}] ${text}`);
  // berth first: with no engine running, its E_ENGINE_UNAVAILABLE says what it tried and how to fix it.
  const engine = await engineInfo();
  step(`engine: ${engine.kind} ${engine.version} at ${engine.endpoint} (chosen by ${engine.strategy})`);
  step('preparing the image offline (busybox root filesystem imported into the engine; no pull)');
  const image = process.env.BERTH_DEMO_IMAGE ?? (await ensureTestImage({ socketPath: unixSocketOf(engine.endpoint) }));
  const sessionId = `demo-${process.pid}`;
  step(`createSession("${sessionId}") -> container ${containerName(sessionId)}`);
  const session = await createSession({
    sessionId,
    image,
    workDir: '/tmp',
    ports: [8080],
    env: { GREETING: 'hello from berth' },
    setupCommands: ['echo "$GREETING" > /tmp/greeting.txt'],
  });
  try {
    step(`created ${session.id.slice(0, 12)}, ownership: ${session.ownership}`);
    const out = await session.exec(['cat', '/tmp/greeting.txt']);
    step(`exec cat /tmp/greeting.txt -> exit ${out.exitCode}, stdout ${JSON.stringify(out.stdout.toString())}`);
    const echoed = await session.exec(['cat'], { stdin: 'bytes through stdin' });
    step(`exec cat with stdin -> ${JSON.stringify(echoed.stdout.toString())}`);
    step(`port 8080 is published on ${await session.hostAddress(8080)}`);

    step('a second OS process now tries createSession, then resumeSession, on the same id');
    process.stdout.write(execFileSync(process.execPath, [self, '--second', sessionId, image], { encoding: 'utf8' }));

    const seen = await peek(sessionId);
    step(`peek -> ${seen?.state}, ready: ${seen?.ready}, owner pid ${seen?.owner?.pid} (${seen?.owner?.liveness})`);
  } finally {
    // The creating handle owns the container: remove() deletes it by id.
    step(`remove() -> ${JSON.stringify(await session.remove())}`);
  }
  step(`peek after removal -> ${JSON.stringify(await peek(sessionId))}`);
  step('done');
}

/**
 * The socket path of a `unix://` endpoint, for the offline image helper (which speaks unix sockets only).
 * @param {string} endpoint
 */
function unixSocketOf(endpoint) {
  if (endpoint.startsWith('unix://')) return endpoint.slice('unix://'.length);
  throw new Error(`the demo builds its image over a unix socket; berth reached ${endpoint}: set BERTH_DEMO_IMAGE to a local image instead`);
}

/**
 * @param {string} sessionId
 * @param {string} image
 */
async function second(sessionId, image) {
  const say = (/** @type {string} */ text) => console.log(`  [second process, pid ${process.pid}] ${text}`);
  try {
    await createSession({ sessionId, image, setupCommands: ['exit 1'] });
    say('createSession unexpectedly succeeded');
    process.exitCode = 1;
    return;
  } catch (error) {
    if (!BerthError.isInstance(error)) throw error;
    const { details } = /** @type {import('../index.mjs').BerthError & { details: { name?: string, managed?: boolean } }} */ (error);
    say(`createSession refused: ${error.code} (container ${details.name}, managed: ${details.managed}); its setup never ran`);
  }
  const adopted = await resumeSession({ sessionId });
  say(`resumeSession -> ownership: ${adopted.ownership}; owner pid ${adopted.owner?.pid} is ${adopted.owner?.liveness}`);
  const out = await adopted.exec(['sh', '-c', 'cat /tmp/greeting.txt; echo "seen by $0"', 'the adopter']);
  say(`exec in the adopted sandbox -> ${JSON.stringify(out.stdout.toString())}`);
  say(`stop() -> ${JSON.stringify(await adopted.stop())}, remove() -> ${JSON.stringify(await adopted.remove())} (not ours: nothing touched)`);
}
