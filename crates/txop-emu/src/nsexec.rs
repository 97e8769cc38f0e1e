//! Starting a program inside one of txop's network namespaces.
//!
//! What `ip netns exec NAME` does (iproute2, `lib/namespace.c`: `netns_switch`), done
//! in txop's own child between fork and exec: join the namespace (`setns`), take a
//! mount namespace of its own with nothing propagating back (`unshare(CLONE_NEWNS)`,
//! `mount --make-rslave /`) and mount a `/sys` that shows the namespace's devices.
//! (iproute2 also bind-mounts `/etc/netns/NAME/*`; txop creates no such files.)
//!
//! Doing it ourselves rather than through `ip netns exec` keeps the command's exit
//! status the command's own: `ip` reports a command it cannot start with exit status
//! 1, indistinguishable from the command failing. Here a command that is not found
//! or not executable is found out before anything starts ([`resolve_program`], the
//! search `execvp(3)` makes) and, should it still fail, by `Command::spawn` itself.

use crate::netns::NETNS_DIR;
use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The search path `execvp(3)` uses when `PATH` is unset (glibc's `_PATH_DEFPATH`).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// Whether `path` is a regular file with an execute bit (root may execute a file if
/// any of its execute bits is set, `execve(2)`; others need their own, which
/// `access(2)` answers).
fn executable(path: &Path) -> Result<(), &'static str> {
    let meta = std::fs::metadata(path).map_err(|_| "no such file")?;
    if !meta.is_file() {
        return Err("not a regular file");
    }
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return Err("no such file");
    };
    // SAFETY: access(2) with a NUL-terminated path.
    let ok = unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0;
    if ok && meta.permissions().mode() & 0o111 != 0 {
        Ok(())
    } else {
        Err("permission denied (not executable)")
    }
}

/// The file `program` names, found as `execvp(3)` finds it: as given when it contains
/// a `/`, else in the directories of `PATH` (an empty entry is the current directory).
/// The error is one line: `` `NAME`: command not found `` or why it cannot run.
pub fn resolve_program(program: &OsStr) -> Result<PathBuf, String> {
    let shown = program.to_string_lossy();
    if program.is_empty() {
        return Err("the command is an empty string".into());
    }
    if program.as_bytes().contains(&b'/') {
        let p = PathBuf::from(program);
        return match executable(&p) {
            Ok(()) => Ok(p),
            Err(why) => Err(format!("`{shown}`: {why}")),
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
    let mut denied = None;
    for dir in std::env::split_paths(&path) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let candidate = dir.join(program);
        match executable(&candidate) {
            Ok(()) => return Ok(candidate),
            Err("no such file") => {}
            Err(why) => denied = denied.or(Some((candidate, why))),
        }
    }
    Err(match denied {
        // execvp reports EACCES when it found only files it may not execute.
        Some((p, why)) => format!("`{shown}` ({}): {why}", p.display()),
        None => format!("`{shown}`: command not found"),
    })
}

/// Enter the namespace open as `ns` and give this process a `/sys` of it, as
/// `netns_switch` does. Runs in the child between fork and exec: system calls only.
fn enter(ns: &OwnedFd, sysfs_name: &CString) -> io::Result<()> {
    let check = |r: libc::c_int| {
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    };
    // SAFETY: system calls with valid descriptors and NUL-terminated strings; no
    // memory is allocated or shared with the parent.
    unsafe {
        check(libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET))?;
        check(libc::unshare(libc::CLONE_NEWNS))?;
        // Nothing mounted from here on propagates back to the machine's mounts.
        check(libc::mount(
            c"".as_ptr(),
            c"/".as_ptr(),
            c"none".as_ptr(),
            libc::MS_SLAVE | libc::MS_REC,
            std::ptr::null(),
        ))?;
        let mut flags: libc::c_ulong = 0;
        if libc::umount2(c"/sys".as_ptr(), libc::MNT_DETACH) < 0 {
            // Not unmountable: overlay it; a read-only /sys cannot be shadowed by a
            // read-write one.
            let mut st: libc::statvfs = std::mem::zeroed();
            if libc::statvfs(c"/sys".as_ptr(), &mut st) == 0 && st.f_flag & libc::ST_RDONLY != 0 {
                flags = libc::MS_RDONLY;
            }
        }
        check(libc::mount(
            sysfs_name.as_ptr(),
            c"/sys".as_ptr(),
            c"sysfs".as_ptr(),
            flags,
            std::ptr::null(),
        ))
    }
}

/// A command that runs `argv` inside txop's namespace `ns`: the program resolved
/// ([`resolve_program`]) and kept as `argv[0]` unchanged. Add environment, streams,
/// then spawn it (or `exec` it in place of this process).
pub fn command_in(ns: &str, argv: &[OsString]) -> Result<Command, String> {
    let (program, args) = argv
        .split_first()
        .ok_or("no command given (`-- COMMAND…`)")?;
    let exe = resolve_program(program)?;
    let ns_path = Path::new(NETNS_DIR).join(ns);
    let ns_fd: OwnedFd = File::open(&ns_path)
        .map_err(|e| format!("{}: cannot open the namespace: {e}", ns_path.display()))?
        .into();
    let sysfs_name = CString::new(ns).map_err(|_| format!("{ns}: not a namespace name"))?;
    let mut cmd = Command::new(exe);
    cmd.arg0(program).args(args);
    // SAFETY: `enter` makes system calls only (async-signal-safe after fork).
    unsafe {
        cmd.pre_exec(move || enter(&ns_fd, &sysfs_name));
    }
    Ok(cmd)
}

/// The one line for a command that `spawn` (or `exec`) could not start.
pub fn start_error(argv: &[OsString], ns: &str, e: &io::Error) -> String {
    let name = argv
        .first()
        .map_or_else(String::new, |a| a.to_string_lossy().into_owned());
    format!("`{name}`: cannot start it in namespace {ns}: {e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory of this test process.
    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("txop-nsexec-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn programs_are_found_as_execvp_finds_them() {
        // `sh` is in PATH on every system this runs on; the answer is a file there.
        let sh = resolve_program(OsStr::new("sh")).unwrap();
        assert!(sh.is_absolute() && sh.ends_with("sh"), "{sh:?}");
        assert!(
            std::env::split_paths(&std::env::var_os("PATH").unwrap()).any(|d| d.join("sh") == sh)
        );
        assert_eq!(
            resolve_program(OsStr::new("/bin/sh")).unwrap(),
            PathBuf::from("/bin/sh")
        );
    }

    #[test]
    fn programs_that_cannot_run_are_one_line_reasons() {
        let d = scratch("reasons");
        let plain = d.join("plain");
        std::fs::write(&plain, "echo hi\n").unwrap();
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = |p: &OsStr| resolve_program(p).unwrap_err();
        assert_eq!(
            err(OsStr::new("no-such-command-5150")),
            "`no-such-command-5150`: command not found"
        );
        assert_eq!(err(OsStr::new("")), "the command is an empty string");
        let missing = d.join("missing");
        assert!(err(missing.as_os_str()).ends_with("missing`: no such file"));
        assert!(err(d.as_os_str()).ends_with(": not a regular file"));
        assert!(err(plain.as_os_str()).ends_with("plain`: permission denied (not executable)"));
        let _ = std::fs::remove_dir_all(&d);
    }
}
