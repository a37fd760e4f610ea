//! Opening: what every entry point on one session does first — validate the session id,
//! default and validate the prefix, derive the container name (no engine call), then connect.

use tokio_util::sync::CancellationToken;

use crate::engine::cancel::guard;
use crate::engine::connection::{self, Engine, EngineOptions};
use crate::model::errors::Result;
use crate::model::naming::{container_name, DEFAULT_PREFIX};
use crate::model::spec::CreateSpec;
use crate::model::spec::{validate_prefix, validate_session_id};

/// A session's validated id, prefix and container name.
#[derive(Debug, Clone)]
pub(crate) struct Opening {
    /// The session id, validated.
    pub(crate) session_id: String,
    /// The prefix (`default_prefix` when none was given), validated.
    pub(crate) prefix: String,
    /// The derived container name (see `docs/design.md#naming`).
    pub(crate) name: String,
}

impl Opening {
    /// Validates `session_id` and `prefix` (defaulting to `default_prefix`) and derives the
    /// container name. No engine call. Errors: `E_INVALID_ARGUMENT` (`sessionId`, `prefix`).
    pub(crate) fn new(
        session_id: &[u16],
        prefix: Option<&[u16]>,
        default_prefix: &str,
    ) -> Result<Self> {
        let session_id_text = validate_session_id(session_id)?;
        let default: Vec<u16>;
        let prefix_units = match prefix {
            Some(p) => p,
            None => {
                default = default_prefix.encode_utf16().collect();
                &default
            }
        };
        let prefix_text = validate_prefix(prefix_units)?;
        Ok(Opening {
            session_id: session_id_text,
            prefix: prefix_text,
            name: container_name(session_id, Some(prefix_units)),
        })
    }

    /// The opening of a create-like call (`createSession`, `recreateSession`): checks the
    /// whole spec, its bind sources against the engine `engine_opts` selects, and the name
    /// (prefix defaulting to `berth`). No engine call. Errors: `E_INVALID_ARGUMENT`.
    pub(crate) fn for_create(spec: &CreateSpec, engine_opts: &EngineOptions) -> Result<Self> {
        spec.validate()?;
        crate::engine::bind_source::check_for_engine(spec, engine_opts)?;
        Opening::new(&spec.session_id, spec.prefix.as_deref(), DEFAULT_PREFIX)
    }
}

/// Connects to the engine `engine_opts` selects, unless `cancel` fires first (`E_ABORTED`
/// naming `operation`). Errors: those of `engine::connection::connect`.
pub(crate) async fn connect(
    engine_opts: &EngineOptions,
    cancel: &CancellationToken,
    operation: &str,
) -> Result<Engine> {
    guard(cancel, operation, connection::connect(engine_opts)).await
}
