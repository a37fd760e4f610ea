import { loadBinding } from './binding';
import { withAbort } from './abort';
import { callNative } from './native-call';
import { scopeOptions } from './list-sessions';
import { REAP_OPTION_KEYS, type ReapEntry, type ReapOptions, type ReapReport, type SettledReplacement } from './types';
import { expectOptionalBoolean } from './validate';

/**
 * Removes orphaned sessions: managed containers whose duty holder (the creator, or the last
 * process that took the duty over) is dead — never merely unknown — and that no live or
 * unknown holder holds, plus those a dead owner left incomplete (setup never finished), plus
 * expired ones of any owner, alive or not (past their deadline, or stopped longer than their
 * `removeAfterStopMs`, from `State.FinishedAt`; reason `'expired'`; see
 * {@link CreateSessionOptions.removeAfterStopMs}). A dead owner's session whose lifetime still
 * runs is kept (`'parked'`, docs/lifetimes.md "Parked sessions and handover").
 * Each candidate is inspected and its records read again right before its removal, which is
 * by container id with its anonymous volumes and records. A removal that fails is reported
 * as kept (`remove-failed`); the next run tries again.
 *
 * First it finishes or rolls back recreations a dead process left half-done (see
 * {@link recreateSession}) whose records carry `labels`, so exactly one container stays under
 * each name; they are listed in `replacements`.
 *
 * Without `prefix` or `labels` it covers every berth-managed container the engine has; both
 * narrow it by exact label match. It also deletes record volumes whose container is gone (in a
 * narrowed run, those carrying its labels and prefix: every record carries them).
 *
 * Engine API: as {@link listSessions}, then per orphan `GET /containers/{id}/json`,
 * `GET /volumes?filters=…`, `DELETE /containers/{id}?force=true&v=true`, `DELETE /volumes/{name}`.
 *
 * @param options `dryRun` (remove nothing, report what would go), `prefix`, `labels`, engine selection.
 * It also removes the network guard's helper containers a killed process left, and, without
 * `prefix`/`labels`, other berth builds' unused helper images (docs/network.md).
 *
 * @returns `{ removed, kept, removedRecords, replacements, removedHelpers, removedImages }`, each container with its reason.
 * @throws {BerthError} with a code listed in the core's `reap_orphans` doc
 *   (crates/berth-core/src/lifecycle/reap.rs); each code's class and `details`: docs/errors.md.
 * @example
 * ```ts
 * import { reapOrphans } from '@berth/core';
 *
 * const { removed, kept } = await reapOrphans({ prefix: 'berth' });
 * for (const r of removed) console.log(`reaped ${r.name}: ${r.reason}`);
 * ```
 */
export async function reapOrphans(options: ReapOptions = {}): Promise<ReapReport> {
  const scope = scopeOptions(options, REAP_OPTION_KEYS);
  expectOptionalBoolean(options.dryRun, 'dryRun');
  const native = options.dryRun === undefined ? scope : { ...scope, dryRun: options.dryRun };
  const report = await callNative(() =>
    withAbort(options.abortSignal, 'reapOrphans', (token) => loadBinding().reapOrphans(native, token)),
  );
  const entry = (e: (typeof report.removed)[number]): ReapEntry => ({ ...e, sessionId: e.sessionId ?? null });
  return {
    removed: report.removed.map(entry),
    kept: report.kept.map(entry),
    removedRecords: report.removedRecords,
    removedHelpers: report.removedHelpers,
    removedImages: report.removedImages,
    replacements: report.replacements.map((r) => ({ ...r, outcome: r.outcome as SettledReplacement['outcome'] })),
  };
}
