// Run by harness.test.ts, several at once: each process creates a session through the berth
// provider with the same `identity`, whose onFirstCreate appends a line to /host/first-create.log
// (a bind mount of BERTH_TEMPLATE_HOST_DIR), reads the file onFirstCreate wrote, then stop()s
// (a session without sessionId is removed by stop). Prints one JSON line.
import { createDockerSandboxProvider } from '../../harness.mjs';

const provider = createDockerSandboxProvider({
  image: 'berth-test/busybox:1',
  labels: JSON.parse(process.env.BERTH_TEMPLATE_LABELS ?? '{}'),
  mounts: [{ source: process.env.BERTH_TEMPLATE_HOST_DIR ?? '', target: '/host' }],
});
const session = await provider.createSession({
  identity: process.env.BERTH_TEMPLATE_IDENTITY ?? '',
  onFirstCreate: async (s) => {
    await s.writeTextFile({ path: '/opt/prepared.txt', content: `prepared by ${process.pid}\n` });
    const out = await s.run({ command: 'echo "first-create" >> /host/first-create.log' });
    if (out.exitCode !== 0) throw new Error(out.stderr);
  },
});
const prepared = await session.readTextFile({ path: '/opt/prepared.txt' });
await session.stop();
console.log(JSON.stringify({ prepared, id: session.id }));
