import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

// The module graph check of the Rust core (scripts/check-layers.mjs), run as CI runs it, against
// tiny fixture crates in a temp directory. Pure logic: no engine call.

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = resolve(REPO, 'scripts', 'check-layers.mjs');
const CORE_SRC = resolve(REPO, 'crates', 'berth-core', 'src');

const dirs: string[] = [];

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Writes `files` (path under src/ -> Rust source) into a fresh temp crate; returns its src dir. */
function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'berth-layers-'));
  dirs.push(root);
  const src = join(root, 'src');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(src, path)), { recursive: true });
    writeFileSync(join(src, path), text);
  }
  return src;
}

function check(src: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [SCRIPT, '--root', src, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('scripts/check-layers.mjs', () => {
  it('passes a layered crate and prints its graph with --print', () => {
    const src = fixture({
      'lib.rs': 'mod model;\nmod engine;\nmod session;\npub use crate::session::Session;\npub use crate::engine::connect;\n',
      'model/mod.rs': 'pub mod errors;\n',
      'model/errors.rs': 'pub struct Error;\n',
      'engine/mod.rs': 'use crate::model::errors::Error;\npub fn connect() -> Result<(), Error> { Ok(()) }\n',
      'session.rs': 'use crate::{engine, model::errors::Error};\npub struct Session;\nfn f() { let _ = crate::engine::connect(); }\n',
    });
    const r = check(src, '--print');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('engine -> model');
    expect(r.stdout).toContain('session -> engine, model');
    expect(r.stdout).toContain('model -> (nothing)');
    expect(r.stdout).toContain('no import cycle');
  });

  it('fails on a cycle between folders and files, naming it', () => {
    const src = fixture({
      'lib.rs': 'mod a;\nmod b;\nmod c;\n',
      'a/mod.rs': 'pub mod inner;\n',
      'a/inner.rs': 'use crate::b::Thing;\npub struct A;\n',
      'b.rs': 'use crate::{c::{self, C}};\npub struct Thing;\n',
      'c/mod.rs': 'pub struct C;\npub fn make() -> crate::a::inner::A { todo!() }\n',
    });
    const r = check(src);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('1 import cycle(s)');
    expect(r.stderr).toContain('a -> b -> c -> a');
  });

  it('ignores paths in comments, doc links and strings', () => {
    const src = fixture({
      'lib.rs': 'mod a;\nmod b;\n',
      'a.rs': 'use crate::b::B;\npub struct A;\n',
      'b.rs': [
        '//! See [`crate::a`] for the caller.',
        '/* crate::a::A, /* nested crate::a */ still a comment */',
        'pub struct B;',
        'const MSG: &str = "crate::a::A";',
        'const RAW: &str = r#"crate::a "quoted""#;',
        "fn f<'x>(s: &'x str) -> char { let _ = s; 'a' }",
        '',
      ].join('\n'),
    });
    const r = check(src, '--print');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('b -> (nothing)');
  });

  it('counts a two-module cycle and names every module of a larger one', () => {
    const src = fixture({
      'x.rs': 'use crate::y;\n',
      'y.rs': 'pub fn g() { crate::x::h(); }\n',
      'p.rs': 'use crate::q;\n',
      'q.rs': 'use crate::r;\nuse crate::p;\n',
      'r.rs': 'use crate::p;\n',
    });
    const r = check(src);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('2 import cycle(s)');
    expect(r.stderr).toContain('x -> y -> x');
    expect(r.stderr).toContain('p -> q -> p');
    expect(r.stderr).toContain('all of p, q, r import each other');
  });

  it('fails on an engine call outside engine/, naming the file and line, and allows bollard types', () => {
    const src = fixture({
      'engine/mod.rs': 'pub struct Engine { pub(in crate::engine) docker: bollard::Docker }\nfn f(e: &Engine) { let _ = e.docker.ping(); }\n',
      'files/mod.rs': [
        'use bollard::models::Volume;',
        '// engine.docker.ping() in a comment does not count',
        'const S: &str = "engine.docker.ping()";',
        'fn g(e: &crate::engine::Engine) -> Option<Volume> {',
        '    let _ = e.docker.list_volumes(None::<()>);',
        '    let _ = bollard::body_full(Vec::new().into());',
        '    None',
        '}',
        '',
      ].join('\n'),
      'session.rs': 'fn h() { let _ = bollard::Docker::connect_with_socket_defaults(); }\n',
    });
    const r = check(src);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('3 engine call(s) outside engine/');
    expect(r.stderr).toContain(`${join('files', 'mod.rs')}:5: let _ = e.docker.list_volumes(None::<()>);`);
    expect(r.stderr).toContain(`${join('files', 'mod.rs')}:6:`);
    expect(r.stderr).toContain('session.rs:1:');
    expect(r.stderr).not.toContain('engine/mod.rs');
    expect(r.stderr).not.toContain(':1: use bollard');
  });

  it('exits 2 when the source directory does not exist', () => {
    const r = check(join(tmpdir(), 'berth-layers-none', 'src'));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('no crate source directory');
  });

  it.skipIf(!existsSync(CORE_SRC))('finds no cycle and no engine call outside engine/ in the core crate', () => {
    const r = spawnSync(process.execPath, [SCRIPT], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('no engine call outside engine/');
  });
});
