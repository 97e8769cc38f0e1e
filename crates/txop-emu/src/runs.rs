//! Which emulator runs are alive, by a lock the kernel releases when the run dies.
//!
//! Each run holds an exclusive `flock(2)` on `/run/txop/emu-<pid>.lock` (its pid
//! written inside) from before its first namespace is created until after its last one
//! is deleted. The kernel drops a flock when the last descriptor of its open file goes,
//! however the process ends — SIGKILL included — and the descriptor is close-on-exec,
//! so the programs a run starts do not inherit it. "The lock is held" is therefore
//! exactly "the run is alive", whatever its pid has become since or whatever its
//! executable is called (a `/proc/<pid>` lookup is fooled by both: a reused pid, a
//! binary installed under another name).
//!
//! A cleaner that finds a run dead keeps the run's lock while it removes the run's
//! namespaces and unlinks the file only then, so that a new run that happens to get
//! the same pid waits for it (it retries when it finds its lock file unlinked under
//! it) and never has its fresh namespaces mistaken for the dead run's.
//!
//! Runs of a txop from before these lock files (no file) are judged by their pid: a
//! live process whose name starts with `txop`.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Where the runs' lock files live (`/run`: a tmpfs, emptied at boot like `/run/netns`).
pub const RUN_DIR: &str = "/run/txop";

/// The lock file of run `run_id`.
pub fn lock_path(run_id: u32) -> PathBuf {
    Path::new(RUN_DIR).join(format!("emu-{run_id}.lock"))
}

/// The run id a lock file's name carries, if it is one of txop's.
pub fn parse_lock_name(name: &str) -> Option<u32> {
    name.strip_prefix("emu-")?
        .strip_suffix(".lock")?
        .parse()
        .ok()
}

/// The run ids that have a lock file (alive or not), sorted.
pub fn lock_file_ids() -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir(RUN_DIR) else {
        return Vec::new();
    };
    let mut ids: Vec<u32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str().and_then(parse_lock_name))
        .collect();
    ids.sort_unstable();
    ids
}

/// flock(2) without blocking: `Ok(true)` if taken, `Ok(false)` if another open file
/// holds a conflicting lock.
fn try_flock(file: &File, op: libc::c_int) -> io::Result<bool> {
    // SAFETY: flock(2) on a descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), op | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// Whether `file` is still the file at `path` (not unlinked or replaced by a cleaner
/// between our open and our lock).
fn still_at(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether process `pid` runs and is named `txop…` (not a zombie): the liveness of a
/// run that has no lock file.
fn process_is_txop(pid: u32) -> bool {
    // /proc/PID/stat: "pid (comm) state …"; comm may itself contain spaces.
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
        return false;
    };
    let comm = &stat[open + 1..close];
    let state = stat[close + 1..].split_whitespace().next().unwrap_or("");
    comm.starts_with("txop") && !matches!(state, "Z" | "X")
}

/// Whether the lock file holds a pid (written by a run once it held the lock; a file
/// just created by someone about to lock it is still empty).
fn has_owner(mut file: &File) -> bool {
    let mut s = String::new();
    file.rewind().is_ok() && file.read_to_string(&mut s).is_ok() && !s.trim().is_empty()
}

/// The lock of this process's own run. Dropping it unlinks the file, then releases the
/// lock.
pub struct RunLock {
    _file: File,
    path: PathBuf,
}

impl RunLock {
    /// Take run `run_id`'s lock (this process's pid), waiting if a cleaner holds it
    /// while removing the leftovers of a dead run that had the same pid.
    pub fn acquire(run_id: u32) -> Result<RunLock, String> {
        std::fs::create_dir_all(RUN_DIR).map_err(|e| format!("{RUN_DIR}: cannot create: {e}"))?;
        let path = lock_path(run_id);
        let err = |e: io::Error| format!("{}: {e}", path.display());
        loop {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(err)?;
            // SAFETY: flock(2) on a descriptor we own; blocks while a cleaner holds it.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
                return Err(err(io::Error::last_os_error()));
            }
            if !still_at(&file, &path) {
                continue; // a cleaner unlinked it while we waited: start again
            }
            file.set_len(0).map_err(err)?;
            file.write_all(format!("{run_id}\n").as_bytes())
                .map_err(err)?;
            return Ok(RunLock { _file: file, path });
        }
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Unlinked first: whoever opens the path afterwards finds no file, not a file
        // about to be unlocked.
        // The descriptor closes (and the lock goes) when `_file` drops, after this.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A dead run's lock, held while its leftovers are removed; dropping it unlinks the
/// file and releases the lock.
pub struct DeadRun {
    _file: File,
    path: PathBuf,
}

impl Drop for DeadRun {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Decide whether run `run_id` is dead and, if it is, hold its lock (`Some`) so that
/// nothing reuses its names until the returned guard is dropped. `None`: the run is
/// alive (or cannot be judged: left alone).
pub fn claim_dead(run_id: u32) -> Option<DeadRun> {
    let path = lock_path(run_id);
    if std::fs::create_dir_all(RUN_DIR).is_err() {
        return None;
    }
    loop {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .ok()?;
        if !try_flock(&file, libc::LOCK_EX).ok()? {
            return None; // held: alive
        }
        if !still_at(&file, &path) {
            continue;
        }
        let owned = has_owner(&file);
        let guard = DeadRun { _file: file, path };
        // An empty file was created just now, by us (a run without a lock file: from
        // an older txop) or by a run about to lock it: judge by the pid. This
        // process's own pid has no run yet (the caller cleans up before it starts).
        if !owned && process_is_txop(run_id) && run_id != std::process::id() {
            return None; // the guard's drop unlinks the file
        }
        return Some(guard);
    }
}

/// Whether run `run_id` is alive, without taking anything (for `txop emu exec`).
pub fn run_alive(run_id: u32) -> bool {
    match File::open(lock_path(run_id)) {
        Ok(file) => match try_flock(&file, libc::LOCK_SH) {
            Ok(false) => true,
            Ok(true) => !has_owner(&file) && process_is_txop(run_id),
            Err(_) => true,
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => process_is_txop(run_id),
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_file_names_parse_back() {
        let p = lock_path(4242);
        assert_eq!(p, Path::new("/run/txop/emu-4242.lock"));
        let name = p.file_name().unwrap().to_str().unwrap();
        assert_eq!(parse_lock_name(name), Some(4242));
        assert_eq!(parse_lock_name("emu-x.lock"), None);
        assert_eq!(parse_lock_name("emu-12.lock.tmp"), None);
        assert_eq!(parse_lock_name("other-12.lock"), None);
    }
}
