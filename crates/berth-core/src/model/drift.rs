//! Drift: which fields of a resume `spec` differ from the spec a session was created with.
//!
//! Containers carry a salted digest per create-spec field (see [`crate::model::labels`]); the
//! fields a resume names are digested with the same salt and compared. An image whose
//! reference differs is compared by resolved image id (`GET /images/{ref}/json` against
//! the container's `Image`), so `busybox` and `busybox:latest` of the same image do not
//! drift. Nothing is ever pulled.

use crate::model::errors::{Error, Result};
use crate::model::spec::{
    validate_argv, validate_container_path, validate_env, validate_image, validate_user, CreateSpec,
};

/// What to do when a resume finds drift.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnDrift {
    /// Adopt and report the drifted fields on the session.
    #[default]
    Report,
    /// Reject with `E_SPEC_DRIFT`; adopt nothing.
    Error,
}

/// A resume `spec`: the values in `spec` for the digest fields named in `fields`.
///
/// `fields` are digest field names (`image`, `env`, `workDir`, `user`, `ports`, `mounts`,
/// `limits`, `entrypoint`). Limits are one digest: naming any of memory, CPUs or pids
/// compares all three, the unnamed ones as unset.
#[derive(Debug, Clone, Default)]
pub struct DriftSpec {
    /// The values to compare.
    pub spec: CreateSpec,
    /// The digest fields named by the caller.
    pub fields: Vec<&'static str>,
}

impl DriftSpec {
    /// What this spec asks verify to check: the mounts, ports and user it names, and its
    /// writable paths.
    pub fn expect(&self) -> crate::model::verification::Expect {
        let named = |f: &str| self.fields.contains(&f);
        crate::model::verification::Expect {
            mounts: named("mounts").then(|| self.spec.mounts.clone()),
            ports: named("ports").then(|| self.spec.ports.clone()),
            writable_paths: self.spec.writable_paths.clone(),
            user: if named("user") {
                self.spec.user.clone()
            } else {
                None
            },
        }
    }

    /// Checks the named values before any engine call (`E_INVALID_ARGUMENT`, fields as `spec.<name>`).
    pub fn validate(&self) -> Result<()> {
        let s = &self.spec;
        for f in &self.fields {
            match *f {
                "image" => validate_image(&s.image).map_err(|_| {
                    Error::invalid("spec.image", "must be a non-empty image reference")
                })?,
                "env" => validate_env("spec.env", &s.env)?,
                "workDir" => {
                    if let Some(w) = &s.work_dir {
                        validate_container_path("spec.workDir", w)?
                    }
                }
                "user" => {
                    if let Some(u) = &s.user {
                        validate_user(u).map_err(|_| {
                            Error::invalid(
                                "spec.user",
                                "must be `user`, `uid`, `user:group` or `uid:gid`",
                            )
                        })?
                    }
                }
                "entrypoint" => {
                    if let Some(e) = &s.entrypoint {
                        validate_argv("spec.entrypoint", e)?
                    }
                }
                "mounts" => {
                    for (i, m) in s.mounts.iter().enumerate() {
                        if !m.source.starts_with('/') {
                            return Err(Error::invalid(
                                format!("spec.mounts[{i}].source"),
                                "must be an absolute host path",
                            ));
                        }
                        validate_container_path(&format!("spec.mounts[{i}].target"), &m.target)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}
