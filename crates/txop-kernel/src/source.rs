//! Finding the kernel's minstrel_ht source and building it into a shared object.

use crate::extract::{self, Fnv64};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where Debian's `linux-source-6.12` puts its tarball (`scripts/setup.sh` installs it).
pub const DEFAULT_TARBALL: &str = "/usr/src/linux-source-6.12.tar.xz";

/// `rc80211_minstrel_ht.c`: compiled whole.
const RC_C: &str = "net/mac80211/rc80211_minstrel_ht.c";
/// `rc80211_minstrel_ht.h`: compiled whole.
const RC_H: &str = "net/mac80211/rc80211_minstrel_ht.h";
/// `ieee80211_frame_duration` is taken from it.
const UTIL_C: &str = "net/mac80211/util.c";
/// `rate_supported`, `rate_lowest_index` and two airtime helpers are taken from it.
const MAC80211_H: &str = "include/net/mac80211.h";
/// Every kernel file read, in the order they are hashed.
const FILES: [&str; 4] = [RC_C, RC_H, UTIL_C, MAC80211_H];

/// The shim (kernel-oracle's, the one the differential tests build against), by its
/// path under the build directory.
const SHIM: [(&str, &str); 16] = [
    (
        "shim/minstrel.c",
        include_str!("../../kernel-oracle/shim/mac80211/minstrel.c"),
    ),
    (
        "shim/include/mac80211_shim.h",
        include_str!("../../kernel-oracle/shim/mac80211/include/mac80211_shim.h"),
    ),
    (
        "shim/include/ieee80211_i.h",
        include_str!("../../kernel-oracle/shim/mac80211/include/ieee80211_i.h"),
    ),
    (
        "shim/include/rate.h",
        include_str!("../../kernel-oracle/shim/mac80211/include/rate.h"),
    ),
    (
        "shim/include/sta_info.h",
        include_str!("../../kernel-oracle/shim/mac80211/include/sta_info.h"),
    ),
    (
        "shim/include/net/mac80211.h",
        include_str!("../../kernel-oracle/shim/mac80211/include/net/mac80211.h"),
    ),
    (
        "shim/include/linux/bitfield.h",
        include_str!("../../kernel-oracle/shim/mac80211/include/linux/bitfield.h"),
    ),
    (
        "shim/include/linux/debugfs.h",
        include_str!("../../kernel-oracle/shim/mac80211/include/linux/debugfs.h"),
    ),
    (
        "shim/include/linux/ieee80211.h",
        include_str!("../../kernel-oracle/shim/mac80211/include/linux/ieee80211.h"),
    ),
    (
        "shim/include/linux/limits.h",
        include_str!("../../kernel-oracle/shim/mac80211/include/linux/limits.h"),
    ),
    (
        "shim/include/linux/minmax.h",
        include_str!("../../kernel-oracle/shim/mac80211/include/linux/minmax.h"),
    ),
    (
        "shim/include/linux/moduleparam.h",
        include_str!("../../kernel-oracle/shim/mac80211/include/linux/moduleparam.h"),
    ),
    (
        "shim/include/linux/netdevice.h",
        include_str!("../../kernel-oracle/shim/mac80211/include/linux/netdevice.h"),
    ),
    (
        "shim/include/linux/random.h",
        include_str!("../../kernel-oracle/shim/mac80211/include/linux/random.h"),
    ),
    (
        "shim/include/linux/skbuff.h",
        include_str!("../../kernel-oracle/shim/mac80211/include/linux/skbuff.h"),
    ),
    (
        "shim/include/linux/types.h",
        include_str!("../../kernel-oracle/shim/mac80211/include/linux/types.h"),
    ),
];

/// The C compiler's flags: the kernel's C dialect, warnings off as in the kernel's
/// default build (no `W=1`) but a call of an undeclared function an error, as the
/// kernel's own Makefile makes it (so the error names the symbol where it is used), a
/// shared object whose every symbol must resolve
/// (`-z defs`: a function the tree calls that the shim lacks fails the build, naming
/// it) and whose own calls bind to its own definitions (`-Bsymbolic`).
const CFLAGS: [&str; 10] = [
    "-std=gnu11",
    "-O2",
    "-g",
    "-fPIC",
    "-shared",
    "-w",
    "-Werror=implicit-function-declaration",
    "-Wl,-z,defs",
    "-Wl,-Bsymbolic",
    "-Wl,--as-needed",
];

/// The kernel files read, and what results say about them.
pub(crate) struct Source {
    /// The tarball or tree, as results name it.
    pub(crate) path: String,
    /// `VERSION.PATCHLEVEL.SUBLEVEL`, or `unknown` without a top Makefile.
    pub(crate) version: String,
    /// [`FILES`]' texts, in order.
    texts: Vec<String>,
    /// The directory a file's name in an error message is under (the tree, or the
    /// tarball's name).
    shown_root: String,
}

impl Source {
    /// The kernel files of `src` (a tree), or of the Debian tarball when `None`.
    pub(crate) fn read(src: Option<&Path>) -> Result<Source, String> {
        match src {
            Some(dir) => Self::read_tree(dir),
            None => {
                let tarball = std::env::var("TXOP_KERNEL_TARBALL")
                    .ok()
                    .filter(|t| !t.is_empty())
                    .unwrap_or_else(|| DEFAULT_TARBALL.to_string());
                let tree = extract_tarball(Path::new(&tarball))?;
                let mut s = Self::read_tree(&tree)?;
                s.path = tarball.clone();
                s.shown_root = tarball;
                Ok(s)
            }
        }
    }

    fn read_tree(dir: &Path) -> Result<Source, String> {
        if !dir.is_dir() {
            return Err(format!(
                "{}: no such directory (a kernel source tree, with {RC_C})",
                dir.display()
            ));
        }
        let texts = FILES
            .iter()
            .map(|f| {
                let p = dir.join(f);
                std::fs::read_to_string(&p)
                    .map_err(|e| format!("{}: cannot read: {e}", p.display()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let version = std::fs::read_to_string(dir.join("Makefile"))
            .map(|m| extract::kernel_version(&m))
            .unwrap_or_else(|_| "unknown".to_string());
        Ok(Source {
            path: dir.display().to_string(),
            version,
            texts,
            shown_root: dir.display().to_string(),
        })
    }

    /// The shared object built from this source (from the cache when built before),
    /// and the FNV-1a 64 of the kernel code compiled: `rc80211_minstrel_ht.c`, `.h` and
    /// the helpers taken from the other two files, hashed as kernel-oracle's build
    /// script hashes them, so that the harness and a run name the same code alike.
    pub(crate) fn build(&self) -> Result<(PathBuf, u64), String> {
        let helpers = extract::minstrel_helpers(&self.texts[2], &self.texts[3])
            .map_err(|e| format!("{}/{e}", self.shown_root))?;
        let mut code = Fnv64::default();
        code.update(self.texts[0].as_bytes());
        code.update(self.texts[1].as_bytes());
        code.update(helpers.as_bytes());
        let cc = std::env::var("CC")
            .ok()
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| "cc".to_string());
        let mut key = Fnv64::default();
        key.update(&code.0.to_le_bytes());
        for (name, text) in SHIM {
            key.update(name.as_bytes());
            key.update(text.as_bytes());
        }
        key.update(cc.as_bytes());
        key.update(CFLAGS.join(" ").as_bytes());
        let dir = crate::cache_dir().join(format!("minstrel_ht-{:016x}", key.0));
        let object = dir.join("minstrel_ht.so");
        if object.is_file() {
            return Ok((object, code.0));
        }
        let build = crate::cache_dir().join(format!(
            "minstrel_ht-{:016x}.build-{}",
            key.0,
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&build);
        let write = |rel: &str, text: &str| -> Result<(), String> {
            let p = build.join(rel);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("{}: cannot create: {e}", parent.display()))?;
            }
            std::fs::write(&p, text).map_err(|e| format!("{}: cannot write: {e}", p.display()))
        };
        for (name, text) in SHIM {
            write(name, text)?;
        }
        // Only the two minstrel files go in net/mac80211/: its `#include "rate.h"` must
        // find the shim's, not the tree's.
        write(RC_C, &self.texts[0])?;
        write(RC_H, &self.texts[1])?;
        write(
            "extra/kernel_helpers.h",
            &format!(
                "/* Extracted by txop-kernel from {}. */\n{helpers}",
                self.path
            ),
        )?;
        let out = Command::new(&cc)
            .args(CFLAGS)
            .arg("-Ishim/include")
            .arg("-Inet/mac80211")
            .arg("-Iextra")
            .arg("shim/minstrel.c")
            .arg("-o")
            .arg("minstrel_ht.so")
            .current_dir(&build)
            .output()
            .map_err(|e| format!("cannot run the C compiler `{cc}` (set CC): {e}"))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let message = compile_error(&stderr, &build, &self.shown_root);
            let _ = std::fs::remove_dir_all(&build);
            return Err(message);
        }
        // Another process may have finished the same object meanwhile: either is it.
        let _ = std::fs::remove_dir_all(build.join("shim"));
        if std::fs::rename(&build, &dir).is_err() {
            let _ = std::fs::remove_dir_all(&build);
        }
        if object.is_file() {
            Ok((object, code.0))
        } else {
            Err(format!(
                "{}: not written by the C compiler",
                object.display()
            ))
        }
    }
}

/// The Debian tarball's files, extracted once into the cache (a directory named by the
/// tarball's path, size and modification time) and reused.
fn extract_tarball(tarball: &Path) -> Result<PathBuf, String> {
    let meta = std::fs::metadata(tarball).map_err(|_| {
        format!(
            "{}: missing: install it with `apt-get install linux-source-6.12` \
             (scripts/setup.sh does) or give a kernel tree (--kernel-src DIR, kernel.src)",
            tarball.display()
        )
    })?;
    let mut key = Fnv64::default();
    key.update(tarball.display().to_string().as_bytes());
    key.update(&meta.len().to_le_bytes());
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64);
    key.update(&mtime.to_le_bytes());
    let dir = crate::cache_dir().join(format!("source-{:016x}", key.0));
    if dir.join(RC_C).is_file() {
        return Ok(dir);
    }
    let tmp = crate::cache_dir().join(format!("source-{:016x}.part-{}", key.0, std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: cannot create: {e}", tmp.display()))?;
    let mut args: Vec<String> = vec![
        "-xJf".into(),
        tarball.display().to_string(),
        "-C".into(),
        tmp.display().to_string(),
        "--strip-components=1".into(),
        "--wildcards".into(),
        "--no-wildcards-match-slash".into(),
        "*/Makefile".into(),
    ];
    args.extend(FILES.iter().map(|f| format!("*/{f}")));
    let out = Command::new("tar")
        .args(&args)
        .output()
        .map_err(|e| format!("cannot run tar to unpack {}: {e}", tarball.display()))?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(format!(
            "{}: tar could not unpack {}: {}",
            tarball.display(),
            FILES.join(", "),
            first_line(&String::from_utf8_lossy(&out.stderr))
        ));
    }
    if std::fs::rename(&tmp, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    Ok(dir)
}

/// The compiler's or linker's first error as one line: the file (named under
/// `shown_root` for a kernel file, as `kernel-oracle/shim/…` for the shim's), its line,
/// and the message, which names the symbol (`'FOO' undeclared`, ``undefined reference
/// to `foo'``).
fn compile_error(stderr: &str, build: &Path, shown_root: &str) -> String {
    let build_prefix = format!("{}/", build.display());
    let shown = |path: &str| -> String {
        let rel = path
            .trim_start_matches(&build_prefix)
            .trim_start_matches("./");
        if let Some(shim) = rel.strip_prefix("shim/") {
            format!("kernel-oracle/shim/mac80211/{}", shim)
        } else if rel.starts_with("extra/") {
            format!("{shown_root} (helpers from {UTIL_C} and {MAC80211_H})")
        } else {
            format!("{shown_root}/{rel}")
        }
    };
    // `file:line:col: error: message` or `file:line:col: fatal error: message`.
    for line in stderr.lines() {
        for tag in [": error: ", ": fatal error: "] {
            let Some((place, message)) = line.split_once(tag) else {
                continue;
            };
            let mut parts = place.splitn(3, ':');
            // A source position (`collect2: error: …` is not one).
            if let (Some(file), Some(at)) = (parts.next(), parts.next()) {
                if at.bytes().all(|b| b.is_ascii_digit()) && !at.is_empty() {
                    return format!("{}:{at}: {}", shown(file), message.trim());
                }
            }
        }
    }
    // The linker: `…/file.c:line:(.text+0x…): undefined reference to `foo'`.
    for line in stderr.lines() {
        if let Some(i) = line.find("undefined reference to") {
            let message = &line[i..];
            let place = line[..i]
                .split(": ")
                .find(|p| p.contains(".c:") || p.contains(".h:"))
                .and_then(|p| {
                    let mut parts = p.splitn(3, ':');
                    Some((parts.next()?, parts.next()?))
                });
            return match place {
                Some((file, at)) => format!("{}:{at}: {message}", shown(file)),
                None => format!("{}/{RC_C}: {message}", shown_root),
            };
        }
    }
    format!("{}/{RC_C}: {}", shown_root, first_line(stderr))
}

/// The first non-empty line of `text`, trimmed.
fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(no message)")
}
