// One run id for the suite, and a teardown that fails the run when any container carrying it
// is left (asked through berth's own listing and the engine's label filter).
import http from 'node:http';
import { listSessions } from '@berth/core';
import { initRun, RUN_ENV, RUN_LABEL_KEY, runLabels } from './run.mjs';

/** The engine's unix socket: DOCKER_HOST when it is `unix://...`, else Docker's default. */
function socketPath(): string {
  const host = process.env.DOCKER_HOST;
  return host?.startsWith('unix://') ? host.slice('unix://'.length) : '/var/run/docker.sock';
}

/** `GET /containers/json?all=1&filters={"label":["berth.consumer-run=<id>"]}`: names of every container of this run. */
function runContainers(): Promise<string[]> {
  const filters = encodeURIComponent(JSON.stringify({ label: [`${RUN_LABEL_KEY}=${process.env[RUN_ENV]}`] }));
  return new Promise((resolve, reject) => {
    http
      .get({ socketPath: socketPath(), path: `/v1.41/containers/json?all=1&filters=${filters}` }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk));
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`list containers: HTTP ${res.statusCode} ${body}`));
          resolve((JSON.parse(body) as { Names: string[] }[]).map((c) => c.Names[0] ?? '?'));
        });
      })
      .on('error', reject);
  });
}

export default function setup(): () => Promise<void> {
  console.log(`[consumer] ${RUN_ENV}=${initRun()}`);
  return async () => {
    const managed = await listSessions({ labels: runLabels() });
    const any = await runContainers();
    if (managed.length > 0 || any.length > 0) {
      process.exitCode = 1;
      throw new Error(`the consumer suite leaked: ${[...managed.map((s) => s.name), ...any].join(', ')}`);
    }
    console.log('[consumer] no container of this run is left');
  };
}
