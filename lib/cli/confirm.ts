import { createInterface } from 'node:readline/promises';

/**
 * Asks `question` on the terminal and resolves true only for `y` or `yes` (any case).
 * End of input (Ctrl-D) or anything else is no.
 */
export async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const closed = new Promise<string>((resolve) => rl.once('close', () => resolve('')));
    const answer = await Promise.race([rl.question(`${question} [y/N] `), closed]);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
