import { InvalidArgumentError } from './errors/invalid-argument-error';

/**
 * Type checks on arguments, done in JS before any native call so that a wrong type is an
 * `E_INVALID_ARGUMENT` rejection naming the field, never a napi conversion error.
 * Value rules (session id form, absolute paths, ranges) are the native core's job.
 */

/** Throws an `E_INVALID_ARGUMENT` error for `field`. */
export function invalid(field: string, reason: string): never {
  throw new InvalidArgumentError(`invalid argument \`${field}\`: ${reason}`, { details: { field, reason } });
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/** `value` must be a plain object (not null, not an array). */
export function expectObject(value: unknown, field: string): asserts value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    invalid(field, `expected an object, got ${describe(value)}`);
  }
}

/** `value` must be undefined or a plain object. */
export function expectOptionalObject(value: unknown, field: string): asserts value is Record<string, unknown> | undefined {
  if (value !== undefined) expectObject(value, field);
}

/** `value` must be a string. */
export function expectString(value: unknown, field: string, options: StringRules = {}): asserts value is string {
  if (typeof value !== 'string') invalid(field, `expected a string, got ${describe(value)}`);
  if (options.wellFormed !== false) expectWellFormed(value, field);
}

/** `value` must be undefined or a string. */
export function expectOptionalString(
  value: unknown,
  field: string,
  options: StringRules = {},
): asserts value is string | undefined {
  if (value !== undefined) expectString(value, field, options);
}

/** Rules beyond "is a string". */
export interface StringRules {
  /**
   * Reject lone surrogates, which Node-API would silently turn into U+FFFD on the way to the
   * engine. Off only where the native side reads UTF-16 itself (session ids, prefixes, which it
   * validates by their own rules, and the pure `containerName`). @default true
   */
  wellFormed?: boolean;
}

/** `value` must be well-formed UTF-16 (no lone surrogates). */
export function expectWellFormed(value: string, field: string): void {
  if (!value.isWellFormed()) invalid(field, 'must not contain lone surrogates');
}

/** `value` must be undefined or a boolean. */
export function expectOptionalBoolean(value: unknown, field: string): asserts value is boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') invalid(field, `expected a boolean, got ${describe(value)}`);
}

/**
 * `value` must be undefined or a finite number (a safe integer when `integer`: JavaScript's own
 * limit, past which a number is no longer exact). This is a type check: the product's ranges
 * (lifetimes, limits, timeouts, modes, ports) and their messages are the native core's, and the
 * binding refuses a number that does not fit its Rust type. `min`/`max` are only for bounds that
 * are JavaScript's own (a Buffer's or a string's maximum length) or of an option that never
 * reaches the core (the harness provider's output caps).
 */
export function expectOptionalNumber(
  value: unknown,
  field: string,
  { min = Number.NEGATIVE_INFINITY, max = Number.POSITIVE_INFINITY, integer = true }: { min?: number; max?: number; integer?: boolean } = {},
): asserts value is number | undefined {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isFinite(value)) invalid(field, `expected a finite number, got ${describe(value)}`);
  if (integer && !Number.isSafeInteger(value)) invalid(field, `expected an integer, got ${value}`);
  if (value < min) invalid(field, `expected at least ${min}, got ${value}`);
  if (value > max) invalid(field, `expected at most ${max}, got ${value}`);
}

/** `value` must be undefined or a function. */
export function expectOptionalFunction(value: unknown, field: string): asserts value is ((...args: never[]) => unknown) | undefined {
  if (value !== undefined && typeof value !== 'function') invalid(field, `expected a function, got ${describe(value)}`);
}

/** `value` must be an integer TCP/UDP port number, 1 to 65535. */
export function expectPort(value: unknown, field: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 65535) {
    invalid(field, `expected an integer from 1 to 65535, got ${typeof value === 'number' ? value : describe(value)}`);
  }
}

/** `value` must be an array of strings, with at least `minLength` items. */
export function expectStringArray(value: unknown, field: string, minLength = 0): asserts value is string[] {
  if (!Array.isArray(value)) invalid(field, `expected an array of strings, got ${describe(value)}`);
  if (value.length < minLength) invalid(field, `expected at least ${minLength} item(s)`);
  value.forEach((item, i) => expectString(item, `${field}[${i}]`));
}

/** `value` must be undefined or an array of strings. */
export function expectOptionalStringArray(value: unknown, field: string): asserts value is string[] | undefined {
  if (value !== undefined) expectStringArray(value, field);
}

/** `value` must be undefined or an object whose values are all strings. */
export function expectOptionalStringRecord(
  value: unknown,
  field: string,
): asserts value is Record<string, string> | undefined {
  if (value === undefined) return;
  expectObject(value, field);
  for (const [key, item] of Object.entries(value)) {
    expectWellFormed(key, `${field}[${JSON.stringify(key)}]`);
    expectString(item, `${field}.${key}`);
  }
}

/** `value` must be undefined or an AbortSignal (duck-typed, so signals from other realms pass). */
export function expectOptionalSignal(value: unknown, field: string): asserts value is AbortSignal | undefined {
  if (value === undefined) return;
  const v = value as Partial<AbortSignal> | null;
  if (v === null || typeof v !== 'object' || typeof v.aborted !== 'boolean' || typeof v.addEventListener !== 'function') {
    invalid(field, `expected an AbortSignal, got ${describe(value)}`);
  }
}

/** Checks `files` (`'user'` or `'engine'`, or absent). @throws InvalidArgumentError `E_INVALID_ARGUMENT`. */
export function expectFileAccess(value: unknown, field = 'files'): asserts value is 'user' | 'engine' | undefined {
  if (value !== undefined && value !== 'user' && value !== 'engine') {
    invalid(field, `expected 'user' or 'engine', got ${describe(value)}`);
  }
}

/** Drops `undefined` members so the native side sees absent options, not `undefined`. */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * The keys an options type allows, written once next to the type: `optionKeys<T>()([...])`
 * does not compile unless the list names every key of `T` and nothing else, so an option
 * added to the type without its key (or a key without the option) is a type error.
 */
export function optionKeys<T extends object>() {
  return <const K extends readonly (keyof T & string)[]>(
    keys: K & ([Exclude<keyof T, K[number]>] extends [never] ? unknown : { missing: Exclude<keyof T, K[number]> }),
  ): OptionKeys => new Set<string>(keys);
}

/** The allowed keys of one options type (see {@link optionKeys}). */
export type OptionKeys = ReadonlySet<string>;

/**
 * Rejects a key of `value` (an options object, already checked to be an object) that is not in
 * `allowed`, with `E_INVALID_ARGUMENT` naming it (`details.field`, prefixed by `path`), the
 * allowed keys (`details.allowed`) and, when one is near, the likely one (`details.suggestion`,
 * also in the message: `dryrun` → `dryRun`). A known key whose value is `undefined` passes.
 *
 * @param path Prefix of the field names (`''`, `'spec.'`, `'mounts[0].'`).
 */
export function expectKnownKeys(value: object, allowed: OptionKeys, path = ''): void {
  for (const key of Object.keys(value)) {
    if (allowed.has(key)) continue;
    const field = `${path}${key}`;
    const suggestion = closestKey(key, allowed);
    const known = [...allowed].sort();
    const reason = suggestion === undefined ? 'unknown option' : `unknown option; did you mean \`${path}${suggestion}\`?`;
    throw new InvalidArgumentError(
      `invalid argument \`${field}\`: ${reason} (known: ${known.join(', ')})`,
      { details: { field, reason, allowed: known, ...(suggestion === undefined ? {} : { suggestion: `${path}${suggestion}` }) } },
    );
  }
}

/** `value` must be undefined or a plain object whose keys are all in `allowed`. */
export function expectOptionalOptions(
  value: unknown,
  field: string,
  allowed: OptionKeys,
  path = '',
): asserts value is Record<string, unknown> | undefined {
  if (value === undefined) return;
  expectObject(value, field);
  expectKnownKeys(value, allowed, path);
}

/** `value` must be a plain object whose keys are all in `allowed`. */
export function expectOptions(value: unknown, field: string, allowed: OptionKeys, path = ''): asserts value is Record<string, unknown> {
  expectObject(value, field);
  expectKnownKeys(value, allowed, path);
}

/**
 * The allowed key nearest to `key`: the same but for case, else within a small edit distance
 * (adjacent swaps count one); undefined when none is near enough to be a likely misspelling.
 */
export function closestKey(key: string, allowed: Iterable<string>): string | undefined {
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.min(3, Math.floor(key.length / 3));
  for (const candidate of allowed) {
    const d = editDistance(lower, candidate.toLowerCase());
    if (d === 0) return candidate;
    if (d <= bestDistance && (best === undefined || d < bestDistance)) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions). */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}
