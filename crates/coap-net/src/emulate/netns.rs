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

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::process::{Command, Stdio};

/// The first part of every namespace name the emulator makes.
pub const PREFIX: &str = "coapcc-";

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
}

impl Namespace {
    /// Makes the namespace `name` (its loopback brought up).
    pub fn create(name: &str) -> io::Result<Namespace> {
        ip(&["netns", "add", name], None)?;
        let ns = Namespace { name: name.to_string() };
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
        let file = File::open(self.path()).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.path())))?;
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
        kill_in(&self.name);
        let _ = ip(&["netns", "del", &self.name], None);
    }
}

fn kill_in(name: &str) {
    let Ok(pids) = ip(&["netns", "pids", name], None) else { return };
    for pid in pids.split_whitespace().filter_map(|p| p.parse::<i32>().ok()) {
        if let Some(pid) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// The emulator's process that made the namespace `name`, if it is one of its names.
pub fn owner(name: &str) -> Option<u32> {
    name.strip_prefix(PREFIX)?.split('-').next()?.parse().ok()
}

/// Removes the namespaces whose emulator no longer runs, killing what runs in them; their names.
pub fn sweep() -> io::Result<Vec<String>> {
    let list = ip(&["netns", "list"], None)?;
    let mut removed = Vec::new();
    for name in list.lines().filter_map(|l| l.split_whitespace().next()) {
        let Some(pid) = owner(name) else { continue };
        if std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        kill_in(name);
        ip(&["netns", "del", name], None)?;
        removed.push(name.to_string());
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
