// The README's HarnessAgent quick start is examples/harness-quickstart.mjs (type-checked by
// `npm run typecheck`, run by hand against an engine): the README's copy is the file without its
// header comment, byte for byte. No engine needed.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('README quick start', () => {
  it('is examples/harness-quickstart.mjs without its header comment', () => {
    const example = readFileSync(path.join(ROOT, 'examples/harness-quickstart.mjs'), 'utf8');
    const body = example
      .split('\n')
      .filter((line) => !line.startsWith('//'))
      .join('\n')
      .trim();
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const block = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block?.trim()).toBe(body);
  });

  it('keeps the two commands CI and contributors run', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('npm ci && npm run demo');
    expect(readme).toContain('npm ci && npm run test:all');
    expect(readme.trimEnd().split('\n').length, 'README lines').toBeLessThan(100);
  });
});
