import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { buildWithStamp, checkBuild, checkKind, hashInputs, KINDS, writeStamp } from '../../scripts/build-stamp.mjs';

// The stale-build guard (scripts/build-stamp.mjs, called by __test__/global-setup.ts before any
// test loads the package) on a fake checkout in a temp directory. Pure logic: no engine call.

const dirs: string[] = [];

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function put(root: string, rel: string, text: string): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), text);
}

/** The sources of a checkout, and nothing built. */
function checkout(): string {
  const root = mkdtempSync(join(tmpdir(), 'berth-stamp-'));
  dirs.push(root);
  put(root, 'Cargo.toml', '[workspace]\n');
  put(root, 'Cargo.lock', '# lock\n');
  put(root, 'build.rs', 'fn main() {}\n');
  put(root, 'src/lib.rs', 'pub fn a() {}\n');
  put(root, 'crates/core/src/session.rs', 'pub struct Session;\n');
  put(root, 'lib/index.ts', 'export const a = 1;\n');
  put(root, 'tsconfig.build.json', '{}\n');
  return root;
}

/** What `npm run build` makes, stamped as it stamps them. */
function built(root: string): string {
  const native = hashInputs(root, 'native');
  put(root, 'berth.linux-x64-gnu.node', 'native code\n');
  put(root, 'binding.js', 'module.exports = {};\n');
  put(root, 'binding.d.ts', 'export declare function a(): void;\n');
  writeStamp(root, 'native', native);
  const dist = hashInputs(root, 'dist');
  put(root, 'dist/index.js', 'exports.a = 1;\n');
  writeStamp(root, 'dist', dist);
  return root;
}

describe('scripts/build-stamp.mjs', () => {
  it('passes a fresh build, and one whose sources only got new mtimes (a git checkout)', () => {
    const root = built(checkout());
    expect(checkBuild(root)).toEqual([]);
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, 'crates/core/src/session.rs'), later, later);
    utimesSync(join(root, 'lib/index.ts'), later, later);
    expect(checkBuild(root)).toEqual([]);
  });

  it('fails on a changed, added or removed Rust source, naming them and the fix', () => {
    const root = built(checkout());
    put(root, 'crates/core/src/session.rs', 'pub struct Session { id: String }\n');
    put(root, 'src/new.rs', '\n');
    unlinkSync(join(root, 'build.rs'));
    const reason = checkKind(root, 'native');
    expect(reason).toBe(
      'native module older than its sources: run npm run build ' +
        '(changed since the build: build.rs, crates/core/src/session.rs, src/new.rs)',
    );
    expect(checkKind(root, 'dist')).toBeNull();
  });

  it('checks Cargo.toml and Cargo.lock, and lists at most five changed files', () => {
    const root = built(checkout());
    put(root, 'Cargo.lock', '# lock 2\n');
    expect(checkKind(root, 'native')).toContain('(changed since the build: Cargo.lock)');
    for (let i = 0; i < 7; i += 1) put(root, `src/m${i}.rs`, '\n');
    expect(checkKind(root, 'native')).toMatch(/changed since the build: Cargo\.lock, src\/m0\.rs, .* \(\+3 more\)\)$/);
  });

  it('ignores build output and editor files inside source folders', () => {
    const root = built(checkout());
    put(root, 'crates/core/target/release/libcore.rlib', 'object\n');
    put(root, 'src/.lib.rs.swp', 'swap\n');
    put(root, 'src/lib.rs~', 'backup\n');
    put(root, 'lib/node_modules/x/index.js', '\n');
    expect(checkBuild(root)).toEqual([]);
  });

  it('fails when dist/ is older than lib/ or than the binding types it compiled against', () => {
    const root = built(checkout());
    put(root, 'lib/index.ts', 'export const a = 2;\n');
    expect(checkBuild(root)).toEqual([
      'dist/ older than its sources: run npm run build (or npm run build:ts when only lib/ changed) ' +
        '(changed since the build: lib/index.ts)',
    ]);
    const other = built(checkout());
    put(other, 'binding.d.ts', 'export declare function b(): void;\n');
    // binding.d.ts is an output of the native build too: both are reported.
    expect(checkBuild(other)).toHaveLength(2);
    expect(checkKind(other, 'dist')).toContain('changed since the build: binding.d.ts');
  });

  it('fails when the binary is not the one built (copied in, or a second one beside it)', () => {
    const root = built(checkout());
    put(root, 'berth.linux-x64-gnu.node', 'another build\n');
    expect(checkKind(root, 'native')).toBe(
      'native module is not the build its stamp records ' +
        '(changed after the build: berth.linux-x64-gnu.node): run npm run build',
    );
    const other = built(checkout());
    put(other, 'berth.linux-arm64-gnu.node', 'copied in\n');
    expect(checkKind(other, 'native')).toContain('changed after the build: berth.linux-arm64-gnu.node');
    const third = built(checkout());
    put(third, 'dist/index.js', 'exports.a = 3;\n');
    expect(checkKind(third, 'dist')).toContain('changed after the build: dist/index.js');
  });

  it('fails without a stamp, or with an unreadable one', () => {
    const root = checkout();
    put(root, 'berth.linux-x64-gnu.node', 'built by hand\n');
    expect(checkBuild(root)).toEqual([
      `native module has no build stamp (${KINDS.native.stamp}: not built, or built other than by npm run build): run npm run build`,
      `dist/ has no build stamp (${KINDS.dist.stamp}: not built, or built other than by npm run build): ` +
        'run npm run build (or npm run build:ts when only lib/ changed)',
    ]);
    const other = built(checkout());
    put(other, KINDS.native.stamp, '{ not json');
    expect(checkKind(other, 'native')).toBe(`native module has an unreadable build stamp (${KINDS.native.stamp}): run npm run build`);
  });

  it('stamps the sources as they were when the build started, and nothing after a failed build', () => {
    const root = checkout();
    // A "build" that makes its outputs while the developer edits a source under it.
    const edit = [
      "const fs = require('node:fs');",
      "fs.writeFileSync('berth.linux-x64-gnu.node', 'native code');",
      "fs.writeFileSync('binding.js', ''); fs.writeFileSync('binding.d.ts', '');",
      "fs.writeFileSync('src/lib.rs', 'pub fn edited() {}');",
    ].join('\n');
    expect(buildWithStamp(root, 'native', process.execPath, ['-e', edit])).toBe(0);
    expect(checkKind(root, 'native')).toContain('older than its sources: run npm run build (changed since the build: src/lib.rs)');

    expect(buildWithStamp(root, 'native', process.execPath, ['-e', 'process.exit(3)'])).toBe(3);
    // The stale stamp stays as it was: still stale.
    expect(checkKind(root, 'native')).toContain('changed since the build: src/lib.rs');
    expect(buildWithStamp(root, 'native', process.execPath, ['-e', ''])).toBe(0);
    expect(checkKind(root, 'native')).toBeNull();
  });

  it('skips a build its stamp shows fresh and made by the same command; rebuilds on a change or another command', () => {
    const root = checkout();
    // A "build" that counts its runs and makes the same outputs each time.
    const build = (flag: string) => [
      '-e',
      [
        "const fs = require('node:fs');",
        "fs.appendFileSync('runs.txt', 'x');",
        "fs.writeFileSync('berth.linux-x64-gnu.node', 'native code');",
        "fs.writeFileSync('binding.js', ''); fs.writeFileSync('binding.d.ts', '');",
        `// ${flag}`,
      ].join('\n'),
    ];
    const runs = () => (existsSync(join(root, 'runs.txt')) ? readFileSync(join(root, 'runs.txt'), 'utf8').length : 0);
    expect(buildWithStamp(root, 'native', process.execPath, build('release'))).toBe(0);
    expect(buildWithStamp(root, 'native', process.execPath, build('release'))).toBe(0);
    expect(runs()).toBe(1);
    expect(buildWithStamp(root, 'native', process.execPath, build('debug'))).toBe(0);
    expect(runs()).toBe(2);
    put(root, 'src/lib.rs', 'pub fn changed() {}\n');
    expect(buildWithStamp(root, 'native', process.execPath, build('debug'))).toBe(0);
    expect(runs()).toBe(3);
    // An output replaced after the build: built again.
    put(root, 'binding.js', 'tampered');
    expect(buildWithStamp(root, 'native', process.execPath, build('debug'))).toBe(0);
    expect(runs()).toBe(4);
    expect(checkKind(root, 'native')).toBeNull();
  });
});
