// Pulls from a registry that refuses anonymous clients (htpasswd on 127.0.0.1:5056), with the
// credentials found as the `docker` CLI finds them in $DOCKER_CONFIG/config.json: the registry's
// credential helper (`credHelpers`), the default store (`credsStore`), or an `auths` entry. The
// helper is a real executable on PATH, `docker-credential-berth-test`, speaking the helpers'
// protocol (`get`, the server address on stdin, JSON on stdout).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { createSession, ensureImage } from '../../index.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { AUTH_REGISTRY, imageExists, pushImage, removeImage, startAuthRegistry, tagImage } from '../helpers/registry.mjs';
import { runId } from '../helpers/run-label.mjs';
import { testEngine } from '../helpers/test-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

engineSuite('registry credentials from the Docker config', () => {
  const ref = `${AUTH_REGISTRY}/berth-cred-${runId()}/busybox:v1`;
  const saved = { PATH: process.env.PATH, DOCKER_CONFIG: process.env.DOCKER_CONFIG };
  const dirs: string[] = [];
  let registry: Awaited<ReturnType<typeof startAuthRegistry>>;

  const tempDir = (prefix: string): string => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  /** Points $DOCKER_CONFIG at a fresh directory holding `config`. */
  const useConfig = (config: unknown): void => {
    const dir = tempDir('berth-docker-config-');
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
    process.env.DOCKER_CONFIG = dir;
  };

  beforeAll(async () => {
    registry = await startAuthRegistry();
    await tagImage(TEST_IMAGE, ref);
    await pushImage(ref, registry);
    await removeImage(ref);
    const helpers = tempDir('berth-cred-helpers-');
    const answer = JSON.stringify({ ServerURL: AUTH_REGISTRY, Username: registry.username, Secret: registry.password });
    const helper = join(helpers, 'docker-credential-berth-test');
    writeFileSync(
      helper,
      `#!/bin/sh\n[ "$1" = get ] || exit 1\nread server\n` +
        `[ "$server" = '${AUTH_REGISTRY}' ] || { echo 'credentials not found in native keychain'; exit 1; }\n` +
        `printf '%s' '${answer}'\n`,
    );
    chmodSync(helper, 0o700);
    process.env.PATH = `${helpers}:${saved.PATH ?? ''}`;
  });

  afterEach(async () => {
    await removeImage(ref);
  });

  afterAll(async () => {
    process.env.PATH = saved.PATH;
    if (saved.DOCKER_CONFIG === undefined) delete process.env.DOCKER_CONFIG;
    else process.env.DOCKER_CONFIG = saved.DOCKER_CONFIG;
    registry?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('without credentials the registry refuses: E_IMAGE_NOT_FOUND with its reason, nothing pulled', async () => {
    useConfig({ credHelpers: { 'other.example': 'berth-test' } });
    const error = await ensureImage(ref, testEngine()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'E_IMAGE_NOT_FOUND', details: { image: ref } });
    expect((error as { details: { reason: string } }).details.reason).toMatch(/auth|denied/i);
    expect(await imageExists(ref)).toBe(false);
  });

  test("the registry's helper in credHelpers supplies them", async () => {
    useConfig({ credHelpers: { [AUTH_REGISTRY]: 'berth-test' } });
    await ensureImage(ref, testEngine());
    expect(await imageExists(ref)).toBe(true);
  });

  test('the default store (credsStore) supplies them, and createSession pulls through it', async ({ engine, sessionId, labels, track }) => {
    useConfig({ credsStore: 'berth-test', auths: { [AUTH_REGISTRY]: {} } });
    const session = track(await createSession({ ...engine, sessionId, labels, image: ref }));
    const out = await session.exec(['echo', 'pulled with a helper']);
    expect(out.stdout.toString()).toBe('pulled with a helper\n');
    await session.remove();
  });

  test('an auths entry keyed by URL supplies them (base64 user:password)', async () => {
    const auth = Buffer.from(`${registry.username}:${registry.password}`).toString('base64');
    useConfig({ auths: { [`http://${AUTH_REGISTRY}/v2/`]: { auth } } });
    await ensureImage(ref, testEngine());
    expect(await imageExists(ref)).toBe(true);
  });

  test('a helper that is not installed gives no credentials: refused, not a crash', async () => {
    useConfig({ credHelpers: { [AUTH_REGISTRY]: 'not-installed' } });
    await expect(ensureImage(ref, testEngine())).rejects.toMatchObject({ code: 'E_IMAGE_NOT_FOUND' });
    expect(await imageExists(ref)).toBe(false);
  });
});
