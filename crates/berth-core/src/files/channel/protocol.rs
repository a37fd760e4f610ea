//! Channel protocol: the script a session's file channel runs in the container, the requests
//! berth writes to its stdin and the replies it reads from its stdout.
//!
//! The channel is one exec of `sh` that stays open ([`crate::files::channel`]): each request is a
//! few lines on its stdin, each reply one status line on its stdout (a read's data follows
//! as base64 lines and a `.` line). File bytes travel as base64, so any bytes pass; paths
//! travel as lines read with `IFS= read -r` and reach commands only as quoted `"$p"`, never
//! interpolated into a shell string. Needs `sh`, `base64`, `mkdir`, `chmod`, `wc`.

use base64::Engine as _;

/// The first line the script prints once it runs (its protocol version).
pub(crate) const HELLO: &str = "berth-channel 1";
/// Largest file written through the channel, in bytes (the shell reads a request byte by
/// byte, so larger files go through the archive API).
pub(crate) const MAX_WRITE_BYTES: usize = 16 * 1024;
/// Largest file read through the channel, in bytes (larger ones are streamed through the
/// archive API).
pub(crate) const MAX_READ_BYTES: u64 = 1024 * 1024;

/// Longest line berth accepts from the channel, in bytes (a read's base64 of
/// [`MAX_READ_BYTES`] on one line, and some): past it the channel is dropped.
pub(crate) const MAX_LINE_BYTES: usize = 4 * (MAX_READ_BYTES as usize).div_ceil(3) + 64;

/// How many base64 characters a read of at most `max_bytes` bytes may send (the lines
/// without their breaks): past it the channel is dropped, whatever the container sends.
pub(crate) fn max_data_chars(max_bytes: u64) -> usize {
    4 * (max_bytes as usize).div_ceil(3)
}

/// The channel's script (`sh -c`). Writes: `w`, path, octal mode, size in bytes, base64 data,
/// one line each; replies `ok`, `isdir` (a directory at the path), `nospace` (the temporary
/// file came out shorter than the size: a full disk, removed, the old file untouched) or
/// `fail` (anything else: the caller takes the archive path, which knows why). Reads: `r`, path, size limit; replies `data` then the
/// base64 lines and `.`, or `absent` (and the parent directory is searchable by the user),
/// `isdir`, `big` (over the limit) or `fail` (not a regular file, unreadable, a dangling
/// link, a parent the user may not search). A read opens the file once (descriptor 3) and
/// checks its type and size (`stat -L` of `/proc/self/fd/3`) and reads it (`head -c` of the
/// size) through that descriptor, so a path swapped for a link to `/dev/zero` after the
/// checks changes nothing; berth accepts at most the base64 of the limit. Parents are created with `mkdir -p` under
/// umask 022 (0755, existing ones untouched). A write goes to `.berth-tmp-<pid>-<n>` beside
/// the file, gets its mode with `chmod` (`-`: the existing file's, from `stat`, or 0644) and is
/// renamed over the file; an existing file the user does not own (or whose group is not the
/// user's), a symbolic link, or a directory the user may not write is `fail` (the caller's
/// other path keeps owner and group). A file that is itself a mount point cannot be renamed
/// over (`EBUSY`): that is `fail` too, and the other path writes it in place (`berth_mnt`);
/// the script stays short enough for `ps` to show its whole command line.
pub(crate) const SCRIPT: &str = r#"umask 022
k=0
command -v base64 >/dev/null 2>&1 || exit 3
command -v head >/dev/null 2>&1 || exit 3
echo "berth-channel 1"
while IFS= read -r op; do
  IFS= read -r p || exit 0
  case "$op" in
  w)
    IFS= read -r m || exit 0
    IFS= read -r n || exit 0
    IFS= read -r d || exit 0
    if [ -d "$p" ]; then echo isdir; continue; fi
    q=${p%/*}; t=${q:-}/.berth-tmp-$$-$k; k=$((k+1)); g=ok; r=fail
    if [ -e "$p" ] || [ -L "$p" ]; then
      # Keep owner and group: only a regular file the user owns, in a directory it may write.
      if [ -L "$p" ] || [ ! -f "$p" ] || [ ! -O "$p" ] || [ ! -G "$p" ] || [ ! -w "${q:-/}" ]; then g=no
      elif [ "$m" = - ]; then m=$(stat -c %a "$p" 2>/dev/null) || g=no; fi
    elif [ "$m" = - ]; then m=644; fi
    if [ $g = ok ] && { [ -z "$q" ] || [ -d "$q" ] || mkdir -p "$q"; } 2>/dev/null &&
       printf '%s' "$d" | base64 -d > "$t" 2>/dev/null; then
      # The size written, before the rename (busybox's base64 exits 0 on a full disk).
      z=$(wc -c < "$t" 2>/dev/null) || z=x
      case "$z" in *[!0-9\ ]*|"") ;; *)
        if [ $z -ne "$n" ]; then r=nospace
        elif chmod "$m" "$t" 2>/dev/null && mv -f "$t" "$p" 2>/dev/null; then r=ok; fi ;;
      esac
    fi
    [ $r = ok ] || rm -f "$t" 2>/dev/null; echo $r
    ;;
  r)
    IFS= read -r n || exit 0
    if [ -d "$p" ]; then echo isdir
    elif [ ! -e "$p" ] && [ ! -L "$p" ]; then
      # Absent only where the user may look: an unsearchable directory hides what is in it.
      q=${p%/*}; if [ -x "${q:-/}" ]; then echo absent; else echo fail; fi
    elif [ ! -f "$p" ] || [ ! -r "$p" ] || ! command exec 3<"$p"; then echo fail
    else
      # Checked and read through the one descriptor: a path swapped meanwhile changes nothing.
      s=$(stat -L -c %s /proc/self/fd/3 2>/dev/null) && [ -f /proc/self/fd/3 ] || s=x
      # A size of 0 with data (procfs): the other path reads it to the cap.
      if [ "$s" = 0 ] && [ "$(head -c 1 <&3 | wc -c)" -gt 0 ]; then s=x; fi
      case "$s" in *[!0-9]*|"") echo fail ;; *)
        if [ "$s" -gt "$n" ]; then echo big
        else echo data; head -c "$s" <&3 | base64 2>/dev/null || echo '!'; echo .
        fi ;;
      esac
      exec 3<&-
    fi
    ;;
  *) exit 2 ;;
  esac
done
"#;

/// Whether `path` (normalised) can travel as one protocol line.
pub(crate) fn path_fits(path: &str) -> bool {
    !path.contains(['\n', '\r'])
}

/// The request bytes that write `data` to `path` with `mode` (`-` on the line when `None`:
/// keep an existing file's); the size line lets the script check what it wrote.
pub(crate) fn write_request(path: &str, mode: Option<u32>, data: &[u8]) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(data);
    let mode = mode.map(|m| format!("{m:o}")).unwrap_or_else(|| "-".into());
    let size = data.len();
    format!("w\n{path}\n{mode}\n{size}\n{b64}\n").into_bytes()
}

/// The request bytes that read `path` when it has at most `max_bytes`.
pub(crate) fn read_request(path: &str, max_bytes: u64) -> Vec<u8> {
    format!("r\n{path}\n{max_bytes}\n").into_bytes()
}

/// The status line of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Status {
    /// Written.
    Ok,
    /// Data follows (base64 lines, then `.`).
    Data,
    /// Nothing at the path.
    Absent,
    /// A directory at the path.
    IsDir,
    /// Larger than the limit.
    Big,
    /// The write came out short (a full disk); nothing changed.
    NoSpace,
    /// Anything else: take the archive path.
    Fail,
}

/// Parses a status line; `None` for anything the protocol does not say.
pub(crate) fn status(line: &str) -> Option<Status> {
    Some(match line {
        "ok" => Status::Ok,
        "data" => Status::Data,
        "absent" => Status::Absent,
        "isdir" => Status::IsDir,
        "big" => Status::Big,
        "nospace" => Status::NoSpace,
        "fail" => Status::Fail,
        _ => return None,
    })
}

/// Decodes a read's base64 lines (without the closing `.`); `None` when they are not base64
/// (the script wrote `!` when reading failed half-way).
pub(crate) fn decode_data(lines: &[String]) -> Option<Vec<u8>> {
    let joined: String = lines.concat();
    base64::engine::general_purpose::STANDARD
        .decode(joined)
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_lines_with_base64_data() {
        let r = write_request("/a b/ü.txt", Some(0o640), b"\x00\n\xff");
        assert_eq!(
            String::from_utf8(r).unwrap(),
            "w\n/a b/ü.txt\n640\n3\nAAr/\n"
        );
        let r = write_request("/x", None, b"");
        assert_eq!(String::from_utf8(r).unwrap(), "w\n/x\n-\n0\n\n");
        let r = read_request("/x", 42);
        assert_eq!(String::from_utf8(r).unwrap(), "r\n/x\n42\n");
    }

    #[test]
    fn paths_with_line_breaks_do_not_fit() {
        assert!(path_fits("/tmp/a b"));
        assert!(!path_fits("/tmp/a\nb"));
        assert!(!path_fits("/tmp/a\rb"));
    }

    #[test]
    fn statuses_and_data_parse() {
        assert_eq!(status("ok"), Some(Status::Ok));
        assert_eq!(status("isdir"), Some(Status::IsDir));
        assert_eq!(status("nospace"), Some(Status::NoSpace));
        assert_eq!(status("OK"), None);
        let lines = vec!["aGVs".to_string(), "bG8=".to_string()];
        assert_eq!(decode_data(&lines).unwrap(), b"hello");
        assert_eq!(decode_data(&[]).unwrap(), b"");
        assert_eq!(decode_data(&["!".to_string()]), None);
    }
}
