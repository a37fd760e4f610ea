// The package root from CommonJS: a fresh `node` process `require`s it (no ESM anywhere in that
// process) and checks that engine failures arrive as the error subclasses that `require` gives.
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { inspectContainer } from '../helpers/engine-http.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { lastJsonLine, runNode } from '../helpers/node-process.js';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

const PACKAGE_DIR = fileURLToPath(new URL('../..', import.meta.url));
/** Generous: a run that has not exited by then is hung, not slow. */
const KILL_AFTER_MS = 60_000;

const SCRIPT = `
const berth = require(process.env.PACKAGE_DIR);
const checks = [];
async function check(label, promise, Class) {
  try {
    await promise;
    checks.push({ label, resolved: true });
  } catch (e) {
    checks.push({
      label,
      code: e.code,
      name: e.name,
      instanceOfClass: e instanceof berth[Class],
      isInstance: berth[Class].isInstance(e),
      instanceOfBase: e instanceof berth.BerthError,
      detailsIsObject: typeof e.details === 'object' && e.details !== null,
    });
  }
}
(async () => {
  const env = process.env;
  const labels = JSON.parse(env.LABELS);
  await check('invalid', berth.createSession({ sessionId: '', image: env.IMAGE }), 'InvalidArgumentError');
  await check('unavailable', berth.peek('x', { socketPath: '/nonexistent.sock' }), 'EngineUnavailableError');
  await check('not found', berth.resumeSession({ sessionId: env.SID }), 'SessionNotFoundError');
  await check('image', berth.createSession({ sessionId: env.SID, image: '127.0.0.1:1/berth-test/missing:1', labels }), 'ImageNotFoundError');
  await check('setup', berth.createSession({ sessionId: env.SID, image: env.IMAGE, labels, setupCommands: ['exit 2'] }), 'SetupFailedError');
  const session = await berth.createSession({ sessionId: env.SID, image: env.IMAGE, labels });
  try {
    await check('exists', berth.createSession({ sessionId: env.SID, image: env.IMAGE, labels }), 'SessionExistsError');
    await check('timeout', session.exec(['sleep', '1000'], { timeoutMs: 200 }), 'ExecTimeoutError');
    const aborted = new AbortController();
    aborted.abort();
    await check('aborted', session.exec(['true'], { abortSignal: aborted.signal }), 'AbortedError');
    await session.stop({ timeoutMs: 0 });
    await check('engine', session.exec(['true']), 'EngineError');
  } finally {
    console.log(JSON.stringify({ id: session.id, removed: await session.remove(), checks }));
  }
})();
`;

engineSuite('require() entry', { timeout: KILL_AFTER_MS + 30_000 }, () => {

  test('errors from a CommonJS consumer are the subclasses require() exports', async ({ sessionId, labels }) => {
    const run = await runNode(['-e', SCRIPT], { PACKAGE_DIR, SID: sessionId, IMAGE: TEST_IMAGE, LABELS: JSON.stringify(labels) }, KILL_AFTER_MS);
    expect(run, run.stderr).toMatchObject({ code: 0, signal: null, killed: false });

    const { id, removed, checks } = lastJsonLine(run);
    const expected = {
      invalid: 'E_INVALID_ARGUMENT',
      unavailable: 'E_ENGINE_UNAVAILABLE',
      'not found': 'E_SESSION_NOT_FOUND',
      image: 'E_IMAGE_NOT_FOUND',
      setup: 'E_SETUP_FAILED',
      exists: 'E_SESSION_EXISTS',
      timeout: 'E_EXEC_TIMEOUT',
      aborted: 'E_ABORTED',
      engine: 'E_ENGINE',
    };
    expect(checks).toEqual(
      Object.entries(expected).map(([label, code]) => ({
        label,
        code,
        name: expect.stringMatching(/Error$/),
        instanceOfClass: true,
        isInstance: true,
        instanceOfBase: true,
        detailsIsObject: true,
      })),
    );
    expect(removed).toEqual({ removed: true });
    expect(await inspectContainer(id)).toBeNull();
  });
});
