//! TUN devices (`Documentation/networking/tuntap.rst`): one per namespace, created
//! inside it so that it never exists in the root namespace. Opened non-blocking,
//! without packet information (`IFF_NO_PI`): a read returns one IP packet, a write
//! injects one into the namespace's stack.
//!
//! The device is not persistent: it disappears when its file descriptor is closed, so
//! even a SIGKILLed emulator leaves no device behind (only its namespaces, which
//! `txop emu --cleanup` removes).

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
/// `_IOW('T', 202, int)`.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

/// `struct ifreq` as TUNSETIFF reads it: the name and the flags (40 bytes in all).
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// A TUN device's file descriptor.
pub struct Tun {
    fd: OwnedFd,
}

impl Tun {
    /// Create TUN device `name` inside the network namespace bound at `ns_path`
    /// (e.g. `/run/netns/txop-12-sta1`). The calling thread is not moved: a helper
    /// thread enters the namespace, creates the device and exits.
    pub fn create_in(ns_path: &Path, name: &str) -> io::Result<Tun> {
        let ns = File::open(ns_path)?;
        let name = name.to_string();
        std::thread::spawn(move || -> io::Result<Tun> {
            // SAFETY: setns(2) on a namespace fd we own; only this thread moves.
            if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Tun::create_here(&name)
        })
        .join()
        .map_err(|_| io::Error::other("TUN helper thread panicked"))?
    }

    /// Create TUN device `name` in the calling thread's network namespace.
    fn create_here(name: &str) -> io::Result<Tun> {
        if name.len() >= libc::IFNAMSIZ {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "name too long"));
        }
        let path = c"/dev/net/tun";
        // SAFETY: open(2) with a NUL-terminated path; the fd is owned below.
        let raw = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh, valid fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: IFF_TUN | IFF_NO_PI,
            _pad: [0; 22],
        };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: TUNSETIFF reads a `struct ifreq`, which `IfReq` lays out.
        if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF, &mut req) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Tun { fd })
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Read one packet into `buf`: its length, or `WouldBlock` when none is waiting.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: read(2) into a buffer of the given length.
        let n = unsafe { libc::read(self.raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// Write one packet.
    pub fn write(&self, bytes: &[u8]) -> io::Result<()> {
        // SAFETY: write(2) from a buffer of the given length.
        let n = unsafe { libc::write(self.raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}
