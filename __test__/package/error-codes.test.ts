// The error codes from one source: the core's `Error::code()` (crates/berth-core/src/model/errors.rs)
// against the TypeScript list, the error classes and docs/errors.md; and E_NATIVE_BINDING, the one
// code the TypeScript layer raises itself, from a copy of the package with its native module
// missing or mismatched (needs `npm run build`, not the engine).
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import { nativeTarget } from '../../lib/binding.js';
import {
  BerthError,
  ERROR_CODES,
  JS_ONLY_ERROR_CODES,
  NativeBindingError,
  type BerthErrorCode,
  type BerthErrorOf,
  type KnownBerthError,
  type SessionBusyDetails,
  type SessionExistsDetails,
} from '../../lib/errors/index.js';
import * as errors from '../../lib/errors/index.js';
import { lastJsonLine, runNode } from '../helpers/node-process.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Every code literal `Error::code()` returns, read from the core's source. */
function rustCodes(): string[] {
  const source = readFileSync(path.join(ROOT, 'crates/berth-core/src/model/errors.rs'), 'utf8');
  const start = source.indexOf('pub fn code(&self)');
  expect(start, 'Error::code() in errors.rs').toBeGreaterThan(-1);
  // The function body: up to the first line that closes it at the impl's indentation.
  const end = source.indexOf('\n    }\n', start);
  const body = source.slice(start, end);
  return [...new Set([...body.matchAll(/"(E_[A-Z_]+)"/g)].map((m) => m[1]))];
}

describe('error codes from one source', () => {
  it("the TypeScript list is the core's Error::code() plus the TypeScript-only codes, nothing else", () => {
    const rust = rustCodes();
    expect(rust.length).toBeGreaterThan(10);
    expect(new Set(ERROR_CODES).size, 'no code twice').toBe(ERROR_CODES.length);
    expect([...ERROR_CODES].sort()).toEqual([...rust, ...JS_ONLY_ERROR_CODES].sort());
    for (const code of JS_ONLY_ERROR_CODES) expect(rust, `${code} is raised in TypeScript only`).not.toContain(code);
  });

  it('each code has its class, and docs/errors.md lists each code once', () => {
    const classes = Object.values(errors).filter(
      (value): value is typeof NativeBindingError => typeof value === 'function' && 'CODE' in value,
    );
    expect(classes.map((c) => c.CODE).sort()).toEqual([...ERROR_CODES].sort());
    const page = readFileSync(path.join(ROOT, 'docs/errors.md'), 'utf8');
    const rows = [...page.matchAll(/^\| `(E_[A-Z_]+)` \| `(\w+)` \|/gm)].map((m) => [m[1], m[2]]);
    expect(rows.map(([code]) => code).sort()).toEqual([...ERROR_CODES].sort());
    for (const [code, name] of rows) expect(classes.find((c) => c.CODE === code)?.name, code).toBe(name);
  });

  it('a switch on code narrows details (checked by the type checker)', () => {
    expectTypeOf<KnownBerthError['code']>().toEqualTypeOf<BerthErrorCode>();
    expectTypeOf<BerthErrorOf<'E_SESSION_BUSY'>['details']>().toEqualTypeOf<SessionBusyDetails>();
    const seen = (error: unknown): string | undefined => {
      if (!BerthError.isInstance(error)) return undefined;
      switch (error.code) {
        case 'E_SESSION_BUSY':
          expectTypeOf(error.details).toEqualTypeOf<SessionBusyDetails>();
          return error.details.reason;
        case 'E_SESSION_EXISTS':
          expectTypeOf(error.details).toEqualTypeOf<SessionExistsDetails>();
          return error.details.name;
        default:
          return error.code;
      }
    };
    expect(seen(new errors.SessionBusyError('busy', { details: { reason: 'held' } as SessionBusyDetails }))).toBe('held');
    expect(seen(new errors.EngineError('no'))).toBe('E_ENGINE');
    expect(seen(new Error('x'))).toBeUndefined();
  });
});

describe('E_NATIVE_BINDING: a missing or mismatched native module', () => {
  const target = nativeTarget(process.platform, process.arch, false);
  const work = mkdtempSync(path.join(tmpdir(), 'berth-native-binding-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** A copy of the package (package.json, dist/, optionally binding.js) in its own directory. */
  function pack(name: string, { bindingJs }: { bindingJs: boolean }): string {
    const dir = path.join(work, name);
    mkdirSync(dir, { recursive: true });
    cpSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
    cpSync(path.join(ROOT, 'dist'), path.join(dir, 'dist'), { recursive: true });
    if (bindingJs) cpSync(path.join(ROOT, 'binding.js'), path.join(dir, 'binding.js'));
    return dir;
  }

  /** The platform package `@berth/core-<target>` of `version` beside a copy, with the built module. */
  function platformPackage(dir: string, version: string): void {
    const pkg = path.join(dir, 'node_modules', '@berth', `core-${target}`);
    mkdirSync(pkg, { recursive: true });
    const main = `berth.${target}.node`;
    writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: `@berth/core-${target}`, version, main }));
    symlinkSync(path.join(ROOT, main), path.join(pkg, main));
  }

  /** Calls `containerName` through the copy and reports what it returned or threw. */
  async function call(dir: string) {
    const script =
      "const b = require('./dist/index.js');" +
      "try { console.log(JSON.stringify({ value: b.containerName('s1') })) }" +
      'catch (e) { console.log(JSON.stringify({ berth: b.BerthError.isInstance(e), name: e.name, code: e.code, message: e.message, details: e.details })) }';
    const run = await runNode(['-e', script], {}, 30_000, dir);
    expect(run.code, run.stderr).toBe(0);
    return lastJsonLine(run);
  }

  it('no binding.js (a source checkout not built): says to build', async () => {
    const out = await call(pack('unbuilt', { bindingJs: false }));
    expect(out).toMatchObject({ berth: true, name: 'NativeBindingError', code: 'E_NATIVE_BINDING', details: { reason: 'missing', target } });
    expect(out.message).toContain('npm run build');
  });

  it('no platform package: names the package and the command that installs it', async () => {
    const out = await call(pack('no-platform', { bindingJs: true }));
    expect(out).toMatchObject({ berth: true, code: 'E_NATIVE_BINDING', details: { reason: 'missing', package: `@berth/core-${target}` } });
    expect(out.message).toContain(`npm install @berth/core-${target}@${out.details.expectedVersion}`);
  });

  it('a platform package of another version is refused before it is loaded', async () => {
    const dir = pack('mismatch', { bindingJs: true });
    platformPackage(dir, '0.0.0-other');
    const out = await call(dir);
    expect(out).toMatchObject({
      berth: true,
      code: 'E_NATIVE_BINDING',
      details: { reason: 'version-mismatch', package: `@berth/core-${target}`, foundVersion: '0.0.0-other' },
    });
    expect(out.message).toContain(`npm install @berth/core-${target}@${out.details.expectedVersion}`);
  });

  it('the platform package of the same version loads', async () => {
    const dir = pack('matching', { bindingJs: true });
    platformPackage(dir, JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version);
    expect(await call(dir)).toEqual({ value: expect.stringMatching(/^berth-/) });
  });
});
