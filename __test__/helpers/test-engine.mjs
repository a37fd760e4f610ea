// Which engine a test run talks to. One env variable selects it for the whole run (vitest,
// its workers, their child processes, and `cargo test`): BERTH_TEST_ENGINE=docker|podman,
// with BERTH_TEST_SOCKET overriding the engine's socket. Every helper that speaks to the
// engine, and every berth call a test makes (spread `...testEngine()` into its options),
// goes through here, so a suite written for one engine runs on both.

/** Env variable naming the engine under test: `docker` (default) or `podman`. */
export const TEST_ENGINE_ENV = 'BERTH_TEST_ENGINE';
/** Env variable overriding the socket of the engine under test. */
export const TEST_SOCKET_ENV = 'BERTH_TEST_SOCKET';
/** Docker's socket unless DOCKER_HOST names another unix socket. */
export const DOCKER_TEST_SOCKET = '/var/run/docker.sock';
/** The socket CI runs Podman's API service on (`.ci/steps/15-podman.sh`). */
export const PODMAN_TEST_SOCKET = '/run/berth-podman/podman.sock';

/**
 * The engine under test.
 * @returns {'docker' | 'podman'}
 */
export function testEngineName() {
  const name = process.env[TEST_ENGINE_ENV] || 'docker';
  if (name !== 'docker' && name !== 'podman') {
    throw new Error(`${TEST_ENGINE_ENV}=${name}: expected docker or podman`);
  }
  return name;
}

/**
 * The unix socket of the engine under test: BERTH_TEST_SOCKET, else Podman's CI socket for
 * podman, else DOCKER_HOST when it is `unix://...`, else /var/run/docker.sock.
 * @returns {string}
 */
export function testSocketPath() {
  const explicit = process.env[TEST_SOCKET_ENV];
  if (explicit) return explicit;
  if (testEngineName() === 'podman') return PODMAN_TEST_SOCKET;
  const host = process.env.DOCKER_HOST;
  if (host) {
    if (!host.startsWith('unix://')) throw new Error(`test helpers only speak unix sockets; DOCKER_HOST=${host}`);
    return host.slice('unix://'.length);
  }
  return DOCKER_TEST_SOCKET;
}

/**
 * Engine options for berth calls in tests: spread into createSession / resumeSession / peek
 * options so the call reaches the engine under test.
 * @returns {{ socketPath: string }}
 */
export function testEngine() {
  return { socketPath: testSocketPath() };
}

/** True when the engine under test is Podman. */
export function onPodman() {
  return testEngineName() === 'podman';
}

/**
 * Called once by the vitest globalSetup: pins the engine under test for every process of the
 * run. BERTH_TEST_SOCKET is set to its socket, and DOCKER_HOST to `unix://<socket>` so that
 * berth calls that pass no engine options (and child processes, and `cargo test`) reach it too.
 * @returns {{ engine: 'docker' | 'podman', socketPath: string }}
 */
export function pinTestEngine() {
  const socketPath = testSocketPath();
  process.env[TEST_ENGINE_ENV] = testEngineName();
  process.env[TEST_SOCKET_ENV] = socketPath;
  process.env.DOCKER_HOST = `unix://${socketPath}`;
  return { engine: testEngineName(), socketPath };
}

/**
 * The image reference as the engine under test reports it in an inspect (`Config.Image`):
 * Docker keeps the reference as given; Podman qualifies a short name with its registry
 * (`berth-test/busybox:1` → `docker.io/berth-test/busybox:1`).
 * @param {string} ref
 */
export function reportedImage(ref) {
  if (!onPodman()) return ref;
  const first = ref.split('/')[0] ?? '';
  const qualified = ref.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  return qualified ? ref : `docker.io/${ref.includes('/') ? ref : `library/${ref}`}`;
}
