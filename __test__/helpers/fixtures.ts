import { test as base } from 'vitest';
import { createSession, type Session } from '../../index.mjs';
import { createContainer, removeContainer, startContainer } from './engine-http.mjs';
import { testLabels, testSessionId } from './run-label.mjs';
import { testEngine } from './test-engine.mjs';
import { TEST_IMAGE } from './test-image.mjs';

/** Options of the {@link SessionFixtures.handMade} fixture. */
export interface HandMadeOptions {
  /** Labels besides the run label (for example berth's, copied from another container). */
  labels?: Record<string, string>;
  /** Start it after creating. @default true */
  start?: boolean;
}

/** Per-test fixtures for engine tests (wire a file with `engineSuite` from `./suite.js`). */
export interface SessionFixtures {
  /** A session id unique to this test, embedding the run id. */
  sessionId: string;
  /** `{ 'berth.test-run': <id> }`: pass as `labels` to every createSession. */
  labels: Record<string, string>;
  /** `{ socketPath }` of the engine under test (BERTH_TEST_ENGINE): spread into every berth call. */
  engine: { socketPath: string };
  /** Registers a session for removal (by its own handle, `force: true`) when the test ends; returns it. */
  track: <S extends Session>(session: S) => S;
  /**
   * Creates (and by default starts) a container by hand through the raw Engine API, outside
   * berth: image `berth-test/busybox:1`, a long sleep, the run label plus `options.labels`.
   * It is force-removed by id when the test ends. Resolves to its id.
   */
  handMade: (name: string, options?: HandMadeOptions) => Promise<string>;
  /**
   * A live session of this test (`createSession` of the test image with `sessionId`, `labels`
   * and `engine`), made when a test asks for it and removed when it ends, like a tracked one.
   */
  session: Session;
}

/**
 * `test` with session fixtures: every tracked session and hand-made container is removed in
 * `finally` (failures to remove are logged, and the per-file `expectNoLeaks()` catches what
 * stays), and a failing test logs its session ids and container names.
 *
 * @example
 * ```ts
 * sessionTest('exec', async ({ engine, sessionId, labels, track }) => {
 *   const session = track(await createSession({ ...engine, sessionId, image: TEST_IMAGE, labels }));
 * });
 * ```
 */
export const sessionTest = base.extend<SessionFixtures>({
  // eslint-disable-next-line no-empty-pattern
  sessionId: async ({}, use) => {
    await use(testSessionId('t'));
  },
  // eslint-disable-next-line no-empty-pattern
  engine: async ({}, use) => {
    await use(testEngine());
  },
  // eslint-disable-next-line no-empty-pattern
  labels: async ({}, use) => {
    await use(testLabels());
  },
  track: async ({ onTestFailed }, use) => {
    const tracked: Session[] = [];
    onTestFailed(() => {
      for (const s of tracked) console.error(`[berth tests] session ${s.sessionId}: container ${s.name} (${s.id})`);
    });
    try {
      await use((session) => {
        tracked.push(session);
        return session;
      });
    } finally {
      for (const session of tracked) {
        await session.remove({ force: true }).catch((error: unknown) => {
          console.error(`[berth tests] could not remove ${session.name}:`, error);
        });
      }
    }
  },
  session: async ({ sessionId, labels, engine, track }, use) => {
    await use(track(await createSession({ ...engine, sessionId, image: TEST_IMAGE, labels })));
  },
  handMade: async ({ onTestFailed }, use) => {
    const made: { id: string; name: string }[] = [];
    onTestFailed(() => {
      for (const c of made) console.error(`[berth tests] hand-made container ${c.name} (${c.id})`);
    });
    try {
      await use(async (name, { labels = {}, start = true } = {}) => {
        const id = await createContainer(name, {
          Image: TEST_IMAGE,
          Cmd: ['sleep', '2147483647'],
          Labels: { ...labels, ...testLabels() },
        });
        made.push({ id, name });
        if (start) await startContainer(id);
        return id;
      });
    } finally {
      for (const c of made) {
        await removeContainer(c.id).catch((error: unknown) => {
          console.error(`[berth tests] could not remove hand-made ${c.name}:`, error);
        });
      }
    }
  },
});
