// A 4 KiB file write against a command, interleaved round by round on one harness session: the
// provider's `writeTextFile` (a buffered writeFile, over the command helper) and its `run` of
// `true` (what an agent's tool call costs). The target compares their medians.
import { interleave } from '../lib/stats.mjs';
import { WRITE_CONTENDERS } from '../lib/names.mjs';
import { harnessSession, runTrue } from './run.mjs';

const CONTENT = 'x'.repeat(4096);

export async function writeSuite(ctx, plan) {
  const session = await harnessSession(ctx, 'write');
  try {
    let i = 0;
    return await interleave({
      ...plan,
      contenders: [
        { name: WRITE_CONTENDERS.write, run: () => session.writeTextFile({ path: `bench/file-${i++ % 20}.txt`, content: CONTENT }) },
        { name: WRITE_CONTENDERS.run, run: () => runTrue(session) },
      ],
    });
  } finally {
    await session.destroy();
  }
}
