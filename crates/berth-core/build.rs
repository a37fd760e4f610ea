//! Builds the command helper (`crates/berth-agent`) as a static Linux binary and leaves it at
//! `$OUT_DIR/berth-agent` for `include_bytes!` (`exec::channel::install`). Only for a Linux
//! GNU target (glibc's static libc, `-C target-feature=+crt-static`): elsewhere, or when the
//! nested build fails, the file is empty and every command takes the engine exec path.
//! The nested `cargo build` has its own target directory under `OUT_DIR`, so it never waits
//! on the outer build's lock, and drops the outer build's flags and wrappers (clippy's, say).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let agent = manifest.join("..").join("berth-agent");
    println!("cargo:rerun-if-changed={}", agent.join("src").display());
    println!(
        "cargo:rerun-if-changed={}",
        agent.join("Cargo.toml").display()
    );
    println!("cargo:rerun-if-env-changed=BERTH_AGENT_SKIP");
    let target = std::env::var("TARGET").unwrap_or_default();
    let arch = match target.split('-').next() {
        Some("x86_64") => "amd64",
        Some("aarch64") => "arm64",
        _ => "",
    };
    println!("cargo:rustc-env=BERTH_AGENT_ARCH={arch}");
    let dest = out.join("berth-agent");
    let bytes = if target.ends_with("-linux-gnu")
        && !arch.is_empty()
        && std::env::var_os("BERTH_AGENT_SKIP").is_none()
    {
        build(&agent, &out, &target)
    } else {
        Vec::new()
    };
    std::fs::write(&dest, bytes).expect("write the helper");
}

fn build(agent: &std::path::Path, out: &std::path::Path, target: &str) -> Vec<u8> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target_dir = out.join("agent-target");
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "--release",
        "--offline",
        "--bin",
        "berth-agent",
        "--target",
        target,
    ])
    .arg("--manifest-path")
    .arg(agent.join("Cargo.toml"))
    .arg("--target-dir")
    .arg(&target_dir);
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("RUSTFLAGS", "-C target-feature=+crt-static");
    match cmd.status() {
        Ok(s) if s.success() => {
            let bin = target_dir.join(target).join("release").join("berth-agent");
            std::fs::read(bin).unwrap_or_default()
        }
        other => {
            println!("cargo:warning=the command helper was not built ({other:?}): commands take the engine exec path");
            Vec::new()
        }
    }
}
