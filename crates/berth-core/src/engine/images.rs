//! Image: make sure an image is present, pulling it (with credentials and progress) when missing.
//!
//! Engine calls: `GET /images/{image}/json`, then `POST /images/create?fromImage=&tag=&platform=`
//! with `X-Registry-Auth` from the Docker config's `auths` when it has an entry for the
//! image's registry. A pull reports failures inside its 200 stream (`errorDetail.message`);
//! the image's presence afterwards decides, never the stream alone.

use std::path::PathBuf;

use bollard::auth::DockerCredentials;
use bollard::models::{ImageDeleteResponseItem, ImageSummary};
use bollard::query_parameters::{CreateImageOptionsBuilder, ListImagesOptions, RemoveImageOptions};
use futures_util::StreamExt;

use crate::engine::bounded::PULL_IDLE_TIMEOUT_MS;
use crate::engine::bounded::{CHANGE_TIMEOUT_MS, READ_TIMEOUT_MS};
use crate::engine::connection::{self, status, Engine, EngineOptions};
use crate::engine::Answer;
use crate::model::errors::{Error, Result};
use crate::model::pull::validate_platform;
pub(crate) use crate::model::pull::{ProgressSink, PullProgress};
use crate::model::spec::validate_image;

/// How to pull.
#[derive(Debug, Clone, Default)]
pub struct PullOptions {
    /// `os/arch[/variant]` to pull (and create) for, e.g. `linux/amd64`; the engine's own by default.
    pub platform: Option<String>,
    /// Progress callback.
    pub on_progress: Option<ProgressSink>,
}

/// `ensureImage`: connects, then [`ensure_image`].
///
/// Every request is bounded by `cancel` (an abort closes the pull's connection, which
/// cancels it) and a per-request timeout; a pull by its progress ([`PULL_IDLE_TIMEOUT_MS`]).
/// Engine calls: `GET /version` (connecting), `GET /images/{image}/json`, and when the image
/// is absent `POST /images/create?fromImage=&tag=&platform=` (the pull).
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_IMAGE_NOT_FOUND`, `E_ABORTED`,
/// `E_ENGINE`.
pub async fn ensure_image_at(
    engine_opts: &EngineOptions,
    image: &str,
    opts: &PullOptions,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<()> {
    validate_image(image)?;
    if let Some(p) = &opts.platform {
        validate_platform(p)?;
    }
    let engine =
        crate::engine::cancel::guard(cancel, "ensureImage", connection::connect(engine_opts))
            .await?
            .within(cancel, "ensureImage");
    engine.step(ensure_image(&engine, image, opts)).await
}

/// Makes sure `image` is present on `engine`: `GET /images/{image}/json`, else a pull
/// (`POST /images/create`) reporting progress to `opts.on_progress`.
///
/// Errors: `E_IMAGE_NOT_FOUND` with the registry's reason when the pull fails (the
/// failure arrives inside the 200 stream), `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn ensure_image(engine: &Engine, image: &str, opts: &PullOptions) -> Result<()> {
    match inspect(engine, image).await? {
        Ok(_) => return Ok(()),
        Err(e) if status(&e) == Some(404) => {}
        Err(e) => return Err(engine.error("inspect image", e)),
    }
    let (repo, tag) = split_reference(image);
    let mut b = CreateImageOptionsBuilder::default().from_image(repo);
    if let Some(t) = tag {
        b = b.tag(t);
    }
    if let Some(p) = &opts.platform {
        b = b.platform(p);
    }
    let reference = image.to_string();
    let creds =
        tokio::task::spawn_blocking(move || credentials_for(&reference, &docker_config_dir()))
            .await
            .unwrap_or(None);
    let mut stream = engine.docker.create_image(Some(b.build()), None, creds);
    let mut failure: Option<String> = None;
    // A pull has no total bound: each progress message must come within PULL_IDLE_TIMEOUT_MS.
    while let Some(item) = engine
        .call("POST /images/create", PULL_IDLE_TIMEOUT_MS, stream.next())
        .await?
    {
        match item {
            Ok(info) => {
                if let Some(sink) = &opts.on_progress {
                    let detail = info.progress_detail.as_ref();
                    (sink.0)(PullProgress {
                        layer: info.id.clone(),
                        current: detail.and_then(|d| d.current),
                        total: detail.and_then(|d| d.total),
                        status: info.status.clone().unwrap_or_default(),
                    });
                }
            }
            Err(bollard::errors::Error::DockerStreamError { error }) => {
                failure.get_or_insert(error);
            }
            Err(e) => {
                let code = status(&e);
                let err = engine.error("pull image", e);
                // A refused pull (404 unknown repository, 500 from Podman): the registry's reason.
                if matches!(code, Some(400..=599)) {
                    failure.get_or_insert(match &err {
                        Error::Engine { message, .. } => message.clone(),
                        other => other.to_string(),
                    });
                } else {
                    failure.get_or_insert(err.to_string());
                }
                break;
            }
        }
    }
    // A pull can report spurious stream errors after success: the image decides.
    match inspect(engine, image).await? {
        Ok(_) => Ok(()),
        Err(e) if status(&e) == Some(404) => Err(Error::ImageNotFound {
            image: image.into(),
            reason: failure
                .unwrap_or_else(|| "the pull finished but the image is not present".into()),
        }),
        Err(e) => Err(engine.error("inspect image", e)),
    }
}

/// Splits `repo[:tag][@digest]` into the pull's `fromImage` and `tag`; a digest stays in
/// `fromImage`. No tag means `latest` (never "all tags").
pub(crate) fn split_reference(image: &str) -> (&str, Option<&str>) {
    if image.contains('@') {
        return (image, None);
    }
    let last_slash = image.rfind('/').map_or(0, |i| i + 1);
    match image[last_slash..].rfind(':') {
        Some(i) => (&image[..last_slash + i], Some(&image[last_slash + i + 1..])),
        None => (image, Some("latest")),
    }
}

/// The registry an image reference names: its first path component when that looks like a
/// host (has `.` or `:`, or is `localhost`), else Docker Hub (`docker.io`).
pub(crate) fn registry_of(image: &str) -> &str {
    match image.split_once('/') {
        Some((first, _)) if first.contains('.') || first.contains(':') || first == "localhost" => {
            first
        }
        _ => "docker.io",
    }
}

/// The Docker config directory: `$DOCKER_CONFIG`, else `~/.docker`.
pub(crate) fn docker_config_dir() -> Option<PathBuf> {
    match std::env::var_os("DOCKER_CONFIG").filter(|v| !v.is_empty()) {
        Some(d) => Some(PathBuf::from(d)),
        None => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker")),
    }
}

/// Credentials for the image's registry, found as the `docker` CLI finds them in
/// `<config dir>/config.json`: the credential helper named for the registry (`credHelpers`),
/// then the `auths` entry (base64 `auth` of `user:password`, or `identitytoken`), then the
/// default store (`credsStore`). A helper runs as `docker-credential-<name> get` with the
/// server address on stdin (the `docker_credential` crate). The server address is the
/// registry host, or `https://index.docker.io/v1/` for Docker Hub; `auths` keys written as
/// URLs (`https://host/v2/`) match their host too. `None` when nothing matches or a helper
/// fails (the pull then goes anonymously, and a private image is refused by the registry).
/// Blocking (reads a file, may run a helper): call it off the async runtime.
pub(crate) fn credentials_for(
    image: &str,
    config_dir: &Option<PathBuf>,
) -> Option<DockerCredentials> {
    let text = std::fs::read_to_string(config_dir.as_ref()?.join("config.json")).ok()?;
    credentials_from_config(image, &text)
}

/// The address credentials are stored under for the image's registry.
fn server_address(image: &str) -> String {
    match registry_of(image) {
        "docker.io" => DOCKER_HUB_SERVER.to_string(),
        host => host.to_string(),
    }
}

/// Docker Hub's key in the Docker config and its credential helpers.
const DOCKER_HUB_SERVER: &str = "https://index.docker.io/v1/";

/// [`credentials_for`] over the config file's text.
pub(crate) fn credentials_from_config(image: &str, config_json: &str) -> Option<DockerCredentials> {
    use docker_credential::DockerCredential;
    let server = server_address(image);
    match docker_credential::get_credential_from_reader(config_json.as_bytes(), &server) {
        Ok(DockerCredential::UsernamePassword(user, password)) => Some(DockerCredentials {
            username: Some(user),
            password: Some(password),
            serveraddress: Some(server),
            ..Default::default()
        }),
        Ok(DockerCredential::IdentityToken(token)) => Some(DockerCredentials {
            identitytoken: Some(token),
            serveraddress: Some(server),
            ..Default::default()
        }),
        Err(_) => credentials_from_auths(image, config_json),
    }
}

/// An `auths` entry whose key names the registry's host in any spelling (bare host, or a URL).
fn credentials_from_auths(image: &str, config_json: &str) -> Option<DockerCredentials> {
    use base64::Engine as _;
    let v: serde_json::Value = serde_json::from_str(config_json).ok()?;
    let auths = v.get("auths")?.as_object()?;
    let registry = registry_of(image);
    let hub = registry == "docker.io";
    let (key, entry) = auths.iter().find(|(k, _)| {
        let host = k
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or_default();
        host == registry
            || (hub
                && matches!(
                    host,
                    "index.docker.io" | "registry-1.docker.io" | "docker.io"
                ))
    })?;
    let mut creds = DockerCredentials {
        serveraddress: Some(key.clone()),
        ..Default::default()
    };
    if let Some(auth) = entry.get("auth").and_then(|a| a.as_str()) {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(auth.trim())
            .ok()?;
        let text = String::from_utf8(decoded).ok()?;
        let (user, password) = text.split_once(':')?;
        creds.username = Some(user.into());
        creds.password = Some(password.into());
    }
    if let Some(token) = entry.get("identitytoken").and_then(|a| a.as_str()) {
        creds.identitytoken = Some(token.into());
    }
    (creds.username.is_some() || creds.identitytoken.is_some()).then_some(creds)
}

/// `GET /images/{name}/json` of `reference`, bounded by `engine`'s scope; the inner result is
/// the engine's own (404: no such image). Errors: `E_ENGINE_UNAVAILABLE`, the scope's
/// `E_ABORTED` or deadline error.
pub(crate) async fn inspect(
    engine: &Engine,
    reference: &str,
) -> Result<std::result::Result<bollard::models::ImageInspect, bollard::errors::Error>> {
    engine
        .call(
            "GET /images/{name}/json",
            READ_TIMEOUT_MS,
            engine.docker.inspect_image(reference),
        )
        .await
}

/// Whether `reference` resolves, on this engine now, to the image id `image_id`. A reference
/// the engine does not have is another image (nothing is pulled).
///
/// `GET /images/{name}/json`. Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`, the scope's
/// `E_ABORTED` or deadline error.
pub(crate) async fn resolves_to(engine: &Engine, reference: &str, image_id: &str) -> Result<bool> {
    match inspect(engine, reference).await? {
        Ok(img) => Ok(!image_id.is_empty() && img.id.as_deref() == Some(image_id)),
        Err(e) if status(&e) == Some(404) => Ok(false),
        Err(e) => Err(engine.error("inspect image", e)),
    }
}

/// `POST /images/create?fromSrc=-&repo=<reference>[&platform=<platform>]`: imports the root
/// filesystem `tar` as image `reference` (the whole reference in `repo`: Podman ignores `tag` on
/// an import). Each progress message must come within [`CHANGE_TIMEOUT_MS`]. `Ok(Some(message))`
/// when the engine's stream reported an error; the caller checks the image is there.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`, the scope's `E_ABORTED` or deadline error.
pub(crate) async fn import(
    engine: &Engine,
    reference: &str,
    platform: Option<&str>,
    tar: Vec<u8>,
    operation: &str,
) -> Result<Option<String>> {
    let mut opts = CreateImageOptionsBuilder::default()
        .from_src("-")
        .repo(reference);
    if let Some(p) = platform {
        opts = opts.platform(p);
    }
    let mut stream = engine.docker.create_image(
        Some(opts.build()),
        Some(bollard::body_full(tar.into())),
        None,
    );
    let mut failure = None;
    while let Some(item) = engine
        .call("POST /images/create", CHANGE_TIMEOUT_MS, stream.next())
        .await?
    {
        match item {
            Ok(info) => {
                if let Some(m) = info.error_detail.and_then(|d| d.message) {
                    failure = Some(m);
                }
            }
            Err(e) => return Err(engine.error(operation, e)),
        }
    }
    Ok(failure)
}

/// `GET /images/json`: every image (no filter), bounded by [`READ_TIMEOUT_MS`].
/// Errors (outer): `E_ENGINE_UNAVAILABLE`, the scope's `E_ABORTED` or deadline error.
pub(crate) async fn list(engine: &Engine) -> Result<Answer<Vec<ImageSummary>>> {
    engine
        .call(
            "GET /images/json",
            READ_TIMEOUT_MS,
            engine.docker.list_images(None::<ListImagesOptions>),
        )
        .await
}

/// `DELETE /images/{name}` of `reference` (a tag or an image id), never forced: 409 when a
/// container uses it, 404 when absent. Bounded by [`CHANGE_TIMEOUT_MS`].
/// Errors (outer): as [`list`].
pub(crate) async fn remove(
    engine: &Engine,
    reference: &str,
) -> Result<Answer<Vec<ImageDeleteResponseItem>>> {
    engine
        .call(
            "DELETE /images/{name}",
            CHANGE_TIMEOUT_MS,
            engine
                .docker
                .remove_image(reference, None::<RemoveImageOptions>, None),
        )
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references() {
        assert_eq!(split_reference("busybox"), ("busybox", Some("latest")));
        assert_eq!(split_reference("busybox:1.36"), ("busybox", Some("1.36")));
        assert_eq!(
            split_reference("localhost:5000/a/b"),
            ("localhost:5000/a/b", Some("latest"))
        );
        assert_eq!(
            split_reference("localhost:5000/a/b:2"),
            ("localhost:5000/a/b", Some("2"))
        );
        assert_eq!(split_reference("a@sha256:abc"), ("a@sha256:abc", None));
    }

    #[test]
    fn registries() {
        assert_eq!(registry_of("busybox"), "docker.io");
        assert_eq!(registry_of("library/busybox:1"), "docker.io");
        assert_eq!(registry_of("127.0.0.1:5055/berth/x:1"), "127.0.0.1:5055");
        assert_eq!(registry_of("ghcr.io/o/r"), "ghcr.io");
        assert_eq!(registry_of("localhost/x"), "localhost");
    }

    #[test]
    fn credentials_from_the_docker_config() {
        let config = r#"{"auths":{
            "https://index.docker.io/v1/":{"auth":"aHViOnNlY3JldA=="},
            "127.0.0.1:5055":{"auth":"dTpwOmFzcw=="},
            "ghcr.io":{"identitytoken":"tok"},
            "empty.example":{}
        }}"#;
        let hub = credentials_from_config("busybox:1", config).unwrap();
        assert_eq!(hub.username.as_deref(), Some("hub"));
        assert_eq!(hub.password.as_deref(), Some("secret"));
        assert_eq!(
            hub.serveraddress.as_deref(),
            Some("https://index.docker.io/v1/")
        );
        let local = credentials_from_config("127.0.0.1:5055/a:1", config).unwrap();
        assert_eq!(local.username.as_deref(), Some("u"));
        assert_eq!(local.password.as_deref(), Some("p:ass"));
        let gh = credentials_from_config("ghcr.io/o/r", config).unwrap();
        assert_eq!(gh.identitytoken.as_deref(), Some("tok"));
        assert!(credentials_from_config("empty.example/x", config).is_none());
        assert!(credentials_from_config("quay.io/x", config).is_none());
        assert!(credentials_from_config("x", "not json").is_none());
    }

    /// A `docker-credential-berth-test` helper on `PATH` that answers for one server only,
    /// as real helpers do (`get` reads the server address on stdin).
    fn install_test_helper() {
        static DONE: std::sync::OnceLock<()> = std::sync::OnceLock::new();
        DONE.get_or_init(|| {
            use std::os::unix::fs::PermissionsExt;
            let dir = std::env::temp_dir().join(format!("berth-cred-helper-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let helper = dir.join("docker-credential-berth-test");
            std::fs::write(
                &helper,
                "#!/bin/sh\n[ \"$1\" = get ] || exit 1\nread server\n\
                 [ \"$server\" = helped.example ] || { echo 'credentials not found in native keychain'; exit 1; }\n\
                 printf '{\"ServerURL\":\"%s\",\"Username\":\"robot\",\"Secret\":\"s3cret\"}' \"$server\"\n",
            )
            .unwrap();
            std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
            let path = std::env::var_os("PATH").unwrap_or_default();
            let mut dirs = vec![dir];
            dirs.extend(std::env::split_paths(&path));
            // SAFETY (edition 2021): set once, before any helper runs; no test reads PATH otherwise.
            std::env::set_var("PATH", std::env::join_paths(dirs).unwrap());
        });
    }

    #[test]
    fn credentials_from_credential_helpers() {
        install_test_helper();
        let by_registry = r#"{"credHelpers":{"helped.example":"berth-test"},"auths":{}}"#;
        let c = credentials_from_config("helped.example/o/r:1", by_registry).unwrap();
        assert_eq!(
            (
                c.username.as_deref(),
                c.password.as_deref(),
                c.serveraddress.as_deref()
            ),
            (Some("robot"), Some("s3cret"), Some("helped.example"))
        );
        assert!(credentials_from_config("other.example/o/r", by_registry).is_none());

        let store = r#"{"credsStore":"berth-test","auths":{"helped.example":{}}}"#;
        let c = credentials_from_config("helped.example/x", store).unwrap();
        assert_eq!(c.username.as_deref(), Some("robot"));
        // The store has nothing for this one (the helper exits 1): anonymous, no error.
        assert!(credentials_from_config("busybox", store).is_none());

        // A helper that is not installed is no credential, not a failure.
        let missing = r#"{"credHelpers":{"helped.example":"absent-helper"}}"#;
        assert!(credentials_from_config("helped.example/x", missing).is_none());
    }

    #[test]
    fn platforms() {
        assert!(validate_platform("linux/amd64").is_ok());
        assert!(validate_platform("linux/arm64/v8").is_ok());
        assert!(validate_platform("linux/arm/v7").is_ok());
        assert!(validate_platform("linux/s390x").is_ok());
        for bad in [
            "linux",
            "",
            "linux/",
            "Linux/amd64",
            "a/b/c/d",
            "linux/amd 64",
            "windows/zz",
            "windows/amd64",
            "linux/zz",
        ] {
            let e = validate_platform(bad).unwrap_err();
            assert_eq!(e.code(), "E_INVALID_ARGUMENT", "{bad}");
        }
    }
}
