//! Builds the kernel's own fq and CoDel (`include/net/fq.h`, `fq_impl.h`, `codel.h`,
//! `codel_impl.h`, and `IP_ECN_set_ce` from `inet_ecn.h`), minstrel_ht
//! (`net/mac80211/rc80211_minstrel_ht.c` and `.h`, with `ieee80211_frame_duration` from
//! `net/mac80211/util.c` and `rate_supported`/`rate_lowest_index` from
//! `include/net/mac80211.h`) and `net/mac80211/airtime.c` (with `ieee80211_rate_valid`
//! and `ieee80211_info_set_tx_time_est`) with the user-space shims in `shim/`, from the
//! installed Debian package `linux-source-6.12` or from the kernel tree named by
//! `TXOP_KERNEL_SRC`. The files are extracted into `OUT_DIR`, never into the
//! repository. Without a source the crate still builds: `KernelFq::new` (and the others)
//! then return the one-line error saying how to install it, and the tests fail with it.

use std::path::{Path, PathBuf};
use std::process::Command;

// What "the files compiled" and their hash are, shared with txop-kernel, which builds
// the same minstrel_ht at run time: one definition, so both name the code alike.
#[path = "../txop-kernel/src/extract.rs"]
mod extract;
use extract::{function, kernel_version, Fnv64};

/// Where Debian's `linux-source-6.12` puts its tarball.
const DEFAULT_TARBALL: &str = "/usr/src/linux-source-6.12.tar.xz";

/// The kernel files the harness compiles (all of `include/net/`).
const HEADERS: [&str; 4] = ["fq.h", "fq_impl.h", "codel.h", "codel_impl.h"];

/// The mac80211 files the harness compiles (minstrel_ht, airtime) or takes helpers
/// from (the last two).
const MAC80211_FILES: [&str; 5] = [
    "net/mac80211/rc80211_minstrel_ht.c",
    "net/mac80211/rc80211_minstrel_ht.h",
    "net/mac80211/airtime.c",
    "net/mac80211/util.c",
    "include/net/mac80211.h",
];

/// The files the TXQ scheduler and AQL accounting are taken from (`build_scheduler`).
const SCHEDULER_FILES: [&str; 4] = [
    "net/mac80211/tx.c",
    "net/mac80211/sta_info.c",
    "net/mac80211/ieee80211_i.h",
    "net/mac80211/wme.c",
];

fn main() {
    println!("cargo::rustc-check-cfg=cfg(kernel_oracle_built)");
    println!("cargo::rerun-if-env-changed=TXOP_KERNEL_SRC");
    println!("cargo::rerun-if-env-changed=TXOP_KERNEL_TARBALL");
    println!("cargo::rerun-if-changed=shim");
    println!("cargo::rerun-if-changed=../txop-kernel/src/extract.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let kernel = out.join("kernel");
    let extra = out.join("extra");
    let _ = std::fs::remove_dir_all(&kernel);
    let _ = std::fs::remove_dir_all(&extra);
    std::fs::create_dir_all(kernel.join("include/net")).expect("create OUT_DIR/kernel");
    std::fs::create_dir_all(&extra).expect("create OUT_DIR/extra");

    let origin = match std::env::var_os("TXOP_KERNEL_SRC") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            println!(
                "cargo::rerun-if-changed={}",
                dir.join("include/net").display()
            );
            for f in HEADERS.iter().chain(["inet_ecn.h"].iter()) {
                let from = dir.join("include/net").join(f);
                std::fs::copy(&from, kernel.join("include/net").join(f)).unwrap_or_else(|e| {
                    panic!("TXOP_KERNEL_SRC: cannot read {}: {e}", from.display())
                });
            }
            std::fs::create_dir_all(kernel.join("net/mac80211")).expect("create net/mac80211");
            for f in MAC80211_FILES.iter().chain(&SCHEDULER_FILES) {
                let from = dir.join(f);
                println!("cargo::rerun-if-changed={}", from.display());
                std::fs::copy(&from, kernel.join(f)).unwrap_or_else(|e| {
                    panic!("TXOP_KERNEL_SRC: cannot read {}: {e}", from.display())
                });
            }
            let _ = std::fs::copy(dir.join("Makefile"), kernel.join("Makefile"));
            dir.display().to_string()
        }
        None => {
            let tarball = std::env::var("TXOP_KERNEL_TARBALL")
                .unwrap_or_else(|_| DEFAULT_TARBALL.to_string());
            println!("cargo::rerun-if-changed={tarball}");
            if !Path::new(&tarball).exists() {
                missing(&format!(
                    "kernel-oracle: no kernel source: {tarball} is missing; install it with \
                     `apt-get install linux-source-6.12` (scripts/setup.sh does) or set \
                     TXOP_KERNEL_SRC to a kernel tree"
                ));
                return;
            }
            extract(&tarball, &kernel);
            tarball
        }
    };
    // The scheduler's sources are only read (their functions extracted); out of
    // net/mac80211/, so that the kernel's ieee80211_i.h does not shadow the shim's for
    // airtime.c.
    let sched_src = out.join("sched_src");
    let _ = std::fs::remove_dir_all(&sched_src);
    std::fs::create_dir_all(&sched_src).expect("create OUT_DIR/sched_src");
    for f in SCHEDULER_FILES {
        std::fs::rename(kernel.join(f), sched_src.join(f.replace('/', "_")))
            .unwrap_or_else(|e| panic!("kernel-oracle: {origin}: cannot read {f}: {e}"));
    }

    // inet_ecn.h itself needs the IP stack's headers; only IP_ECN_set_ce is taken.
    let ecn_path = kernel.join("include/net/inet_ecn.h");
    let inet_ecn = std::fs::read_to_string(&ecn_path)
        .unwrap_or_else(|e| panic!("kernel-oracle: cannot read {}: {e}", ecn_path.display()));
    std::fs::remove_file(&ecn_path).expect("remove inet_ecn.h (the shim stands in for it)");
    let set_ce = function(
        &inet_ecn,
        "static inline int IP_ECN_set_ce(struct iphdr *iph)",
    )
    .unwrap_or_else(|| panic!("kernel-oracle: {origin}: include/net/inet_ecn.h: no IP_ECN_set_ce"));
    std::fs::write(extra.join("ip_ecn_set_ce.h"), set_ce).expect("write ip_ecn_set_ce.h");

    let era = revert_empty_flow_fix(&kernel.join("include/net/codel_impl.h"));

    let mut hash = Fnv64::default();
    for f in HEADERS {
        hash.update(&std::fs::read(kernel.join("include/net").join(f)).expect("read header"));
    }
    hash.update(set_ce.as_bytes());
    let version = std::fs::read_to_string(kernel.join("Makefile"))
        .map(|m| kernel_version(&m))
        .unwrap_or_else(|_| "unknown".to_string());
    println!(
        "cargo::rustc-env=KERNEL_ORACLE_SOURCE={origin} (Linux {version}{era}; fq.h, \
         fq_impl.h, codel.h, codel_impl.h, IP_ECN_set_ce: fnv64 {:016x})",
        hash.0
    );

    cc::Build::new()
        .file("shim/oracle.c")
        .include("shim/include")
        .include(kernel.join("include"))
        .include(&extra)
        .flag("-std=gnu11")
        .flag_if_supported("-Wno-unused-function")
        // The kernel builds without -Wextra (these come with W=1).
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-sign-compare")
        .compile("kernel_oracle");
    build_mac80211(&kernel, &extra, &origin, &version);
    build_scheduler(&sched_src, &kernel, &extra, &origin, &version);
    println!("cargo::rustc-cfg=kernel_oracle_built");
}

/// minstrel_ht and airtime: the kernel's helpers they call (extracted into
/// `extra/kernel_helpers.h`), `shim/mac80211/minstrel.c`, which includes
/// `rc80211_minstrel_ht.c` whole, and `shim/mac80211/airtime_api.c`, which includes
/// `airtime.c`.
fn build_mac80211(kernel: &Path, extra: &Path, origin: &str, version: &str) {
    let read = |f: &str| {
        std::fs::read_to_string(kernel.join(f))
            .unwrap_or_else(|e| panic!("kernel-oracle: {origin}: cannot read {f}: {e}"))
    };
    let helpers = extract::minstrel_helpers(
        &read("net/mac80211/util.c"),
        &read("include/net/mac80211.h"),
    )
    .unwrap_or_else(|e| panic!("kernel-oracle: {origin}: {e}"));
    std::fs::write(
        extra.join("kernel_helpers.h"),
        format!("/* Extracted by kernel-oracle's build.rs from {origin}. */\n{helpers}"),
    )
    .expect("write kernel_helpers.h");
    let mut hash = Fnv64::default();
    for f in &MAC80211_FILES[..2] {
        hash.update(read(f).as_bytes());
    }
    hash.update(helpers.as_bytes());
    let mut airtime_hash = Fnv64::default();
    airtime_hash.update(read(MAC80211_FILES[2]).as_bytes());
    airtime_hash.update(helpers.as_bytes());
    println!(
        "cargo::rustc-env=KERNEL_ORACLE_AIRTIME_SOURCE={origin} (Linux {version}; airtime.c, \
         ieee80211_rate_valid, ieee80211_info_set_tx_time_est: fnv64 {:016x})",
        airtime_hash.0
    );
    println!(
        "cargo::rustc-env=KERNEL_ORACLE_MINSTREL_SOURCE={origin} (Linux {version}; \
         rc80211_minstrel_ht.c, rc80211_minstrel_ht.h, ieee80211_frame_duration, \
         rate_supported, rate_lowest_index: fnv64 {:016x})",
        hash.0
    );
    for (file, lib) in [
        ("shim/mac80211/minstrel.c", "kernel_oracle_minstrel"),
        ("shim/mac80211/airtime_api.c", "kernel_oracle_airtime"),
    ] {
        cc::Build::new()
            .file(file)
            .include("shim/mac80211/include")
            .include(kernel.join("net/mac80211"))
            .include(extra)
            .flag("-std=gnu11")
            .flag_if_supported("-Wno-unused-function")
            // The kernel builds without -Wextra (these come with W=1).
            .flag_if_supported("-Wno-unused-parameter")
            .flag_if_supported("-Wno-sign-compare")
            .flag_if_supported("-Wno-unused-variable")
            .flag_if_supported("-Wno-unused-but-set-variable")
            .compile(lib);
    }
}

/// The TXQ scheduler and AQL accounting: the kernel's functions of `tx.c`,
/// `sta_info.c`, `ieee80211_i.h`, `wme.c` and `mac80211.h` (extracted one by one, in
/// an order in which each is declared before use, into `extra/sched_kernel.h`) and
/// `shim/mac80211/scheduler.c`, which includes them after its structs.
fn build_scheduler(sched_src: &Path, kernel: &Path, extra: &Path, origin: &str, version: &str) {
    let read = |f: &str| {
        let path = if SCHEDULER_FILES.contains(&f) {
            sched_src.join(f.replace('/', "_"))
        } else {
            kernel.join(f)
        };
        std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("kernel-oracle: {origin}: cannot read {f}: {e}"))
    };
    let text = extract::scheduler_functions(
        &read("net/mac80211/tx.c"),
        &read("net/mac80211/sta_info.c"),
        &read("net/mac80211/ieee80211_i.h"),
        &read("net/mac80211/wme.c"),
        &read("include/net/mac80211.h"),
    )
    .unwrap_or_else(|e| panic!("kernel-oracle: {origin}: {e}"));
    std::fs::write(
        extra.join("sched_kernel.h"),
        format!("/* Extracted by kernel-oracle's build.rs from {origin}. */\n{text}"),
    )
    .expect("write sched_kernel.h");
    let mut hash = Fnv64::default();
    hash.update(text.as_bytes());
    println!(
        "cargo::rustc-env=KERNEL_ORACLE_SCHEDULER_SOURCE={origin} (Linux {version}; \
         ieee80211_next_txq, __ieee80211_schedule_txq, ieee80211_txq_may_transmit, \
         ieee80211_txq_airtime_check, ieee80211_txq_schedule_start, \
         ieee80211_sta_register_airtime, ieee80211_sta_update_pending_airtime and their \
         helpers: fnv64 {:016x})",
        hash.0
    );
    cc::Build::new()
        .file("shim/mac80211/scheduler.c")
        .include("shim/include")
        .include(extra)
        .flag("-std=gnu11")
        .flag_if_supported("-Wno-unused-function")
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-sign-compare")
        .compile("kernel_oracle_scheduler");
}

/// The one line of "net_sched: codel: fix stale state for empty flows in fq_codel"
/// (upstream 815980fe6dbb, March 2026, backported to 6.12.y): `codel_dequeue` on an empty
/// queue also clears `first_above_time`. Every kernel txop models predates it, so the
/// harness runs the code without it: the line is removed from the extracted copy (never
/// from a user's tree). Returns what the source string says about it.
const EMPTY_FLOW_FIX: &str =
    "\tif (!skb) {\n\t\tvars->first_above_time = 0;\n\t\tvars->dropping = false;";

fn revert_empty_flow_fix(codel_impl: &Path) -> &'static str {
    let text = std::fs::read_to_string(codel_impl).expect("read the extracted codel_impl.h");
    if !text.contains(EMPTY_FLOW_FIX) {
        return "";
    }
    let reverted = text.replacen(
        EMPTY_FLOW_FIX,
        "\tif (!skb) {\n\t\tvars->dropping = false;",
        1,
    );
    std::fs::write(codel_impl, reverted).expect("write the extracted codel_impl.h");
    ", codel 815980fe6dbb reverted"
}

/// No kernel source: the library reports `message` instead of running the C.
fn missing(message: &str) {
    println!("cargo::rustc-env=KERNEL_ORACLE_MISSING={message}");
    println!("cargo::rustc-env=KERNEL_ORACLE_SOURCE=none");
    println!("cargo::rustc-env=KERNEL_ORACLE_MINSTREL_SOURCE=none");
    println!("cargo::rustc-env=KERNEL_ORACLE_AIRTIME_SOURCE=none");
    println!("cargo::rustc-env=KERNEL_ORACLE_SCHEDULER_SOURCE=none");
}

/// Extract the headers (and the top Makefile, for the version) from a Debian
/// `linux-source-*.tar.xz`, whose files sit under one top directory.
fn extract(tarball: &str, kernel: &Path) {
    let mut args: Vec<String> = vec![
        "-xJf".into(),
        tarball.into(),
        "-C".into(),
        kernel.display().to_string(),
        "--strip-components=1".into(),
        "--wildcards".into(),
        "--no-wildcards-match-slash".into(),
        "*/Makefile".into(),
        "*/include/net/inet_ecn.h".into(),
    ];
    args.extend(HEADERS.iter().map(|h| format!("*/include/net/{h}")));
    args.extend(
        MAC80211_FILES
            .iter()
            .chain(&SCHEDULER_FILES)
            .map(|f| format!("*/{f}")),
    );
    let status = Command::new("tar")
        .args(&args)
        .status()
        .unwrap_or_else(|e| panic!("kernel-oracle: cannot run tar to unpack {tarball}: {e}"));
    assert!(
        status.success(),
        "kernel-oracle: tar could not unpack the headers from {tarball}"
    );
}
