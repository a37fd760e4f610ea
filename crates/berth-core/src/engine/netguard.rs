//! Netguard: a sandbox kept off the local network (the engine's bridges, the host's services,
//! other containers, the LAN), by policy-routing rules written into its network namespace by
//! a short-lived helper container (`docs/design.md#network-isolation`).
//!
//! The helper is berth's own static binary (`crates/berth-agent`, mode `netguard`) in an image
//! berth imports offline (`berth-netguard:<first 16 hex of the binary's SHA-256>`). It joins
//! the sandbox's network namespace (`networkMode: container:<id>`) with `CAP_NET_ADMIN` as its
//! only capability, writes the rules and exits; berth removes it by id. The sandbox has no
//! `CAP_NET_ADMIN` (not in the engine's default set), so nothing in it, root included, can
//! delete a rule, add a route or an address. The rules live in the sandbox's namespace and die
//! with it: nothing on the host changes. Disconnecting and connecting networks
//! (`setNetworkPolicy`) keeps them; a stop does not (a start makes a new namespace), so every
//! start of an isolated container applies them again ([`isolate`]).
//!
//! The image (import, cache, other builds' images) is `engine::netguard_image`; one run of the
//! helper, and the removal it owes whatever happens, `engine::netguard_helper`.
//!
//! Engine calls: `GET /containers/{id}/json` (unless the caller inspected it),
//! `GET /volumes/{name}` (the run's guard record), the image's
//! (`GET /images/{name}/json` once per process and engine, `POST /images/create?fromSrc=-`
//! once per engine and build), the helper's run (`POST /containers/create`,
//! `POST /containers/{id}/start`, `POST /containers/{id}/wait`, `GET /containers/{id}/logs` on
//! failure, `DELETE /containers/{id}`), then the guard record's (`POST /volumes/create`,
//! `GET /volumes?filters=...`, `DELETE /volumes/{name}` of earlier runs' records).

use std::collections::HashMap;

use crate::engine::connection::Engine;
use crate::engine::container::{inspect, Inspected};
use crate::engine::netguard_helper::{self, Outcome};
use crate::engine::netguard_image;
use crate::engine::netguard_record as guards;
use crate::model::errors::{Error, Result};
use crate::model::labels;

/// Priority of the rules that let a packet through (lower is first).
const ALLOW_PRIORITY: u32 = 100;
/// Priority of the per-protocol refusals of a gateway.
const GATEWAY_PRIORITY: u32 = 150;
/// Priority of the protocol-less route lookup to a gateway (the engine's own check).
const GATEWAY_LOOKUP_PRIORITY: u32 = 160;
/// The IP protocols a socket reaches without `CAP_NET_RAW`: ICMP (ping sockets), TCP, UDP,
/// DCCP, ICMPv6, SCTP, UDP-Lite; and IPPROTO_RAW (255), the raw sockets of a caller that kept
/// `NET_RAW`.
/// UDP by its ports: the engine's route check is a UDP lookup with no port (the kernel's
/// default for `RTM_GETROUTE`), while a UDP datagram always has both ports. The kernel takes
/// port ranges up to 65534 only: a datagram from port 65535 to port 65535 is the one left.
const GATEWAY_PROTOCOLS: [&str; 9] = [
    "1",
    "6",
    "udp,dport=1-65534",
    "udp,sport=1-65534",
    "33",
    "58",
    "132",
    "136",
    "255",
];
/// Priority of the rules that refuse a local destination.
const DENY_PRIORITY: u32 = 200;

/// The destinations an isolated sandbox cannot reach: every private, shared, link-local,
/// documentation, benchmarking, multicast and reserved range (RFC 6890), so the engine's
/// bridges and their gateways (the host), other containers, the LAN and cloud metadata
/// (169.254.169.254). Loopback stays: it is the sandbox's own.
pub(crate) const LOCAL_RANGES: [&str; 16] = [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.0.2.0/24",
    "192.88.99.0/24",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "224.0.0.0/4",
    "240.0.0.0/4",
    "fc00::/7",
    "fe80::/10",
];

/// The helper's arguments for a sandbox whose networks have `gateways` and that publishes
/// `ports` (TCP): the engine's resolvers (`resolv.conf`) on port 53, replies from a published
/// port to a gateway (the engine's port forwarder connects from there), then every
/// [`LOCAL_RANGES`] refused.
pub(crate) fn rules(gateways: &[String], ports: &[u16]) -> Vec<String> {
    let mut out = vec![format!("dns={ALLOW_PRIORITY}")];
    for g in gateways {
        // The kernel matches ports up to 65534 only: a published 65535 gets no exception.
        for p in ports.iter().filter(|p| **p < 65535) {
            out.push(format!("{ALLOW_PRIORITY},allow,{g},tcp,sport={p}"));
        }
    }
    // The engine, connecting the container to its network again (`allow-all` after
    // `deny-all`), asks the kernel for a route to the gateway (`RTM_GETROUTE`: a UDP lookup
    // without ports) and refuses to connect when that is prohibited. So the gateway is refused
    // per protocol (every one a socket can open without `CAP_NET_RAW`, UDP for every port),
    // and only that portless lookup goes on to the main table.
    for g in gateways {
        for proto in GATEWAY_PROTOCOLS {
            out.push(format!("{GATEWAY_PRIORITY},deny,{g},{proto}"));
        }
        out.push(format!("{GATEWAY_LOOKUP_PRIORITY},allow,{g}"));
    }
    for r in LOCAL_RANGES {
        out.push(format!("{DENY_PRIORITY},deny,{r}"));
    }
    out
}

/// Applies the isolation rules to container `id` when it was created isolated (its
/// [`labels::LOCAL_NETWORK`] label says `blocked`) and has a network namespace of its own,
/// then records that its current run has them (`engine::netguard_record`). Call it after every
/// start of the container (or [`ensure`], which skips a run already recorded). Idempotent (a
/// rule in place counts), so concurrent calls for one container do not conflict.
///
/// Errors: `E_ENGINE` (the helper could not be imported, created or run, or exited non-zero:
/// its output in the message; the container is gone: status 404), `E_ENGINE_UNAVAILABLE`,
/// `E_ABORTED`.
pub(crate) async fn isolate(engine: &Engine, id: &str) -> Result<()> {
    let Some(c) = inspect(engine, id).await? else {
        return Err(gone(id));
    };
    Box::pin(isolate_inspected(engine, &c)).await
}

fn gone(id: &str) -> Error {
    Error::Engine {
        operation: "isolate container".into(),
        status: Some(404),
        message: format!("container {id} is gone"),
    }
}

/// Whether container `c` is one berth keeps off the local network: created isolated (its
/// [`labels::LOCAL_NETWORK`] label says `blocked`) with a network namespace of its own.
pub(crate) fn wants_rules(c: &Inspected) -> bool {
    let wanted = c
        .labels()
        .get(labels::LOCAL_NETWORK)
        .is_some_and(|v| v == labels::LOCAL_NETWORK_BLOCKED);
    let mode = c
        .host_config
        .as_ref()
        .and_then(|h| h.network_mode.clone())
        .unwrap_or_default();
    wanted && mode != "none" && mode != "host" && !mode.starts_with("container:")
}

/// The run of container `c` that has a network namespace now: its `State.StartedAt`, when it
/// runs (paused included) and is not restarting.
fn current_run(c: &Inspected) -> Option<String> {
    let s = c.state.as_ref()?;
    if s.running != Some(true) || s.restarting == Some(true) {
        return None;
    }
    s.started_at.clone().filter(|t| !t.is_empty())
}

/// Whether container `c` (as inspected) is an isolated container whose current run has no
/// guard record: it runs without its rules (or berth cannot tell that it has them).
/// `GET /volumes/{name}` for an isolated running container, nothing else.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn unguarded(engine: &Engine, c: &Inspected) -> Result<bool> {
    if !wants_rules(c) {
        return Ok(false);
    }
    let Some(run) = current_run(c) else {
        return Ok(false);
    };
    let id = c.id.clone().unwrap_or_default();
    Ok(!guards::has(engine, &id, &run).await?)
}

/// Makes sure the current run of container `id` has its rules: inspects it, and when it is an
/// isolated running container whose run has no guard record, applies them ([`isolate`]).
/// `Ok(true)` when it applied them. Errors: as [`isolate`].
pub(crate) async fn ensure(engine: &Engine, id: &str) -> Result<bool> {
    let Some(c) = inspect(engine, id).await? else {
        return Err(gone(id));
    };
    Box::pin(ensure_inspected(engine, &c)).await
}

/// [`ensure`] of a container the caller has just inspected (`c`): one `GET /volumes/{name}`
/// when the run has its rules. Errors: as [`isolate`].
pub(crate) async fn ensure_inspected(engine: &Engine, c: &Inspected) -> Result<bool> {
    if !unguarded(engine, c).await? {
        return Ok(false);
    }
    Box::pin(isolate_inspected(engine, c)).await?;
    Ok(true)
}

/// [`isolate`] of a container the caller has just inspected (`c`, taken after its start).
/// The guard record names the run `c` shows: the helper runs after that inspect, so when that
/// run still lives the rules went into its namespace; when it has ended, no later run has
/// its `StartedAt`, and the record says nothing about them.
pub(crate) async fn isolate_inspected(engine: &Engine, c: &Inspected) -> Result<()> {
    let id = c.id.clone().unwrap_or_default();
    let labels_of = c.labels();
    if !wants_rules(c) {
        return Ok(());
    }
    let gateways: Vec<String> = c
        .network_settings
        .as_ref()
        .and_then(|n| n.networks.as_ref())
        .map(|n| {
            n.values()
                .filter_map(|e| e.gateway.clone())
                .filter(|g| !g.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let ports: Vec<u16> = c
        .host_config
        .as_ref()
        .and_then(|h| h.port_bindings.as_ref())
        .map(|b| {
            b.keys()
                .filter_map(|k| k.strip_suffix("/tcp")?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let caller_labels: HashMap<String, String> = labels_of
        .iter()
        .filter(|(k, _)| !k.starts_with(labels::LABEL_NAMESPACE))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let prefix = labels_of.get(labels::PREFIX).cloned();
    let mut argv = vec!["/netguard".to_string(), "netguard".to_string()];
    argv.extend(rules(&gateways, &ports));
    // The helper's run (create to removal, a fraction of a second) is not cut by the caller's
    // signal: each request stays bounded by its own timeout, and the abort is honoured right
    // after. Should this future be dropped anyway (a select higher up), the run's guard
    // removes the helper in the background (`engine::netguard_helper`).
    let detached = engine.detached();
    let image = netguard_image::image();
    let outcome = Box::pin(async {
        let mut retried = false;
        loop {
            netguard_image::ensure(&detached).await?;
            let run = netguard_helper::run(
                &detached,
                &image,
                &id,
                prefix.as_deref(),
                argv.clone(),
                caller_labels.clone(),
            );
            match Box::pin(run).await? {
                Outcome::Applied => return Ok(()),
                // 404: the image went away (another berth's reaper), or the sandbox did.
                Outcome::Refused { status: 404, error } => {
                    if inspect(&detached, &id).await?.is_none() {
                        return Err(gone(&id));
                    }
                    netguard_image::forget(&detached);
                    if retried {
                        return Err(error);
                    }
                    retried = true;
                }
                Outcome::Refused { error, .. } => return Err(error),
            }
        }
    })
    .await;
    engine.step(async { outcome }).await?;
    // Only now, with the rules in: the run's record (a container that has no run yet, or
    // whose engine reported none, gets none, and is checked again next time).
    if let Some(run) = c.state.as_ref().and_then(|s| s.started_at.clone()) {
        if !run.is_empty() {
            Box::pin(guards::record(engine, &id, &run, &labels_of)).await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_cover_every_local_range_after_the_allowed_ones() {
        let r = rules(&["172.17.0.1".into()], &[8080, 3000]);
        assert_eq!(r[0], "dns=100");
        assert_eq!(r[1], "100,allow,172.17.0.1,tcp,sport=8080");
        assert_eq!(r[2], "100,allow,172.17.0.1,tcp,sport=3000");
        assert_eq!(
            r.len(),
            3 + GATEWAY_PROTOCOLS.len() + 1 + LOCAL_RANGES.len()
        );
        assert!(r.contains(&"150,deny,172.17.0.1,6".to_string()));
        assert!(r.contains(&"160,allow,172.17.0.1".to_string()));
        for range in [
            "10.0.0.0/8",
            "172.16.0.0/12",
            "192.168.0.0/16",
            "169.254.0.0/16",
        ] {
            assert!(r.contains(&format!("200,deny,{range}")), "{range}");
        }
        assert!(!r.iter().any(|x| x.contains("127.")));
        for arg in &r[1..] {
            berth_agent_rule_shape(arg);
        }
    }

    /// The argument shape the helper parses (`PRIORITY,ACTION,CIDR[,...]`).
    fn berth_agent_rule_shape(arg: &str) {
        let parts: Vec<&str> = arg.split(',').collect();
        assert!(parts.len() >= 3, "{arg}");
        assert!(parts[0].parse::<u32>().is_ok(), "{arg}");
        assert!(matches!(parts[1], "allow" | "deny"), "{arg}");
    }
}
