//! Drift: which fields of a resume `spec` differ from the spec a session was created with.
//!
//! Containers carry a salted digest per create-spec field (see [`crate::model::labels`]); the
//! fields a resume names are digested with the same salt and compared. An image whose
//! reference differs is compared by resolved image id (`GET /images/{ref}/json` against
//! the container's `Image`), so `busybox` and `busybox:latest` of the same image do not
//! drift. Nothing is ever pulled.

use crate::model::errors::{Error, Result};
use std::collections::BTreeMap;

use crate::model::spec::{
    pids_limit, validate_argv, validate_container_path, validate_env, validate_image,
    validate_port, validate_user, CreateSpec, Limits, Mount,
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

/// The create-spec fields a resume names, each `None` when not named (the caller's view,
/// before the digest-field rule of [`DriftSpec::named`] applies).
#[derive(Debug, Clone, Default)]
pub struct ResumeFields {
    /// Image reference; compared by resolved image id when the reference differs.
    pub image: Option<String>,
    /// Environment variables.
    pub env: Option<BTreeMap<String, String>>,
    /// Working directory.
    pub work_dir: Option<String>,
    /// User.
    pub user: Option<String>,
    /// Published container ports.
    pub ports: Option<Vec<u16>>,
    /// Bind mounts.
    pub mounts: Option<Vec<Mount>>,
    /// Keep-alive entrypoint.
    pub entrypoint: Option<Vec<String>>,
    /// Memory limit, in bytes.
    pub memory_bytes: Option<i64>,
    /// CPU limit, in CPUs.
    pub cpus: Option<f64>,
    /// Maximum number of processes.
    pub pids_limit: Option<i64>,
    /// Container paths the session's user must be able to write (verify only; no digest).
    pub writable_paths: Vec<String>,
}

impl DriftSpec {
    /// The drift spec of the fields a resume names: each named field sets its value and its
    /// digest field (`image`, `env`, `workDir`, `user`, `ports`, `mounts`, `entrypoint`);
    /// naming any of `memory_bytes`, `cpus`, `pids_limit` compares the three limits as one
    /// field (`limits`), the unnamed ones as unset. Writable paths are never compared.
    pub fn named(f: ResumeFields) -> DriftSpec {
        let mut d = DriftSpec::default();
        let s = &mut d.spec;
        if let Some(i) = f.image {
            s.image = i;
            d.fields.push("image");
        }
        if let Some(e) = f.env {
            s.env = e;
            d.fields.push("env");
        }
        if f.work_dir.is_some() {
            s.work_dir = f.work_dir;
            d.fields.push("workDir");
        }
        if f.user.is_some() {
            s.user = f.user;
            d.fields.push("user");
        }
        if let Some(p) = f.ports {
            s.ports = p;
            d.fields.push("ports");
        }
        if let Some(m) = f.mounts {
            s.mounts = m;
            d.fields.push("mounts");
        }
        if f.entrypoint.is_some() {
            s.entrypoint = f.entrypoint;
            d.fields.push("entrypoint");
        }
        if f.memory_bytes.is_some() || f.cpus.is_some() || f.pids_limit.is_some() {
            s.limits = Limits {
                memory_bytes: f.memory_bytes,
                cpus: f.cpus,
                pids_limit: f.pids_limit,
            };
            d.fields.push("limits");
        }
        s.writable_paths = f.writable_paths;
        d
    }

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
                "ports" => {
                    for (i, p) in s.ports.iter().enumerate() {
                        validate_port(&format!("spec.ports[{i}]"), i64::from(*p))?;
                    }
                }
                "limits" => {
                    if s.limits.memory_bytes.is_some_and(|m| m < 0) {
                        return Err(Error::invalid(
                            "spec.memoryBytes",
                            "must be a whole number of bytes, 0 or more",
                        ));
                    }
                    if let Some(p) = s.limits.pids_limit {
                        pids_limit("spec.pidsLimit", p as f64)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_fields_set_their_digest_fields_and_limits_are_one() {
        let d = DriftSpec::named(ResumeFields {
            image: Some("i".into()),
            cpus: Some(1.5),
            writable_paths: vec!["/w".into()],
            ..Default::default()
        });
        assert_eq!(d.fields, vec!["image", "limits"]);
        assert_eq!(d.spec.limits.cpus, Some(1.5));
        assert_eq!(d.spec.limits.memory_bytes, None);
        assert_eq!(d.spec.writable_paths, vec!["/w".to_string()]);
        assert!(DriftSpec::named(ResumeFields::default()).fields.is_empty());
    }

    #[test]
    fn named_ports_and_limits_are_checked_at_their_bounds() {
        let field = |f: ResumeFields| match DriftSpec::named(f).validate() {
            Err(Error::InvalidArgument { field, .. }) => Some(field),
            _ => None,
        };
        let ports = |p: Vec<u16>| ResumeFields {
            ports: Some(p),
            ..Default::default()
        };
        assert_eq!(field(ports(vec![1, 65535])), None);
        assert_eq!(field(ports(vec![80, 0])).as_deref(), Some("spec.ports[1]"));
        let memory = |m| ResumeFields {
            memory_bytes: Some(m),
            ..Default::default()
        };
        assert_eq!(field(memory(0)), None);
        assert_eq!(field(memory(-1)).as_deref(), Some("spec.memoryBytes"));
        let pids = |p| ResumeFields {
            pids_limit: Some(p),
            ..Default::default()
        };
        assert_eq!(field(pids(1)), None);
        assert_eq!(field(pids(0)).as_deref(), Some("spec.pidsLimit"));
    }
}
