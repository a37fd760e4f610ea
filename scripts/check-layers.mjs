#!/usr/bin/env node
// Module graph check of the Rust core: fails when the top-level modules of
// crates/berth-core/src import each other in a cycle.
//
// A top-level module is a folder directly under src/ (`model/`, `engine/`, ...) or a file
// there (`session.rs`); `foo.rs` beside `foo/` is the same module. Every `crate::<top>` path
// in a file of module A (in `use` lines, grouped `use crate::{a, b::c}`, and inline paths such
// as `crate::engine::connect(..)`) is an edge A -> <top>. Comments and string literals are
// skipped; `lib.rs` (the crate root, which re-exports the public face) is not a module and adds
// no edge. The layer rule (model < engine < {exec, files, ownership} < session < lifecycle)
// holds only when this graph has no cycle; docs/design.md#layout states it.
//
// Second rule: engine calls live in `engine/`. Outside it, no file may reach bollard's client
// (`.docker`, the `Engine` field the compiler also keeps private to `engine/`), make one
// (`Docker::...`), or build a request body (`bollard::body_...`); bollard's types (models,
// options) may be named anywhere. Each offence is printed as `file:line: text`.
//
// Usage: node scripts/check-layers.mjs [--root <src dir>] [--print]
//   --root   the crate's src directory (default: crates/berth-core/src from the repository)
//   --print  print the graph (one line per module: `a -> b, c`) before checking
// Exit codes: 0 both rules hold, 1 a cycle (each printed as `a -> b -> a`) or an engine call
// outside engine/, 2 bad usage or no root.
// No dependencies: Node's fs and path only.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Parses argv into `{ root, print }`; exits 2 on an unknown argument. */
function parseArgs(argv) {
  const here = dirname(fileURLToPath(import.meta.url));
  let root = resolve(here, '..', 'crates', 'berth-core', 'src');
  let print = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--print') print = true;
    else if (a === '--root' && i + 1 < argv.length) root = resolve(argv[++i]);
    else if (a.startsWith('--root=')) root = resolve(a.slice('--root='.length));
    else {
      console.error(`check-layers: unknown argument ${JSON.stringify(a)}\nusage: node scripts/check-layers.mjs [--root <src dir>] [--print]`);
      process.exit(2);
    }
  }
  return { root, print };
}

/** Every `.rs` file under `dir`, recursively, sorted. */
function rustFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...rustFiles(path));
    else if (name.endsWith('.rs')) out.push(path);
  }
  return out;
}

/** The top-level module names of the crate: folders and `.rs` files directly under `root`. */
function topModules(root) {
  const tops = new Set();
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    if (statSync(path).isDirectory()) {
      if (IDENT.test(name)) tops.add(name);
    } else if (name.endsWith('.rs') && name !== 'lib.rs' && name !== 'main.rs') {
      tops.add(name.slice(0, -3));
    }
  }
  return tops;
}

/** The top-level module a file belongs to, or null for the crate root. */
function moduleOf(root, file) {
  const parts = relative(root, file).split(sep);
  if (parts.length === 1) {
    const stem = parts[0].slice(0, -3);
    return stem === 'lib' || stem === 'main' ? null : stem;
  }
  return parts[0];
}

/**
 * Rust source with comments and string/char literals blanked out (newlines kept), so that a
 * path in a doc link or a message is not taken for an import. Handles nested block comments,
 * raw strings (`r#"..."#`), byte strings, escapes, and tells a char literal from a lifetime.
 */
export function stripCommentsAndStrings(src) {
  let out = '';
  let i = 0;
  const n = src.length;
  const blank = (s) => s.replace(/[^\n]/g, ' ');
  while (i < n) {
    const c = src[i];
    const next = src[i + 1];
    if (c === '/' && next === '/') {
      const end = src.indexOf('\n', i);
      const stop = end === -1 ? n : end;
      out += blank(src.slice(i, stop));
      i = stop;
    } else if (c === '/' && next === '*') {
      let depth = 1;
      let j = i + 2;
      while (j < n && depth > 0) {
        if (src[j] === '/' && src[j + 1] === '*') { depth++; j += 2; }
        else if (src[j] === '*' && src[j + 1] === '/') { depth--; j += 2; }
        else j++;
      }
      out += blank(src.slice(i, j));
      i = j;
    } else if ((c === 'r' || (c === 'b' && next === 'r')) && /^b?r#*"/.test(src.slice(i, i + 300)) && !/[A-Za-z0-9_]/.test(src[i - 1] ?? '')) {
      const m = /^b?r(#*)"/.exec(src.slice(i));
      const close = '"' + m[1];
      const end = src.indexOf(close, i + m[0].length);
      const stop = end === -1 ? n : end + close.length;
      out += blank(src.slice(i, stop));
      i = stop;
    } else if (c === '"' || (c === 'b' && next === '"' && !/[A-Za-z0-9_]/.test(src[i - 1] ?? ''))) {
      let j = c === 'b' ? i + 2 : i + 1;
      while (j < n && src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
      out += blank(src.slice(i, j + 1));
      i = j + 1;
    } else if (c === "'") {
      // A char literal ('a', '\n', '\u{1F600}'), else a lifetime ('a, 'static): keep lifetimes.
      const m = /^'(?:\\(?:u\{[0-9A-Fa-f]+\}|x[0-9A-Fa-f]{2}|.)|[^\\'\n])'/u.exec(src.slice(i, i + 16));
      if (m) {
        out += blank(m[0]);
        i += m[0].length;
      } else {
        out += c;
        i++;
      }
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Splits the inside of a `{...}` use group at its top-level commas. */
function splitGroup(inner) {
  const items = [];
  let depth = 0;
  let cur = '';
  for (const ch of inner) {
    if (ch === '{') depth++;
    if (ch === '}') depth--;
    if (ch === ',' && depth === 0) {
      items.push(cur);
      cur = '';
    } else cur += ch;
  }
  items.push(cur);
  return items.map((s) => s.trim()).filter(Boolean);
}

/** The first path segments named after `crate::` in (stripped) source: `crate::a::b`, `crate::{a, b::c}`. */
export function cratePaths(code) {
  const found = [];
  const re = /(?<![A-Za-z0-9_$])crate\s*::\s*/g;
  let m;
  while ((m = re.exec(code)) !== null) {
    let at = m.index + m[0].length;
    if (code[at] === '{') {
      let depth = 0;
      let j = at;
      for (; j < code.length; j++) {
        if (code[j] === '{') depth++;
        else if (code[j] === '}' && --depth === 0) break;
      }
      for (const item of splitGroup(code.slice(at + 1, j))) {
        const first = /^[A-Za-z_][A-Za-z0-9_]*/.exec(item);
        if (first) found.push(first[0]);
      }
      re.lastIndex = j;
    } else {
      const first = /^[A-Za-z_][A-Za-z0-9_]*/.exec(code.slice(at));
      if (first) found.push(first[0]);
    }
  }
  return found;
}

/** The graph `Map<module, Set<module>>` of the crate at `root` (every top module is a key). */
export function buildGraph(root) {
  const tops = topModules(root);
  const graph = new Map([...tops].sort().map((t) => [t, new Set()]));
  for (const file of rustFiles(root)) {
    const from = moduleOf(root, file);
    if (from === null || !graph.has(from)) continue;
    const code = stripCommentsAndStrings(readFileSync(file, 'utf8'));
    for (const to of cratePaths(code)) {
      if (to !== from && tops.has(to)) graph.get(from).add(to);
    }
  }
  return graph;
}

/**
 * Strongly connected components with more than one module (Tarjan): each as `{ cycle, members }`,
 * `cycle` one concrete path (`[a, b, a]`), `members` every module of the component, sorted.
 */
export function findCycles(graph) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const sccs = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of [...graph.get(v)].sort()) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) sccs.push(new Set(scc));
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return sccs.map((scc) => ({ cycle: cycleIn(graph, scc), members: [...scc].sort() }));
}

/** One concrete cycle through the smallest module of `scc`: `[a, b, c, a]` (breadth-first, so short). */
function cycleIn(graph, scc) {
  const start = [...scc].sort()[0];
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of [...graph.get(v)].sort()) {
      if (!scc.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = prev.get(u)) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [...scc, start];
}

/** Patterns that call bollard (or make a client) rather than name its types. */
const ENGINE_CALL = [/\.\s*docker\b/, /(?<![A-Za-z0-9_])Docker\s*::/, /\bbollard\s*::\s*body_/];

/** Every line outside `engine/` that calls the engine directly: `{ file, line, text }`. */
export function engineCallsOutside(root) {
  const found = [];
  for (const file of rustFiles(root)) {
    if (moduleOf(root, file) === 'engine') continue;
    const raw = readFileSync(file, 'utf8').split('\n');
    const code = stripCommentsAndStrings(raw.join('\n')).split('\n');
    code.forEach((line, i) => {
      if (ENGINE_CALL.some((re) => re.test(line))) {
        found.push({ file: relative(root, file), line: i + 1, text: raw[i].trim() });
      }
    });
  }
  return found;
}

function main() {
  const { root, print } = parseArgs(process.argv.slice(2));
  try {
    if (!statSync(root).isDirectory()) throw new Error('not a directory');
  } catch {
    console.error(`check-layers: no crate source directory at ${root}`);
    process.exit(2);
  }
  const graph = buildGraph(root);
  if (print) {
    for (const [from, to] of graph) console.log(`${from} -> ${[...to].sort().join(', ') || '(nothing)'}`);
  }
  const cycles = findCycles(graph);
  const calls = engineCallsOutside(root);
  if (calls.length > 0) {
    console.error(`check-layers: ${calls.length} engine call(s) outside engine/ in ${root}:`);
    for (const c of calls) console.error(`  ${c.file}:${c.line}: ${c.text}`);
    console.error('Call the engine through a function in engine/ (one per endpoint; docs/design.md#layout).');
  }
  if (cycles.length > 0) {
    console.error(`check-layers: ${cycles.length} import cycle(s) between top-level modules of ${root}:`);
    for (const { cycle, members } of cycles) {
      console.error(`  ${cycle.join(' -> ')}`);
      if (members.length > cycle.length - 1) console.error(`    (all of ${members.join(', ')} import each other)`);
    }
    console.error('Break each cycle so that imports follow the layer rule (docs/design.md#layout).');
  }
  if (cycles.length > 0 || calls.length > 0) process.exit(1);
  console.log(`check-layers: ${graph.size} top-level modules, no import cycle, no engine call outside engine/`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
