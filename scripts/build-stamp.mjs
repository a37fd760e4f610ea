// Build stamps: which sources the native module and dist/ were built from, so that the test run
// refuses stale builds (vitest's globalSetup calls checkBuild before anything loads dist/).
//
//   node scripts/build-stamp.mjs build native -- napi build ...   hash the Rust sources, build, stamp
//   node scripts/build-stamp.mjs build dist -- tsc -p ...         hash lib/, build, stamp
//   node scripts/build-stamp.mjs check                            exit 1 with the reason when stale
//
// A stamp holds the SHA-256 of every source file, hashed *before* the build ran (a file edited
// during the build reads as changed afterwards), and of every file the build made (a binary
// copied in later, or a dist/ built by hand, does not match). Contents, never mtimes: a git
// checkout rewrites mtimes without changing what was built. No dependency beyond Node.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What each build reads (`inputs`: files or folders, relative to the repo root; a missing one is
 * skipped) and makes (`outputs`: what `listOutputs` finds after the build).
 * @typedef {{ stamp: string, inputs: string[], listOutputs: (root: string) => string[], fix: string }} Kind
 */

/** @type {Record<'native' | 'dist', Kind>} */
export const KINDS = {
  native: {
    stamp: 'build-stamp.native.json',
    inputs: ['src', 'crates', 'Cargo.toml', 'Cargo.lock', 'build.rs', '.cargo/config.toml', 'rust-toolchain.toml', 'rust-toolchain'],
    listOutputs: (root) => [
      ...readdirSync(root)
        .filter((name) => /^berth\..+\.node$/.test(name))
        .sort(),
      'binding.js',
      'binding.d.ts',
    ],
    fix: 'npm run build',
  },
  dist: {
    stamp: 'build-stamp.dist.json',
    inputs: ['lib', 'tsconfig.build.json', 'binding.d.ts'],
    listOutputs: (root) => listFiles(root, 'dist'),
    fix: 'npm run build (or npm run build:ts when only lib/ changed)',
  },
};

/** How many changed file names a message lists before "(+N more)". */
const LISTED = 5;

/**
 * The files under `rel` (a file or a folder, relative to `root`), as sorted `/`-separated
 * relative paths. Skipped in folders: `target/` and `node_modules/` (build output), names that
 * start with `.` and editor backups ending in `~` (swap files are not sources).
 * @param {string} root
 * @param {string} rel
 * @returns {string[]}
 */
export function listFiles(root, rel) {
  const full = path.join(root, rel);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [rel];
  /** @type {string[]} */
  const out = [];
  for (const entry of readdirSync(full, { withFileTypes: true })) {
    const name = entry.name;
    if (name.startsWith('.') || name.endsWith('~') || name === 'target' || name === 'node_modules') continue;
    const child = `${rel}/${name}`;
    if (statSync(path.join(root, child)).isDirectory()) out.push(...listFiles(root, child));
    else out.push(child);
  }
  return out.sort();
}

/**
 * SHA-256 (hex) of each file, by relative path; a path that does not exist is left out.
 * @param {string} root
 * @param {string[]} files
 * @returns {Record<string, string>}
 */
export function hashFiles(root, files) {
  /** @type {Record<string, string>} */
  const hashes = {};
  for (const rel of files) {
    const full = path.join(root, rel);
    if (!existsSync(full)) continue;
    hashes[rel] = createHash('sha256').update(readFileSync(full)).digest('hex');
  }
  return hashes;
}

/**
 * The SHA-256 of every input file of `kind` now.
 * @param {string} root
 * @param {keyof typeof KINDS} kind
 * @returns {Record<string, string>}
 */
export function hashInputs(root, kind) {
  return hashFiles(root, KINDS[kind].inputs.flatMap((rel) => listFiles(root, rel)));
}

/**
 * Writes `kind`'s stamp after a successful build: the inputs as hashed before it (`inputs`),
 * every output as it is now, and the build's command line (`command`, when given).
 * @param {string} root
 * @param {keyof typeof KINDS} kind
 * @param {Record<string, string>} inputs
 * @param {string[]} [command]
 */
export function writeStamp(root, kind, inputs, command) {
  const outputs = hashFiles(root, KINDS[kind].listOutputs(root));
  const stamp = { version: 1, kind, inputs, outputs, ...(command ? { command } : {}) };
  writeFileSync(path.join(root, KINDS[kind].stamp), `${JSON.stringify(stamp, null, 1)}\n`);
}

/**
 * The paths whose hash differs between two maps (changed, added or removed), sorted.
 * @param {Record<string, string>} then
 * @param {Record<string, string>} now
 * @returns {string[]}
 */
function differing(then, now) {
  const names = new Set([...Object.keys(then), ...Object.keys(now)]);
  return [...names].filter((name) => then[name] !== now[name]).sort();
}

/**
 * @param {string[]} names
 * @returns {string}
 */
function listed(names) {
  const more = names.length > LISTED ? ` (+${names.length - LISTED} more)` : '';
  return names.slice(0, LISTED).join(', ') + more;
}

/**
 * Why `kind`'s build in `root` is not the build of its sources as they are now, or null when it is.
 * @param {string} root
 * @param {keyof typeof KINDS} kind
 * @returns {string | null}
 */
export function checkKind(root, kind) {
  const { stamp: stampName, listOutputs, fix } = KINDS[kind];
  const what = kind === 'native' ? 'native module' : 'dist/';
  const stampPath = path.join(root, stampName);
  if (!existsSync(stampPath)) {
    return `${what} has no build stamp (${stampName}: not built, or built other than by npm run build): run ${fix}`;
  }
  /** @type {{ inputs?: Record<string, string>, outputs?: Record<string, string> }} */
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(stampPath, 'utf8'));
  } catch {
    return `${what} has an unreadable build stamp (${stampName}): run ${fix}`;
  }
  const changed = differing(stamp.inputs ?? {}, hashInputs(root, kind));
  if (changed.length > 0) {
    return `${what} older than its sources: run ${fix} (changed since the build: ${listed(changed)})`;
  }
  const recorded = stamp.outputs ?? {};
  const outputs = [...new Set([...Object.keys(recorded), ...listOutputs(root)])];
  const replaced = differing(recorded, hashFiles(root, outputs));
  if (replaced.length > 0) {
    return `${what} is not the build its stamp records (changed after the build: ${listed(replaced)}): run ${fix}`;
  }
  return null;
}

/**
 * Every reason the native module or dist/ in `root` is stale (empty when both are fresh).
 * @param {string} root
 * @returns {string[]}
 */
export function checkBuild(root) {
  return /** @type {const} */ (['native', 'dist'])
    .map((kind) => checkKind(root, kind))
    .filter((reason) => reason !== null);
}

/**
 * Whether `kind`'s build in `root` is fresh (see {@link checkKind}) and was made by this same
 * command line: building again would make the same files.
 * @param {string} root
 * @param {keyof typeof KINDS} kind
 * @param {string[]} command
 * @returns {boolean}
 */
export function upToDate(root, kind, command) {
  if (checkKind(root, kind) !== null) return false;
  try {
    const stamp = JSON.parse(readFileSync(path.join(root, KINDS[kind].stamp), 'utf8'));
    return JSON.stringify(stamp.command) === JSON.stringify(command);
  } catch {
    return false;
  }
}

/**
 * Runs the build `program args` in `root` and, when it exits 0, stamps `kind` with the inputs as
 * they were before it started and the command line. A failed build writes no stamp. A build the
 * stamp shows fresh and made by the same command line is skipped, so nothing is rewritten (a
 * test run of the build already in place keeps loading it: the CI runs the Docker and Podman
 * passes side by side from one build). Returns the build's exit status (0 when skipped).
 * @param {string} root
 * @param {keyof typeof KINDS} kind
 * @param {string} program
 * @param {string[]} args
 * @returns {number}
 */
export function buildWithStamp(root, kind, program, args) {
  const command = [program, ...args];
  if (upToDate(root, kind, command)) {
    console.log(`${kind === 'native' ? 'native module' : 'dist/'}: the build of its sources as they are (${KINDS[kind].stamp}), not rebuilt`);
    return 0;
  }
  const inputs = hashInputs(root, kind);
  const run = spawnSync(program, args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (run.error) throw run.error;
  if (run.status !== 0) return run.status ?? 1;
  writeStamp(root, kind, inputs, command);
  return 0;
}

/** @param {string[]} argv */
function main(argv) {
  const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
  const [command, kind, separator, ...build] = argv;
  if (command === 'check' && argv.length === 1) {
    const reasons = checkBuild(root);
    for (const reason of reasons) console.error(reason);
    return reasons.length === 0 ? 0 : 1;
  }
  if (command === 'build' && (kind === 'native' || kind === 'dist') && separator === '--' && build.length > 0) {
    const [program, ...args] = build;
    return buildWithStamp(root, kind, program, args);
  }
  console.error('usage: build-stamp.mjs build <native|dist> -- <command...> | build-stamp.mjs check');
  return 2;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
