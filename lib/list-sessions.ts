import { loadBinding, type NativeBinding } from './binding';
import { engineOptions } from './engine-option';
import { withAbort } from './abort';
import { callNative } from './native-call';
import { toPeekResult } from './peek';
import {
  LIST_SESSIONS_OPTION_KEYS,
  type Holder,
  type HolderRole,
  type ListSessionsOptions,
  type Liveness,
  type SessionListing,
  type SessionScope,
} from './types';
import {
  compact,
  expectOptionalBoolean,
  expectOptionalOptions,
  type OptionKeys,
  expectOptionalSignal,
  expectOptionalString,
  expectOptionalStringRecord,
} from './validate';

/**
 * Lists berth-managed sessions, each as {@link peek} reports it plus its holders: the
 * creator, adopters and inheritors recorded in holder records (engine volumes), each with
 * its liveness seen from this process now. Changes nothing, except that an expired session
 * (stopped longer than its `removeAfterStopMs`, whatever its owner's liveness) is removed by
 * id (`DELETE /containers/{id}?force=true&v=true` and its records) and not listed.
 *
 * Without `prefix` or `labels` it lists every berth-managed container the engine has; both
 * narrow it by exact label match (never a name filter). `includeUnmanaged` adds the containers
 * under berth names that berth does not manage (see {@link ListSessionsOptions.includeUnmanaged}).
 *
 * Engine API: `GET /containers/json?all=true&filters={"label":["dev.berth.managed=true",…]}`,
 * `GET /containers/{id}/json` per container, `GET /volumes?filters={"label":["dev.berth.record"]}`.
 *
 * @param options `prefix`, `labels`, `includeUnmanaged`, engine selection.
 * @returns One {@link SessionListing} per managed container, in the engine's order.
 * @throws {BerthError} with a code listed in the core's `list_sessions` doc
 *   (crates/berth-core/src/lifecycle/list.rs); each code's class and `details`: docs/errors.md.
 * @example
 * ```ts
 * import { listSessions } from '@berth/core';
 *
 * for (const s of await listSessions({ labels: { team: 'a' } })) {
 *   console.log(s.sessionId, s.owner?.liveness, s.holders.map((h) => `${h.role}:${h.liveness}`));
 * }
 * ```
 */
export async function listSessions(options: ListSessionsOptions = {}): Promise<SessionListing[]> {
  const scope = scopeOptions(options, LIST_SESSIONS_OPTION_KEYS);
  expectOptionalBoolean(options.includeUnmanaged, 'includeUnmanaged');
  const native = options.includeUnmanaged ? { ...scope, includeUnmanaged: true } : scope;
  const entries = await callNative(() =>
    withAbort(options.abortSignal, 'listSessions', (token) => loadBinding().listSessions(native, token)),
  );
  return entries.map((e) => ({
    ...toPeekResult(e.session),
    holders: e.holders.map(toHolder),
    dutyGeneration: e.dutyGeneration,
  }));
}

/**
 * Checks the options' keys against `allowed` (the caller's options type), then `prefix`, `labels`
 * and engine selection; returns those without undefined members.
 */
export function scopeOptions(
  options: SessionScope,
  allowed: OptionKeys,
): NonNullable<Parameters<NativeBinding['reapOrphans']>[0]> {
  expectOptionalOptions(options, 'options', allowed);
  expectOptionalString(options.prefix, 'prefix', { wellFormed: false });
  expectOptionalStringRecord(options.labels, 'labels');
  expectOptionalSignal(options.abortSignal, 'abortSignal');
  return compact({ prefix: options.prefix, labels: options.labels, ...engineOptions(options) });
}

function toHolder(h: Awaited<ReturnType<NativeBinding['listSessions']>>[number]['holders'][number]): Holder {
  return {
    role: h.role as HolderRole,
    liveness: h.liveness as Liveness,
    hostId: h.hostId ?? null,
    pid: h.pid ?? null,
    startTime: h.startTime ?? null,
    instanceId: h.instanceId ?? null,
    generation: h.generation ?? null,
    record: h.record,
    invalid: h.invalid ?? null,
  };
}
