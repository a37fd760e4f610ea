// Builds and imports the offline test image `berth-test/busybox:1`: a root filesystem tar with
// the host's static busybox, imported through the Engine API (never the docker CLI, never a pull).
// CLI: `node __test__/helpers/test-image.mjs [--force]`.
import { spawnSync } from 'node:child_process';
import { installDebianPackage } from './debian-package.mjs';
import { existsSync, openSync, readSync, closeSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import tar from 'tar-stream';
import { engineRequest, expectStreamOk } from './engine-http.mjs';

/** The test image's repository and tag. */
export const TEST_IMAGE_REPO = 'berth-test/busybox';
export const TEST_IMAGE_TAG = '1';
export const TEST_IMAGE = `${TEST_IMAGE_REPO}:${TEST_IMAGE_TAG}`;

const BUSYBOX_CANDIDATES = ['/bin/busybox', '/usr/bin/busybox', '/usr/local/bin/busybox'];
/** Applets the tests rely on; the build fails if the host busybox lacks one. */
const REQUIRED_APPLETS = [
  'sh', 'sleep', 'cat', 'ls', 'ps', 'kill', 'echo', 'true', 'false', 'mkdir', 'id', 'env',
  'touch', 'rm', 'grep', 'head', 'wc', 'setsid', 'printf', 'test', 'nc', 'stat', 'date', 'mv', 'chmod',
];
/** Bump when the recipe below changes: an image with another revision label is imported again. */
export const TEST_IMAGE_REVISION = '1';
const REVISION_LABEL = 'berth.test-image.revision';
const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const MTIME = new Date('2024-01-01T00:00:00Z');

/**
 * True when the ELF file at `path` has no program interpreter (statically linked).
 * @param {string} path
 */
function isStaticElf(path) {
  const fd = openSync(path, 'r');
  try {
    const header = Buffer.alloc(64);
    readSync(fd, header, 0, 64, 0);
    if (header.readUInt32BE(0) !== 0x7f454c46 || header[4] !== 2 || header[5] !== 1) return false; // ELF64 LE only
    const phoff = Number(header.readBigUInt64LE(32));
    const phentsize = header.readUInt16LE(54);
    const phnum = header.readUInt16LE(56);
    const table = Buffer.alloc(phentsize * phnum);
    readSync(fd, table, 0, table.length, phoff);
    for (let i = 0; i < phnum; i++) if (table.readUInt32LE(i * phentsize) === 3) return false; // PT_INTERP
    return true;
  } finally {
    closeSync(fd);
  }
}

function findStaticBusybox() {
  return BUSYBOX_CANDIDATES.find((path) => existsSync(path) && isStaticElf(path));
}

/**
 * The path of a statically linked busybox on the host. When none is found and this process
 * is root with apt-get, installs Debian's `busybox-static`; otherwise throws saying how.
 */
export function ensureBusybox() {
  const found = findStaticBusybox();
  if (found) return found;
  installDebianPackage('busybox-static', 'berth tests need a static busybox');
  const installed = findStaticBusybox();
  if (!installed) throw new Error(`busybox-static installed but no static busybox in ${BUSYBOX_CANDIDATES.join(', ')}`);
  return installed;
}

/** @param {string} busybox */
function appletsOf(busybox) {
  const res = spawnSync(busybox, ['--list'], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`${busybox} --list failed: ${res.stderr}`);
  const applets = res.stdout.split('\n').filter((a) => /^[\w.[-]+$/.test(a) && a !== 'busybox');
  const missing = REQUIRED_APPLETS.filter((a) => !applets.includes(a));
  if (missing.length) throw new Error(`${busybox} lacks applets the tests need: ${missing.join(', ')}`);
  return applets;
}

/**
 * The image's root filesystem as a tar Buffer: /bin/busybox with a symlink per applet,
 * /etc/passwd and /etc/group (root, nobody 65534), /tmp (1777), /root, /home, /usr/bin/env.
 * @param {string} [busybox] Path of a static busybox on the host.
 * @returns {Promise<Buffer>}
 */
export async function buildRootfsTar(busybox = ensureBusybox()) {
  const pack = tar.pack();
  /** @type {Buffer[]} */
  const chunks = [];
  pack.on('data', (chunk) => chunks.push(/** @type {Buffer} */ (chunk)));
  /** @type {Promise<void>} */
  const done = new Promise((resolve, reject) => {
    pack.on('end', () => resolve());
    pack.on('error', reject);
  });
  /**
   * @param {Partial<import('tar-stream').Header> & { name: string }} header
   * @param {Buffer | string} [content] File content (none for directories and symlinks).
   * @returns {Promise<void>}
   */
  const entry = (header, content) =>
    new Promise((resolve, reject) =>
      pack.entry({ uid: 0, gid: 0, mtime: MTIME, ...header }, content ?? '', (err) => (err ? reject(err) : resolve())),
    );
  for (const dir of ['bin', 'sbin', 'etc', 'usr', 'usr/bin', 'usr/sbin', 'usr/local', 'usr/local/bin', 'root', 'home', 'dev', 'proc', 'sys', 'var', 'run']) {
    await entry({ name: `${dir}/`, type: 'directory', mode: dir === 'root' ? 0o700 : 0o755 });
  }
  await entry({ name: 'tmp/', type: 'directory', mode: 0o1777 });
  await entry({ name: 'var/tmp/', type: 'directory', mode: 0o1777 });
  await entry({ name: 'bin/busybox', mode: 0o755 }, readFileSync(busybox));
  for (const applet of appletsOf(busybox)) {
    await entry({ name: `bin/${applet}`, type: 'symlink', linkname: 'busybox', mode: 0o777 });
  }
  await entry({ name: 'usr/bin/env', type: 'symlink', linkname: '/bin/busybox', mode: 0o777 });
  await entry(
    { name: 'etc/passwd', mode: 0o644 },
    'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n',
  );
  await entry({ name: 'etc/group', mode: 0o644 }, 'root:x:0:\nnobody:x:65534:\n');
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

/**
 * `GET /images/{name}/json`: true when the image is present and of this recipe's revision.
 * @param {{ socketPath?: string }} [options]
 */
export async function testImageExists({ socketPath } = {}) {
  const res = await engineRequest('GET', `/images/${TEST_IMAGE}/json`, { socketPath });
  if (res.status === 200) return res.body?.Config?.Labels?.[REVISION_LABEL] === TEST_IMAGE_REVISION;
  if (res.status === 404) return false;
  throw new Error(`inspect ${TEST_IMAGE}: HTTP ${res.status} ${res.text}`);
}

/**
 * Makes sure `berth-test/busybox:1` exists, importing it when absent, of another revision, or `force`d:
 * `POST /images/create?fromSrc=-&repo=berth-test/busybox:1` with the rootfs tar as body.
 * @param {{ socketPath?: string, force?: boolean }} [options]
 * @returns {Promise<string>} The image reference.
 */
export async function ensureTestImage({ socketPath, force = false } = {}) {
  if (!force && (await testImageExists({ socketPath }))) return TEST_IMAGE;
  const body = await buildRootfsTar();
  const changes = [`ENV ${PATH_ENV}`, 'CMD ["sh"]', `LABEL ${REVISION_LABEL}=${TEST_IMAGE_REVISION}`].map((c) => `&changes=${encodeURIComponent(c)}`).join('');
  const res = await engineRequest(
    'POST',
    // The tag rides in `repo`: Podman ignores the `tag` parameter of an import.
    `/images/create?fromSrc=-&repo=${encodeURIComponent(TEST_IMAGE)}${changes}`,
    { body, socketPath, headers: { 'Content-Type': 'application/x-tar' } },
  );
  // Errors can arrive inside a 200 as a JSON progress line carrying `error` / `errorDetail`.
  expectStreamOk(res, `import ${TEST_IMAGE}`);
  if (!(await testImageExists({ socketPath }))) throw new Error(`import ${TEST_IMAGE} reported success but the image is absent`);
  return TEST_IMAGE;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  ensureTestImage({ force: process.argv.includes('--force') }).then(
    (image) => console.log(`test image ready: ${image}`),
    (error) => {
      console.error(error.message);
      process.exit(1);
    },
  );
}
