//! Container: inspect by name or id, tolerant of engine states Docker lacks, and the facts
//! berth reads from an inspect.
//!
//! Podman reports states Docker does not have (`stopped`, `stopping`, `configured`,
//! `initialized`); bollard's typed `ContainerStateStatusEnum` fails on some of them with a
//! JSON data error. [`inspect`] then decodes the same answer again with the state word
//! normalised, keeping the engine's own word in [`Inspected::raw_state`]. A decode error is
//! never "not found".

use std::collections::BTreeMap;
use std::ops::Deref;

use std::collections::HashMap;

use bollard::models::{ContainerInspectResponse, ContainerSummary};
use bollard::query_parameters::ListContainersOptionsBuilder;

use crate::engine::bounded::READ_TIMEOUT_MS;
use crate::engine::connection::{status, Engine};
use crate::model::errors::{Error, Result};
use crate::model::identity::Owner;
use crate::model::labels::{self, ManagedLabels};

/// An inspect answer plus the engine's own state word.
#[derive(Debug, Clone)]
pub(crate) struct Inspected {
    /// The decoded answer (its `State.Status` normalised when the engine's word was not Docker's).
    pub body: ContainerInspectResponse,
    /// `State.Status` exactly as the engine sent it (`running`, Podman's `stopped`, ...).
    pub raw_state: String,
}

impl Deref for Inspected {
    type Target = ContainerInspectResponse;
    fn deref(&self) -> &ContainerInspectResponse {
        &self.body
    }
}

impl Inspected {
    /// The container's labels (`Config.Labels`, a copy), empty when it has none.
    pub(crate) fn labels(&self) -> std::collections::HashMap<String, String> {
        self.config
            .as_ref()
            .and_then(|c| c.labels.clone())
            .unwrap_or_default()
    }

    /// The container's processes run as root: its config's user (the create's `user`, else
    /// the image's) is empty, `root` or uid 0, with or without a group.
    pub(crate) fn runs_as_root(&self) -> bool {
        let user = self
            .config
            .as_ref()
            .and_then(|c| c.user.as_deref())
            .unwrap_or_default();
        user.is_empty() || is_root(user)
    }
}

/// `user` names root: `root` or uid 0, with or without a group.
pub(crate) fn is_root(user: &str) -> bool {
    matches!(user.split(':').next(), Some("root" | "0"))
}

/// `GET /containers/{name_or_id}/json`; `Ok(None)` on 404.
///
/// Errors: `E_ENGINE` (including an answer that cannot be decoded even with the state word
/// normalised), `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn inspect(engine: &Engine, name_or_id: &str) -> Result<Option<Inspected>> {
    match engine
        .call(
            "GET /containers/{id}/json",
            READ_TIMEOUT_MS,
            engine.docker.inspect_container(name_or_id, None),
        )
        .await?
    {
        Ok(c) => {
            let raw_state = c
                .state
                .as_ref()
                .and_then(|s| s.status)
                .map(|s| s.to_string())
                .unwrap_or_default();
            Ok(Some(Inspected { body: c, raw_state }))
        }
        Err(e) if status(&e) == Some(404) => Ok(None),
        Err(bollard::errors::Error::JsonDataError {
            message, contents, ..
        }) => decode_tolerant(&contents)
            .map(Some)
            .ok_or_else(|| Error::Engine {
                operation: "inspect container".into(),
                status: Some(200),
                message: format!(
                    "the engine's answer for `{name_or_id}` could not be decoded: {message}"
                ),
            }),
        Err(e) => Err(engine.error("inspect container", e)),
    }
}

/// One container of a list, plus the engine's own state word.
#[derive(Debug, Clone)]
pub(crate) struct Listed {
    /// The decoded summary (its `State` normalised when the engine's word was not Docker's).
    pub summary: ContainerSummary,
    /// `State` exactly as the engine sent it (only the tests read it so far).
    #[cfg_attr(not(test), allow(dead_code))]
    pub raw_state: String,
}

/// `GET /containers/json?all=1&filters={"label":[...]}`: every container (any state) carrying
/// all of `labels` (`key=value`, or `key` for any value), tolerant of engine state words
/// bollard's types refuse (decoded as [`decode_list_tolerant`] does).
///
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn list_by_labels(engine: &Engine, labels: &[String]) -> Result<Vec<Listed>> {
    let filters = HashMap::from([("label".to_string(), labels.to_vec())]);
    let opts = ListContainersOptionsBuilder::default()
        .all(true)
        .filters(&filters)
        .build();
    match engine
        .call(
            "GET /containers/json",
            READ_TIMEOUT_MS,
            engine.docker.list_containers(Some(opts)),
        )
        .await?
    {
        Ok(list) => Ok(list
            .into_iter()
            .map(|summary| Listed {
                raw_state: summary.state.map(|s| s.to_string()).unwrap_or_default(),
                summary,
            })
            .collect()),
        Err(bollard::errors::Error::JsonDataError {
            message, contents, ..
        }) => decode_list_tolerant(&contents).ok_or_else(|| Error::Engine {
            operation: "list containers".into(),
            status: Some(200),
            message: format!("the engine's container list could not be decoded: {message}"),
        }),
        Err(e) => Err(engine.error("list containers", e)),
    }
}

/// Decodes a container list whose `State` words bollard's types refuse: each word is kept as
/// `raw_state` and replaced by its public equivalent (`docs/design.md#public-api`) (or `""`) before decoding again.
pub(crate) fn decode_list_tolerant(contents: &str) -> Option<Vec<Listed>> {
    let items: Vec<serde_json::Value> = serde_json::from_str(contents).ok()?;
    items
        .into_iter()
        .map(|mut v| {
            let raw_state = v
                .get("State")
                .and_then(|s| s.as_str())
                .unwrap_or_default()
                .to_string();
            if let Some(slot) = v.get_mut("State") {
                *slot = serde_json::Value::String(normalised_word(&raw_state).into());
            }
            let summary = serde_json::from_value(v).ok()?;
            Some(Listed { summary, raw_state })
        })
        .collect()
}

fn normalised_word(raw: &str) -> &'static str {
    match spec_state(raw) {
        "unknown" => "",
        w => w,
    }
}

/// Decodes an inspect answer whose `State.Status` bollard's types refuse: the word is kept as
/// `raw_state` and replaced by its public equivalent (`docs/design.md#public-api`) (or `""`) before decoding again.
pub(crate) fn decode_tolerant(contents: &str) -> Option<Inspected> {
    let mut v: serde_json::Value = serde_json::from_str(contents).ok()?;
    let raw_state = v
        .pointer("/State/Status")
        .and_then(|s| s.as_str())
        .unwrap_or_default()
        .to_string();
    if let Some(slot) = v.pointer_mut("/State/Status") {
        *slot = serde_json::Value::String(normalised_word(&raw_state).into());
    }
    let body = serde_json::from_value(v).ok()?;
    Some(Inspected { body, raw_state })
}

/// The public `state` (`docs/design.md#public-api`) of an engine's state word. Docker's words map to themselves; Podman's
/// `configured` and `initialized` are `created`, `stopped` is `exited`, `stopping` is
/// `running` (the process still runs until the stop completes). Anything else is `unknown`.
pub(crate) fn spec_state(raw: &str) -> &'static str {
    match raw {
        "created" | "configured" | "initialized" => "created",
        "running" | "stopping" => "running",
        "paused" => "paused",
        "restarting" => "restarting",
        "exited" | "stopped" => "exited",
        "removing" => "removing",
        "dead" => "dead",
        _ => "unknown",
    }
}

/// The facts of one inspected container that lifecycle decisions use.
#[derive(Debug, Clone)]
pub(crate) struct Facts {
    /// Full 64-hex id.
    pub id: String,
    /// Name without the leading `/`.
    pub name: String,
    /// Public state (`docs/design.md#public-api`: `created`, `running`, ..., `unknown`).
    pub state: &'static str,
    /// The engine's own state string.
    pub raw_state: String,
    /// The image reference the container was created from.
    pub image: String,
    /// The resolved id (`sha256:...`) of the image the container runs.
    pub image_id: String,
    /// The labels its records carry: the caller's, its session id and prefix (see
    /// [`labels::record_labels`]).
    pub record_labels: std::collections::HashMap<String, String>,
    /// Creation time as the engine reports it (RFC 3339).
    pub created_at: String,
    /// `State.FinishedAt` as the engine reports it (RFC 3339; the zero time or empty when it
    /// never stopped).
    pub finished_at: String,
    /// How it ended: `State.OOMKilled`, `State.ExitCode`, `State.StartedAt` (with `state`
    /// and `finished_at`), for [`crate::model::death::classify`].
    pub end: crate::model::death::EndState,
    /// berth's labels, when managed.
    pub managed: Option<ManagedLabels>,
    /// Published ports: `"8080/tcp"` -> `"127.0.0.1:49153"` (first binding of each).
    pub ports: BTreeMap<String, String>,
}

impl Facts {
    /// Reads the facts out of an inspect answer.
    pub(crate) fn from_inspect(c: &Inspected) -> Self {
        let raw_state = c.raw_state.clone();
        let state = spec_state(&raw_state);
        let config = c.config.as_ref();
        let empty = Default::default();
        let label_map = config.and_then(|c| c.labels.as_ref()).unwrap_or(&empty);
        let mut ports = BTreeMap::new();
        if let Some(map) = c.network_settings.as_ref().and_then(|n| n.ports.as_ref()) {
            for (key, bindings) in map {
                let first = bindings.as_ref().and_then(|b| {
                    b.iter()
                        .find(|b| b.host_port.as_deref().is_some_and(|p| !p.is_empty()))
                });
                if let Some(b) = first {
                    let ip = match b.host_ip.as_deref() {
                        None | Some("") | Some("0.0.0.0") | Some("::") => "127.0.0.1",
                        Some(ip) => ip,
                    };
                    ports.insert(
                        key.clone(),
                        format!("{ip}:{}", b.host_port.as_deref().unwrap_or_default()),
                    );
                }
            }
        }
        Facts {
            id: c.id.clone().unwrap_or_default(),
            name: c
                .name
                .clone()
                .unwrap_or_default()
                .trim_start_matches('/')
                .to_string(),
            state,
            raw_state,
            image: config.and_then(|c| c.image.clone()).unwrap_or_default(),
            image_id: c.image.clone().unwrap_or_default(),
            record_labels: labels::record_labels(label_map),
            created_at: c.created.clone().unwrap_or_default(),
            finished_at: c
                .state
                .as_ref()
                .and_then(|s| s.finished_at.clone())
                .unwrap_or_default(),
            end: crate::model::death::EndState {
                state: state.to_string(),
                oom_killed: c.state.as_ref().and_then(|s| s.oom_killed).unwrap_or(false),
                exit_code: c.state.as_ref().and_then(|s| s.exit_code).unwrap_or(0),
                started_at: c
                    .state
                    .as_ref()
                    .and_then(|s| s.started_at.clone())
                    .unwrap_or_default(),
                finished_at: c
                    .state
                    .as_ref()
                    .and_then(|s| s.finished_at.clone())
                    .unwrap_or_default(),
            },
            managed: labels::decode(label_map),
            ports,
        }
    }

    /// The recorded owner, when managed and fully labelled.
    pub(crate) fn owner(&self) -> Option<&Owner> {
        self.managed.as_ref().and_then(|m| m.owner.as_ref())
    }

    /// When this session expires, in ms since the epoch, given its current deadline record
    /// `deadline_ms` (see [`crate::model::lifetime::expires_at`]); `None` for an unmanaged one.
    pub(crate) fn expires_at(&self, deadline_ms: Option<u64>) -> Option<u64> {
        let retention = self.managed.as_ref()?.remove_after_stop_ms;
        crate::model::lifetime::expires_at(retention, self.state, &self.finished_at, deadline_ms)
    }

    /// Whether this session has expired at `now`, by its stop retention or its deadline
    /// record `deadline_ms` (see [`crate::model::lifetime`]).
    pub(crate) fn expired_at(&self, now: std::time::SystemTime, deadline_ms: Option<u64>) -> bool {
        crate::model::lifetime::passed(self.expires_at(deadline_ms), now)
    }

    /// The owner as JSON (`PeekResult.owner`), `null` when unknown.
    pub(crate) fn owner_json(&self) -> serde_json::Value {
        self.owner()
            .map(Owner::to_json)
            .unwrap_or(serde_json::Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: &str) -> String {
        format!(
            r#"{{"Id":"{}","Name":"/berth-x","State":{{"Status":"{status}","Running":false}},"Config":{{"Image":"busybox","Labels":{{}}}}}}"#,
            "a".repeat(64)
        )
    }

    #[test]
    fn podman_states_decode_and_keep_their_word() {
        for (word, state) in [
            ("stopped", "exited"),
            ("stopping", "running"),
            ("configured", "created"),
            ("initialized", "created"),
            ("exited", "exited"),
            ("something-new", "unknown"),
        ] {
            let c = decode_tolerant(&answer(word)).expect(word);
            assert_eq!(c.raw_state, word);
            let f = Facts::from_inspect(&c);
            assert_eq!((f.state, f.raw_state.as_str()), (state, word));
            assert_eq!(f.name, "berth-x");
        }
    }

    #[test]
    fn podman_states_decode_in_lists_too() {
        let list = format!(
            r#"[{{"Id":"{a}","Names":["/x"],"State":"stopped"}},{{"Id":"{b}","Names":["/y"],"State":"running"}}]"#,
            a = "a".repeat(64),
            b = "b".repeat(64)
        );
        assert!(serde_json::from_str::<Vec<ContainerSummary>>(&list).is_err());
        let listed = decode_list_tolerant(&list).unwrap();
        let words: Vec<(&str, &str)> = listed
            .iter()
            .map(|l| (l.raw_state.as_str(), spec_state(&l.raw_state)))
            .collect();
        assert_eq!(words, vec![("stopped", "exited"), ("running", "running")]);
        assert_eq!(listed[0].summary.id.as_deref(), Some(&*"a".repeat(64)));
        assert!(decode_list_tolerant("{}").is_none());
    }

    #[test]
    fn bollard_refuses_stopped_so_the_tolerant_path_is_needed() {
        assert!(serde_json::from_str::<ContainerInspectResponse>(&answer("stopped")).is_err());
        assert!(decode_tolerant("not json").is_none());
    }
}
