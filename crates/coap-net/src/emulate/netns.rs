//! The emulator's network namespaces, made, configured and removed by the tool itself.
//!
//! Namespaces are made and removed with iproute2's `ip netns` (which keeps them at
//! `/run/netns/NAME`, where `ip -n NAME …` and `ip netns exec NAME …` find them); addresses and
//! routes are set with `ip -n NAME -batch -`, and processes started in it with `ip netns exec`.
//! Sysctls are written to `/proc/sys` from a thread that has entered the namespace (`setns`).
//!
//! Every name is `coapcc-PID-N-SIDE`, PID the emulator's process. [`sweep`] removes the
//! namespaces of emulators no longer running (after a crash or SIGKILL, which run no clean-up)
//! and kills what still runs in them; every emulator calls it as it starts.
//!
//! What runs in a namespace is found by the namespace's inode (`/proc/PID/ns/net` names it), not
//! by its name: a command may remove the name (`ip netns del`) while processes still live in the
//! namespace, and `ip netns pids NAME` then finds nothing. Each namespace's inode is recorded in
//! [`REGISTRY`] (a file per namespace, removed with it), so that a later [`sweep`] finds the
//! processes of a crashed emulator's namespaces even when their names are gone.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::process::{Command, Stdio};

/// The first part of every namespace name the emulator makes.
pub const PREFIX: &str = "coapcc-";

/// Where each namespace's inode is recorded while it exists (a file named for the namespace,
/// holding the inode in decimal).
pub const REGISTRY: &str = "/run/coapcc-netns";

/// Runs `ip ARGS`, with `stdin` on its standard input if given; its standard output, or an error
/// that names the command and says what `ip` said.
pub fn ip(args: &[&str], stdin: Option<&str>) -> io::Result<String> {
    let mut cmd = Command::new("ip");
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = cmd.spawn().map_err(|e| {
        let hint = if e.kind() == io::ErrorKind::NotFound { " (install iproute2)" } else { "" };
        io::Error::new(e.kind(), format!("cannot run `ip`{hint}: {e}"))
    })?;
    if let (Some(text), Some(mut w)) = (stdin, child.stdin.take()) {
        w.write_all(text.as_bytes())?;
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(io::Error::other(format!("`ip {}` failed: {}", args.join(" "), said.trim())));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A network namespace the emulator made; removed (with what runs in it) when dropped.
#[derive(Debug)]
pub struct Namespace {
    name: String,
    /// Its inode (what `/proc/PID/ns/net` names), when it could be read.
    inode: Option<u64>,
    /// The namespace, held open: entered through it even when a command removed the name.
    file: Option<File>,
}

impl Namespace {
    /// Makes the namespace `name` (its loopback brought up) and records its inode.
    pub fn create(name: &str) -> io::Result<Namespace> {
        use std::os::unix::fs::MetadataExt;
        ip(&["netns", "add", name], None)?;
        let mut ns = Namespace { name: name.to_string(), inode: None, file: None };
        ns.file = File::open(ns.path()).ok();
        ns.inode = ns.file.as_ref().and_then(|f| f.metadata().ok()).map(|m| m.ino());
        if let Some(ino) = ns.inode {
            let _ = std::fs::create_dir_all(REGISTRY);
            let _ = std::fs::write(format!("{REGISTRY}/{name}"), ino.to_string());
        }
        ip(&["-n", name, "link", "set", "lo", "up"], None)?;
        Ok(ns)
    }

    /// Its name (for `ip netns exec NAME`).
    pub fn name(&self) -> &str {
        &self.name
    }

    fn path(&self) -> String {
        format!("/run/netns/{}", self.name)
    }

    /// Runs `f` on a thread that has entered the namespace; what it returns.
    pub fn run_in<T: Send>(&self, f: impl FnOnce() -> io::Result<T> + Send) -> io::Result<T> {
        let file = match &self.file {
            Some(f) => f.try_clone()?,
            None => File::open(self.path()).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.path())))?,
        };
        std::thread::scope(|s| {
            s.spawn(move || {
                rustix::thread::move_into_link_name_space(
                    file.as_fd(),
                    Some(rustix::thread::LinkNameSpaceType::Network),
                )
                .map_err(|e| io::Error::other(format!("cannot enter namespace: {e}")))?;
                f()
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the namespace's thread panicked")))
        })
    }

    /// Writes sysctls (`net/ipv4/tcp_sack` style keys, under `/proc/sys`) inside the namespace;
    /// the keys this kernel lacks are returned, not an error.
    pub fn sysctls(&self, settings: &[(String, String)]) -> io::Result<Vec<String>> {
        self.run_in(|| {
            let mut missing = Vec::new();
            for (k, v) in settings {
                let path = format!("/proc/sys/{k}");
                match std::fs::write(&path, v) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => missing.push(k.clone()),
                    Err(e) => return Err(io::Error::new(e.kind(), format!("{path} = {v}: {e}"))),
                }
            }
            Ok(missing)
        })
    }

    /// A command that runs `program` inside the namespace (`ip netns exec`).
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.name, program]);
        cmd
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        remove(&self.name, self.inode);
    }
}

/// Kills what runs in the namespace `name` (by its inode if known, else by its name), removes
/// it if its name is still there, and forgets its record.
fn remove(name: &str, inode: Option<u64>) {
    match inode {
        Some(ino) => kill_inode(ino),
        None => kill_named(name),
    }
    let _ = ip(&["netns", "del", name], None);
    let _ = std::fs::remove_file(format!("{REGISTRY}/{name}"));
}

fn kill_named(name: &str) {
    let Ok(pids) = ip(&["netns", "pids", name], None) else { return };
    for pid in pids.split_whitespace().filter_map(|p| p.parse::<i32>().ok()) {
        kill(pid);
    }
}

/// Kills every process whose network namespace is inode `ino`.
fn kill_inode(ino: u64) {
    let Ok(dir) = std::fs::read_dir("/proc") else { return };
    let want = format!("net:[{ino}]");
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        if std::fs::read_link(e.path().join("ns/net")).is_ok_and(|l| l.as_os_str() == want.as_str()) {
            kill(pid);
        }
    }
}

fn kill(pid: i32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}

/// The emulator's process that made the namespace `name`, if it is one of its names.
pub fn owner(name: &str) -> Option<u32> {
    name.strip_prefix(PREFIX)?.split('-').next()?.parse().ok()
}

/// Removes the namespaces whose emulator no longer runs, killing what runs in them, those whose
/// name a command removed included (found through [`REGISTRY`]); their names.
pub fn sweep() -> io::Result<Vec<String>> {
    let dead = |name: &str| owner(name).is_some_and(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists());
    let mut removed = Vec::new();
    let recorded: Vec<(String, Option<u64>)> = std::fs::read_dir(REGISTRY)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .map(|n| {
                    let ino =
                        std::fs::read_to_string(format!("{REGISTRY}/{n}")).ok().and_then(|t| t.trim().parse().ok());
                    (n, ino)
                })
                .collect()
        })
        .unwrap_or_default();
    for (name, ino) in recorded.into_iter().filter(|(n, _)| dead(n)) {
        remove(&name, ino);
        removed.push(name);
    }
    let list = ip(&["netns", "list"], None)?;
    for name in list.lines().filter_map(|l| l.split_whitespace().next()) {
        if dead(name) && !removed.iter().any(|r| r == name) {
            remove(name, None);
            removed.push(name.to_string());
        }
    }
    Ok(removed)
}

/// Whether IP-level emulation can run here: root, `/dev/net/tun` and iproute2's `ip`; an error
/// that says what is missing.
pub fn requirements() -> io::Result<()> {
    check_privileges()?;
    ip(&["-V"], None).map(|_| ())
}

/// Whether this process may make namespaces and TUN devices; an error that says what is missing.
fn check_privileges() -> io::Result<()> {
    if !rustix::process::geteuid().is_root() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "IP-level emulation makes network namespaces and TUN devices: run it as root (e.g. with sudo)",
        ));
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "/dev/net/tun is missing: load the tun module (`modprobe tun`), or in a container pass the device in",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_is_read_from_the_name() {
        assert_eq!(owner("coapcc-4242-0-c"), Some(4242));
        assert_eq!(owner("coapcc-17-3-s"), Some(17));
        assert_eq!(owner("coapcc-x-0-c"), None);
        assert_eq!(owner("other-4242-0-c"), None);
    }
}
