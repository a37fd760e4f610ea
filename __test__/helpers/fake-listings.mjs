// Session listings as listSessions gives them, made up for the `ls` renderer alone (no engine):
// cli-format.test.ts, scripts/ls-memory.mjs and the bench's `ls` suite render them.

/**
 * The listing of session number `i`, `now` being ms since the epoch; `extra` overrides fields.
 * @param {number} i
 * @param {number} now
 * @param {Partial<import('../../index.mjs').SessionListing>} [extra]
 * @returns {import('../../index.mjs').SessionListing}
 */
export function fakeListing(i, now, extra = {}) {
  const owner = { hostId: 'h'.repeat(64), pid: 1000 + i, startTime: '123', instanceId: `i${i}`, liveness: /** @type {const} */ ('alive') };
  return {
    name: `berth-agent-session-${i}-0a1b2c3d`,
    id: i.toString(16).padStart(64, '0'),
    sessionId: `agent-session-${i}`,
    managed: true,
    ready: true,
    state: 'running',
    rawState: 'running',
    image: 'berth-test/busybox:1',
    createdAt: new Date(now - 300_000).toISOString(),
    owner,
    ports: { '8080/tcp': '127.0.0.1:49153' },
    expiresAt: i % 2 ? now + 42 * 60_000 + 500 : null,
    holders: [{ role: 'creator', liveness: 'alive', hostId: owner.hostId, pid: owner.pid, startTime: '123', instanceId: owner.instanceId, generation: null, record: `r${i}`, invalid: null }],
    dutyGeneration: 0,
    lifecycle: 'held',
    ...extra,
  };
}

/**
 * `count` listings (10,000 by default, the count), the eighth with a 200-character
 * session id and name, exited and expired.
 * @param {number} now
 */
export function fakeListings(now, count = 10_000) {
  return Array.from({ length: count }, (_, i) =>
    fakeListing(i, now, i === 7 ? { sessionId: `long-${'x'.repeat(200)}-end7`, name: `berth-long-${'x'.repeat(200)}-0a1b2c3d`, state: 'exited', expiresAt: now - 1 } : {}),
  );
}
