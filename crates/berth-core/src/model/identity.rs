//! Identity: who this process is (host id, pid, start time, instance id) and whether an owner lives.

use std::sync::OnceLock;

use serde_json::{json, Value};
#[cfg(any(target_os = "linux", target_os = "macos"))]
use sha2::{Digest, Sha256};

/// Who created or holds a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// Machine id + boot id + pid namespace, hashed (SHA-256, 32 hex chars). On macOS, which
    /// has no pid namespaces: hardware UUID + boot session UUID.
    pub host_id: String,
    /// Process id, in the host id's pid namespace.
    pub pid: u32,
    /// Process start time as the kernel recorded it, in decimal digits: on Linux clock ticks
    /// since boot (`/proc/<pid>/stat` field 22), on macOS microseconds since the epoch
    /// (`proc_pidinfo(PROC_PIDTBSDINFO)`'s `pbi_start_tvsec`/`pbi_start_tvusec`). Host ids
    /// differ between platforms, so the two units are never compared.
    pub start_time: String,
    /// A random id drawn once per process (32 hex chars).
    pub instance_id: String,
}

/// Whether an owner process is running: three values (`docs/design.md#identity-and-liveness`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// Same host, and the pid's start time matches.
    Alive,
    /// Same host, and the pid is gone or its start time differs (the pid was reused).
    Dead,
    /// Another host, or anything unreadable. Never counts as dead.
    Unknown,
}

impl Liveness {
    /// `alive`, `dead` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Liveness::Alive => "alive",
            Liveness::Dead => "dead",
            Liveness::Unknown => "unknown",
        }
    }
}

impl Owner {
    /// The owner as `PeekResult.owner`: `{ hostId, pid, startTime, instanceId, liveness }`.
    pub fn to_json(&self) -> Value {
        json!({
            "hostId": self.host_id,
            "pid": self.pid,
            "startTime": self.start_time,
            "instanceId": self.instance_id,
            "liveness": liveness(self).as_str(),
        })
    }

    /// Whether this owner is this very process.
    pub fn is_current(&self) -> bool {
        current().is_some_and(|me| me == self)
    }
}

/// This process's identity, read once. `None` where the platform gives no host id or start time.
pub(crate) fn current() -> Option<&'static Owner> {
    static CURRENT: OnceLock<Option<Owner>> = OnceLock::new();
    CURRENT
        .get_or_init(|| {
            let pid = std::process::id();
            Some(Owner {
                host_id: host_id()?,
                pid,
                start_time: start_time(pid)?,
                instance_id: hex::encode(rand::random::<[u8; 16]>()),
            })
        })
        .as_ref()
}

/// Liveness of `owner` as seen from this process.
pub fn liveness(owner: &Owner) -> Liveness {
    let Some(me) = current() else {
        return Liveness::Unknown;
    };
    if owner.host_id != me.host_id {
        return Liveness::Unknown;
    }
    if owner.pid == me.pid && owner.start_time == me.start_time {
        return Liveness::Alive;
    }
    liveness_on_this_host(owner.pid, &owner.start_time, start_time)
}

/// The same-host rule, with the start-time reader injected for tests.
fn liveness_on_this_host(
    pid: u32,
    recorded: &str,
    read: impl Fn(u32) -> Option<String>,
) -> Liveness {
    if pid == 0 || recorded.is_empty() || !recorded.bytes().all(|b| b.is_ascii_digit()) {
        return Liveness::Unknown;
    }
    match read(pid) {
        Some(now) if now == recorded => Liveness::Alive,
        Some(_) => Liveness::Dead,
        None if process_absent(pid) => Liveness::Dead,
        None => Liveness::Unknown,
    }
}

#[cfg(target_os = "linux")]
fn host_id() -> Option<String> {
    let machine = std::fs::read_to_string("/etc/machine-id")
        .or_else(|_| std::fs::read_to_string("/var/lib/dbus/machine-id"))
        .unwrap_or_default();
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let pidns = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let mut h = Sha256::new();
    h.update(machine.trim().as_bytes());
    h.update(b"\n");
    h.update(boot.trim().as_bytes());
    h.update(b"\n");
    h.update(pidns.to_string_lossy().as_bytes());
    Some(hex::encode(&h.finalize()[..16]))
}

/// The start time of `pid` in clock ticks since boot, or [`EXITED`] for a process that has
/// exited but whose parent has not reaped it yet (state `Z` or `X`): its pid and start time
/// still answer, yet the process is gone, so it must read as dead, never as alive.
#[cfg(target_os = "linux")]
fn start_time(pid: u32) -> Option<String> {
    let pid = i32::try_from(pid).ok()?;
    let stat = procfs::process::Process::new(pid).ok()?.stat().ok()?;
    if matches!(stat.state, 'Z' | 'X' | 'x') {
        return Some(EXITED.into());
    }
    Some(stat.starttime.to_string())
}

/// What [`start_time`] reads for an exited, unreaped process: never a recorded start time
/// (those are digits only), so an owner in that state is `dead`.
#[cfg(target_os = "linux")]
const EXITED: &str = "exited";

/// Whether no process `pid` exists, asked of the kernel with `kill(pid, 0)`, which answers
/// `ESRCH` only for a pid that exists nowhere in this pid namespace. A `/proc/<pid>` that is
/// merely hidden (procfs mounted `hidepid=1|2`, another user's process) gives `EPERM` or
/// success instead, so a live process the caller cannot read is never taken for dead.
#[cfg(unix)]
fn process_absent(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 performs only the existence and permission checks; nothing is sent.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Hardware UUID (`gethostuuid`) + boot session UUID (`sysctl kern.bootsessionuuid`, drawn
/// anew at every boot), hashed as on Linux. `None` when either is unreadable.
#[cfg(target_os = "macos")]
fn host_id() -> Option<String> {
    let mut hardware = [0u8; 16];
    let wait = libc::timespec {
        tv_sec: 1,
        tv_nsec: 0,
    };
    // SAFETY: `hardware` is the 16-byte uuid_t the call fills; `wait` outlives the call.
    if unsafe { libc::gethostuuid(hardware.as_mut_ptr(), &wait) } != 0 {
        return None;
    }
    let boot = sysctl_string("kern.bootsessionuuid")?;
    let mut h = Sha256::new();
    h.update(hex::encode(hardware).as_bytes());
    h.update(b"\n");
    h.update(boot.trim().as_bytes());
    Some(hex::encode(&h.finalize()[..16]))
}

/// A string-valued sysctl, by name (`sysctlbyname(3)`).
#[cfg(target_os = "macos")]
fn sysctl_string(name: &str) -> Option<String> {
    let name = std::ffi::CString::new(name).ok()?;
    let mut len: libc::size_t = 0;
    // SAFETY: a null buffer asks only for the length.
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            std::ptr::null_mut(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 || len == 0 {
        return None;
    }
    let mut buf = vec![0u8; len];
    // SAFETY: `buf` has room for `len` bytes, the length the kernel asked for.
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return None;
    }
    buf.truncate(len);
    let text = String::from_utf8(buf).ok()?;
    let text = text.trim_end_matches('\0').trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// The kernel's record of when `pid` started, in microseconds since the epoch
/// (`proc_pidinfo(PROC_PIDTBSDINFO)`); never recomputed from the boot time.
#[cfg(target_os = "macos")]
fn start_time(pid: u32) -> Option<String> {
    let pid = libc::c_int::try_from(pid).ok()?;
    // SAFETY: `proc_bsdinfo` is plain data; all-zero is a valid value.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = libc::c_int::try_from(std::mem::size_of::<libc::proc_bsdinfo>()).ok()?;
    // SAFETY: the buffer is one `proc_bsdinfo`, of the size passed.
    let n = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDTBSDINFO,
            0,
            (&mut info as *mut libc::proc_bsdinfo).cast(),
            size,
        )
    };
    if n != size {
        return None;
    }
    let micros = info
        .pbi_start_tvsec
        .checked_mul(1_000_000)?
        .checked_add(info.pbi_start_tvusec)?;
    Some(micros.to_string())
}

/// Elsewhere (Windows) berth has no process identity: no holder record is written and
/// every owner's liveness is `unknown`, which never counts as dead.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn host_id() -> Option<String> {
    None
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn start_time(_pid: u32) -> Option<String> {
    None
}

#[cfg(not(unix))]
fn process_absent(_pid: u32) -> bool {
    false
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    #[test]
    fn an_exited_unreaped_process_is_dead() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        let recorded = start_time(pid).unwrap();
        assert_eq!(
            liveness_on_this_host(pid, &recorded, start_time),
            Liveness::Alive
        );
        child.kill().unwrap();
        // Not reaped yet: a zombie whose pid and start time still answer.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while start_time(pid).as_deref() != Some(EXITED) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(
            liveness_on_this_host(pid, &recorded, start_time),
            Liveness::Dead
        );
        child.wait().unwrap();
    }

    use super::*;

    #[test]
    fn current_process_is_alive() {
        let me = current().expect("identity on linux");
        assert_eq!(me.host_id.len(), 32);
        assert!(me.start_time.parse::<u64>().is_ok());
        assert_eq!(liveness(me), Liveness::Alive);
        assert!(me.is_current());
    }

    #[test]
    fn another_host_is_unknown() {
        let mut o = current().unwrap().clone();
        o.host_id = "0".repeat(32);
        assert_eq!(liveness(&o), Liveness::Unknown);
    }

    #[test]
    fn same_host_rules() {
        let read = |pid: u32| {
            if pid == 10 {
                Some("500".to_string())
            } else {
                None
            }
        };
        assert_eq!(liveness_on_this_host(10, "500", read), Liveness::Alive);
        // Pid reused by another process: its start time differs.
        assert_eq!(liveness_on_this_host(10, "499", read), Liveness::Dead);
        // Unparseable record: protective.
        assert_eq!(liveness_on_this_host(10, "", read), Liveness::Unknown);
        assert_eq!(liveness_on_this_host(10, "12a", read), Liveness::Unknown);
        assert_eq!(liveness_on_this_host(0, "500", read), Liveness::Unknown);
    }

    #[test]
    fn a_gone_pid_is_dead() {
        // Pid numbers above pid_max never exist.
        let o = Owner {
            pid: 4_194_304 + 7,
            ..current().unwrap().clone()
        };
        assert_eq!(liveness(&o), Liveness::Dead);
    }

    #[test]
    fn an_existing_pid_whose_proc_entry_cannot_be_read_is_unknown() {
        // pid 1 exists; a reader that cannot see its /proc entry (hidepid) must not call it dead.
        let hidden = |_pid: u32| None;
        assert_eq!(liveness_on_this_host(1, "500", hidden), Liveness::Unknown);
        assert!(!process_absent(1));
        assert!(!process_absent(std::process::id()));
        assert!(process_absent(4_194_304 + 7));
    }

    #[test]
    fn a_reused_pid_is_dead() {
        let o = Owner {
            start_time: "1".into(),
            instance_id: "x".into(),
            ..current().unwrap().clone()
        };
        assert_eq!(liveness(&o), Liveness::Dead);
    }
}
