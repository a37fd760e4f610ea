//! Hold: one handle's own records: registering a hold, releasing it, and claiming the duty to remove.
//!
//! Engine calls: `POST /volumes/create` (register, claim) and `DELETE /volumes/{name}`
//! (release). A claim never deletes anything: a taker creates generation `n + 1` of the
//! duty record, and the engine's volume-name uniqueness lets exactly one create win.

use std::collections::HashMap;

use crate::engine::connection::Engine;
use crate::model::errors::Result;
use crate::model::identity::{self, Owner};
use crate::ownership::holders::{self, duty_volume, holder_volume, new_token, Role, TOKEN};
use crate::ownership::records;

/// Records this process as a holder (`creator` or `adopter`) of container `container_id`.
///
/// `POST /volumes/create` of `berth-holder-<container id>-<token>`. Returns the record's
/// volume name, or `None` where this platform gives the process no identity (nothing
/// could judge such a record). `extra`: the container's caller labels, copied onto it.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn register(
    engine: &Engine,
    container_id: &str,
    role: Role,
    extra: &HashMap<String, String>,
) -> Result<Option<String>> {
    let Some(me) = identity::current() else {
        return Ok(None);
    };
    let token = new_token();
    let name = holder_volume(container_id, &token);
    let labels = holders::encode(container_id, role, me, &token, None, extra);
    records::create(engine, &name, labels, "record session holder").await?;
    Ok(Some(name))
}

/// Drops this handle's own record `name` (never anyone else's). `DELETE /volumes/{name}`;
/// absent counts as done. Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn release(engine: &Engine, name: &str) -> Result<()> {
    records::delete(engine, name).await
}

/// The outcome of a duty claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Claim {
    /// This process holds generation `n` now; the record's volume name.
    Won(String),
    /// Another claimant created that generation first (`None` when its record is unreadable).
    Lost(Option<Owner>),
}

/// Claims generation `generation` of the duty to remove container `container_id`.
///
/// `POST /volumes/create` of `berth-duty-<container id>-<generation>` with a fresh random
/// token; the engine answers an existing name with the first creator's labels, so the
/// claim is won exactly when the token read back is this one. `handover`: the claim is a
/// handover's, in progress until [`crate::ownership::settled::settle`] records it settled.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn claim_duty(
    engine: &Engine,
    container_id: &str,
    generation: u64,
    me: &Owner,
    extra: &HashMap<String, String>,
    handover: bool,
) -> Result<Claim> {
    let token = new_token();
    let name = duty_volume(container_id, generation);
    let mut labels = holders::encode(
        container_id,
        Role::Inheritor,
        me,
        &token,
        Some(generation),
        extra,
    );
    if handover {
        labels.insert(holders::HANDOVER.into(), "true".into());
    }
    let back = records::create(engine, &name, labels, "claim session duty").await?;
    if back.get(TOKEN) == Some(&token) {
        return Ok(Claim::Won(name));
    }
    let winner = holders::decode(&name, &back).and_then(|r| r.hold.ok().map(|h| h.holder));
    Ok(Claim::Lost(winner))
}
