//! `berth-agent netguard RULE...`: writes policy-routing rules (`ip rule`) into the network
//! namespace it runs in, then exits. berth runs it in a short-lived helper container that joins
//! a sandbox's network namespace (`networkMode: container:<id>`) with `CAP_NET_ADMIN` and no
//! other capability; the sandbox itself has no `CAP_NET_ADMIN`, so code in it (root included)
//! cannot delete the rules, change its routes or add an address.
//!
//! A rule argument is `PRIORITY,ACTION,CIDR[,PROTO[,sport=N[-M]][,dport=N[-M]]]`, with ACTION `allow`
//! (look the packet up in the main table, as usual) or `deny` (prohibit: the sender gets
//! `EACCES`/ICMP prohibited), PROTO `tcp`, `udp` or an IP protocol number (1 to 255). The special argument `dns=PRIORITY` allows
//! UDP and TCP port 53 to each IP nameserver of `/etc/resolv.conf` (the file the engine wrote
//! for the sandbox's network). A rule that exists already counts as written (idempotent);
//! an IPv6 rule where the namespace has no IPv6 is skipped. Exit status 0 when every rule is
//! in place, 2 on a bad argument, 1 on a netlink failure (the message on stderr).

use std::io;
use std::net::IpAddr;

const RTM_NEWRULE: u16 = 32;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_ACK: u16 = 0x4;
const NLM_F_EXCL: u16 = 0x200;
const NLM_F_CREATE: u16 = 0x400;
const NLMSG_ERROR: u16 = 0x2;
const FRA_DST: u16 = 1;
const FRA_PRIORITY: u16 = 6;
const FRA_IP_PROTO: u16 = 22;
const FRA_SPORT_RANGE: u16 = 23;
const FRA_DPORT_RANGE: u16 = 24;
const FR_ACT_TO_TBL: u8 = 1;
const FR_ACT_PROHIBIT: u8 = 8;
const RT_TABLE_MAIN: u8 = 254;

/// One `ip rule`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Rule priority (lower first; the kernel's own `local` rule is 0, `main` 32766).
    pub priority: u32,
    /// `true`: look up the main table; `false`: prohibit.
    pub allow: bool,
    /// Destination address.
    pub dst: IpAddr,
    /// Destination prefix length.
    pub dst_len: u8,
    /// IP protocol number (6 TCP, 17 UDP), when the rule is for one.
    pub proto: Option<u8>,
    /// Source port range (inclusive), when the rule is for one.
    pub sport: Option<(u16, u16)>,
    /// Destination port range (inclusive), when the rule is for one.
    pub dport: Option<(u16, u16)>,
}

/// Parses one rule argument (see the module doc).
pub fn parse_rule(arg: &str) -> Result<Rule, String> {
    let mut parts = arg.split(',');
    let priority = parts
        .next()
        .and_then(|p| p.parse::<u32>().ok())
        .ok_or_else(|| format!("{arg:?}: no priority"))?;
    let allow = match parts.next() {
        Some("allow") => true,
        Some("deny") => false,
        _ => return Err(format!("{arg:?}: the action is 'allow' or 'deny'")),
    };
    let cidr = parts.next().ok_or_else(|| format!("{arg:?}: no CIDR"))?;
    let (dst, dst_len) = parse_cidr(cidr)?;
    let mut rule = Rule {
        priority,
        allow,
        dst,
        dst_len,
        proto: None,
        sport: None,
        dport: None,
    };
    for part in parts {
        let port = |v: &str| {
            let (a, b) = v.split_once('-').unwrap_or((v, v));
            match (a.parse::<u16>(), b.parse::<u16>()) {
                // The kernel takes ranges within 1..=65534.
                (Ok(a), Ok(b)) if a > 0 && a <= b && b < 65535 => Ok((a, b)),
                _ => Err(format!("{arg:?}: bad port or range {v:?}")),
            }
        };
        match part.split_once('=') {
            None if part == "tcp" => rule.proto = Some(6),
            None if part == "udp" => rule.proto = Some(17),
            None if part.parse::<u8>().is_ok_and(|p| p > 0) => rule.proto = part.parse().ok(),
            Some(("sport", v)) => rule.sport = Some(port(v)?),
            Some(("dport", v)) => rule.dport = Some(port(v)?),
            _ => return Err(format!("{arg:?}: unknown part {part:?}")),
        }
    }
    if (rule.sport.is_some() || rule.dport.is_some()) && rule.proto.is_none() {
        return Err(format!("{arg:?}: a port needs tcp or udp"));
    }
    Ok(rule)
}

/// Parses `ADDR/LEN` (or a bare address, a host route).
pub fn parse_cidr(cidr: &str) -> Result<(IpAddr, u8), String> {
    let (addr, len) = match cidr.split_once('/') {
        Some((a, l)) => (a, Some(l)),
        None => (cidr, None),
    };
    let addr: IpAddr = addr
        .parse()
        .map_err(|_| format!("{cidr:?}: not an IP address"))?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let len = match len {
        None => max,
        Some(l) => l
            .parse::<u8>()
            .ok()
            .filter(|l| *l <= max)
            .ok_or_else(|| format!("{cidr:?}: bad prefix length"))?,
    };
    Ok((addr, len))
}

/// The IP nameservers of a `resolv.conf` text.
pub fn nameservers(resolv_conf: &str) -> Vec<IpAddr> {
    resolv_conf
        .lines()
        .filter_map(|l| l.trim().strip_prefix("nameserver"))
        .filter_map(|rest| {
            rest.split_whitespace()
                .next()?
                .split('%')
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

/// The netlink message that adds `rule` (`RTM_NEWRULE`, create-exclusive, acknowledged).
pub fn message(rule: &Rule, seq: u32) -> Vec<u8> {
    let mut body = Vec::with_capacity(64);
    let family = if rule.dst.is_ipv4() {
        libc_af_inet()
    } else {
        libc_af_inet6()
    };
    // struct fib_rule_hdr
    body.extend_from_slice(&[
        family,
        rule.dst_len,
        0,
        0,
        if rule.allow { RT_TABLE_MAIN } else { 0 },
        0,
        0,
        if rule.allow {
            FR_ACT_TO_TBL
        } else {
            FR_ACT_PROHIBIT
        },
    ]);
    body.extend_from_slice(&0u32.to_ne_bytes());
    attr(&mut body, FRA_PRIORITY, &rule.priority.to_ne_bytes());
    if rule.dst_len > 0 {
        match rule.dst {
            IpAddr::V4(a) => attr(&mut body, FRA_DST, &a.octets()),
            IpAddr::V6(a) => attr(&mut body, FRA_DST, &a.octets()),
        }
    }
    if let Some(p) = rule.proto {
        attr(&mut body, FRA_IP_PROTO, &[p]);
    }
    for (kind, port) in [(FRA_SPORT_RANGE, rule.sport), (FRA_DPORT_RANGE, rule.dport)] {
        if let Some((start, end)) = port {
            let mut range = start.to_ne_bytes().to_vec();
            range.extend_from_slice(&end.to_ne_bytes());
            attr(&mut body, kind, &range);
        }
    }
    let mut msg = Vec::with_capacity(16 + body.len());
    msg.extend_from_slice(&((16 + body.len()) as u32).to_ne_bytes());
    msg.extend_from_slice(&RTM_NEWRULE.to_ne_bytes());
    msg.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL).to_ne_bytes());
    msg.extend_from_slice(&seq.to_ne_bytes());
    msg.extend_from_slice(&0u32.to_ne_bytes());
    msg.extend_from_slice(&body);
    msg
}

fn attr(buf: &mut Vec<u8>, kind: u16, payload: &[u8]) {
    buf.extend_from_slice(&((4 + payload.len()) as u16).to_ne_bytes());
    buf.extend_from_slice(&kind.to_ne_bytes());
    buf.extend_from_slice(payload);
    while !buf.len().is_multiple_of(4) {
        buf.push(0);
    }
}

#[cfg(target_os = "linux")]
fn libc_af_inet() -> u8 {
    libc::AF_INET as u8
}
#[cfg(target_os = "linux")]
fn libc_af_inet6() -> u8 {
    libc::AF_INET6 as u8
}
#[cfg(not(target_os = "linux"))]
fn libc_af_inet() -> u8 {
    2
}
#[cfg(not(target_os = "linux"))]
fn libc_af_inet6() -> u8 {
    10
}

/// Sends `msg` on a `NETLINK_ROUTE` socket and reads its acknowledgement: `Ok(0)` or the
/// kernel's errno.
#[cfg(target_os = "linux")]
fn send(msg: &[u8]) -> io::Result<i32> {
    // SAFETY: plain socket calls on a descriptor this function owns and closes.
    unsafe {
        let fd = libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_ROUTE,
        );
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut addr: libc::sockaddr_nl = std::mem::zeroed();
        addr.nl_family = libc::AF_NETLINK as u16;
        let sent = libc::sendto(
            fd,
            msg.as_ptr().cast(),
            msg.len(),
            0,
            (&addr as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as u32,
        );
        if sent < 0 {
            let e = io::Error::last_os_error();
            libc::close(fd);
            return Err(e);
        }
        let mut reply = [0u8; 4096];
        let n = libc::recv(fd, reply.as_mut_ptr().cast(), reply.len(), 0);
        let e = io::Error::last_os_error();
        libc::close(fd);
        if n < 0 {
            return Err(e);
        }
        let n = n as usize;
        if n < 20 || u16::from_ne_bytes([reply[4], reply[5]]) != NLMSG_ERROR {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "unexpected netlink reply",
            ));
        }
        Ok(-i32::from_ne_bytes([
            reply[16], reply[17], reply[18], reply[19],
        ]))
    }
}

/// The `netguard` entry point: applies every rule, returns the exit status.
#[cfg(target_os = "linux")]
pub fn main(args: &[String]) -> i32 {
    let mut rules = Vec::new();
    for arg in args {
        if let Some(priority) = arg.strip_prefix("dns=") {
            let Ok(priority) = priority.parse::<u32>() else {
                eprintln!("netguard: {arg:?}: bad priority");
                return 2;
            };
            let text = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
            for ns in nameservers(&text) {
                if ns.is_loopback() {
                    continue; // the engine's own resolver inside the namespace
                }
                let dst_len = if ns.is_ipv4() { 32 } else { 128 };
                for proto in [6, 17] {
                    rules.push(Rule {
                        priority,
                        allow: true,
                        dst: ns,
                        dst_len,
                        proto: Some(proto),
                        sport: None,
                        dport: Some((53, 53)),
                    });
                }
            }
            continue;
        }
        match parse_rule(arg) {
            Ok(r) => rules.push(r),
            Err(e) => {
                eprintln!("netguard: {e}");
                return 2;
            }
        }
    }
    for (seq, rule) in rules.iter().enumerate() {
        match send(&message(rule, seq as u32 + 1)) {
            Ok(0) => {}
            Ok(e) if e == libc::EEXIST => {}
            Ok(e) if rule.dst.is_ipv6() && (e == libc::EAFNOSUPPORT || e == libc::EOPNOTSUPP) => {}
            Ok(e) => {
                eprintln!("netguard: {rule:?}: {}", io::Error::from_raw_os_error(e));
                return 1;
            }
            Err(e) => {
                eprintln!("netguard: netlink: {e}");
                return 1;
            }
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse() {
        let r = parse_rule("200,deny,172.16.0.0/12").unwrap();
        assert_eq!((r.priority, r.allow, r.dst_len), (200, false, 12));
        let r = parse_rule("100,allow,172.17.0.1,tcp,sport=8080").unwrap();
        assert_eq!(
            (r.dst_len, r.proto, r.sport, r.dport),
            (32, Some(6), Some((8080, 8080)), None)
        );
        assert_eq!(
            parse_rule("150,deny,172.17.0.1,132").unwrap().proto,
            Some(132)
        );
        let r = parse_rule("100,allow,fc00::/7,udp,dport=53").unwrap();
        assert_eq!((r.dst_len, r.proto, r.dport), (7, Some(17), Some((53, 53))));
        for bad in [
            "",
            "x,deny,1.2.3.4",
            "1,drop,1.2.3.4",
            "1,deny,1.2.3.4/33",
            "1,deny,host",
            "1,allow,1.2.3.4,sport=1",
            "1,allow,1.2.3.4,icmp",
        ] {
            assert!(parse_rule(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn resolv_conf() {
        let text = "# x\nnameserver 10.0.0.2\nnameserver  fe80::1%eth0\nnameserver 127.0.0.11\nsearch a\nnameserver bogus\n";
        let got: Vec<String> = nameservers(text).iter().map(|a| a.to_string()).collect();
        assert_eq!(got, ["10.0.0.2", "fe80::1", "127.0.0.11"]);
    }

    #[test]
    fn message_layout() {
        let m = message(&parse_rule("200,deny,10.0.0.0/8").unwrap(), 7);
        assert_eq!(
            u32::from_ne_bytes(m[0..4].try_into().unwrap()) as usize,
            m.len()
        );
        assert_eq!(u16::from_ne_bytes([m[4], m[5]]), RTM_NEWRULE);
        // fib_rule_hdr: family, dst_len ... action
        assert_eq!(m[16 + 1], 8);
        assert_eq!(m[16 + 7], FR_ACT_PROHIBIT);
        assert_eq!(m.len() % 4, 0);
    }
}
