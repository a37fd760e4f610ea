// Installs a Debian package a test helper needs, when this process may (root with apt-get):
// the README's test command then sets up its own tools on a fresh Debian machine.
import { spawnSync } from 'node:child_process';

/**
 * Installs Debian package `pkg` (`apt-get install -y`, with one `apt-get update` retry).
 * @param {string} pkg The package name.
 * @param {string} why Named in the error when this process cannot install it.
 * @throws {Error} Saying how to install it, when not root, apt-get is missing, or the install fails.
 */
export function installDebianPackage(pkg, why) {
  const canApt = process.getuid?.() === 0 && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!canApt) throw new Error(`${why}: run \`apt-get install -y ${pkg}\` (Debian/Ubuntu) as root`);
  const apt = (/** @type {string[]} */ args) =>
    spawnSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (apt(['install', '-y', pkg]).status !== 0) {
    apt(['update']);
    if (apt(['install', '-y', pkg]).status !== 0) throw new Error(`apt-get install -y ${pkg} failed`);
  }
}

/**
 * Whether `command` is on PATH.
 * @param {string} command
 */
export function onPath(command) {
  return spawnSync('sh', ['-c', 'command -v "$1"', 'sh', command], { stdio: 'ignore' }).status === 0;
}
