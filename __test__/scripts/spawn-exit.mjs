// Run by spawn.test.ts in its own process: spawns and finishes two execs (one read, one never
// read), removes the session, prints one JSON line, and must then exit without process.exit().
import { createSession } from '../../index.mjs';

const session = await createSession({
  sessionId: process.env.BERTH_EXIT_SESSION ?? '',
  image: 'berth-test/busybox:1',
  labels: JSON.parse(process.env.BERTH_EXIT_LABELS ?? '{}'),
});
try {
  const read = await session.spawn(['echo', 'spawned']);
  let stdout = '';
  for await (const chunk of read.stdout) stdout += Buffer.from(chunk).toString('utf8');
  const { exitCode } = await read.wait();
  const unread = await session.spawn(['true']);
  const second = await unread.wait();
  console.log(JSON.stringify({ stdout, exitCode, unread: second.exitCode }));
} finally {
  await session.remove();
}
