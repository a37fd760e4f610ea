// berth's engine-side records (labelled volumes) seen through the raw Engine API, for tests:
// list a container's records, plant hand-made ones (corrupt, foreign, another pid), and make
// a berth-labelled container by hand with any owner. Never the docker CLI.
import { randomBytes } from 'node:crypto';
import { createContainer, engineRequest, labelFilter, removeContainer, startContainer } from './engine-http.mjs';
import { containerName } from '../../index.mjs';
import { RUN_LABEL_KEY, runId } from './run-label.mjs';

/**
 * `GET /volumes?filters={"label":[...]}`: volumes carrying all these labels (`{ key: null }` any value).
 * @param {Record<string, string | null>} labels
 * @param {{ socketPath?: string }} [options]
 * @returns {Promise<{ Name: string, Labels: Record<string, string> }[]>}
 */
export async function listVolumes(labels, { socketPath } = {}) {
  const query = encodeURIComponent(JSON.stringify(labelFilter(labels)));
  const res = await engineRequest('GET', `/volumes?filters=${query}`, { socketPath });
  if (res.status !== 200) throw new Error(`list volumes: HTTP ${res.status} ${res.text}`);
  // Podman ORs several label filters on volumes (Docker ANDs them): check each label here too.
  return (res.body.Volumes ?? []).filter((/** @type {any} */ v) =>
    Object.entries(labels).every(([k, value]) => (value == null ? k in (v.Labels ?? {}) : v.Labels?.[k] === value)),
  );
}

/**
 * The record volumes of container `id`: `{ name, kind, role }`, sorted by name.
 * @param {string} id
 * @param {{ socketPath?: string }} [options]
 */
export async function recordsOf(id, options = {}) {
  const volumes = await listVolumes({ 'dev.berth.container-id': id }, options);
  return volumes
    .map((v) => ({ name: v.Name, kind: v.Labels['dev.berth.record'], role: v.Labels['dev.berth.holder.role'] }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * `POST /volumes/create` of a hand-made volume; returns the labels the engine keeps.
 * @param {string} name
 * @param {Record<string, string>} labels
 * @param {{ socketPath?: string }} [options]
 */
export async function createVolume(name, labels, { socketPath } = {}) {
  const res = await engineRequest('POST', '/volumes/create', { body: { Name: name, Labels: labels }, socketPath });
  if (res.status !== 201) throw new Error(`create volume ${name}: HTTP ${res.status} ${res.text}`);
  return res.body.Labels;
}

/**
 * `DELETE /volumes/{name}`; absent is fine.
 * @param {string} name
 * @param {{ socketPath?: string }} [options]
 */
export async function deleteVolume(name, { socketPath } = {}) {
  const res = await engineRequest('DELETE', `/volumes/${encodeURIComponent(name)}`, { socketPath });
  if (res.status !== 204 && res.status !== 404) throw new Error(`delete volume ${name}: HTTP ${res.status} ${res.text}`);
}

/**
 * The labels of a holder record as berth writes them (schema 1), for `holder` fields given.
 * @param {string} containerId
 * @param {{ role?: string, hostId: string, pid: number, startTime: string, instanceId?: string, token?: string }} holder
 */
export function holderLabels(containerId, holder) {
  return {
    [RUN_LABEL_KEY]: runId(),
    'dev.berth.managed': 'true',
    'dev.berth.record': 'holder',
    'dev.berth.record.schema': '1',
    'dev.berth.container-id': containerId,
    'dev.berth.holder.role': holder.role ?? 'adopter',
    'dev.berth.holder.host-id': holder.hostId,
    'dev.berth.holder.pid': String(holder.pid),
    'dev.berth.holder.start-time': holder.startTime,
    'dev.berth.holder.instance-id': holder.instanceId ?? randomBytes(16).toString('hex'),
    'dev.berth.holder.token': holder.token ?? randomBytes(16).toString('hex'),
  };
}

/**
 * Plants a holder record; returns its volume name (`berth-holder-<id>-<token>`).
 * @param {string} containerId
 * @param {Record<string, string>} labels From {@link holderLabels}, possibly damaged.
 */
export async function plantRecord(containerId, labels) {
  const name = `berth-holder-${containerId}-${labels['dev.berth.holder.token'] ?? randomBytes(16).toString('hex')}`;
  await createVolume(name, labels);
  return name;
}

/**
 * A berth-labelled session container made by hand (labels schema 1, a sleep, the run label and
 * `extraLabels`), with a readiness record, so that the owner can be anything a test needs. It is
 * named as berth names it (`containerName(sessionId)`), as a berth-made container always is.
 * @param {{ sessionId: string, image: string, owner: { hostId: string, pid: number, startTime: string, instanceId?: string }, extraLabels?: Record<string, string> }} o
 * @returns {Promise<string>} The container id.
 */
export async function handMadeSession({ sessionId, image, owner, extraLabels = {} }) {
  const id = await createContainer(containerName(sessionId), {
    Image: image,
    Entrypoint: ['sleep', '2147483647'],
    Cmd: [],
    Labels: {
      ...extraLabels,
      [RUN_LABEL_KEY]: runId(),
      'dev.berth.schema': '1',
      'dev.berth.managed': 'true',
      'dev.berth.session-id': sessionId,
      'dev.berth.prefix': 'berth',
      'dev.berth.owner.host-id': owner.hostId,
      'dev.berth.owner.pid': String(owner.pid),
      'dev.berth.owner.start-time': owner.startTime,
      'dev.berth.owner.instance-id': owner.instanceId ?? randomBytes(16).toString('hex'),
    },
    HostConfig: { Init: true },
  });
  await startContainer(id);
  await createVolume(`berth-ready-${id}`, {
    [RUN_LABEL_KEY]: runId(),
    'dev.berth.managed': 'true',
    'dev.berth.record': 'ready',
    'dev.berth.container-id': id,
  });
  return id;
}

/**
 * Removes a hand-made session and its records (`DELETE /containers/{id}`, `DELETE /volumes/{name}`).
 * @param {string} id
 */
export async function removeHandMade(id) {
  await removeContainer(id);
  for (const r of await recordsOf(id)) await deleteVolume(r.name);
}

/**
 * Fails when this run left record volumes (records copy their container's caller labels, so
 * they carry the run label): deletes them, then throws naming each.
 * @param {{ socketPath?: string }} [options]
 */
export async function expectNoRecordLeaks(options = {}) {
  const { socketPath } = options;
  const leaked = await listVolumes({ [RUN_LABEL_KEY]: runId() }, { socketPath });
  if (leaked.length === 0) return;
  await Promise.allSettled(leaked.map((v) => deleteVolume(v.Name, { socketPath })));
  throw new Error(`leaked ${leaked.length} record volume(s), now deleted: ${leaked.map((v) => v.Name).join(', ')}`);
}
