//! Engine tests of the file channel ([`crate::files::channel`]): requests on one open exec, the
//! replies that send the caller to the archive path, and an image that cannot run it.

use super::common::*;
use crate::engine::connection::EngineOptions;
use crate::exec::{exec, ExecOptions};
use crate::files::channel::{Channel, OpenFailure, Outcome};
use crate::lifecycle::create::create_session;
use tokio_util::sync::CancellationToken;

/// The read cap the channel tests pass (the channel's own limit applies under it).
const MAX: u64 = crate::files::DEFAULT_MAX_READ_BYTES;

async fn sh(s: &crate::session::Session, script: &str, user: Option<&str>) -> (i64, String) {
    let argv = vec!["sh".to_string(), "-c".into(), script.into()];
    let opts = ExecOptions {
        user: user.map(str::to_string),
        ..Default::default()
    };
    let out = exec(
        &s.engine,
        &s.id,
        &s.name,
        &argv,
        &opts,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    (
        out.exit_code,
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[tokio::test]
async fn requests_run_on_one_channel_and_refusals_fall_back() {
    let never = CancellationToken::new();
    let s = create_session(&spec(&unique("chan")), &EngineOptions::default(), &never)
        .await
        .unwrap();
    let result = async {
        let mut ch = match Channel::open(&s.engine, &s.id).await {
            Ok(c) => c,
            Err(e) => panic!("channel did not open: {e:?}"),
        };
        let data: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
        assert_eq!(
            ch.write("/tmp/c d/e.bin", Some(0o640), &data, &never)
                .await
                .unwrap(),
            Outcome::Done(())
        );
        assert_eq!(
            ch.read("/tmp/c d/e.bin", MAX, &never).await.unwrap(),
            Outcome::Done(Some(data.clone()))
        );
        assert_eq!(
            ch.read("/tmp/absent", MAX, &never).await.unwrap(),
            Outcome::Done(None)
        );
        assert_eq!(ch.read("/tmp", MAX, &never).await.unwrap(), Outcome::IsDir);
        assert_eq!(
            ch.write("/tmp", Some(0o644), b"x", &never).await.unwrap(),
            Outcome::IsDir
        );
        // A parent that is a file: the channel cannot, the archive path will say why.
        assert_eq!(
            ch.write("/tmp/c d/e.bin/x", Some(0o644), b"x", &never)
                .await
                .unwrap(),
            Outcome::Fallback
        );
        // A special file and a line break in the path: archive path.
        assert_eq!(
            ch.read("/dev/null", MAX, &never).await.unwrap(),
            Outcome::Fallback
        );
        assert_eq!(
            ch.write("/tmp/a\nb", Some(0o644), b"x", &never)
                .await
                .unwrap(),
            Outcome::Fallback
        );
        // Too large for the channel: archive path, nothing sent.
        let big = vec![0u8; crate::files::channel::protocol::MAX_WRITE_BYTES + 1];
        assert_eq!(
            ch.write("/tmp/big", Some(0o644), &big, &never)
                .await
                .unwrap(),
            Outcome::Fallback
        );
        // The mode is set; the same channel answered everything.
        let (_, stat) = sh(
            &s,
            // The channel by its last argument (`ps` cuts the script's long command line).
            "stat -c '%a' '/tmp/c d/e.bin'; for c in /proc/[0-9]*/cmdline; do tr '\\0' '\\n' < \"$c\" 2>/dev/null | tail -n 1; done | grep -cx 'berth-channe[l]'",
            None,
        )
        .await;
        assert_eq!(stat.split_whitespace().collect::<Vec<_>>(), ["640", "1"]);
        // A cancelled request is E_ABORTED.
        let cancelled = CancellationToken::new();
        cancelled.cancel();
        let e = ch
            .read("/tmp/c d/e.bin", MAX, &cancelled)
            .await
            .unwrap_err();
        assert_eq!(e.code(), "E_ABORTED");
    }
    .await;
    s.remove(false, &tokio_util::sync::CancellationToken::new())
        .await
        .unwrap();
    result
}

#[tokio::test]
async fn an_image_without_sh_cannot_run_the_channel() {
    let never = CancellationToken::new();
    let s = create_session(
        &spec(&unique("chan-nosh")),
        &EngineOptions::default(),
        &never,
    )
    .await
    .unwrap();
    let rm = vec!["rm".to_string(), "/bin/sh".into()];
    let opts = ExecOptions {
        user: Some("0".into()),
        ..Default::default()
    };
    let removed = exec(&s.engine, &s.id, &s.name, &rm, &opts, &never).await;
    let opened = Channel::open(&s.engine, &s.id).await;
    s.remove(false, &tokio_util::sync::CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(removed.unwrap().exit_code, 0);
    assert!(
        matches!(opened, Err(OpenFailure::Unsupported)),
        "{:?}",
        opened.err()
    );
}
