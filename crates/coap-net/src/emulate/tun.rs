//! A TUN device: whole IP packets in and out of a network namespace's stack.
//!
//! Written by hand (one `open`, one `ioctl(TUNSETIFF)` with `libc`, nonblocking reads and writes
//! with `rustix` under tokio's `AsyncFd`): the emulator makes its devices from a thread that has entered the
//! target namespace, so that a device is born there and never exists outside it, and it needs
//! nothing else of a TUN crate (no address or route set-up in the caller's namespace, no
//! persistence). The ioctl and tokio's registration of the descriptor are the crate's only
//! `unsafe` calls, each allowed where it is made. The device is not persistent: it vanishes when its last descriptor closes,
//! also when the process is killed.

use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// A TUN device (layer 3, no packet information header).
#[derive(Debug)]
pub struct Tun {
    fd: AsyncFd<OwnedFd>,
}

/// Makes the TUN device `name` in the calling thread's network namespace; returns its descriptor
/// (blocking mode off). Register it with tokio with [`Tun::new`].
pub fn create(name: &str) -> io::Result<OwnedFd> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad device name {name:?}")));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open("/dev/net/tun")
        .map_err(|e| io::Error::new(e.kind(), format!("/dev/net/tun: {e}")))?;
    let flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
    let mut req =
        libc::ifreq { ifr_name: [0; libc::IFNAMSIZ], ifr_ifru: libc::__c_anonymous_ifr_ifru { ifru_flags: flags } };
    for (d, s) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: TUNSETIFF reads and writes one ifreq, which `req` is, for the call's duration.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), libc::TUNSETIFF, &mut req as *mut libc::ifreq) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("cannot make TUN device {name}: {e}")));
    }
    Ok(file.into())
}

impl Tun {
    /// Wraps a descriptor from [`create`] (within a tokio runtime).
    pub fn new(fd: OwnedFd) -> io::Result<Tun> {
        // SAFETY: the descriptor is owned (OwnedFd) and so stays open while registered.
        #[allow(unsafe_code)]
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE)? };
        Ok(Tun { fd })
    }

    /// The next packet into `buf`; its length.
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut guard = self.fd.readable().await?;
            let r = guard.try_io(|fd| rustix::io::read(fd.get_ref(), &mut *buf).map_err(io::Error::from));
            match r {
                Ok(r) => return r,
                Err(_would_block) => continue,
            }
        }
    }

    /// Hands one packet to the namespace's stack. A TUN write does not block for long; one that
    /// would (the device's queue full) is an error, and the caller drops the packet.
    pub fn send(&self, packet: &[u8]) -> io::Result<()> {
        rustix::io::write(self.fd.get_ref(), packet)?;
        Ok(())
    }
}
