//! Finding a unit of the kernel's code (minstrel_ht, fq and CoDel) and building it
//! into a shared object.

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
/// fq and CoDel: compiled whole, as mac80211's `tx.c` includes them.
const FQ_HEADERS: [&str; 4] = [
    "include/net/fq.h",
    "include/net/fq_impl.h",
    "include/net/codel.h",
    "include/net/codel_impl.h",
];
/// `IP_ECN_set_ce` is taken from it (the rest needs the IP stack).
const INET_ECN_H: &str = "include/net/inet_ecn.h";

/// One unit of the kernel's code as a run builds it: which kernel files it reads, the
/// shim it is compiled with, and what goes into the build directory.
pub(crate) struct Unit {
    /// The unit's name in results (`minstrel_ht`, `fq`).
    pub(crate) name: &'static str,
    /// Every kernel file read, in the order `prepare` is given them.
    files: &'static [&'static str],
    /// The shim, by its path under the build directory, and where it lives in the
    /// repository (under `crates/`), for error messages.
    shim: &'static [(&'static str, &'static str)],
    shim_home: &'static str,
    /// The shim file compiled (it includes the kernel's).
    main: &'static str,
    /// `-I` directories, under the build directory.
    includes: &'static [&'static str],
    /// The kernel's files as the build directory gets them, and the texts hashed.
    prepare: fn(&[String]) -> Result<Prepared, String>,
    /// What `extra/` holds, for error messages.
    extra_from: &'static str,
}

/// What [`Unit::prepare`] makes of the kernel files.
pub(crate) struct Prepared {
    /// Files written into the build directory (path under it, text).
    write: Vec<(String, String)>,
    /// The texts whose FNV-1a 64 names the code, in order.
    hashed: Vec<String>,
    /// Where the functions of a written file were taken from, for error messages.
    origins: Vec<Origin>,
}

/// A function written into the build directory at `written:line` (1-based) whose text
/// starts at `source:source_line` in the kernel tree.
struct Origin {
    written: &'static str,
    line: usize,
    source: &'static str,
    source_line: usize,
}

/// The kernel's minstrel_ht (`rc80211_minstrel_ht.c` and `.h` whole, and helpers).
pub(crate) const MINSTREL_HT: Unit = Unit {
    name: "minstrel_ht",
    files: &[RC_C, RC_H, UTIL_C, MAC80211_H],
    shim: &MINSTREL_SHIM_FILES,
    shim_home: "kernel-oracle/shim/mac80211",
    main: "shim/minstrel.c",
    includes: &["shim/include", "net/mac80211", "extra"],
    prepare: prepare_minstrel,
    extra_from: "helpers from net/mac80211/util.c and include/net/mac80211.h",
};

/// The kernel's fq and CoDel (`fq.h`, `fq_impl.h`, `codel.h`, `codel_impl.h` whole,
/// and `IP_ECN_set_ce`), glued as mac80211's `tx.c` glues them by kernel-oracle's
/// `shim/oracle.c`.
pub(crate) const FQ: Unit = Unit {
    name: "fq",
    files: &[
        FQ_HEADERS[0],
        FQ_HEADERS[1],
        FQ_HEADERS[2],
        FQ_HEADERS[3],
        INET_ECN_H,
    ],
    shim: &FQ_SHIM,
    shim_home: "kernel-oracle/shim",
    main: "shim/oracle.c",
    includes: &["shim/include", "kernel/include", "extra"],
    prepare: prepare_fq,
    extra_from: "IP_ECN_set_ce from include/net/inet_ecn.h",
};

/// AQL's accounting and checks (`ieee80211_sta_update_pending_airtime`,
/// `ieee80211_txq_airtime_check`, `ieee80211_txq_schedule_airtime_check`), taken with
/// the rest of the 6.12 scheduler functions kernel-oracle's
/// `shim/mac80211/scheduler.c` includes (only the AQL ones are called in a run).
pub(crate) const AQL: Unit = Unit {
    name: "aql",
    files: &[TX_C, STA_INFO_C, IEEE80211_I_H, WME_C, MAC80211_H],
    shim: &AQL_SHIM,
    shim_home: "kernel-oracle/shim",
    main: "shim/scheduler.c",
    includes: &["shim/include", "extra"],
    prepare: prepare_aql,
    extra_from: "functions of net/mac80211/tx.c, sta_info.c, ieee80211_i.h, wme.c and include/net/mac80211.h",
};

/// The 6.12 TXQ scheduler (`ieee80211_next_txq`, `__ieee80211_schedule_txq`,
/// `ieee80211_txq_may_transmit`, `ieee80211_txq_schedule_start`,
/// `ieee80211_sta_register_airtime`): the same functions and shim as [`AQL`], of which
/// a run calls the scheduler's (txop keeps AQL, and hands the scheduler its values).
pub(crate) const SCHEDULER: Unit = Unit {
    name: "scheduler",
    ..AQL
};

/// `net/mac80211/airtime.c`: compiled whole in kernel-oracle's
/// `shim/mac80211/airtime_api.c`, with the helpers minstrel_ht's build takes.
pub(crate) const AIRTIME: Unit = Unit {
    name: "airtime",
    files: &[AIRTIME_C, UTIL_C, MAC80211_H],
    shim: &MINSTREL_SHIM_FILES,
    shim_home: "kernel-oracle/shim/mac80211",
    main: "shim/airtime_api.c",
    includes: &["shim/include", "net/mac80211", "extra"],
    prepare: prepare_airtime,
    extra_from: "helpers from net/mac80211/util.c and include/net/mac80211.h",
};

/// `net/mac80211/airtime.c`: compiled whole.
const AIRTIME_C: &str = "net/mac80211/airtime.c";

/// `airtime.c` goes in `net/mac80211/` (where `airtime_api.c` includes it), the
/// helpers in `extra/`; hashed as kernel-oracle's build script hashes them.
fn prepare_airtime(texts: &[String]) -> Result<Prepared, String> {
    let helpers = extract::minstrel_helpers(&texts[1], &texts[2])?;
    Ok(Prepared {
        write: vec![
            (AIRTIME_C.to_string(), texts[0].clone()),
            (
                "extra/kernel_helpers.h".to_string(),
                format!("/* Extracted by txop-kernel. */\n{helpers}"),
            ),
        ],
        hashed: vec![texts[0].clone(), helpers],
        origins: Vec::new(),
    })
}

/// `net/mac80211/tx.c`: the scheduler and AQL checks are taken from it.
const TX_C: &str = "net/mac80211/tx.c";
/// `net/mac80211/sta_info.c`: the pending-airtime update is taken from it.
const STA_INFO_C: &str = "net/mac80211/sta_info.c";
/// `net/mac80211/ieee80211_i.h`: five inline helpers are taken from it.
const IEEE80211_I_H: &str = "net/mac80211/ieee80211_i.h";
/// `net/mac80211/wme.c`: `ieee802_1d_to_ac` is taken from it.
const WME_C: &str = "net/mac80211/wme.c";

/// The functions in `extra/sched_kernel.h`, as kernel-oracle's build script writes
/// and hashes them.
fn prepare_aql(texts: &[String]) -> Result<Prepared, String> {
    let text = extract::scheduler_functions(&texts[0], &texts[1], &texts[2], &texts[3], &texts[4])?;
    const WRITTEN: &str = "extra/sched_kernel.h";
    // Each function follows a `/* FILE */` line (the text starts at line 2, after the
    // header).
    let mut origins = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let Some(file) = l.strip_prefix("/* ").and_then(|f| f.strip_suffix(" */")) else {
            continue;
        };
        let Some(k) = AQL.files.iter().position(|f| *f == file) else {
            continue;
        };
        // The function's first two lines (a signature may open with `static bool`).
        let head = lines[i + 1..(i + 3).min(lines.len())].join("\n");
        if let Some(at) = texts[k].find(&head) {
            origins.push(Origin {
                written: WRITTEN,
                line: i + 3,
                source: AQL.files[k],
                source_line: texts[k][..at].lines().count() + 1,
            });
        }
    }
    Ok(Prepared {
        write: vec![(
            WRITTEN.to_string(),
            format!("/* Extracted by txop-kernel. */\n{text}"),
        )],
        hashed: vec![text],
        origins,
    })
}

/// Every unit, for the files a tarball is unpacked for.
const UNITS: [&Unit; 5] = [&MINSTREL_HT, &FQ, &AQL, &SCHEDULER, &AIRTIME];

/// `rc80211_minstrel_ht.c` and `.h` go in `net/mac80211/` (where its `#include
/// "rate.h"` finds the shim's, not the tree's), the helpers in `extra/`.
fn prepare_minstrel(texts: &[String]) -> Result<Prepared, String> {
    let helpers = extract::minstrel_helpers(&texts[2], &texts[3])?;
    Ok(Prepared {
        write: vec![
            (RC_C.to_string(), texts[0].clone()),
            (RC_H.to_string(), texts[1].clone()),
            (
                "extra/kernel_helpers.h".to_string(),
                format!("/* Extracted by txop-kernel. */\n{helpers}"),
            ),
        ],
        // As kernel-oracle's build script hashes them.
        hashed: vec![texts[0].clone(), texts[1].clone(), helpers],
        origins: Vec::new(),
    })
}

/// The four headers under `kernel/include/net/`, `IP_ECN_set_ce` in `extra/`.
fn prepare_fq(texts: &[String]) -> Result<Prepared, String> {
    let set_ce = extract::function(
        &texts[4],
        "static inline int IP_ECN_set_ce(struct iphdr *iph)",
    )
    .ok_or_else(|| format!("{INET_ECN_H}: no `static inline int IP_ECN_set_ce(`"))?
    .to_string();
    let mut write: Vec<(String, String)> = FQ_HEADERS
        .iter()
        .zip(texts)
        .map(|(f, t)| (format!("kernel/{f}"), t.clone()))
        .collect();
    write.push(("extra/ip_ecn_set_ce.h".to_string(), set_ce.clone()));
    let mut hashed: Vec<String> = texts[..4].to_vec();
    hashed.push(set_ce);
    Ok(Prepared {
        write,
        hashed,
        origins: Vec::new(),
    })
}

/// minstrel_ht's and airtime.c's shim (kernel-oracle's, the one the differential tests
/// build against),
/// by its path under the build directory.
const MINSTREL_SHIM_FILES: [(&str, &str); 17] = [
    (
        "shim/minstrel.c",
        include_str!("../../kernel-oracle/shim/mac80211/minstrel.c"),
    ),
    (
        "shim/airtime_api.c",
        include_str!("../../kernel-oracle/shim/mac80211/airtime_api.c"),
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

/// AQL's shim (kernel-oracle's `shim/mac80211/scheduler.c` over `shim/include/`'s
/// types and lists), by its path under the build directory.
const AQL_SHIM: [(&str, &str); 2] = [
    (
        "shim/scheduler.c",
        include_str!("../../kernel-oracle/shim/mac80211/scheduler.c"),
    ),
    (
        "shim/include/linux/types.h",
        include_str!("../../kernel-oracle/shim/include/linux/types.h"),
    ),
];

/// fq's shim (kernel-oracle's `shim/oracle.c` and `shim/include/`), by its path under
/// the build directory.
const FQ_SHIM: [(&str, &str); 6] = [
    (
        "shim/oracle.c",
        include_str!("../../kernel-oracle/shim/oracle.c"),
    ),
    (
        "shim/include/linux/types.h",
        include_str!("../../kernel-oracle/shim/include/linux/types.h"),
    ),
    (
        "shim/include/linux/skbuff.h",
        include_str!("../../kernel-oracle/shim/include/linux/skbuff.h"),
    ),
    (
        "shim/include/linux/ktime.h",
        include_str!("../../kernel-oracle/shim/include/linux/ktime.h"),
    ),
    (
        "shim/include/linux/spinlock.h",
        include_str!("../../kernel-oracle/shim/include/linux/spinlock.h"),
    ),
    (
        "shim/include/net/inet_ecn.h",
        include_str!("../../kernel-oracle/shim/include/net/inet_ecn.h"),
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
    /// The unit they are for.
    unit: &'static Unit,
    /// The tarball or tree, as results name it.
    pub(crate) path: String,
    /// `VERSION.PATCHLEVEL.SUBLEVEL`, or `unknown` without a top Makefile.
    pub(crate) version: String,
    /// The unit's files' texts, in order.
    texts: Vec<String>,
    /// The directory a file's name in an error message is under (the tree, or the
    /// tarball's name).
    shown_root: String,
}

impl Source {
    /// The kernel files of `unit` in `src` (a tree), or in the Debian tarball when
    /// `None`.
    pub(crate) fn read(unit: &'static Unit, src: Option<&Path>) -> Result<Source, String> {
        match src {
            Some(dir) => Self::read_tree(unit, dir),
            None => {
                let tarball = std::env::var("TXOP_KERNEL_TARBALL")
                    .ok()
                    .filter(|t| !t.is_empty())
                    .unwrap_or_else(|| DEFAULT_TARBALL.to_string());
                let tree = extract_tarball(Path::new(&tarball))?;
                let mut s = Self::read_tree(unit, &tree)?;
                s.path = tarball.clone();
                s.shown_root = tarball;
                Ok(s)
            }
        }
    }

    fn read_tree(unit: &'static Unit, dir: &Path) -> Result<Source, String> {
        if !dir.is_dir() {
            return Err(format!(
                "{}: no such directory (a kernel source tree, with {})",
                dir.display(),
                unit.files[0]
            ));
        }
        let texts = unit
            .files
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
            unit,
            path: dir.display().to_string(),
            version,
            texts,
            shown_root: dir.display().to_string(),
        })
    }

    /// The shared object built from this source (from the cache when built before),
    /// and the FNV-1a 64 of the kernel code compiled (for minstrel_ht hashed as
    /// kernel-oracle's build script hashes it, so that the harness and a run name the
    /// same code alike).
    pub(crate) fn build(&self) -> Result<(PathBuf, u64), String> {
        let unit = self.unit;
        let prepared =
            (unit.prepare)(&self.texts).map_err(|e| format!("{}/{e}", self.shown_root))?;
        let mut code = Fnv64::default();
        for t in &prepared.hashed {
            code.update(t.as_bytes());
        }
        let cc = std::env::var("CC")
            .ok()
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| "cc".to_string());
        let mut key = Fnv64::default();
        key.update(&code.0.to_le_bytes());
        for (name, text) in unit.shim {
            key.update(name.as_bytes());
            key.update(text.as_bytes());
        }
        key.update(cc.as_bytes());
        key.update(CFLAGS.join(" ").as_bytes());
        let name = unit.name;
        let dir = crate::cache_dir().join(format!("{name}-{:016x}", key.0));
        let object = dir.join(format!("{name}.so"));
        if object.is_file() {
            return Ok((object, code.0));
        }
        let build =
            crate::cache_dir().join(format!("{name}-{:016x}.build-{}", key.0, private_suffix()));
        let _ = std::fs::remove_dir_all(&build);
        let write = |rel: &str, text: &str| -> Result<(), String> {
            let p = build.join(rel);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("{}: cannot create: {e}", parent.display()))?;
            }
            std::fs::write(&p, text).map_err(|e| format!("{}: cannot write: {e}", p.display()))
        };
        for (name, text) in unit.shim {
            write(name, text)?;
        }
        for (rel, text) in &prepared.write {
            write(rel, text)?;
        }
        let out = Command::new(&cc)
            .args(CFLAGS)
            .args(unit.includes.iter().map(|i| format!("-I{i}")))
            .arg(unit.main)
            .arg("-o")
            .arg(format!("{name}.so"))
            .current_dir(&build)
            .output()
            .map_err(|e| format!("cannot run the C compiler `{cc}` (set CC): {e}"))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let message = compile_error(unit, &prepared, &stderr, &build, &self.shown_root);
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
    extract_tarball_into(&crate::cache_dir(), tarball)
}

/// [`extract_tarball`] into the cache directory `cache`.
fn extract_tarball_into(cache: &Path, tarball: &Path) -> Result<PathBuf, String> {
    let meta = std::fs::metadata(tarball).map_err(|_| {
        format!(
            "{}: missing: install it with `apt-get install linux-source-6.12` \
             (scripts/setup.sh does) or give a kernel tree (--kernel-src DIR, kernel.src)",
            tarball.display()
        )
    })?;
    let mut files: Vec<&str> = Vec::new();
    for f in UNITS.iter().flat_map(|u| u.files.iter().copied()) {
        if !files.contains(&f) {
            files.push(f);
        }
    }
    let mut key = Fnv64::default();
    key.update(tarball.display().to_string().as_bytes());
    key.update(files.join(" ").as_bytes());
    key.update(&meta.len().to_le_bytes());
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64);
    key.update(&mtime.to_le_bytes());
    let dir = cache.join(format!("source-{:016x}", key.0));
    if files.iter().all(|f| dir.join(f).is_file()) {
        return Ok(dir);
    }
    let tmp = cache.join(format!("source-{:016x}.part-{}", key.0, private_suffix()));
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
    args.extend(files.iter().map(|f| format!("*/{f}")));
    let out = Command::new("tar")
        .args(&args)
        .output()
        .map_err(|e| format!("cannot run tar to unpack {}: {e}", tarball.display()))?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(format!(
            "{}: tar could not unpack {}: {}",
            tarball.display(),
            files.join(", "),
            first_line(&String::from_utf8_lossy(&out.stderr))
        ));
    }
    if std::fs::rename(&tmp, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    Ok(dir)
}

/// A suffix no other builder uses at the same time: the process and a count within it.
/// Runs of one process build at once (a comparison's settings, the tests of one
/// binary); with the process alone as the suffix, one would remove or overwrite the
/// other's half-unpacked tree ("tar could not unpack"). Each builds in its own
/// directory and renames it into place; the first rename wins, and the others use it.
fn private_suffix() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

/// The compiler's or linker's first error as one line: the file (named under
/// `shown_root` for a kernel file, as `kernel-oracle/shim/…` for the shim's), its line,
/// and the message, which names the symbol (`'FOO' undeclared`, ``undefined reference
/// to `foo'``).
fn compile_error(
    unit: &Unit,
    prepared: &Prepared,
    stderr: &str,
    build: &Path,
    shown_root: &str,
) -> String {
    let build_prefix = format!("{}/", build.display());
    // `file:line` as the user knows it.
    let shown = |path: &str, at: &str| -> String {
        let rel = path
            .trim_start_matches(&build_prefix)
            .trim_start_matches("./");
        if let Some(shim) = rel.strip_prefix("shim/") {
            format!("{}/{}:{at}", unit.shim_home, shim)
        } else if rel.starts_with("extra/") {
            // A function taken from a kernel file: its own file and line.
            let line: usize = at.parse().unwrap_or(0);
            let from = prepared
                .origins
                .iter()
                .filter(|o| o.written == rel && o.line <= line)
                .max_by_key(|o| o.line);
            match from {
                Some(o) => format!(
                    "{shown_root}/{}:{}",
                    o.source,
                    o.source_line + (line - o.line)
                ),
                None => format!("{shown_root} ({}):{at}", unit.extra_from),
            }
        } else {
            format!(
                "{shown_root}/{}:{at}",
                rel.strip_prefix("kernel/").unwrap_or(rel)
            )
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
                    return format!("{}: {}", shown(file, at), message.trim());
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
                Some((file, at)) => format!("{}: {message}", shown(file, at)),
                None => format!("{}/{}: {message}", shown_root, unit.files[0]),
            };
        }
    }
    format!("{}/{}: {}", shown_root, unit.files[0], first_line(stderr))
}

/// The first non-empty line of `text`, trimmed.
fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(no message)")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs of one process unpack at once (a comparison's settings, the units of one
    /// run built by two threads): each into a directory of its own, so that no two
    /// tars write one tree. With the process id alone naming it, two test threads of
    /// one binary failed once with "tar: include/net/codel.h: Cannot open: File
    /// exists"; that race needs two tars to create one file in the same instant, which
    /// six threads here do not reliably hit, so the names are checked apart too.
    #[test]
    fn threads_of_one_process_unpack_the_tarball_at_once() {
        assert_ne!(private_suffix(), private_suffix());
        let tarball = Path::new(DEFAULT_TARBALL);
        if !tarball.is_file() {
            // scripts/setup.sh installs it; the units' own tests say so when missing.
            return;
        }
        let cache = std::env::temp_dir().join(format!("txop-unpack-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&cache);
        std::fs::create_dir_all(&cache).unwrap();
        let unpacks: Vec<_> = (0..6)
            .map(|_| {
                let cache = cache.clone();
                std::thread::spawn(move || extract_tarball_into(&cache, tarball))
            })
            .collect();
        let dirs: Vec<Result<PathBuf, String>> =
            unpacks.into_iter().map(|t| t.join().unwrap()).collect();
        let _ = std::fs::remove_dir_all(&cache);
        let first = dirs[0].clone().unwrap();
        for d in dirs {
            assert_eq!(d.unwrap(), first);
        }
    }
}
