// The package root from both module systems: the ESM entry re-exports every CommonJS export,
// one module instance behind both (needs `npm run build:ts`, not the engine).
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import * as esm from '../../index.mjs';

const cjs = createRequire(import.meta.url)('../../index.js') as Record<string, unknown>;

describe('package root', () => {
  it('index.mjs names exactly the exports of index.js, with the same values', () => {
    expect(Object.keys(esm).sort()).toEqual(Object.keys(cjs).sort());
    for (const [name, value] of Object.entries(esm)) expect(value, name).toBe(cjs[name]);
  });

  it('exports the public API entry points and error classes (docs/design.md#public-api)', () => {
    for (const name of ['containerName', 'createSession', 'resumeSession', 'peek', 'listSessions', 'reapOrphans', 'Session', 'BerthError', 'SessionExistsError']) {
      expect(typeof (esm as Record<string, unknown>)[name], name).toBe('function');
    }
  });
});
