/**
 * Public shapes of `@berth/core` (docs/design.md#public-api). Units are in the names or the docs:
 * durations in milliseconds, sizes in bytes.
 *
 * Each options type has its allowed keys listed right after it (`*_KEYS`, internal): an unknown
 * key is `E_INVALID_ARGUMENT` before any engine call, and {@link optionKeys} makes a list that
 * misses a key of its type a compile error.
 */
import { optionKeys } from './validate';

/** A container engine berth can talk to. */
export type EngineName = 'docker' | 'podman';

/**
 * Which engine to use: a name, or one per platform (`{ linux: 'podman', darwin: 'docker' }`).
 * Precedence (docs/design.md#engines): `socketPath`, then `engine`, then `DOCKER_HOST` / `CONTAINER_HOST`,
 * then the current Docker context, then the platform's usual sockets.
 */
export type EngineOption = EngineName | Partial<Record<'linux' | 'darwin' | 'win32', EngineName>>;

/** Where the engine is; all optional, discovery fills the rest (precedence: docs/design.md#engines). */
export interface EngineOptions {
  /** Engine name or per-platform map. @default discovered */
  engine?: EngineOption;
  /**
   * The engine's endpoint: a unix socket path (`/var/run/docker.sock`) or a URL
   * (`unix:///run/podman/podman.sock`, `tcp://10.0.0.5:2375`); wins over everything else.
   */
  socketPath?: string;
  /**
   * How long the engine's first answer (the first `GET /version` of an endpoint in this
   * process) may take before `E_ENGINE_UNAVAILABLE`, in milliseconds. Later requests have their
   * own per-request timeouts (docs/sessions.md "Deadlines and signals"): bound a call tighter
   * with its `timeoutMs` or `abortSignal`. A whole number from 1 to 2,147,483,647; anything
   * else is `E_INVALID_ARGUMENT` before any connection. @default 10000
   */
  connectTimeoutMs?: number;
}

/** @internal Keys of {@link EngineOptions}. */
export const ENGINE_OPTION_KEYS = ['engine', 'socketPath', 'connectTimeoutMs'] as const;
optionKeys<EngineOptions>()(ENGINE_OPTION_KEYS);

/**
 * The caller's bound on one call. Every engine request of the call is raced against the
 * signal (and against the call's own deadline where it has one, such as exec's `timeoutMs`)
 * and a per-request timeout (docs/sessions.md, "Deadlines and signals"): an abort settles the call at
 * once with `E_ABORTED`, whatever the engine does.
 */
export interface CallOptions {
  /** Aborts the call: it rejects with `E_ABORTED`; what it created on the way is removed by id. */
  abortSignal?: AbortSignal;
}

/** @internal Keys of {@link CallOptions}. */
export const CALL_OPTION_KEYS = optionKeys<CallOptions>()(['abortSignal']);

/** One image pull progress event, as the engine reports it (Podman reports few). */
export interface PullProgress {
  /** The layer (or tag) the event is about; null when the event names none. */
  layer: string | null;
  /** Bytes of that layer done so far; null when not reported. */
  current: number | null;
  /** The layer's size in bytes; null when not reported. */
  total: number | null;
  /** The engine's status word: `'Pulling fs layer'`, `'Downloading'`, `'Pull complete'`, ... */
  status: string;
}

/** How to pull an image that is missing. */
export interface PullOptions {
  /** `os/arch[/variant]` to pull (and create) for, e.g. `'linux/amd64'`. @default the engine's */
  platform?: string;
  /**
   * Called for each progress event of a pull (never when the image is already present).
   * Runs on the main thread; an exception it throws is reported as a process warning and
   * does not stop the pull. It does not keep Node alive by itself.
   */
  onPullProgress?: (progress: PullProgress) => void;
}

/** @internal Keys of {@link PullOptions}. */
export const PULL_OPTION_KEYS = ['platform', 'onPullProgress'] as const;
optionKeys<PullOptions>()(PULL_OPTION_KEYS);

/** Options of {@link ensureImage}. */
export interface EnsureImageOptions extends PullOptions, EngineOptions, CallOptions {}
/** @internal Keys of {@link EnsureImageOptions}. */
export const ENSURE_IMAGE_OPTION_KEYS = optionKeys<EnsureImageOptions>()([...PULL_OPTION_KEYS, ...ENGINE_OPTION_KEYS, 'abortSignal']);

/** Options of {@link engineInfo}. */
export interface EngineInfoOptions extends EngineOptions, CallOptions {}
/** @internal Keys of {@link EngineInfoOptions} (engine selection and `abortSignal`). */
export const ENGINE_CALL_OPTION_KEYS = optionKeys<EngineInfoOptions>()([...ENGINE_OPTION_KEYS, 'abortSignal']);

/** What {@link engineInfo} reports about the engine the options select. */
export interface EngineInfo {
  /** `'docker'` or `'podman'` (from the engine's `/version` components). */
  kind: EngineName;
  /** The engine's version, e.g. `'20.10.24+dfsg1'` or `'4.3.1'`. */
  version: string;
  /** The negotiated Engine API version, e.g. `'1.41'`. */
  apiVersion: string;
  /** The endpoint in use, e.g. `'unix:///var/run/docker.sock'` or `'tcp://10.0.0.5:2375'`. */
  endpoint: string;
  /** Whether the engine runs rootless. */
  rootless: boolean;
  /** Whether the engine is reached over the network (published ports live on its host). */
  remote: boolean;
  /**
   * Which discovery rule chose the endpoint (see docs/engines.md, "Choosing the engine"):
   * `'socketPath option'`, `'engine option (podman): CONTAINER_HOST'`, `'DOCKER_HOST'`,
   * `'CONTAINER_HOST'`, `'Docker context "colima"'`, `'Docker socket'`, `'rootless Podman socket'`, ...
   */
  strategy: string;
}

/**
 * Whether a process is running. `alive`: same host and the pid's start time matches; `dead`:
 * same host and the pid is gone or reused; `unknown`: another host or unreadable. `unknown`
 * never counts as dead.
 */
export type Liveness = 'alive' | 'dead' | 'unknown';

/** The process that created (or inherited) a session, as recorded in its container's labels. */
export interface Owner {
  /** Machine id + boot id + pid namespace of the owner's host. */
  hostId: string;
  /** The owner's pid on that host. */
  pid: number;
  /** The owner's start time, in clock ticks since boot, as the kernel reports it (decimal string). */
  startTime: string;
  /** A random id per process instance. */
  instanceId: string;
  /** Whether the owner still runs, seen from this process. */
  liveness: Liveness;
}

/** A container state, normalised over engines; `rawState` keeps the engine's word. */
export type SessionState =
  | 'created'
  | 'running'
  | 'paused'
  | 'restarting'
  | 'exited'
  | 'removing'
  | 'dead'
  | 'unknown';

/** What {@link peek} sees under a session's container name. Nothing is changed by looking. */
export interface PeekResult {
  /** The container name. */
  name: string;
  /** The full 64-hex container id. */
  id: string;
  /** The session id label; null when berth does not manage the container. */
  sessionId: string | null;
  /** Whether the container carries berth's labels. */
  managed: boolean;
  /** Whether its setup finished (a managed container only). */
  ready: boolean;
  /** Normalised state. */
  state: SessionState;
  /** The engine's own state word. */
  rawState: string;
  /** The image the container was created from. */
  image: string;
  /** Creation time, RFC 3339. */
  createdAt: string;
  /** The creator; null when unmanaged. */
  owner: Owner | null;
  /** Published ports: `"8080/tcp"` → `"127.0.0.1:49153"`. */
  ports: Record<string, string>;
  /**
   * When the session expires, in milliseconds since the epoch: its deadline (`timeoutMs`,
   * `session.setTimeout`) or, while it is stopped, its stop plus `removeAfterStopMs`, whichever
   * comes first; null when it never expires (see docs/lifetimes.md "Lifetimes").
   */
  expiresAt: number | null;
  /**
   * Where a managed session stands (docs/lifetimes.md "Parked sessions and handover"); null when unmanaged.
   * Looking changes nothing.
   */
  lifecycle: SessionLifecycle | null;
  /**
   * Why a managed session's container is not running although berth did not stop it (the
   * cause, exit code and time; `E_SESSION_DEAD` adds the log tail); null when it runs, berth
   * stopped it, or berth does not manage it (docs/operations.md "Cause of death").
   */
  death?: SessionDeath | null;
}

/** `oom-killed`, `exited`, `killed`, `engine-restarted` or `removed-outside` (docs/operations.md). */
export type DeathCause = 'oom-killed' | 'exited' | 'killed' | 'engine-restarted' | 'removed-outside';

/** Why a session's container died, as {@link PeekResult.death} reports it. */
export interface SessionDeath {
  /** What ended it. */
  cause: DeathCause;
  /** The container's exit code; null when the container is gone. */
  exitCode: number | null;
  /** When it stopped (RFC 3339, as the engine wrote it); null when gone or unknown. */
  finishedAt: string | null;
}

/**
 * `held`: a live (or uncheckable) process holds it. `parked`: its owner is gone and its lifetime
 * runs: every reap keeps it until `expiresAt`. `expired`: past `expiresAt`; the next reap removes
 * it. `orphan`: owner dead, no live holder and no lifetime (or never ready); the next reap removes it.
 */
export type SessionLifecycle = 'held' | 'parked' | 'expired' | 'orphan';

/** A holder's role; `unknown` for a record berth cannot read (counted as a live holder). */
export type HolderRole = 'creator' | 'adopter' | 'inheritor' | 'unknown';

/**
 * One process holding a session, from its holder record (an engine volume every client of
 * the engine sees). A record that does not parse has `role: 'unknown'`, `liveness: 'unknown'`
 * and the reason in `invalid`: berth never takes it for dead.
 */
export interface Holder {
  /** `creator`, `adopter`, `inheritor` (took the duty to remove over), or `unknown`. */
  role: HolderRole;
  /** Whether the holder still runs, seen from this process now. */
  liveness: Liveness;
  /** The holder's host id; null when unreadable. */
  hostId: string | null;
  /** The holder's pid; null when unreadable. */
  pid: number | null;
  /** The holder's start time in clock ticks since boot; null when unreadable. */
  startTime: string | null;
  /** The holder's per-process instance id; null when unreadable. */
  instanceId: string | null;
  /** An inheritor's duty generation (1, 2, ...); null otherwise. */
  generation: number | null;
  /** The record's volume name. */
  record: string;
  /** Why the record was refused; null when it parsed. */
  invalid: string | null;
}

/** One entry of {@link listSessions}: what {@link peek} reports plus who holds it. */
export interface SessionListing extends PeekResult {
  /** Every holder and duty record of the session. */
  holders: Holder[];
  /** The duty generation: 0 while the creator (`owner`) has the duty to remove, n after n take-overs. */
  dutyGeneration: number;
}

/** Which managed sessions {@link listSessions} and {@link reapOrphans} cover. Both filters are exact label matches, never name filters. */
export interface SessionScope extends EngineOptions, CallOptions {
  /** Only sessions created with this prefix. @default every prefix */
  prefix?: string;
  /** Only sessions whose container carries all of these labels. @default no filter */
  labels?: Record<string, string>;
}

/** @internal Keys of {@link SessionScope}. */
export const SESSION_SCOPE_KEYS = ['prefix', 'labels', ...ENGINE_OPTION_KEYS, 'abortSignal'] as const;
optionKeys<SessionScope>()(SESSION_SCOPE_KEYS);

/** Options of {@link listSessions}: the scope, plus the containers berth does not manage. */
export interface ListSessionsOptions extends SessionScope {
  /**
   * Also list containers under berth names that berth does not manage: a name of the shape
   * berth derives under `prefix` (`'berth'` when none is given), `<prefix>-<id>-<8 hex digits>`,
   * carrying `labels`, with no berth labels or with labels berth did not write (copied from an
   * image). They come after the managed ones, with `managed: false`, `sessionId: null`,
   * `owner: null`, `ready: false`, no holders and `dutyGeneration` 0. Engine API: one more
   * `GET /containers/json?all=true` (filtered by `labels` only) and `GET /containers/{id}/json`
   * per matching name. @default false
   */
  includeUnmanaged?: boolean;
}

/** @internal Keys of {@link ListSessionsOptions}. */
export const LIST_SESSIONS_OPTION_KEYS = optionKeys<ListSessionsOptions>()([...SESSION_SCOPE_KEYS, 'includeUnmanaged']);

/** Options of {@link reapOrphans}. */
export interface ReapOptions extends SessionScope {
  /** Report what would be removed and remove nothing. @default false */
  dryRun?: boolean;
}

/** @internal Keys of {@link ReapOptions}. */
export const REAP_OPTION_KEYS = optionKeys<ReapOptions>()([...SESSION_SCOPE_KEYS, 'dryRun']);

/** A container the reaper removed or kept. */
export interface ReapEntry {
  /** Full container id. */
  id: string;
  /** Container name. */
  name: string;
  /** Session id from the labels; null when unreadable. */
  sessionId: string | null;
  /**
   * Removed: `owner-dead`, `incomplete` (setup never finished, owner dead), `expired` (past its
   * deadline, or stopped longer than its `removeAfterStopMs`, whatever the owner's liveness).
   * Kept: `owner-alive`, `owner-unknown`, `held` (a live or unknown holder), `parked` (owner gone,
   * its lifetime still runs: docs/lifetimes.md "Parked sessions and handover"), `remove-failed` (the next
   * run retries).
   */
  reason: string;
}

/** What {@link reapOrphans} did; with `dryRun`, `removed` lists what would go. */
export interface ReapReport {
  /** Containers removed by id (with `dryRun`: that would be removed), each with its `reason`. */
  removed: ReapEntry[];
  /** Containers in scope left alone, each with its `reason` (`remove-failed`: retried next run). */
  kept: ReapEntry[];
  /** Record volumes whose container is gone, deleted: every one without `prefix`/`labels`, else those carrying them. */
  removedRecords: string[];
  /** Recreations cut short by a dead process, finished or rolled back before the survey (none with `dryRun`). */
  replacements: SettledReplacement[];
  /**
   * Network-guard helper containers a killed process left (their sandbox gone, or not running and
   * created over 5 minutes ago), removed by id: every one without `prefix`/`labels`, else those
   * carrying them. See docs/network.md.
   */
  removedHelpers: string[];
  /** Other berth builds' helper images (`berth-netguard:<hash>`) no container used, removed: only by a run without `prefix`/`labels`. */
  removedImages: string[];
}

/** A recreation the reaper recovered (see {@link recreateSession}). */
export interface SettledReplacement {
  /** The session's container name. */
  name: string;
  /** The id of the container that was being replaced. */
  previousId: string;
  /**
   * `completed`: the new container had been verified, the old one was removed.
   * `rolled-back`: the new container (if made) was removed, the old one is back under its name.
   * `name-taken`: another container took the name meanwhile; the old one stays aside.
   */
  outcome: 'completed' | 'rolled-back' | 'name-taken';
}

/** Whether repair in place can fix a finding. */
export type FindingKind = 'repairable' | 'hard';

/**
 * One thing verify found wrong with a session's container. Codes are stable:
 * `identity-foreign`, `identity-unrecorded`, `identity-labels`, `state-stopped`, `state-paused`,
 * `state-unusable`, `network-unguarded`, `init-missing`, `exec-failed`, `mount-missing`, `mount-type`,
 * `mount-source`, `mount-mode`, `writable-missing`, `writable-denied`, `writable-read-only`,
 * `port-unmapped` (see docs/recovery.md).
 */
export interface Finding {
  /** Stable code. */
  code: string;
  /** `repairable` (start, unpause, the network guard's rules, ownership and mode of a writable path) or `hard` (recreate). */
  kind: FindingKind;
  /** What is wrong, naming the path or field. */
  message: string;
  /** The container path concerned (mounts, writable paths). */
  path?: string;
  /** The spec field or label concerned (`mounts[0].readOnly`, `ports[1]`, `labels.team`). */
  field?: string;
  /** True once repair fixed it (and verify checked again). */
  repaired: boolean;
}

/** What {@link verifySession} reports. */
export interface Verification {
  /** The container id verified. */
  id: string;
  /** True when nothing is left unrepaired. */
  ok: boolean;
  /** Repaired findings (`repaired: true`) and those left. */
  findings: Finding[];
}

/** Options of {@link verifySession}. */
export interface VerifySessionOptions extends EngineOptions {
  /** Container name prefix. @default 'berth' */
  prefix?: string;
  /**
   * Mounts, ports, writable paths and the user to probe them as. Other create-spec fields (and
   * the other createSession options) are accepted and ignored; any other key is `E_INVALID_ARGUMENT`.
   */
  spec?: Partial<CreateSpec>;
  /** Repair repairable findings in place and verify again; a hard finding left rejects. `false`: report only. @default true */
  repair?: boolean;
  /** Aborts the verification (a repair under way finishes its engine call). */
  abortSignal?: AbortSignal;
}

/** @internal Keys of {@link VerifySessionOptions}. */
export const VERIFY_SESSION_OPTION_KEYS = optionKeys<VerifySessionOptions>()([
  'prefix',
  'spec',
  'repair',
  'abortSignal',
  ...ENGINE_OPTION_KEYS,
]);

/**
 * Options of {@link recreateSession}: the new container's spec, engine selection, pull options,
 * and the create options `files`, `removeAfterStopMs` and `timeoutMs` (as {@link CreateSessionOptions}'s).
 */
export interface RecreateSessionOptions
  extends CreateSpec,
    EngineOptions,
    PullOptions,
    Pick<CreateSessionOptions, 'files' | 'removeAfterStopMs' | 'timeoutMs'> {
  /** When the session's duty holder is dead, take the duty over first (as resumeSession's `takeOver`). @default false */
  takeOver?: boolean;
  /** Aborts the recreation: whatever it changed is rolled back before the promise rejects. */
  abortSignal?: AbortSignal;
}

/** One thing a recreation lost or kept. */
export interface ReplacedItem {
  /** Lost: `writable-layer`, `processes`, `tmpfs`, `anonymous-volume`. Kept: `bind`, `volume` (named, carried over). */
  kind: string;
  /** Host path (bind) or volume name (volume). */
  source?: string;
  /** Container path. */
  target?: string;
}

/** What {@link recreateSession} lost and kept. */
export interface Replaced {
  /** The replaced container's id (removed). */
  previousId: string;
  /** What the new container does not have (the old writable layer, its processes, tmpfs and anonymous volumes). */
  lost: ReplacedItem[];
  /** What the new container carries over (bind mounts and named volumes). */
  kept: ReplacedItem[];
}

/** How a handle came to hold its container; only `created` and `inherited` may remove it. */
export type Ownership = 'created' | 'adopted' | 'inherited';

/** A bind mount: an absolute host path into the container. */
export interface Mount {
  /** Absolute host path. */
  source: string;
  /** Absolute path in the container. */
  target: string;
  /** Mount read-only. @default false */
  readOnly?: boolean;
}

/** @internal Keys of {@link Mount}. */
export const MOUNT_KEYS = optionKeys<Mount>()(['source', 'target', 'readOnly']);

/** Everything that defines a session's container (the createSession options minus engine and abort). */
export interface CreateSpec {
  /** 1 to 256 UTF-16 code units, no control characters, no lone surrogates. */
  sessionId: string;
  /** Image reference; pulled when missing. */
  image: string;
  /** Container name prefix. @default 'berth' */
  prefix?: string;
  /**
   * Working directory in the container (absolute). When the image lacks it, the engine makes
   * it; for a non-root `user` berth then gives it to that user before the setup commands, on
   * Docker as on Podman (a directory the image ships, or a mount, keeps its owner; see
   * `docs/design.md#user-directories`). @default the image's
   */
  workDir?: string;
  /** Container ports to publish, each on 127.0.0.1 with an engine-chosen host port. */
  ports?: number[];
  /** Environment; values never go into labels or messages. */
  env?: Record<string, string>;
  /** User to run as (`'1000'`, `'nobody'`, `'1000:1000'`). @default the image's */
  user?: string;
  /** Run in order after start; a string runs under `sh -c`, an array is an argv. */
  setupCommands?: (string | string[])[];
  /** Bind mounts. */
  mounts?: Mount[];
  /**
   * Host directories bind sources must resolve inside: a source outside them, or one with a
   * symlinked segment leading elsewhere, is `E_INVALID_ARGUMENT` naming the segment. Checked
   * before the create when the engine is local. @default any existing absolute path
   */
  mountRoots?: string[];
  /**
   * Allow bind mounts that hand the sandbox the host. Refused without it, in any mode: `/`;
   * anything in `/proc`, `/sys`, `/dev`; a unix socket (any, symlinks resolved); a parent of a
   * socket bound on this host (`/proc/net/unix`), of the engine socket berth reached or of the
   * usual Docker/Podman/rootless ones; the engine state dirs `/var/lib/docker`,
   * `/var/lib/containers`, `/var/lib/containerd`, `/run/docker`, `/run/containerd`,
   * `/run/containers`, what is under them and their parents; `/etc` and `/boot` themselves.
   * Refused unless `readOnly`: anything under `/etc` or `/boot` (a read-only `/etc/hosts` is
   * fine). Compared as given and with symlinks resolved, on berth's own host only. Such a
   * mount is `E_INVALID_ARGUMENT` naming `mounts[i].source`, before any engine call. @default false
   */
  allowHostEscape?: boolean;
  /**
   * Container paths the session's user must be able to write. At create (and recreate), for a
   * non-root user, each one the image lacks is created and given to that user before the setup
   * commands (one the image ships, or one in a mount, keeps its owner). {@link @berth/core!verifySession | verifySession}
   * probes each (a file written, read back, removed) and repair creates it or gives it to the user.
   */
  writablePaths?: string[];
  /** Extra labels (keys under berth's own namespace are rejected). */
  labels?: Record<string, string>;
  /** Replaces the keep-alive entrypoint; it must not exit. @default a sleep */
  entrypoint?: string[];
  /** Network mode, e.g. `'none'`, `'bridge'`; `'host'` cannot be combined with `ports`. @default the engine's */
  networkMode?: string;
  /**
   * Let the sandbox reach the local network: the engine's bridges and their gateways (the
   * host's services), other containers (other sessions included), private, shared and
   * link-local ranges (cloud metadata at 169.254.169.254 too). By default (`false`) a session
   * reaches only the internet, its own loopback and the engine's resolvers: rules in the
   * sandbox's own network namespace, written by a short-lived berth helper container, that
   * nothing in the sandbox (root included) can change. `networkMode` `'host'` or
   * `'container:<id>'` needs `true`. See docs/network.md. @default false
   */
  localNetwork?: boolean;
  /** Capabilities to drop, e.g. `['ALL']`; `[]` keeps Docker's defaults (needed for `ping`). @default ['NET_RAW'] */
  capDrop?: string[];
  /**
   * Set `no-new-privileges`: no process gains privileges through `execve` (setuid/setgid programs
   * such as `sudo` and `su`, file capabilities). `false` is the opt-out, for setup or agents that
   * need `sudo`, and for root provisioning (`exec` as user `'0'`, `files: 'engine'`) in a session
   * whose `user` is not root on Docker, which starts such execs without capabilities under it
   * (docs/security.md). @default true
   */
  noNewPrivileges?: boolean;
  /** Mount the root filesystem read-only. @default false */
  readOnlyRootFilesystem?: boolean;
  /** Memory limit in bytes: a whole number, at least 6 MiB (6,291,456, the engine's minimum). */
  memoryBytes?: number;
  /** CPU limit in CPUs (`1.5`): 0.01 to 1024 (a smaller one would round to no limit at all). */
  cpus?: number;
  /** Maximum number of processes in the container: a whole number, at least 1 (else `E_INVALID_ARGUMENT`). @default 4096 */
  pidsLimit?: number;
}

/** @internal Keys of {@link CreateSpec}. */
export const CREATE_SPEC_KEYS = [
  'sessionId',
  'image',
  'prefix',
  'workDir',
  'ports',
  'env',
  'user',
  'setupCommands',
  'mounts',
  'mountRoots',
  'allowHostEscape',
  'writablePaths',
  'labels',
  'entrypoint',
  'networkMode',
  'localNetwork',
  'capDrop',
  'noNewPrivileges',
  'readOnlyRootFilesystem',
  'memoryBytes',
  'cpus',
  'pidsLimit',
] as const;
optionKeys<CreateSpec>()(CREATE_SPEC_KEYS);

/**
 * Who the session's file calls (`readFile`, `writeFile`, `openFile`, `writeFileStream`, the
 * harness provider's file methods) act as.
 *
 * - `'user'` (the default): as the session's user, exactly as an `exec` of that user could:
 *   permission on the file and on every directory on the way, else `E_PERMISSION_DENIED`;
 *   setuid/setgid/sticky bits in `mode` are `E_INVALID_ARGUMENT` unless the user is root.
 * - `'engine'`: with the engine's privileges (root over the whole filesystem): for callers
 *   that must write where the user may not (provisioning as a non-root user).
 */
export type FileAccess = 'user' | 'engine';

/** Options of {@link createSession}. */
export interface CreateSessionOptions extends CreateSpec, EngineOptions, PullOptions {
  /** Aborts the create; whatever was created is removed by id before the promise rejects. */
  abortSignal?: AbortSignal;
  /** Who file calls act as; see {@link FileAccess}. Not stored with the container. @default 'user' */
  files?: FileAccess;
  /**
   * Remove the container once it has been stopped this long, in milliseconds (a whole number,
   * 0 to 2,592,000,000 = 30 days; anything else is `E_INVALID_ARGUMENT` before any engine call).
   * Fixed at creation (label `dev.berth.remove-after-stop-ms`). Counted from the engine's
   * `State.FinishedAt`; starting the session again resets it. Enforced by this process after
   * its own `stop()` (a timer that never keeps Node alive) and by any berth process's
   * `reapOrphans` / `listSessions` (reason `'expired'`), whatever the owner's liveness.
   * @default undefined (a stopped session stays until it is removed)
   */
  removeAfterStopMs?: number;
  /**
   * The session expires this long after it became ready, in milliseconds (a whole number,
   * 0 to 2,592,000,000 = 30 days; anything else is `E_INVALID_ARGUMENT` before any engine
   * call); `session.setTimeout(ms)` moves the deadline. Expired means removed, whoever owns
   * it: by this process's own timer (never keeps Node alive), by any berth process's
   * `reapOrphans` / `listSessions` (reason `'expired'`), and the container's default keep-alive
   * exits by itself at the deadline (docs/lifetimes.md "Lifetimes"). Fixed at creation (label
   * `dev.berth.timeout-ms`); the current deadline is a record volume every engine client sees.
   * @default undefined (no timeout: a library does not delete user data unasked)
   */
  timeoutMs?: number;
}

/** @internal Keys of {@link CreateSessionOptions}. */
export const CREATE_SESSION_OPTION_KEYS_LIST = [
  ...CREATE_SPEC_KEYS,
  ...ENGINE_OPTION_KEYS,
  ...PULL_OPTION_KEYS,
  'abortSignal',
  'files',
  'removeAfterStopMs',
  'timeoutMs',
] as const;
/** @internal Keys of {@link CreateSessionOptions}. */
export const CREATE_SESSION_OPTION_KEYS = optionKeys<CreateSessionOptions>()(CREATE_SESSION_OPTION_KEYS_LIST);
/**
 * @internal Keys a resume's or verify's `spec` may carry: those of the create options, so the
 * options a session was created with can be passed as its `spec` (fields beyond the create spec
 * are ignored there, as before); anything else is a misspelling.
 */
export const SPEC_OPTION_KEYS = CREATE_SESSION_OPTION_KEYS;
/** @internal Keys of {@link RecreateSessionOptions}. */
export const RECREATE_SESSION_OPTION_KEYS = optionKeys<RecreateSessionOptions>()([...CREATE_SESSION_OPTION_KEYS_LIST, 'takeOver']);

/** The longest `removeAfterStopMs`, `timeoutMs` or `setTimeout` ms, in milliseconds (30 days). */
export const MAX_REMOVE_AFTER_STOP_MS = 30 * 24 * 60 * 60 * 1000;

/** Options of {@link resumeSession}. */
export interface ResumeSessionOptions extends EngineOptions {
  /** The session to resume. */
  sessionId: string;
  /** Who file calls act as; see {@link FileAccess}. @default 'user' */
  files?: FileAccess;
  /** Container name prefix. @default 'berth' */
  prefix?: string;
  /** Reject with `E_SESSION_BUSY` when a live or unknown process other than this one holds it. @default false */
  exclusive?: boolean;
  /** Take over the removal duty from a dead owner (`ownership: 'inherited'`). @default false */
  takeOver?: boolean;
  /**
   * Fields to compare with the creation digests; differences are reported in `drift`. The
   * createSession options themselves may be passed (their other keys are ignored); any other
   * key is `E_INVALID_ARGUMENT`.
   */
  spec?: Partial<CreateSpec>;
  /** `'error'` turns any drift into `E_SPEC_DRIFT` and adopts nothing. @default 'report' */
  onDrift?: 'report' | 'error';
  /**
   * Verify the adopted container against `spec` (its mounts, ports, writable paths, user) and
   * repair it in place; a hard finding left is `E_VERIFY_FAILED` and the hold is dropped again.
   * The result is on `session.verification`. @default false
   */
  verify?: boolean;
  /** Aborts the resume. */
  abortSignal?: AbortSignal;
}

/** @internal Keys of {@link ResumeSessionOptions}. */
export const RESUME_SESSION_OPTION_KEYS = optionKeys<ResumeSessionOptions>()([
  'sessionId',
  'files',
  'prefix',
  'exclusive',
  'takeOver',
  'spec',
  'onDrift',
  'verify',
  'abortSignal',
  ...ENGINE_OPTION_KEYS,
]);

/** Options of {@link peek}. */
export interface PeekOptions extends EngineOptions, CallOptions {
  /** Container name prefix. @default 'berth' */
  prefix?: string;
}

/** @internal Keys of {@link PeekOptions}. */
export const PEEK_OPTION_KEYS = optionKeys<PeekOptions>()(['prefix', ...ENGINE_OPTION_KEYS, 'abortSignal']);

/** Options of {@link Session.exec}. */
export interface ExecOptions {
  /** Working directory (absolute). @default the session's */
  cwd?: string;
  /** Extra environment for this process. */
  env?: Record<string, string>;
  /** User to run as. @default the session's */
  user?: string;
  /** Deadline in milliseconds, a whole number from 1; past it the process tree is killed and `E_EXEC_TIMEOUT` rejects. */
  timeoutMs?: number;
  /**
   * Cap on what is kept of stdout and stderr together, in bytes (whole, 0 up to Node's largest
   * `Buffer`): output is kept in the order it arrives until both streams together hold this
   * many bytes (or the process-wide budget, `setBufferBudget`, is spent), the rest is dropped
   * and `truncated` set; a process that writes more than 16 MiB past that point is killed (its
   * tree), so an endless writer settles.
   * @default 64 MiB ({@link DEFAULT_MAX_BUFFER_BYTES})
   */
  maxBufferBytes?: number;
  /** Bytes for the process's stdin (a string is sent as UTF-8); stdin is closed after them. */
  stdin?: Uint8Array | string;
  /** Kills the process tree and rejects with `E_ABORTED` (carrying the output so far). */
  abortSignal?: AbortSignal;
}

/** @internal Keys of {@link ExecOptions}. */
export const EXEC_OPTION_KEYS_LIST = ['cwd', 'env', 'user', 'timeoutMs', 'maxBufferBytes', 'stdin', 'abortSignal'] as const;
/** @internal Keys of {@link ExecOptions}. */
export const EXEC_OPTION_KEYS = optionKeys<ExecOptions>()(EXEC_OPTION_KEYS_LIST);

/** Options of {@link Session.spawn}: those of {@link ExecOptions} except the buffer cap (nothing is buffered). */
export type SpawnOptions = Omit<ExecOptions, 'maxBufferBytes'>;
/** @internal Keys of {@link SpawnOptions}. */
export const SPAWN_OPTION_KEYS = optionKeys<SpawnOptions>()(['cwd', 'env', 'user', 'timeoutMs', 'stdin', 'abortSignal']);

/** Options of {@link Session.readFile} and {@link Session.openFile}. */
export interface ReadFileOptions {
  /**
   * The largest file the read takes, in bytes (whole, 0 up to Node's largest `Buffer`). A larger
   * file is `E_FILE_TOO_LARGE` (`details`: `path`, `size` when known, `maxBytes`) and the host
   * stops reading at the cap. `readFile`: default {@link DEFAULT_MAX_READ_BYTES} (64 MiB);
   * `openFile`: no cap unless given (the stream is bounded by the size the file had when opened).
   */
  maxBytes?: number;
  /** Aborts the read (`E_ABORTED`, at once, whatever the engine does); cancels a stream being read. */
  abortSignal?: AbortSignal;
}

/** @internal Keys of {@link ReadFileOptions}. */
export const READ_FILE_OPTION_KEYS = optionKeys<ReadFileOptions>()(['maxBytes', 'abortSignal']);

/** `readFile`'s default `maxBytes`: 64 MiB. */
export const DEFAULT_MAX_READ_BYTES = 64 * 1024 * 1024;

/** `exec`'s default `maxBufferBytes` (stdout and stderr together): 64 MiB. */
export const DEFAULT_MAX_BUFFER_BYTES = 64 * 1024 * 1024;

/** Options of {@link Session.writeFile} and {@link Session.writeFileStream}. */
export interface WriteFileOptions {
  /** File mode bits, 0 to 0o7777. @default 0o644 */
  mode?: number;
  /** Cancels the upload and rejects with `E_ABORTED`. */
  abortSignal?: AbortSignal;
}

/** @internal Keys of {@link WriteFileOptions}. */
export const WRITE_FILE_OPTION_KEYS = optionKeys<WriteFileOptions>()(['mode', 'abortSignal']);

/** A finished exec. */
export interface ExecResult {
  /** The process's exit code, as the engine reports it. */
  exitCode: number;
  /** Its stdout bytes (with stderr, capped by `maxBufferBytes`). */
  stdout: Buffer;
  /** Its stderr bytes (with stdout, capped by `maxBufferBytes`). */
  stderr: Buffer;
  /** True when output past `maxBufferBytes` (or the process-wide budget) was dropped. */
  truncated?: boolean;
  /**
   * True when the memory limit's OOM killer ended the process: exit code 137 and the
   * container's cgroup counted a new OOM kill since this handle last looked (one extra
   * command, run only after an exit code 137).
   */
  oomKilled?: boolean;
}

/** A finished exec whose output was decoded as UTF-8 ({@link Session.execText}). */
export interface ExecTextResult {
  /** The process's exit code, as the engine reports it. */
  exitCode: number;
  /** Its stdout as text (with stderr, capped by `maxBufferBytes` in bytes before decoding). */
  stdout: string;
  /** Its stderr as text. */
  stderr: string;
  /** True when output past `maxBufferBytes` (or the process-wide budget) was dropped. */
  truncated: boolean;
  /** True when the memory limit's OOM killer ended the process (as {@link ExecResult.oomKilled}). */
  oomKilled: boolean;
}

/** Outbound network access of a session container (see `Session.setNetworkPolicy`). */
export interface NetworkPolicy {
  /** `'allow-all'`: attached to its own network; `'deny-all'`: loopback only. */
  mode: 'allow-all' | 'deny-all';
}

/** @internal Keys of {@link NetworkPolicy}. */
export const NETWORK_POLICY_KEYS = optionKeys<NetworkPolicy>()(['mode']);

/**
 * Options of {@link Session.stop}. Only an owner (created or inherited) stops the container;
 * an adopted handle resolves `{ stopped: false, reason: 'not-owner' }` without an engine call
 * unless `force`. See docs/design.md#ownership-and-removal.
 */
export interface StopOptions extends CallOptions {
  /** Stop even an adopted session (another process's container). @default false */
  force?: boolean;
  /** Grace period after SIGTERM before SIGKILL, in milliseconds: a whole number, 0 to 2,147,483,647. @default 10000 */
  timeoutMs?: number;
}

/** @internal Keys of {@link StopOptions}. */
export const STOP_OPTION_KEYS = optionKeys<StopOptions>()(['force', 'timeoutMs', 'abortSignal']);

/** Outcome of {@link Session.stop}; `reason` is e.g. `'not-owner'` when nothing was done. */
export interface StopResult {
  /** Whether this call stopped the container (an engine stop was made). */
  stopped: boolean;
  /** Why nothing was done when `stopped` is false, e.g. `'not-owner'`. */
  reason?: string;
}

/** Options of {@link Session.metrics}. */
export interface MetricsOptions extends CallOptions {
  /**
   * Bound of the whole call, in milliseconds (1 to 2^31-1); past it the call rejects
   * `E_ENGINE_UNAVAILABLE`. @default 10000 (the stats request's own timeout)
   */
  timeoutMs?: number;
}

/** @internal Keys of {@link MetricsOptions}. */
export const METRICS_OPTION_KEYS = optionKeys<MetricsOptions>()(['timeoutMs', 'abortSignal']);

/**
 * One usage sample of a session's container ({@link Session.metrics}, `berth top --json`).
 * A figure the engine did not report is `null`, never a made-up 0; every figure is `null`
 * when `running` is false (berth stopped the session).
 */
export interface SessionMetrics {
  /** Whether the container is running (a paused one counts: its figures, CPU share 0). */
  running: boolean;
  /** When the engine took the sample, in ms since the epoch (`read` of the stats answer). */
  sampledAt: number | null;
  /** CPU: the share, the time used, the CPUs and the limit. */
  cpu: {
    /**
     * CPU share since the previous sample of the same handle, in percent of ONE CPU (200:
     * two CPUs busy; at most `onlineCpus` × 100, or `limit` × 100). `null` on a handle's
     * first sample: a share needs two readings.
     */
    percent: number | null;
    /** CPU time the container used since it started, in ms (fractional). */
    usedMs: number | null;
    /** CPUs online for the container, as the engine reports them. */
    onlineCpus: number | null;
    /** The CPU limit the container was created with (`cpus`), in CPUs; `null`: none. */
    limit: number | null;
  };
  /** Memory in use and its limit. */
  memory: {
    /**
     * Memory in use, in bytes, without the page cache's inactive files (as `docker stats`:
     * `usage - total_inactive_file` on cgroup v1, `usage - inactive_file` on v2).
     */
    usedBytes: number | null;
    /** The memory limit the engine reports, in bytes (the host's memory when none was set). */
    limitBytes: number | null;
  };
  /** Processes and the pids limit. */
  pids: {
    /** Processes (tasks) in the container's cgroup. */
    current: number | null;
    /** The pids limit (`pidsLimit`); `null`: none. */
    limit: number | null;
  };
  /** Network bytes since the container started. */
  network: {
    /** Bytes received since the container started, summed over its interfaces. */
    rxBytes: number | null;
    /** Bytes sent since the container started, summed over its interfaces. */
    txBytes: number | null;
  };
  /** Block device bytes since the container started. */
  blockIo: {
    /** Bytes read from block devices since the container started. */
    readBytes: number | null;
    /** Bytes written to block devices since the container started. */
    writeBytes: number | null;
  };
}

/** Options of {@link Session.remove}. */
export interface RemoveOptions extends CallOptions {
  /** Remove even an adopted session. @default false */
  force?: boolean;
}

/** @internal Keys of {@link RemoveOptions}. */
export const REMOVE_OPTION_KEYS = optionKeys<RemoveOptions>()(['force', 'abortSignal']);

/** Outcome of {@link Session.release}: `reason` is `'owner'` or `'already-released'` when `released` is false. */
export interface ReleaseResult {
  /** Whether this call dropped the handle's holder record. */
  released: boolean;
  /** Why nothing was released. */
  reason?: 'owner' | 'already-released';
}

/** Outcome of {@link Session.remove}: `reason` is `'not-owner'`, `'absent'` or `'already-removed'` when `removed` is false. */
export interface RemoveResult {
  /** Whether this call removed the container. */
  removed: boolean;
  /** Why nothing was removed when `removed` is false: `'not-owner'`, `'absent'` or `'already-removed'`. */
  reason?: string;
}
