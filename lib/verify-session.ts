import { withAbort } from './abort';
import { loadBinding, type NativeBinding } from './binding';
import { toNativeSpec } from './create-spec';
import { engineOptions } from './engine-option';
import { callNative } from './native-call';
import { finding } from './session';
import { SPEC_OPTION_KEYS, VERIFY_SESSION_OPTION_KEYS, type Verification, type VerifySessionOptions } from './types';
import {
  compact,
  expectOptionalBoolean,
  expectOptionalOptions,
  expectOptionalSignal,
  expectOptionalString,
  expectString,
} from './validate';

/**
 * Verifies a session's container and, by default, repairs in place what can be repaired.
 *
 * Always checked: identity (the container under the name is berth's for this session, its id
 * is the one the creation record names, and its labels are those recorded at creation), state,
 * that an init process runs as PID 1, and that an exec works. From `spec`: each bind mount
 * present with its type, source and read-only flag (from inspect: `Mounts` and
 * `HostConfig.Tmpfs`), each of `writablePaths` writable by the session's user (`spec.user`, or
 * the container's; a probe file written, read back and removed), each of `ports` published.
 *
 * Each finding has a stable `code` and a `kind`. Repairable ones (`state-stopped`,
 * `state-paused`, `network-unguarded`, `writable-missing`, `writable-denied`) are fixed in
 * place (start, unpause, the network guard's rules written again, `mkdir -p` + `chown` to the
 * user + `u+rwx`) and the container is verified again; a hard one
 * left rejects with `E_VERIFY_FAILED`, its `details.findings` listing every finding. A
 * container that is not this session's is never repaired. With `repair: false` nothing is
 * changed and the findings are returned (`ok: false` when there are any).
 *
 * A recreation of this session that a dead process left half-done is finished or rolled back
 * first (see {@link recreateSession}).
 *
 * Engine API: `GET /containers/{name}/json`, `GET /images/{id}/json`,
 * `GET /volumes/berth-ready-<id>`, execs (`POST /containers/{id}/exec`, `POST /exec/{id}/start`,
 * `GET /exec/{id}/json`); repairs: `POST /containers/{id}/start`, `POST /containers/{id}/unpause`, execs.
 *
 * @param sessionId The session to verify.
 * @param options `prefix`, `spec` (`mounts`, `ports`, `writablePaths`, `user`), `repair` (default true),
 *   engine selection, `abortSignal`.
 * @returns `{ id, ok, findings }`; repaired findings carry `repaired: true`.
 * @throws {BerthError} with a code listed in the core's `verify_session` doc
 *   (crates/berth-core/src/lifecycle/verify.rs); each code's class and `details`: docs/errors.md.
 * @example
 * ```ts
 * import { verifySession, VerifyFailedError } from '@berth/core';
 *
 * try {
 *   const { findings } = await verifySession('agent-42', { spec: { writablePaths: ['/work'] } });
 *   for (const f of findings) console.log(`repaired ${f.code}: ${f.message}`);
 * } catch (error) {
 *   if (VerifyFailedError.isInstance(error)) console.log(error.details.findings); // recreate it
 * }
 * ```
 */
export async function verifySession(sessionId: string, options: VerifySessionOptions = {}): Promise<Verification> {
  expectString(sessionId, 'sessionId', { wellFormed: false });
  expectOptionalOptions(options, 'options', VERIFY_SESSION_OPTION_KEYS);
  const { prefix, spec, repair, abortSignal, engine, socketPath, connectTimeoutMs } = options;
  expectOptionalString(prefix, 'prefix', { wellFormed: false });
  expectOptionalOptions(spec, 'spec', SPEC_OPTION_KEYS, 'spec.');
  expectOptionalBoolean(repair, 'repair');
  expectOptionalSignal(abortSignal, 'abortSignal');
  const native = compact({
    prefix,
    spec: spec === undefined ? undefined : toNativeSpec(spec, 'spec.'),
    repair,
    ...engineOptions({ engine, socketPath, connectTimeoutMs }),
  }) as Parameters<NativeBinding['verifySession']>[1];
  const v = await callNative(() =>
    withAbort(abortSignal, 'verifySession', (token) => loadBinding().verifySession(sessionId, native, token)),
  );
  return { id: v.id, ok: v.ok, findings: v.findings.map(finding) };
}
