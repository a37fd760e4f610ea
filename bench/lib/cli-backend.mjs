// The agent-turn contender that drives the `docker` CLI the way the old TypeScript backend
// does: `docker run -d` to create, `docker exec` per command, files through `docker exec`
// of `cat` (stdin piped for writes), `docker rm -f` to destroy. Arguments are passed as argv,
// never interpolated into a shell string (paths reach `sh -c` as "$1").
import { docker, dockerOk } from './docker-cli.mjs';

const WRITE_SCRIPT = 'mkdir -p "$(dirname "$1")" && cat > "$1"';

/**
 * @param {{ socketPath: string, image: string, workDir: string, labels: Record<string, string>, setupCommands: string[] }} options
 */
export function cliBackend({ socketPath, image, workDir, labels, setupCommands }) {
  const abs = (p) => (p.startsWith('/') ? p : `${workDir}/${p}`);
  return {
    /** Creates and starts the container, then runs the setup commands in order. */
    async createSession({ sessionId }) {
      const name = `bench-cli-${sessionId}`;
      const labelArgs = Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]);
      const id = (
        await dockerOk(socketPath, [
          'run', '-d', '--init', '--name', name, ...labelArgs, '-w', workDir,
          '--entrypoint', 'sleep', image, '2147483647',
        ])
      ).trim();
      for (const cmd of setupCommands) {
        const r = await docker(socketPath, ['exec', '-w', workDir, name, 'sh', '-c', cmd]);
        if (r.code !== 0) throw new Error(`setup \`${cmd}\` failed: exit ${r.code}`);
      }
      return {
        id,
        name,
        async writeTextFile({ path, content }) {
          await dockerOk(socketPath, ['exec', '-i', name, 'sh', '-c', WRITE_SCRIPT, 'sh', abs(path)], { input: content });
        },
        async readTextFile({ path }) {
          const r = await docker(socketPath, ['exec', name, 'cat', abs(path)]);
          return r.code === 0 ? r.stdout.toString('utf8') : null;
        },
        async run({ command }) {
          const r = await docker(socketPath, ['exec', '-w', workDir, name, 'sh', '-c', command]);
          return { exitCode: r.code, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
        },
        async destroy() {
          await dockerOk(socketPath, ['rm', '-f', name]);
        },
      };
    },
  };
}
