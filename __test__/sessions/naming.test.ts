// containerName: the vectors of the scheme berth reproduces, lone surrogates, the root default
// prefix, and agreement with a JS reading of the scheme over many generated ids. Pure: no engine.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { containerName, DEFAULT_PREFIX, InvalidArgumentError } from '../../index.mjs';

interface Vector {
  sandboxId: string;
  prefix: string | null;
  name: string;
}

const { vectors } = JSON.parse(
  readFileSync(new URL('../fixtures/container-names.json', import.meta.url), 'utf8'),
) as { vectors: Vector[] };

/** The scheme as its JSON file states it, computed over UTF-16 code units in JS. */
function reference(id: string, rawPrefix: string): string {
  const sanitise = (s: string): string => s.replace(/[^A-Za-z0-9_.-]/g, '-');
  const safe = sanitise(rawPrefix).replace(/^[^A-Za-z0-9]+/, '') || 'please';
  const json = JSON.stringify([rawPrefix, id]);
  let hash = 0x811c9dc5;
  for (let i = 0; i < json.length; i++) hash = Math.imul(hash ^ json.charCodeAt(i), 0x01000193) >>> 0;
  return `${safe}-${sanitise(id)}-${hash.toString(16).padStart(8, '0')}`;
}

/** A deterministic generator of awkward strings: ASCII, controls, BMP, pairs and lone surrogates. */
function* awkwardStrings(count: number): Generator<string> {
  let seed = 0x2545f491;
  const next = (): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return seed >>> 0;
  };
  const pools = [
    () => 0x20 + (next() % 95), // printable ASCII
    () => next() % 0x20, // controls, NUL included
    () => 0xa0 + (next() % 0xd700), // BMP below the surrogates
    () => 0xd800 + (next() % 0x400), // lone high surrogate
    () => 0xdc00 + (next() % 0x400), // lone low surrogate
  ];
  for (let n = 0; n < count; n++) {
    let s = '';
    const length = next() % 24;
    for (let i = 0; i < length; i++) {
      if (next() % 6 === 0) s += String.fromCodePoint(0x10000 + (next() % 0xfffff)); // a proper pair
      else s += String.fromCharCode(pools[next() % pools.length]!());
    }
    yield s;
  }
}

describe('containerName', () => {
  it.each(vectors.map((v) => [v.sandboxId, v.prefix, v.name] as const))('vector %j with prefix %j is %s', (id, prefix, name) => {
    expect(containerName(id, prefix ?? 'please')).toBe(name);
  });

  it('the reference reading of the scheme reproduces every vector (so it can judge other ids)', () => {
    for (const v of vectors) expect(reference(v.sandboxId, v.prefix ?? 'please')).toBe(v.name);
  });

  it('takes lone surrogates without throwing, hashing each code unit exactly', () => {
    for (const id of ['\ud800', '\udfff', 'a\ud800b', '\udc00\ud800', '😀\ud83d']) {
      const name = containerName(id);
      expect(name).toBe(reference(id, 'berth'));
      expect(name).toMatch(/^berth-[A-Za-z0-9_.-]*-[0-9a-f]{8}$/);
    }
    // Different lone surrogates sanitise alike but hash apart.
    expect(containerName('\ud800')).not.toBe(containerName('\ud801'));
    expect(containerName('x', '\ud800')).toBe(reference('x', '\ud800'));
  });

  it("defaults the prefix to 'berth' at the package root", () => {
    expect(DEFAULT_PREFIX).toBe('berth');
    expect(containerName('owned')).toBe('berth-owned-ad6630d5');
    expect(containerName('owned')).toBe(containerName('owned', 'berth'));
    expect(containerName('owned')).not.toBe(containerName('owned', 'please'));
  });

  it('agrees with the reference on 2,000 generated ids and prefixes', () => {
    const ids = [...awkwardStrings(2000)];
    const prefixes = [...awkwardStrings(50)];
    ids.forEach((id, i) => {
      const prefix = prefixes[i % prefixes.length]!;
      expect(containerName(id, prefix), JSON.stringify([prefix, id])).toBe(reference(id, prefix));
    });
  });

  it('is pure: the same input gives the same name every time', () => {
    const id = 'stable \ud800 id';
    expect(new Set(Array.from({ length: 20 }, () => containerName(id, 'p'))).size).toBe(1);
  });

  it('rejects a non-string with E_INVALID_ARGUMENT', () => {
    for (const [id, prefix] of [[42, undefined], [undefined, undefined], ['x', 7], ['x', null]] as const) {
      expect(() => containerName(id as never, prefix as never)).toThrow(InvalidArgumentError);
    }
  });
});
