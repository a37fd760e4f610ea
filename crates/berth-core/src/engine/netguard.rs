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
//! Engine calls: `GET /images/{name}/json`, `POST /images/create?fromSrc=-` (the import, once
//! per engine), `GET /containers/{id}/json`, `POST /containers/create`,
//! `POST /containers/{id}/start`, `POST /containers/{id}/wait`, `GET /containers/{id}/logs`
//! (on failure), `DELETE /containers/{id}` (the helper, by id).

use std::collections::HashMap;

use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{CreateImageOptionsBuilder, WaitContainerOptions};
use futures_util::StreamExt;

use crate::engine::bounded::CHANGE_TIMEOUT_MS;
use crate::engine::calls::remove_container;
use crate::engine::connection::Engine;
use crate::engine::container::inspect;
use crate::model::agent_binary::{append_to, short_hash, AGENT, AGENT_ARCH};
use crate::model::errors::{Error, Result};
use crate::model::labels;

/// The helper image's repository.
pub(crate) const IMAGE_REPO: &str = "berth-netguard";
/// Label on a helper container: `netguard`.
pub(crate) const HELPER_LABEL: &str = "dev.berth.helper";
/// Label on a helper container: the sandbox container id it works for.
pub(crate) const HELPER_FOR_LABEL: &str = "dev.berth.helper.for";
/// Longest run of the helper (create to exit), in milliseconds.
const HELPER_RUN_TIMEOUT_MS: u64 = 30_000;
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

/// The helper image reference for this build.
pub(crate) fn image() -> String {
    format!("{IMAGE_REPO}:{}", short_hash())
}

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
/// [`labels::LOCAL_NETWORK`] label says `blocked`) and has a network namespace of its own.
/// Call it after every start of the container. Idempotent (a rule in place counts).
///
/// Errors: `E_ENGINE` (the helper could not be imported, created or run, or exited non-zero:
/// its output in the message), `E_SESSION_NOT_FOUND`-like absence is `E_ENGINE` 404,
/// `E_ENGINE_UNAVAILABLE`, `E_ABORTED`.
pub(crate) async fn isolate(engine: &Engine, id: &str) -> Result<()> {
    let Some(c) = inspect(engine, id).await? else {
        return Err(Error::Engine {
            operation: "isolate container".into(),
            status: Some(404),
            message: format!("container {id} is gone"),
        });
    };
    let wanted = c
        .config
        .as_ref()
        .and_then(|c| c.labels.as_ref())
        .and_then(|l| l.get(labels::LOCAL_NETWORK))
        .is_some_and(|v| v == labels::LOCAL_NETWORK_BLOCKED);
    let mode = c
        .host_config
        .as_ref()
        .and_then(|h| h.network_mode.clone())
        .unwrap_or_default();
    if !wanted || mode == "none" || mode == "host" || mode.starts_with("container:") {
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
    let caller_labels: HashMap<String, String> = c
        .config
        .as_ref()
        .and_then(|c| c.labels.clone())
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| !k.starts_with(labels::LABEL_NAMESPACE))
        .collect();
    ensure_image(engine).await?;
    // The helper's run (create to removal, a fraction of a second) is not cut by the caller's
    // signal: an abort while its create is in flight would leave a container berth cannot
    // name. Each request stays bounded by its own timeout; the abort is honoured right after.
    let detached = engine.detached();
    let outcome = Box::pin(run_helper(
        &detached,
        id,
        rules(&gateways, &ports),
        caller_labels,
    ))
    .await;
    engine.step(async { outcome }).await
}

/// Imports the helper image unless the engine has it.
async fn ensure_image(engine: &Engine) -> Result<()> {
    if AGENT.is_empty() {
        return Err(Error::Engine {
            operation: "isolate container".into(),
            status: None,
            message: "this build of berth has no helper binary (it is built on Linux only), so it cannot keep a sandbox off the local network; create the session with localNetwork: true to opt out".into(),
        });
    }
    let image = image();
    if crate::engine::images::inspect(engine, &image)
        .await?
        .is_ok()
    {
        return Ok(());
    }
    // One import at a time in this process: concurrent creates would each import a copy.
    static IMPORT: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let _one = engine.step(async { Ok(IMPORT.lock().await) }).await?;
    if crate::engine::images::inspect(engine, &image)
        .await?
        .is_ok()
    {
        return Ok(());
    }
    let tar = archive().map_err(|e| Error::Engine {
        operation: "import helper image".into(),
        status: None,
        message: e.to_string(),
    })?;
    // The whole reference in `repo`: Podman ignores `tag` on an import.
    let opts = CreateImageOptionsBuilder::default()
        .from_src("-")
        .repo(&image)
        .platform(&format!("linux/{AGENT_ARCH}"))
        .build();
    let mut stream =
        engine
            .docker
            .create_image(Some(opts), Some(bollard::body_full(tar.into())), None);
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
            Err(e) => return Err(engine.error("import helper image", e)),
        }
    }
    if crate::engine::images::inspect(engine, &image)
        .await?
        .is_ok()
    {
        return Ok(());
    }
    Err(Error::Engine {
        operation: "import helper image".into(),
        status: None,
        message: failure.unwrap_or_else(|| format!("{image} is not there after its import")),
    })
}

/// The image's root filesystem: the helper binary alone, `/netguard`, root-owned `0755`.
fn archive() -> std::io::Result<Vec<u8>> {
    let mut b = tar::Builder::new(Vec::new());
    append_to(&mut b, "netguard")?;
    b.into_inner()
}

/// Runs the helper in container `id`'s network namespace with `args`, waits for it, removes
/// it by id (also when this call fails or is aborted on the way).
async fn run_helper(
    engine: &Engine,
    id: &str,
    args: Vec<String>,
    mut helper_labels: HashMap<String, String>,
) -> Result<()> {
    helper_labels.insert(HELPER_LABEL.into(), "netguard".into());
    helper_labels.insert(HELPER_FOR_LABEL.into(), id.into());
    let mut entrypoint = vec!["/netguard".to_string(), "netguard".to_string()];
    entrypoint.extend(args);
    let body = ContainerCreateBody {
        image: Some(image()),
        entrypoint: Some(entrypoint),
        cmd: Some(Vec::new()),
        labels: Some(helper_labels),
        network_disabled: None,
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
    let created = engine
        .call(
            "POST /containers/create",
            CHANGE_TIMEOUT_MS,
            engine.docker.create_container(
                None::<bollard::query_parameters::CreateContainerOptions>,
                body,
            ),
        )
        .await?
        .map_err(|e| engine.error("create network helper", e))?;
    let helper = created.id;
    let outcome = Box::pin(start_and_wait(engine, &helper)).await;
    let output = match &outcome {
        Ok(code) if *code != 0 => crate::engine::logs::tail(engine, &helper).await,
        _ => String::new(),
    };
    let removed = remove_container(&engine.detached(), &helper).await;
    let code = outcome?;
    removed?;
    if code == 0 {
        return Ok(());
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
