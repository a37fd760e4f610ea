//! Netguard helper: one run of the short-lived helper container that writes a sandbox's
//! isolation rules (`engine::netguard`), and the removal it owes whatever happens to the run.
//!
//! No path of a run leaves its helper behind in a live process: the run holds a [`Leftover`]
//! from before its create until the helper's removal succeeded. If the run's future is
//! dropped in between (a caller's abort or deadline, a `select!` or `try_join!` higher up), or
//! the removal fails, the guard removes the helper by id in a detached task, retried for up to
//! [`LEFTOVER_RETRY_MS`]. A create whose answer was lost (timeout, broken connection, dropped
//! while in flight) is found by the run's nonce label ([`HELPER_NONCE_LABEL`]) and removed by
//! id. A process killed during a run leaves an exited helper; the reaper removes those
//! (`lifecycle::reap_helpers`).
//!
//! Engine calls: `POST /containers/create`, `POST /containers/{id}/start`,
//! `POST /containers/{id}/wait`, `GET /containers/{id}/logs` (on a non-zero exit),
//! `DELETE /containers/{id}` (by id); after a lost create `GET /containers/json` by nonce.

use std::collections::HashMap;
use std::time::Duration;

use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::WaitContainerOptions;
use futures_util::StreamExt;
use tokio::time::Instant;

use crate::engine::bounded::CHANGE_TIMEOUT_MS;
use crate::engine::calls::remove_container;
use crate::engine::connection::{status, Engine};
use crate::engine::container::{inspect, list_by_labels};
use crate::model::errors::{Error, Result};

/// Label on a helper container: `netguard`.
pub(crate) const HELPER_LABEL: &str = "dev.berth.helper";
/// Label on a helper container: the sandbox container id it works for.
pub(crate) const HELPER_FOR_LABEL: &str = "dev.berth.helper.for";
/// Label on a helper container: its sandbox's `dev.berth.prefix`, so a reap narrowed by
/// prefix finds the helper after its sandbox is gone.
pub(crate) const HELPER_PREFIX_LABEL: &str = "dev.berth.helper.prefix";
/// Label on a helper container: a random nonce per run, to find a helper whose create answer
/// was lost.
pub(crate) const HELPER_NONCE_LABEL: &str = "dev.berth.helper.nonce";
/// Longest run of the helper (start to exit), in milliseconds.
const HELPER_RUN_TIMEOUT_MS: u64 = 30_000;
/// How long a dropped or failed run's helper is still removed in the background, in
/// milliseconds (a lost create is looked for that long: the engine may carry it out late).
pub(crate) const LEFTOVER_RETRY_MS: u64 = 120_000;
/// Pause between two background removals of a leftover, in milliseconds.
const LEFTOVER_RETRY_INTERVAL_MS: u64 = 1_000;

/// How a helper run ended, when it did not fail.
pub(crate) enum Outcome {
    /// The helper exited 0 and was removed: the rules are in place.
    Applied,
    /// The engine refused the helper's create with HTTP `status` (nothing was made): a 404
    /// may mean that the image is gone (another berth's reaper removed it) or the sandbox.
    Refused {
        /// The create's HTTP status.
        status: u16,
        /// The error, should the caller give up.
        error: Error,
    },
}

/// The removal a run owes until its helper is known removed: on drop, unless [`settle`]d,
/// a detached task removes the helper by id (or finds it by nonce first).
///
/// [`settle`]: Leftover::settle
struct Leftover {
    engine: Engine,
    nonce: String,
    id: Option<String>,
    settled: bool,
}

impl Leftover {
    fn settle(&mut self) {
        self.settled = true;
    }
}

impl Drop for Leftover {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        // Outside a runtime (a test's runtime shutting down) nothing can be spawned: the
        // reaper removes what is left.
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let engine = self.engine.detached();
        let nonce = std::mem::take(&mut self.nonce);
        let id = self.id.take();
        rt.spawn(remove_leftover(engine, id, nonce));
    }
}

/// Removes a run's helper by `id`, or, when its create answer was lost, every container
/// carrying `nonce`; retried every [`LEFTOVER_RETRY_INTERVAL_MS`] for up to
/// [`LEFTOVER_RETRY_MS`].
async fn remove_leftover(engine: Engine, id: Option<String>, nonce: String) {
    let end = Instant::now() + Duration::from_millis(LEFTOVER_RETRY_MS);
    loop {
        let ids = match &id {
            Some(id) => Ok(vec![id.clone()]),
            None => list_by_labels(&engine, &[format!("{HELPER_NONCE_LABEL}={nonce}")])
                .await
                .map(|l| l.into_iter().filter_map(|c| c.summary.id).collect()),
        };
        if let Ok(ids) = ids {
            let mut all = true;
            for h in &ids {
                all &= remove_container(&engine, h).await.is_ok();
            }
            // Known id removed, or found by nonce and removed: done. Not found yet: the
            // create may still land, so keep looking until the end.
            if all && !ids.is_empty() {
                return;
            }
        }
        if Instant::now() >= end {
            return;
        }
        tokio::time::sleep(Duration::from_millis(LEFTOVER_RETRY_INTERVAL_MS)).await;
    }
}

/// Runs the helper image `image` in container `id`'s network namespace with `argv` (its
/// entrypoint), waits for its exit code, removes it by id (also when this call fails or its
/// future is dropped on the way, see [`Leftover`]). `labels` are the caller's labels, plus the
/// sandbox's `prefix`. A refused create is [`Outcome::Refused`]: on a 404 the caller may
/// import the image again and retry.
///
/// Errors: `E_ENGINE` (refused, or a non-zero exit with the helper's output),
/// `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn run(
    engine: &Engine,
    image: &str,
    id: &str,
    prefix: Option<&str>,
    argv: Vec<String>,
    mut labels: HashMap<String, String>,
) -> Result<Outcome> {
    let nonce = hex::encode(rand::random::<[u8; 16]>());
    labels.insert(HELPER_LABEL.into(), "netguard".into());
    labels.insert(HELPER_FOR_LABEL.into(), id.into());
    labels.insert(HELPER_NONCE_LABEL.into(), nonce.clone());
    if let Some(p) = prefix {
        labels.insert(HELPER_PREFIX_LABEL.into(), p.into());
    }
    let body = ContainerCreateBody {
        image: Some(image.into()),
        entrypoint: Some(argv),
        cmd: Some(Vec::new()),
        labels: Some(labels),
        host_config: Some(HostConfig {
            network_mode: Some(format!("container:{id}")),
            cap_drop: Some(vec!["ALL".into()]),
            cap_add: Some(vec!["NET_ADMIN".into()]),
            security_opt: Some(vec!["no-new-privileges".into()]),
            readonly_rootfs: Some(true),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut leftover = Leftover {
        engine: engine.detached(),
        nonce,
        id: None,
        settled: false,
    };
    let created = engine
        .call(
            "POST /containers/create",
            CHANGE_TIMEOUT_MS,
            engine.docker.create_container(
                None::<bollard::query_parameters::CreateContainerOptions>,
                body,
            ),
        )
        .await?;
    let helper = match created {
        Ok(r) => r.id,
        Err(e) => {
            let Some(code) = status(&e) else {
                // No answer: the engine may have made it; the guard looks for it by nonce.
                return Err(engine.error("create network helper", e));
            };
            leftover.settle();
            let err = engine.error("create network helper", e);
            return Ok(Outcome::Refused {
                status: code,
                error: err,
            });
        }
    };
    leftover.id = Some(helper.clone());
    let outcome = Box::pin(start_and_wait(engine, &helper)).await;
    let output = match &outcome {
        Ok(code) if *code != 0 => crate::engine::logs::tail(engine, &helper).await,
        _ => String::new(),
    };
    let removed = remove_container(&engine.detached(), &helper).await;
    if removed.is_ok() {
        leftover.settle();
    }
    // A failed removal stays the guard's (retried in the background when it drops here).
    drop(leftover);
    let code = outcome?;
    removed?;
    if code == 0 {
        return Ok(Outcome::Applied);
    }
    Err(Error::Engine {
        operation: "isolate container".into(),
        status: None,
        message: format!(
            "the network helper for {id} exited with {code}: {}",
            output.trim()
        ),
    })
}

/// Starts the helper and waits for its exit code.
async fn start_and_wait(engine: &Engine, helper: &str) -> Result<i64> {
    engine
        .call(
            "POST /containers/{id}/start",
            CHANGE_TIMEOUT_MS,
            engine.docker.start_container(helper, None),
        )
        .await?
        .map_err(|e| engine.error("start network helper", e))?;
    let mut wait = engine
        .docker
        .wait_container(helper, None::<WaitContainerOptions>);
    match engine
        .call(
            "POST /containers/{id}/wait",
            HELPER_RUN_TIMEOUT_MS,
            wait.next(),
        )
        .await?
    {
        Some(Ok(r)) => Ok(r.status_code),
        Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => Ok(code),
        Some(Err(e)) => Err(engine.error("wait for network helper", e)),
        None => {
            let c = inspect(engine, helper).await?;
            Ok(c.and_then(|c| c.state.as_ref().and_then(|s| s.exit_code))
                .unwrap_or(-1))
        }
    }
}
