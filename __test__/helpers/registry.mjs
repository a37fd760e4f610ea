// A real image registry on loopback for pull tests: Debian's `docker-registry` (distribution
// 2.x) on 127.0.0.1:5055, plain HTTP. Docker trusts 127.0.0.0/8 registries as insecure by
// default; Podman's service is given a registries.conf marking this one insecure
// (.ci/steps/15-podman.sh). CI starts it (.ci/steps/16-test-services.sh); a local run
// starts it here when nothing answers (installing the package first when root with apt-get),
// and stops it again.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installDebianPackage, onPath } from './debian-package.mjs';
import { engineRequest, expectStreamOk } from './engine-http.mjs';

/** host:port of the test registry. */
export const REGISTRY = '127.0.0.1:5055';

/**
 * `GET /v2/` on a registry: true when it answers at all (200, or 401 from one that wants credentials).
 * @param {string} [addr] host:port, default the test registry
 */
export function registryAnswers(addr = REGISTRY) {
  return new Promise((resolve) => {
    const req = http.get(`http://${addr}/v2/`, (res) => {
      res.resume();
      resolve(res.statusCode === 200 || res.statusCode === 401);
    });
    req.setTimeout(2_000, () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/**
 * Makes sure the registry answers, starting `docker-registry serve` with a throwaway config
 * and storage when it does not.
 * @returns {Promise<() => void>} Stops what this call started and removes its storage (a no-op otherwise).
 */
export async function ensureRegistry() {
  if (await registryAnswers()) return () => {};
  return serveRegistry(REGISTRY, '');
}

/** host:port of the registry that wants credentials (see {@link startAuthRegistry}). */
export const AUTH_REGISTRY = '127.0.0.1:5056';

/**
 * Starts a registry on {@link AUTH_REGISTRY} that refuses anonymous pulls and pushes: htpasswd
 * auth (a bcrypt entry made by Apache's `htpasswd -B`, installed as apache2-utils when root).
 * Podman reaches it as an insecure registry (.ci/steps/15-podman.sh).
 * @returns {Promise<{ stop: () => void, username: string, password: string }>}
 */
export async function startAuthRegistry() {
  if (!onPath('htpasswd')) installDebianPackage('apache2-utils', 'the credential tests need htpasswd (apache2-utils)');
  const username = 'berth-robot';
  const password = randomBytes(12).toString('hex');
  const made = spawnSync('htpasswd', ['-Bbn', username, password], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`htpasswd failed: ${made.stderr}`);
  const stop = await serveRegistry(AUTH_REGISTRY, `auth:\n  htpasswd:\n    realm: berth-test\n    path: {dir}/htpasswd\n`, {
    htpasswd: made.stdout,
  });
  return { stop, username, password };
}

/**
 * Runs `docker-registry serve` on `addr` with throwaway storage and `extra` config lines
 * (`{dir}` stands for the storage directory; `files` are written there first).
 * @param {string} addr
 * @param {string} extra
 * @param {Record<string, string>} [files]
 * @returns {Promise<() => void>} Stops it and removes its storage.
 */
async function serveRegistry(addr, extra, files = {}) {
  if (!onPath('docker-registry')) installDebianPackage('docker-registry', "pull tests need Debian's docker-registry");
  const dir = mkdtempSync(join(tmpdir(), 'berth-registry-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const config = join(dir, 'config.yml');
  writeFileSync(
    config,
    `version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: ${dir}/data\n  delete:\n    enabled: true\nhttp:\n  addr: ${addr}\n${extra.replaceAll('{dir}', dir)}`,
  );
  const child = spawn('docker-registry', ['serve', config], { stdio: 'ignore' });
  for (let i = 0; i < 100 && !(await registryAnswers(addr)); i++) {
    if (child.exitCode !== null) throw new Error(`docker-registry exited with ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const stop = () => {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  };
  if (!(await registryAnswers(addr))) {
    stop();
    throw new Error(`docker-registry did not answer on ${addr}`);
  }
  return stop;
}

/**
 * Pushes local image `ref` (`127.0.0.1:5055/repo:tag`) to its registry:
 * `POST /images/{repo}/push?tag={tag}` with `X-Registry-Auth` (empty unless `auth` is given).
 * @param {string} ref
 * @param {{ username: string, password: string }} [auth]
 */
export async function pushImage(ref, auth) {
  const at = ref.lastIndexOf(':');
  const repo = ref.slice(0, at);
  const tag = ref.slice(at + 1);
  const credentials = auth ? { ...auth, serveraddress: repo.split('/')[0] } : {};
  const res = await engineRequest('POST', `/images/${repo}/push?tag=${encodeURIComponent(tag)}`, {
    headers: { 'X-Registry-Auth': Buffer.from(JSON.stringify(credentials)).toString('base64') },
  });
  expectStreamOk(res, `push ${ref}`);
}

/**
 * `POST /images/{source}/tag?repo=&tag=`.
 * @param {string} source
 * @param {string} ref `repo:tag`
 */
export async function tagImage(source, ref) {
  const at = ref.lastIndexOf(':');
  const res = await engineRequest(
    'POST',
    `/images/${source}/tag?repo=${encodeURIComponent(ref.slice(0, at))}&tag=${encodeURIComponent(ref.slice(at + 1))}`,
  );
  if (res.status !== 201 && res.status !== 200) throw new Error(`tag ${source} ${ref}: HTTP ${res.status} ${res.text}`);
}

/**
 * `DELETE /images/{ref}?force=1`: true when removed, false when absent.
 * @param {string} ref
 */
export async function removeImage(ref) {
  const res = await engineRequest('DELETE', `/images/${ref}?force=1`);
  if (res.status !== 200 && res.status !== 404) throw new Error(`remove image ${ref}: HTTP ${res.status} ${res.text}`);
  return res.status === 200;
}

/**
 * `GET /images/{ref}/json`: true when the image is present.
 * @param {string} ref
 */
export async function imageExists(ref) {
  const res = await engineRequest('GET', `/images/${ref}/json`);
  return res.status === 200;
}

/**
 * Imports a one-file image of `bytes` random bytes as `ref` (`POST /images/create?fromSrc=-`),
 * so that pulling it downloads a layer no other image shares.
 * @param {string} ref
 * @param {Buffer} tarball A tar archive (the root filesystem).
 */
export async function importImage(ref, tarball) {
  const res = await engineRequest('POST', `/images/create?fromSrc=-&repo=${encodeURIComponent(ref)}`, {
    body: tarball,
    headers: { 'Content-Type': 'application/x-tar' },
  });
  expectStreamOk(res, `import ${ref}`);
}
