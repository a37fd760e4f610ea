import { withAbort } from './abort';
import { loadBinding } from './binding';
import { engineOptions, type NativeEngineOptions } from './engine-option';
import { callNative } from './native-call';
import { ENGINE_CALL_OPTION_KEYS, ENGINE_OPTION_KEYS, type CallOptions, type EngineOptions } from './types';
import {
  compact,
  expectOptionalNumber,
  expectOptionalOptions,
  expectOptionalSignal,
  expectOptionalStringRecord,
  expectString,
  optionKeys,
  type OptionKeys,
} from './validate';

/** The local image repository templates live in (`berth-template:<key>`); never pushed. */
export const TEMPLATE_REPO = 'berth-template';

/** One template image, as {@link listTemplates} reports it. */
export interface TemplateInfo {
  /** The key (the image tag). */
  key: string;
  /** `berth-template:<key>`. */
  reference: string;
  /** Image id (`sha256:…`). */
  id: string;
  /** Creation time, milliseconds since the Unix epoch. */
  createdMs: number;
  /** Size in bytes, as the engine reports it. */
  size: number;
  /**
   * The image's caller labels, copied from the container it was first committed from (a
   * template is shared by every caller whose spec builds the same filesystem, whatever their
   * labels: these are its builder's).
   */
  labels: Record<string, string>;
  /**
   * When it was last used, milliseconds since the epoch: its commit, or the newest create from
   * it (recorded at most once a minute, in a volume `berth-template-used-<key>-<ms>`); its
   * creation time when no use is recorded.
   */
  lastUsedMs: number;
}

/** Options of {@link pruneTemplates}. */
export interface PruneTemplatesOptions extends TemplateOptions {
  /**
   * Only templates last used (see {@link TemplateInfo.lastUsedMs}) at least this many
   * milliseconds ago; whole number >= 0. @default every template no container uses
   */
  unusedForMs?: number;
}

/** What {@link pruneTemplates} did, by template key. */
export interface PruneTemplatesResult {
  /** Removed (the image and its use records). */
  removed: string[];
  /** Stale, but kept: a container (running or not) uses its image. */
  kept: string[];
  /** Used within `unusedForMs`: left alone. */
  recent: string[];
}

/** Options of the template functions. */
export interface TemplateOptions extends EngineOptions, CallOptions {
  /** Only templates whose image carries all of these labels (exact matches). @default every template */
  labels?: Record<string, string>;
}

/** @internal Keys of {@link TemplateOptions}. */
const TEMPLATE_OPTION_KEYS = optionKeys<TemplateOptions>()(['labels', ...ENGINE_OPTION_KEYS, 'abortSignal']);
/** @internal Keys of {@link PruneTemplatesOptions}. */
const PRUNE_OPTION_KEYS = optionKeys<PruneTemplatesOptions>()(['labels', 'unusedForMs', ...ENGINE_OPTION_KEYS, 'abortSignal']);

function nativeOptions(
  options: TemplateOptions,
  allowed: OptionKeys = TEMPLATE_OPTION_KEYS,
): NativeEngineOptions & { labels?: Record<string, string> } {
  expectOptionalOptions(options, 'options', allowed);
  expectOptionalStringRecord(options.labels, 'labels');
  expectOptionalSignal(options.abortSignal, 'abortSignal');
  return compact({ labels: options.labels, ...engineOptions(options) });
}

/**
 * Lists template images (`berth-template:*`), for example those the harness provider
 * committed per `identity`. Changes nothing.
 *
 * Engine API: `GET /images/json`, `GET /volumes?filters={"label":["dev.berth.template.key"]}` (use records).
 * @param options `abortSignal`: aborts the call at once, whatever the engine does.
 * @throws {BerthError} with a code listed in the core's `list_templates` doc
 *   (crates/berth-core/src/lifecycle/templates.rs), `E_ABORTED` among them.
 */
export async function listTemplates(options: TemplateOptions = {}): Promise<TemplateInfo[]> {
  const native = nativeOptions(options);
  const list = await callNative(() =>
    withAbort(options.abortSignal, 'listTemplates', (token) => loadBinding().listTemplates(native, token)),
  );
  return list.map((t) => ({
    key: t.key,
    reference: t.reference,
    id: t.id,
    createdMs: t.createdMs,
    size: t.size,
    labels: t.labels,
    lastUsedMs: t.lastUsedMs,
  }));
}

/**
 * Removes the template `berth-template:<key>` unless a container still uses it (never forced).
 *
 * Engine API: `DELETE /images/berth-template:<key>`.
 * @param options `abortSignal`: aborts the call at once, whatever the engine does.
 * @returns `'removed'`, `'in-use'` (nothing removed) or `'absent'`.
 * @throws {BerthError} with a code listed in the core's `remove_template` doc
 *   (crates/berth-core/src/lifecycle/templates.rs): `E_INVALID_ARGUMENT` for a malformed key, `E_ABORTED`, ...
 */
export async function removeTemplate(
  key: string,
  options: EngineOptions & CallOptions = {},
): Promise<'removed' | 'in-use' | 'absent'> {
  expectString(key, 'key');
  const native = nativeOptions(options, ENGINE_CALL_OPTION_KEYS);
  return (await callNative(() =>
    withAbort(options.abortSignal, 'removeTemplate', (token) => loadBinding().removeTemplate(key, native, token)),
  )) as 'removed' | 'in-use' | 'absent';
}

/**
 * Removes every template (matching `labels`) last used at least `unusedForMs` ago that no
 * container uses; keeps the others. Without `unusedForMs`, every template no container uses.
 * A test suite's teardown: `pruneTemplates({ unusedForMs: 7 * 24 * 3_600_000 })` keeps the
 * template this run used for the next run, and removes the ones no run used for a week.
 *
 * Engine API: as {@link listTemplates}, then for each stale one `DELETE /images/{id}` by the
 * image id it listed (never forced: 409, a container uses it, is `kept`; a tag rebuilt meanwhile
 * is another image, not touched) and `DELETE /volumes/{name}` for its use records.
 * `abortSignal` bounds the whole call: an abort stops it at once (`E_ABORTED`, operation
 * `pruneTemplates`); what was removed before stays removed.
 * @throws {BerthError} with a code listed in the core's `prune_templates` doc
 *   (crates/berth-core/src/lifecycle/templates.rs): `E_INVALID_ARGUMENT` for a bad
 *   `unusedForMs` (before any engine call), `E_ABORTED`, ...
 */
export async function pruneTemplates(options: PruneTemplatesOptions = {}): Promise<PruneTemplatesResult> {
  const native = nativeOptions(options, PRUNE_OPTION_KEYS);
  const age = options?.unusedForMs;
  // A safe integer (JavaScript's own bound); a negative one is refused by the binding's conversion.
  expectOptionalNumber(age, 'unusedForMs');
  const r = await callNative(() =>
    withAbort(options.abortSignal, 'pruneTemplates', (token) => loadBinding().pruneTemplates(age ?? null, native, token)),
  );
  return { removed: r.removed, kept: r.kept, recent: r.recent };
}

/**
 * @internal Records a use of `berth-template:<key>` now (at most once a minute per template),
 * before a create from it. Engine API: `GET /volumes?filters=…`, `POST /volumes/create`,
 * `DELETE /volumes/{name}`.
 */
export async function touchTemplate(key: string, options: EngineOptions & CallOptions = {}): Promise<void> {
  expectString(key, 'key');
  const native = nativeOptions(options, ENGINE_CALL_OPTION_KEYS);
  await callNative(() =>
    withAbort(options.abortSignal, 'touchTemplate', (token) => loadBinding().touchTemplate(key, native, token)),
  );
}

/**
 * @internal The id (`sha256:…`) of image `reference`, or null when the engine does not have it
 * (nothing is pulled). Engine API: `GET /images/{reference}/json`.
 */
export async function imageId(reference: string, options: EngineOptions & CallOptions = {}): Promise<string | null> {
  expectString(reference, 'image');
  const native = nativeOptions(options, ENGINE_CALL_OPTION_KEYS);
  return (
    (await callNative(() =>
      withAbort(options.abortSignal, 'imageId', (token) => loadBinding().imageId(reference, native, token)),
    )) ?? null
  );
}

/** @internal Whether `berth-template:<key>` exists (`GET /images/{ref}/json`). */
export async function templateExists(key: string, options: EngineOptions & CallOptions = {}): Promise<boolean> {
  const native = nativeOptions(options, ENGINE_CALL_OPTION_KEYS);
  return callNative(() =>
    withAbort(options.abortSignal, 'templateExists', (token) => loadBinding().templateExists(key, native, token)),
  );
}
