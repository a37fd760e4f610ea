// The root package.json as napi-rs publishes it. `napi pre-publish` (the `prepublishOnly`
// script) adds one optional dependency per `napi.targets` entry at release time, so that
// `npm ci` works here before the platform packages exist on the registry; this script writes
// the same `optionalDependencies` into a packed copy of the root (.ci/jobs/consumer.sh),
// after checking that every npm/<target>/package.json describes its target (name, version,
// os, cpu, libc, main, files, engines).
// Usage: node npm/release-manifest.mjs <package.json to rewrite>
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readNapiConfig } from '@napi-rs/cli';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LIBC = { gnu: ['glibc'], musl: ['musl'] };

/**
 * The problems of npm/<target>/package.json for one napi target (empty when it is right).
 * @param {{ platformArchABI: string, platform: string, arch: string, abi: string | null }} target
 * @param {{ packageName: string, binaryName: string, version: string, node: string }} root
 */
function problemsOf(target, root) {
  const dir = `npm/${target.platformArchABI}`;
  const pkg = JSON.parse(readFileSync(`${ROOT}${dir}/package.json`, 'utf8'));
  const main = `${root.binaryName}.${target.platformArchABI}.node`;
  const expected = {
    name: `${root.packageName}-${target.platformArchABI}`,
    version: root.version,
    os: [target.platform],
    cpu: [target.arch],
    libc: LIBC[/** @type {'gnu' | 'musl'} */ (target.abi ?? '')],
    main,
    files: [main],
    engines: { node: root.node },
  };
  return Object.entries(expected)
    .filter(([key, value]) => JSON.stringify(pkg[key]) !== JSON.stringify(value))
    .map(([key, value]) => `${dir}/package.json: ${key} is ${JSON.stringify(pkg[key])}, expected ${JSON.stringify(value)}`);
}

const out = process.argv[2];
if (!out) throw new Error('usage: node npm/release-manifest.mjs <package.json to rewrite>');
const { packageJson, packageName, binaryName, targets } = await readNapiConfig(`${ROOT}package.json`);
const root = { packageName, binaryName, version: packageJson.version, node: packageJson.engines.node };
const problems = targets.flatMap((target) => problemsOf(target, root));
if (problems.length > 0) throw new Error(`platform packages do not match napi.targets:\n${problems.join('\n')}`);

const manifest = JSON.parse(readFileSync(out, 'utf8'));
manifest.optionalDependencies = Object.fromEntries(targets.map((t) => [`${packageName}-${t.platformArchABI}`, root.version]));
writeFileSync(out, `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`optionalDependencies of ${manifest.name}@${manifest.version}: ${Object.keys(manifest.optionalDependencies).join(', ')}`);
