//! berth-agent: the helper berth copies into a container and runs as one long-lived engine exec
//! per user. It reads request frames on stdin and writes reply frames on stdout (see
//! `berth_agent::protocol`), runs several commands at once, each in a session of its own with
//! its `BERTH_EXEC_ID` marker, and reads a command's output only as far as the host granted
//! credit, so a slow reader holds the command back instead of filling memory. It also writes
//! small files atomically for the host (`WRITE`), as its own user, in the same loop.
//!
//! One thread and `poll(2)`: stdin, a self-pipe woken by `SIGCHLD` (children are reaped with
//! `waitpid`), and each command's pipes. When stdin ends (berth went away) the helper exits;
//! the commands keep running, as engine execs do when their client disconnects.
//!
//! Linux only (it is built static for Linux and run in Linux containers); elsewhere the binary
//! only says so.

#[cfg(target_os = "linux")]
mod agent;
#[cfg(target_os = "linux")]
mod child;
#[cfg(target_os = "linux")]
mod write;

#[cfg(target_os = "linux")]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `netguard RULE...`: the network-isolation mode berth runs in a helper container
    // (`berth_agent::netguard`); no argument: the command helper.
    if args.first().map(String::as_str) == Some("netguard") {
        std::process::exit(berth_agent::netguard::main(&args[1..]));
    }
    agent::main();
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("berth-agent runs on Linux only");
    std::process::exit(1);
}
