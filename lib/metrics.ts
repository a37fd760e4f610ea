import type { BindingMetrics } from '../binding';
import { withAbort } from './abort';
import { loadBinding, type NativeBinding } from './binding';
import { engineOptions } from './engine-option';
import { callNative } from './native-call';
import type { EngineOptions, SessionMetrics } from './types';
import { expectString } from './validate';

/** @internal The public shape of a native sample (units unchanged but CPU time: ns to ms). */
export function metricsOf(m: BindingMetrics): SessionMetrics {
  const n = (v: number | null | undefined): number | null => (v === undefined ? null : v);
  return {
    running: m.running,
    sampledAt: n(m.sampledAtMs),
    cpu: {
      percent: n(m.cpuPercent),
      usedMs: m.cpuTimeNs == null ? null : m.cpuTimeNs / 1e6,
      onlineCpus: n(m.onlineCpus),
      limit: n(m.cpuLimit),
    },
    memory: { usedBytes: n(m.memoryBytes), limitBytes: n(m.memoryLimitBytes) },
    pids: { current: n(m.pids), limit: n(m.pidsLimit) },
    network: { rxBytes: n(m.networkRxBytes), txBytes: n(m.networkTxBytes) },
    blockIo: { readBytes: n(m.blockReadBytes), writeBytes: n(m.blockWriteBytes) },
  };
}

/** @internal One sample of a container and the native form to hand back as `previous` next time. */
export interface ContainerSample {
  metrics: SessionMetrics;
  native: BindingMetrics;
}

/**
 * @internal One usage sample of container `id` (its full 64-hex id, from `listSessions`),
 * for `berth top`; `null` when it is gone. `previous`: the last sample of the same container
 * (CPU share, limits without another inspect).
 *
 * Engine API: `GET /containers/{id}/stats?stream=false&one-shot=true` (and
 * `GET /containers/{id}/json` without `previous`).
 */
export async function containerMetrics(
  id: string,
  previous: BindingMetrics | undefined,
  engine: EngineOptions & { abortSignal?: AbortSignal },
): Promise<ContainerSample | null> {
  expectString(id, 'id');
  const options = engineOptions(engine) as Parameters<NativeBinding['containerMetrics']>[2];
  const { abortSignal } = engine;
  const native = await callNative(() =>
    withAbort(abortSignal, 'metrics', (token) => loadBinding().containerMetrics(id, previous ?? null, options, token)),
  );
  return native ? { metrics: metricsOf(native), native } : null;
}
