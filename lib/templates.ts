import { loadBinding } from './binding';
import { engineOptions, type NativeEngineOptions } from './engine-option';
import { callNative } from './native-call';
import type { EngineOptions } from './types';
import { compact, expectOptionalObject, expectOptionalStringRecord, expectString } from './validate';

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
export interface TemplateOptions extends EngineOptions {
  /** Only templates whose image carries all of these labels (exact matches). @default every template */
  labels?: Record<string, string>;
}

function nativeOptions(options: TemplateOptions): NativeEngineOptions & { labels?: Record<string, string> } {
  expectOptionalObject(options, 'options');
  expectOptionalStringRecord(options.labels, 'labels');
  return compact({ labels: options.labels, ...engineOptions(options) });
}

/**
 * Lists template images (`berth-template:*`), for example those the harness provider
 * committed per `identity`. Changes nothing.
 *
 * Engine API: `GET /images/json?filters={"reference":["berth-template"],"label":[…]}`.
 * @throws EngineUnavailableError `E_ENGINE_UNAVAILABLE`, EngineError `E_ENGINE`.
 */
export async function listTemplates(options: TemplateOptions = {}): Promise<TemplateInfo[]> {
  const native = nativeOptions(options);
  const list = await callNative(() => loadBinding().listTemplates(native));
  return list.map((t) => ({ key: t.key, reference: t.reference, id: t.id, createdMs: t.createdMs, size: t.size, labels: t.labels }));
}

/**
 * Removes the template `berth-template:<key>` unless a container still uses it (never forced).
 *
 * Engine API: `DELETE /images/berth-template:<key>`.
 * @returns `'removed'`, `'in-use'` (nothing removed) or `'absent'`.
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` for a malformed key.
 */
export async function removeTemplate(key: string, options: EngineOptions = {}): Promise<'removed' | 'in-use' | 'absent'> {
  expectString(key, 'key');
  const native = nativeOptions(options);
  return (await callNative(() => loadBinding().removeTemplate(key, native))) as 'removed' | 'in-use' | 'absent';
}

/**
 * Removes every template (matching `labels`) that no container uses; keeps the others.
 *
 * Engine API: as {@link listTemplates}, then `DELETE /images/berth-template:<key>` for each.
 * @returns The keys removed and the keys kept because a container uses them.
 */
export async function pruneTemplates(options: TemplateOptions = {}): Promise<{ removed: string[]; kept: string[] }> {
  const removed: string[] = [];
  const kept: string[] = [];
  for (const t of await listTemplates(options)) {
    const outcome = await removeTemplate(t.key, options);
    if (outcome === 'in-use') kept.push(t.key);
    else if (outcome === 'removed') removed.push(t.key);
  }
  return { removed, kept };
}

/** @internal Whether `berth-template:<key>` exists (`GET /images/{ref}/json`). */
export async function templateExists(key: string, options: EngineOptions = {}): Promise<boolean> {
  const native = nativeOptions(options);
  return callNative(() => loadBinding().templateExists(key, native));
}
