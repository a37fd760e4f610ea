//! A check of the entry points' error lists: each public entry point's doc comment has an
//! `Errors:` list (written once, there; the TypeScript `@throws` points to it), and the check
//! reads the sources (`include_str!`) to prove two things mechanically:
//!
//! 1. every code a list names is a real code (one `Error::code()` returns);
//! 2. every error the entry point's own code constructs, in its body or in the functions of
//!    the same file it calls (followed transitively inside that file), is listed:
//!    `Error::<Variant> { .. }` literals, `Error::invalid` (`E_INVALID_ARGUMENT`),
//!    `Error::aborted` and `guard(..)` (`E_ABORTED`), `engine.error(..)` (`E_ENGINE`), and a
//!    connect (`E_ENGINE_UNAVAILABLE`).
//!
//! It does not follow calls into other files: an error a callee in another module returns
//! unchanged is covered by that callee's own list, which the entry point's list must then
//! include by hand (the exec and file methods of `Session` name `E_SESSION_NOT_FOUND` so).

use std::collections::{BTreeMap, BTreeSet};

/// (source, entry points in it).
const ENTRY_POINTS: &[(&str, &str, &[&str])] = &[
    (
        "lifecycle/create.rs",
        include_str!("lifecycle/create.rs"),
        &["create_session"],
    ),
    (
        "lifecycle/resume.rs",
        include_str!("lifecycle/resume.rs"),
        &["resume_session"],
    ),
    (
        "lifecycle/recreate.rs",
        include_str!("lifecycle/recreate.rs"),
        &["recreate_session"],
    ),
    (
        "lifecycle/verify.rs",
        include_str!("lifecycle/verify.rs"),
        &["verify_session"],
    ),
    (
        "lifecycle/peek.rs",
        include_str!("lifecycle/peek.rs"),
        &["peek"],
    ),
    (
        "lifecycle/list.rs",
        include_str!("lifecycle/list.rs"),
        &["list_sessions"],
    ),
    (
        "lifecycle/reap.rs",
        include_str!("lifecycle/reap.rs"),
        &["reap_orphans"],
    ),
    (
        "lifecycle/legacy.rs",
        include_str!("lifecycle/legacy.rs"),
        &["adopt_unlabelled"],
    ),
    (
        "lifecycle/templates.rs",
        include_str!("lifecycle/templates.rs"),
        &[
            "template_exists",
            "list_templates",
            "remove_template",
            "prune_templates",
            "touch_template",
            "image_id",
        ],
    ),
    (
        "engine/info.rs",
        include_str!("engine/info.rs"),
        &["engine_info"],
    ),
    (
        "engine/images.rs",
        include_str!("engine/images.rs"),
        &["ensure_image_at"],
    ),
    (
        "session.rs",
        include_str!("session.rs"),
        &[
            "remove",
            "release",
            "stop",
            "set_network_policy",
            "exec",
            "working_directory",
            "host_address",
            "spawn",
            "open_file",
            "read_file",
            "write_file",
            "commit_template",
        ],
    ),
];

const ERRORS_RS: &str = include_str!("model/errors.rs");

/// Variant name -> code, read from the arms of `Error::code()`.
fn variant_codes() -> BTreeMap<String, String> {
    let body = fn_body(ERRORS_RS, "code").expect("Error::code in model/errors.rs");
    let mut out = BTreeMap::new();
    for line in body.lines() {
        let line = line.trim();
        if let (Some(v), Some(c)) = (line.strip_prefix("Error::"), line.split('"').nth(1)) {
            let variant: String = v.chars().take_while(|c| c.is_alphanumeric()).collect();
            out.insert(variant, c.to_string());
        }
    }
    assert!(out.len() >= 10, "read the codes of Error::code(): {out:?}");
    out
}

/// Source without `//` comments (doc comments included) and without the test module.
fn code_only(src: &str) -> String {
    let src = src.split("\n#[cfg(test)]\nmod tests").next().unwrap_or(src);
    src.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Byte offset of the `fn <name>` definition, when the file has one.
fn fn_start(src: &str, name: &str) -> Option<usize> {
    let needle = format!("fn {name}");
    let mut from = 0;
    while let Some(i) = src[from..].find(&needle) {
        let at = from + i;
        let after = src[at + needle.len()..].chars().next();
        let before_ok = at == 0 || !src.as_bytes()[at - 1].is_ascii_alphanumeric();
        if before_ok && matches!(after, Some('(') | Some('<')) {
            return Some(at);
        }
        from = at + needle.len();
    }
    None
}

/// The body (between its braces) of `fn <name>` in `src`.
fn fn_body<'a>(src: &'a str, name: &str) -> Option<&'a str> {
    let start = fn_start(src, name)?;
    let open = start + src[start..].find('{')?;
    let mut depth = 0usize;
    for (i, ch) in src[open..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&src[open + 1..open + i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The doc comment right above `fn <name>` (attributes skipped).
fn fn_doc(src: &str, name: &str) -> String {
    let start = fn_start(src, name).unwrap_or_else(|| panic!("fn {name} not found"));
    let mut lines: Vec<&str> = Vec::new();
    for line in src[..start].lines().rev().skip(1) {
        let t = line.trim();
        if let Some(d) = t.strip_prefix("///") {
            lines.push(d);
        } else if t.starts_with("#[") || t.is_empty() && lines.is_empty() {
            continue;
        } else {
            break;
        }
    }
    lines.reverse();
    lines.join("\n")
}

fn codes_in(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let b = text.as_bytes();
    let mut i = 0;
    while let Some(j) = text[i..].find("E_") {
        let s = i + j;
        let e = s + text[s..]
            .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
            .unwrap_or(text.len() - s);
        if s == 0 || !b[s - 1].is_ascii_alphanumeric() {
            out.insert(text[s..e].trim_end_matches('_').to_string());
        }
        i = e.max(s + 2);
    }
    out
}

/// The codes the body of `name` constructs, following calls to functions of the same file.
fn constructed(src: &str, name: &str, variants: &BTreeMap<String, String>) -> BTreeSet<String> {
    let code = code_only(src);
    let local: Vec<String> = code
        .match_indices("fn ")
        .filter_map(|(i, _)| {
            let n: String = code[i + 3..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!n.is_empty() && (i == 0 || !code.as_bytes()[i - 1].is_ascii_alphanumeric()))
                .then_some(n)
        })
        .collect();
    let mut seen = BTreeSet::new();
    let mut todo = vec![name.to_string()];
    let mut out = BTreeSet::new();
    while let Some(f) = todo.pop() {
        if !seen.insert(f.clone()) {
            continue;
        }
        let Some(body) = fn_body(&code, &f) else {
            continue;
        };
        for (i, _) in body.match_indices("Error::") {
            let rest = &body[i + 7..];
            let v: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = rest[v.len()..].trim_start();
            let pattern = after.starts_with("{ .. }") || after.starts_with("{..}");
            if let Some(c) = variants.get(&v) {
                if !pattern && v != "WithCleanup" {
                    out.insert(c.clone());
                }
            }
            match v.as_str() {
                "invalid" => {
                    out.insert("E_INVALID_ARGUMENT".into());
                }
                "aborted" => {
                    out.insert("E_ABORTED".into());
                }
                _ => {}
            }
        }
        if body.contains("guard(") {
            out.insert("E_ABORTED".into());
        }
        if body.contains(".error(\"") {
            out.insert("E_ENGINE".into());
        }
        if body.contains("connect(") {
            out.insert("E_ENGINE_UNAVAILABLE".into());
        }
        for l in &local {
            if l != &f && body.contains(&format!("{l}(")) {
                todo.push(l.clone());
            }
        }
    }
    out
}

#[test]
fn every_entry_point_lists_real_codes_and_what_it_constructs() {
    let variants = variant_codes();
    let real: BTreeSet<String> = variants.values().cloned().collect();
    let mut problems = Vec::new();
    for (file, src, entries) in ENTRY_POINTS {
        for name in *entries {
            let doc = fn_doc(src, name);
            let Some(at) = doc.find("Errors:") else {
                problems.push(format!("{file}: `{name}` has no `Errors:` list"));
                continue;
            };
            let listed = codes_in(&doc[at..]);
            for c in &listed {
                if !real.contains(c) {
                    problems.push(format!("{file}: `{name}` lists `{c}`, which no Error has"));
                }
            }
            for c in constructed(src, name, &variants) {
                if !listed.contains(&c) {
                    problems.push(format!(
                        "{file}: `{name}` can reject with `{c}`, not listed"
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_reader_finds_what_it_reads() {
    let variants = variant_codes();
    assert_eq!(
        variants.get("SessionNotFound").map(String::as_str),
        Some("E_SESSION_NOT_FOUND")
    );
    let src = "/// Does.\n/// Errors: `E_ABORTED`.\npub fn a() { if x { b() } }\nfn b() { Error::invalid(\"f\", \"r\") }\n";
    assert_eq!(fn_doc(src, "a"), " Does.\n Errors: `E_ABORTED`.");
    let got = constructed(src, "a", &variants);
    assert_eq!(
        got.into_iter().collect::<Vec<_>>(),
        vec!["E_INVALID_ARGUMENT".to_string()]
    );
}
