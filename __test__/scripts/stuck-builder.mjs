// Run by templates.test.ts in its own process: creates a session under a template builder's
// name whose setup never finishes (the test SIGKILLs this process meanwhile), as a provider's
// first create killed before its builder was ready leaves it.
// Env: BERTH_STUCK_SESSION (the builder session id), BERTH_STUCK_LABELS (JSON), BERTH_STUCK_SOCKET.
import { createSession } from '../../index.mjs';

await createSession({
  sessionId: process.env.BERTH_STUCK_SESSION ?? '',
  image: 'berth-test/busybox:1',
  labels: JSON.parse(process.env.BERTH_STUCK_LABELS ?? '{}'),
  socketPath: process.env.BERTH_STUCK_SOCKET || undefined,
  setupCommands: [['sleep', '600']],
});
