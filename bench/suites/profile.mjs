// Where an agent turn's time goes: one turn of each backend through the recording proxy,
// its engine requests grouped by endpoint with their count and time (request to end of answer).
import { performance } from 'node:perf_hooks';
import { startRecordingProxy } from '../lib/recording-proxy.mjs';
import { agentBackends, agentTurn } from './agent-turn.mjs';

const endpointOf = (r) =>
  `${r.method} ${r.path
    .replace(/\?.*$/, '')
    .replace(/[0-9a-f]{64}(-[0-9a-f]+)?/g, '{id}')
    .replace(/^\/containers\/(?!create$|json$)[^/]+/, '/containers/{id}')
    .replace(/\/images\/.+\/json$/, '/images/{name}/json')}`;

export async function profileTurns(ctx, workload) {
  const proxy = await startRecordingProxy(ctx.socketPath);
  try {
    const backends = agentBackends({ ...ctx, socketPath: proxy.socketPath });
    const out = [];
    for (const [name, provider] of [['berth (harness provider)', backends.berth], ...(ctx.cli ? [['docker CLI backend', backends.cli]] : [])]) {
      proxy.take();
      const t0 = performance.now();
      await agentTurn(provider, ctx.sessionId('profile'), workload);
      const wallMs = performance.now() - t0;
      await new Promise((r) => setTimeout(r, 50));
      const recorded = proxy.take();
      const groups = new Map();
      for (const r of recorded) {
        const key = endpointOf(r);
        const g = groups.get(key) ?? { endpoint: key, calls: 0, totalMs: 0 };
        g.calls += 1;
        g.totalMs += r.lastByteMs ?? 0; // request start to the last byte of the answer
        groups.set(key, g);
      }
      const byEndpoint = [...groups.values()]
        .map((g) => ({ ...g, meanMs: g.totalMs / g.calls }))
        .sort((a, b) => b.totalMs - a.totalMs);
      out.push({ name, wallMs, requests: recorded.length, engineMs: byEndpoint.reduce((a, g) => a + g.totalMs, 0), byEndpoint });
    }
    return out;
  } finally {
    await proxy.close();
  }
}
