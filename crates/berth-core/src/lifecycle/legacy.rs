//! Legacy adoption: the container the old TypeScript backend made under a session's derived
//! name (no berth labels), adopted when it runs the image asked for.
//!
//! The old `container.ts` adopted whatever held the name. berth's drop-in keeps that only for
//! a container without berth's labels whose image is the requested one; anything else is
//! refused. The handle is `adopted`: it never stops or removes the container, and no holder
//! record is written (the reaper only ever considers berth-managed containers).
//!
//! Engine calls: `GET /containers/{name}/json`, `GET /images/{ref}/json`, then by id
//! `POST /containers/{id}/start` (stopped) or `POST /containers/{id}/unpause` (paused).

use tokio_util::sync::CancellationToken;

use crate::engine::calls::wake;
use crate::engine::cancel::guard;
use crate::engine::connection::EngineOptions;
use crate::engine::container::{inspect, Facts};
use crate::engine::images::{self, registry_of, split_reference};
use crate::lifecycle::opening::{self, Opening};
use crate::model::errors::{Error, Result};
use crate::model::naming::LEGACY_DEFAULT_PREFIX;
use crate::model::spec::validate_image;
use crate::session::{Ownership, Session};

/// What `adoptUnlabelled` is asked for.
#[derive(Debug, Clone, Default)]
pub struct LegacyAdoptSpec {
    /// Session (sandbox) id, as UTF-16 code units.
    pub session_id: Vec<u16>,
    /// Name prefix (default `please`, the old module's), as UTF-16 code units.
    pub prefix: Option<Vec<u16>>,
    /// The image the caller asks for; the container must run it.
    pub image: String,
}

/// The operation named in `E_ABORTED`.
const OPERATION: &str = "adoptUnlabelled";

/// Adopts the unlabelled container under the session's derived name when it runs `image`,
/// starting a stopped one (its filesystem kept) or unpausing a paused one, by id.
///
/// "Runs `image`" means: the container's image id is the id `image` resolves to on this
/// engine now (`GET /images/{image}/json`), or the reference it was created from is `image`
/// (compared normalised: Docker Hub's `docker.io/` and `library/`, and `:latest`, as
/// Podman qualifies short names), so a container made before the tag moved still counts.
/// Nothing is pulled.
///
/// Returns an `adopted` [`Session`] (its `remove()` and `stop()` make no engine call
/// unless forced) without an owner.
///
/// Errors: `E_INVALID_ARGUMENT` (session id, prefix, image; before any engine call),
/// `E_ENGINE_UNAVAILABLE`, `E_SESSION_NOT_FOUND` (no container under the name, or it is being
/// removed), `E_FOREIGN_CONTAINER` (it carries berth's labels: use `resumeSession`; or it runs
/// another image), `E_ABORTED`, `E_ENGINE`.
pub async fn adopt_unlabelled(
    spec: &LegacyAdoptSpec,
    engine_opts: &EngineOptions,
    cancel: &CancellationToken,
) -> Result<Session> {
    let Opening {
        session_id, name, ..
    } = Opening::new(
        &spec.session_id,
        spec.prefix.as_deref(),
        LEGACY_DEFAULT_PREFIX,
    )?;
    validate_image(&spec.image)?;
    let engine = opening::connect(engine_opts, cancel, OPERATION).await?;
    let not_found = || Error::SessionNotFound {
        session_id: session_id.clone(),
        name: name.clone(),
    };
    let c = guard(cancel, OPERATION, inspect(&engine, &name))
        .await?
        .ok_or_else(not_found)?;
    let f = Facts::from_inspect(&c);
    let foreign = |reason: String| Error::ForeignContainer {
        session_id: session_id.clone(),
        name: name.clone(),
        id: f.id.clone(),
        reason,
    };
    if f.managed.is_some() {
        return Err(foreign(
            "the container carries berth's labels: it is adopted through resumeSession, not as an unlabelled container".into(),
        ));
    }
    if f.state == "removing" {
        return Err(not_found());
    }
    let same = same_reference(&f.image, &spec.image)
        || guard(
            cancel,
            OPERATION,
            images::resolves_to(&engine, &spec.image, &f.image_id),
        )
        .await?;
    if !same {
        return Err(foreign(format!(
            "the container runs image `{}` ({}), not the requested `{}`",
            f.image, f.image_id, spec.image
        )));
    }
    guard(cancel, OPERATION, wake(&engine, &c))
        .await
        .map_err(|e| match e {
            Error::Engine {
                status: Some(404), ..
            } => not_found(),
            e => e,
        })?;
    Ok(Session::new(
        engine,
        f.id.clone(),
        f.name.clone(),
        session_id,
        Ownership::Adopted,
        None,
    ))
}

/// Whether two image references name the same repository and tag (or digest), after the
/// engine's own normalisation of short names (see [`normalise_reference`]).
pub(crate) fn same_reference(a: &str, b: &str) -> bool {
    !a.is_empty() && !b.is_empty() && normalise_reference(a) == normalise_reference(b)
}

/// The fully qualified form of an image reference, as Podman reports it: a Docker Hub name
/// gets `docker.io/` (and `library/` when it has one path component), and a reference
/// without tag or digest gets `:latest`. `busybox` → `docker.io/library/busybox:latest`;
/// `registry.local:5000/team/agent:1` is unchanged.
pub(crate) fn normalise_reference(image: &str) -> String {
    let qualified = if registry_of(image) == "docker.io" && !image.starts_with("docker.io/") {
        if image.contains('/') {
            format!("docker.io/{image}")
        } else {
            format!("docker.io/library/{image}")
        }
    } else {
        image.to_string()
    };
    match split_reference(&qualified) {
        (repo, Some(tag)) => format!("{repo}:{tag}"),
        (repo, None) => repo.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_qualified_as_podman_reports_them() {
        for (given, normal) in [
            ("busybox", "docker.io/library/busybox:latest"),
            ("busybox:1", "docker.io/library/busybox:1"),
            ("berth-test/busybox:1", "docker.io/berth-test/busybox:1"),
            (
                "docker.io/berth-test/busybox:1",
                "docker.io/berth-test/busybox:1",
            ),
            (
                "docker.io/library/busybox",
                "docker.io/library/busybox:latest",
            ),
            ("localhost/agent", "localhost/agent:latest"),
            (
                "registry.local:5000/team/agent:1",
                "registry.local:5000/team/agent:1",
            ),
            ("127.0.0.1:5055/x", "127.0.0.1:5055/x:latest"),
            ("busybox@sha256:abc", "docker.io/library/busybox@sha256:abc"),
        ] {
            assert_eq!(normalise_reference(given), normal, "{given}");
        }
    }

    #[test]
    fn same_reference_across_engines_spellings() {
        assert!(same_reference(
            "berth-test/busybox:1",
            "docker.io/berth-test/busybox:1"
        ));
        assert!(same_reference("busybox", "busybox:latest"));
        assert!(same_reference("busybox", "docker.io/library/busybox"));
        assert!(!same_reference("busybox:1", "busybox:2"));
        assert!(!same_reference("team/busybox:1", "busybox:1"));
        assert!(!same_reference("", "busybox"));
        assert!(!same_reference("registry.local/busybox:1", "busybox:1"));
    }
}
