// A minimal AI SDK harness adapter (`HarnessV1`) for tests of the berth sandbox provider: a
// bootstrap recipe that writes files and runs commands, and sessions that record what they
// see in the sandbox. It drives no model: prompt turns are unsupported.
import { HarnessCapabilityUnsupportedError } from '@ai-sdk/harness';

export const TEST_HARNESS_ID = 'berth-test-harness';

/**
 * What the adapter's `doStart` saw: the sandbox session's id and, when resumed, the note the
 * first process wrote and the bootstrap's output.
 * @typedef {{ sandboxId: string, isResume: boolean, note: string, seen?: string | null, bridge?: string | null }} StartInfo
 */

/**
 * @param {{ bootstrapLog?: string, bootstrapDir?: string, onStart?: (info: StartInfo) => void }} [options]
 *   `bootstrapLog`: an absolute path (for example on a bind mount) every bootstrap run appends a
 *   line to; `bootstrapDir`: where the bootstrap files go (default `/opt/berth-test-harness`);
 *   `onStart`: called by every `doStart`.
 * @returns {import('@ai-sdk/harness').HarnessV1}
 */
export function createTestHarness({ bootstrapLog, bootstrapDir = '/opt/berth-test-harness', onStart } = {}) {
  /** @param {string} sessionId @param {boolean} isResume @param {{ note: string }} data */
  const session = (sessionId, isResume, data) => {
    /** @type {import('@ai-sdk/harness').HarnessV1ResumeSessionState} */
    const state = { type: 'resume-session', specificationVersion: 'harness-v1', harnessId: TEST_HARNESS_ID, data };
    const unsupported = () => {
      throw new HarnessCapabilityUnsupportedError({ message: 'the test harness drives no model', harnessId: TEST_HARNESS_ID });
    };
    return {
      sessionId,
      isResume,
      doPromptTurn: unsupported,
      doContinueTurn: unsupported,
      doCompact: unsupported,
      doSuspendTurn: unsupported,
      doDetach: async () => state,
      doStop: async () => state,
      doDestroy: async () => {},
    };
  };
  return {
    specificationVersion: 'harness-v1',
    harnessId: TEST_HARNESS_ID,
    builtinTools: {},
    getBootstrap: async () => ({
      harnessId: TEST_HARNESS_ID,
      bootstrapDir,
      files: [
        { path: `${bootstrapDir}/bridge.sh`, content: '#!/bin/sh\necho bridge ready\n' },
        { path: `${bootstrapDir}/config.json`, content: '{"version":1}\n' },
      ],
      commands: [
        { command: 'chmod +x bridge.sh && ./bridge.sh > bridge.out' },
        ...(bootstrapLog ? [{ command: `echo bootstrapped >> ${bootstrapLog}` }] : []),
      ],
    }),
    doStart: async (options) => {
      const sandbox = options.sandboxSession;
      const sandboxId = 'id' in sandbox ? sandbox.id : '';
      const note = `${options.sessionWorkDir}/note.txt`;
      if (options.resumeFrom == null) {
        await sandbox.writeTextFile({ path: note, content: `written by ${process.pid}\n` });
        onStart?.({ sandboxId, isResume: false, note });
        return session(options.sessionId, false, { note });
      }
      const seen = await sandbox.readTextFile({ path: note });
      const bridge = await sandbox.readTextFile({ path: `${bootstrapDir}/bridge.out` });
      onStart?.({ sandboxId, isResume: true, note, seen, bridge });
      return session(options.sessionId, true, { note });
    },
  };
}
