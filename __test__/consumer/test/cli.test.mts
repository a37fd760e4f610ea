// The `berth` bin as an installing project gets it: `npx berth` resolves node_modules/.bin/berth.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { runLabels } from './run.mjs';

const npx = (args: string[]) => spawnSync('npx', ['--no-install', 'berth', ...args], { encoding: 'utf8' });

describe('the berth command line', () => {
  it('runs through npx: --version, and ls --json on this run\'s (empty) scope', () => {
    const version = (createRequire(import.meta.url)('@berth/core/package.json') as { version: string }).version;
    expect(npx(['--version'])).toMatchObject({ status: 0, stdout: `${version}\n` });
    const [[key, value]] = Object.entries(runLabels());
    const ls = npx(['ls', '--json', '--label', `${key}=${value}`]);
    expect(ls.status, ls.stderr).toBe(0);
    expect(JSON.parse(ls.stdout)).toEqual({ sessions: [] });
    expect(npx(['nope']).status).toBe(2);
  });
});
