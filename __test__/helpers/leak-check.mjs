// Finds and removes containers this test run left behind: by the run label, and by name
// (session ids from testSessionId embed the run id, so a container whose labels were lost
// is still found).
import { engineRequest, labelFilter, listContainers, removeContainer } from './engine-http.mjs';
import { RUN_LABEL_KEY, runId } from './run-label.mjs';

/**
 * Containers (any state) of this run: `GET /containers/json?all=1&filters={"label":[...]}`
 * plus `filters={"name":[<run id>]}`.
 * @param {{ socketPath?: string }} [options]
 * @returns {Promise<{ id: string, name: string, state: string }[]>}
 */
export async function listRunContainers(options = {}) {
  const { socketPath } = options;
  const id = runId();
  const byLabel = await listContainers(labelFilter({ [RUN_LABEL_KEY]: id }), { socketPath });
  const byName = await listContainers({ name: [id] }, { socketPath });
  /** @type {Map<string, { id: string, name: string, state: string }>} */
  const seen = new Map();
  for (const c of [...byLabel, ...byName]) {
    seen.set(c.Id, { id: c.Id, name: (c.Names?.[0] ?? '').replace(/^\//, ''), state: c.State });
  }
  return [...seen.values()];
}

/**
 * Fails when this run left containers: force-removes them (`DELETE /containers/{id}?force=1&v=1`)
 * with their readiness volumes (`DELETE /volumes/berth-ready-<id>`), then throws an Error naming
 * each. Use in `afterAll` of every engine test file.
 * @param {{ socketPath?: string }} [options]
 */
export async function expectNoLeaks(options = {}) {
  // No destructuring in the signature: vitest reads a hook's first parameter as fixtures.
  const { socketPath } = options;
  const leaked = await listRunContainers({ socketPath });
  if (leaked.length === 0) return;
  // berth keeps a container's readiness record in a volume named after its id: remove those too.
  await Promise.allSettled(
    leaked.map(async (c) => {
      await removeContainer(c.id, { socketPath });
      await engineRequest('DELETE', `/volumes/berth-ready-${c.id}`, { socketPath });
    }),
  );
  const list = leaked.map((c) => `${c.name} (${c.id.slice(0, 12)}, ${c.state})`).join(', ');
  throw new Error(`leaked ${leaked.length} container(s), now force-removed: ${list}`);
}
