// The `docker` CLI as a contender: one process per call, talking to the same engine socket.
import { spawn } from 'node:child_process';

/**
 * Runs `docker <args>` against the engine at `socketPath`; resolves `{ code, stdout, stderr }`
 * (stdout/stderr as Buffers). `input` is written to its stdin, then stdin is closed.
 * @param {string} socketPath
 * @param {string[]} args
 * @param {{ input?: Buffer | string }} [options]
 */
export function docker(socketPath, args, { input } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn('docker', args, {
      env: { ...process.env, DOCKER_HOST: `unix://${socketPath}` },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: Buffer.concat(out), stderr: Buffer.concat(err) }));
    if (input !== undefined) child.stdin.end(input);
  });
}

/** Like `docker`, but a non-zero exit rejects with the CLI's stderr. */
export async function dockerOk(socketPath, args, options) {
  const r = await docker(socketPath, args, options);
  if (r.code !== 0) throw new Error(`docker ${args.join(' ')}: exit ${r.code}: ${r.stderr.toString().trim()}`);
  return r.stdout.toString('utf8');
}

/** Whether a `docker` CLI is on PATH (resolves false instead of failing). */
export async function hasDockerCli(socketPath) {
  try {
    return (await docker(socketPath, ['version', '--format', '{{.Client.Version}}'])).code === 0;
  } catch {
    return false;
  }
}
