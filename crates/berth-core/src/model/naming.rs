//! Naming: the container name derived from a session id, exact over UTF-16 code units.
//!
//! Reproduces the naming scheme of the TypeScript Docker backend berth replaces:
//! `safePrefix + '-' + sanitise(id) + '-' + fnv1a32(JSON.stringify([rawPrefix, id]))`,
//! all computed over UTF-16 code units, so any JavaScript string (lone surrogates
//! included) maps to the same name in both implementations.

/// The prefix berth's root API uses when the caller gives none.
pub const DEFAULT_PREFIX: &str = "berth";

/// The default prefix of the scheme berth reproduces (and of the drop-in module).
pub(crate) const LEGACY_DEFAULT_PREFIX: &str = "please";

const FNV_OFFSET_BASIS: u32 = 0x811c_9dc5;
const FNV_PRIME: u32 = 0x0100_0193;

/// The container name for `session_id` under `prefix`, both given as UTF-16 code units.
///
/// `prefix: None` means the scheme's own default, `"please"`; callers wanting
/// berth's default pass `Some("berth")`. Pure: no engine call, never fails.
pub fn container_name(session_id: &[u16], prefix: Option<&[u16]>) -> String {
    let legacy: Vec<u16>;
    let raw_prefix = match prefix {
        Some(p) => p,
        None => {
            legacy = LEGACY_DEFAULT_PREFIX.encode_utf16().collect();
            &legacy
        }
    };
    let safe: String = sanitise(raw_prefix)
        .trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string();
    let safe = if safe.is_empty() {
        LEGACY_DEFAULT_PREFIX.to_string()
    } else {
        safe
    };
    let mut json = Vec::with_capacity(raw_prefix.len() + session_id.len() + 8);
    json.extend("[".encode_utf16());
    json_string_units(raw_prefix, &mut json);
    json.extend(",".encode_utf16());
    json_string_units(session_id, &mut json);
    json.extend("]".encode_utf16());
    format!("{safe}-{}-{:08x}", sanitise(session_id), fnv1a32(&json))
}

/// The container name for a Rust string (no lone surrogates possible); for tests.
#[cfg(test)]
pub(crate) fn container_name_str(session_id: &str, prefix: Option<&str>) -> String {
    let id: Vec<u16> = session_id.encode_utf16().collect();
    let p: Option<Vec<u16>> = prefix.map(|p| p.encode_utf16().collect());
    container_name(&id, p.as_deref())
}

/// Maps each UTF-16 code unit outside `[A-Za-z0-9_.-]` to `-`.
fn sanitise(units: &[u16]) -> String {
    units
        .iter()
        .map(|&u| match u8::try_from(u) {
            Ok(b) if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-' => b as char,
            _ => '-',
        })
        .collect()
}

/// 32-bit FNV-1a over UTF-16 code units (one code unit per step, as `charCodeAt` yields them).
fn fnv1a32(units: &[u16]) -> u32 {
    units.iter().fold(FNV_OFFSET_BASIS, |h, &u| {
        (h ^ u32::from(u)).wrapping_mul(FNV_PRIME)
    })
}

/// Appends the UTF-16 units of `JSON.stringify(s)` (ES2019 well-formed stringify:
/// lone surrogates become `\udXXX`).
fn json_string_units(s: &[u16], out: &mut Vec<u16>) {
    let push = |out: &mut Vec<u16>, text: &str| out.extend(text.encode_utf16());
    out.push(u16::from(b'"'));
    let mut i = 0;
    while i < s.len() {
        let u = s[i];
        match u {
            0x22 => push(out, "\\\""),
            0x5c => push(out, "\\\\"),
            0x08 => push(out, "\\b"),
            0x0c => push(out, "\\f"),
            0x0a => push(out, "\\n"),
            0x0d => push(out, "\\r"),
            0x09 => push(out, "\\t"),
            0x00..=0x1f => push(out, &format!("\\u{u:04x}")),
            0xd800..=0xdbff if s.get(i + 1).is_some_and(|n| (0xdc00..=0xdfff).contains(n)) => {
                out.push(u);
                out.push(s[i + 1]);
                i += 1;
            }
            0xd800..=0xdfff => push(out, &format!("\\u{u:04x}")),
            _ => out.push(u),
        }
        i += 1;
    }
    out.push(u16::from(b'"'));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Vectors {
        vectors: Vec<Vector>,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Vector {
        sandbox_id: String,
        prefix: Option<String>,
        name: String,
    }

    #[test]
    fn matches_every_vector() {
        let v: Vectors = serde_json::from_str(include_str!(
            "../../../../__test__/fixtures/container-names.json"
        ))
        .unwrap();
        assert!(v.vectors.len() >= 30);
        for case in v.vectors {
            assert_eq!(
                container_name_str(&case.sandbox_id, case.prefix.as_deref()),
                case.name,
                "sandboxId {:?} prefix {:?}",
                case.sandbox_id,
                case.prefix
            );
        }
    }

    #[test]
    fn lone_surrogates_hash_as_escaped_json() {
        // JSON.stringify(["please","\ud800"]) === '["please","\\ud800"]'
        let lone = [0xd800u16];
        let name = container_name(&lone, None);
        assert!(name.starts_with("please---"), "{name}");
        let escaped: Vec<u16> = "[\"please\",\"\\ud800\"]".encode_utf16().collect();
        assert!(name.ends_with(&format!("{:08x}", fnv1a32(&escaped))));
        // A high surrogate followed by a low one is a pair, kept verbatim.
        let pair: Vec<u16> = "😀".encode_utf16().collect();
        assert_eq!(container_name(&pair, None), "please----fdb45b0a");
    }

    #[test]
    fn default_prefix_is_berth_at_the_root() {
        assert_eq!(
            container_name_str("owned", Some(DEFAULT_PREFIX)),
            "berth-owned-ad6630d5"
        );
    }
}
