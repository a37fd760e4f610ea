import { withAbort } from './abort';
import { AbortedError } from './errors/aborted-error';
import { loadBinding } from './binding';
import { engineOptions, type NativeEngineOptions } from './engine-option';
import { callNative } from './native-call';
import { ENGINE_CALL_OPTION_KEYS, ENGINE_OPTION_KEYS, type CallOptions, type EngineOptions } from './types';
import {
  compact,
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
  /** The image's caller labels (copied from the container it was committed from). */
  labels: Record<string, string>;
}

/** Options of the template functions. */
export interface TemplateOptions extends EngineOptions, CallOptions {
  /** Only templates whose image carries all of these labels (exact matches). @default every template */
  labels?: Record<string, string>;
}

/** @internal Keys of {@link TemplateOptions}. */
const TEMPLATE_OPTION_KEYS = optionKeys<TemplateOptions>()(['labels', ...ENGINE_OPTION_KEYS, 'abortSignal']);

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
 * Engine API: `GET /images/json?filters={"reference":["berth-template"],"label":[…]}`.
 * @param options `abortSignal`: aborts the call at once, whatever the engine does.
 * @throws {BerthError} with a code listed in the core's `list_templates` doc
 *   (crates/berth-core/src/lifecycle/templates.rs), `E_ABORTED` among them.
 */
export async function listTemplates(options: TemplateOptions = {}): Promise<TemplateInfo[]> {
  const native = nativeOptions(options);
  const list = await callNative(() =>
    withAbort(options.abortSignal, 'listTemplates', (token) => loadBinding().listTemplates(native, token)),
  );
  return list.map((t) => ({ key: t.key, reference: t.reference, id: t.id, createdMs: t.createdMs, size: t.size, labels: t.labels }));
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
 * Removes every template (matching `labels`) that no container uses; keeps the others.
 *
 * Engine API: as {@link listTemplates}, then `DELETE /images/berth-template:<key>` for each.
 * `abortSignal` bounds the whole call: an abort stops it at once (`E_ABORTED`); what was removed
 * before stays removed.
 * @returns The keys removed and the keys kept because a container uses them.
 */
export async function pruneTemplates(options: TemplateOptions = {}): Promise<{ removed: string[]; kept: string[] }> {
  const removed: string[] = [];
  const kept: string[] = [];
  const { labels: _filter, ...each } = options ?? {};
  try {
    for (const t of await listTemplates(options)) {
      const outcome = await removeTemplate(t.key, each);
      if (outcome === 'in-use') kept.push(t.key);
      else if (outcome === 'removed') removed.push(t.key);
    }
  } catch (error) {
    // The abort is pruneTemplates', whichever of its steps it stopped.
    if (AbortedError.isInstance(error)) {
      throw new AbortedError(error.message.replace(/^(listTemplates|removeTemplate)\b/, 'pruneTemplates'), {
        details: { ...error.details, operation: 'pruneTemplates' },
        cause: error,
      });
    }
    throw error;
  }
  return { removed, kept };
}

/** @internal Whether `berth-template:<key>` exists (`GET /images/{ref}/json`). */
export async function templateExists(key: string, options: EngineOptions & CallOptions = {}): Promise<boolean> {
  const native = nativeOptions(options, ENGINE_CALL_OPTION_KEYS);
  return callNative(() =>
    withAbort(options.abortSignal, 'templateExists', (token) => loadBinding().templateExists(key, native, token)),
  );
}
