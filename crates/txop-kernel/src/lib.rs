//! The kernel's own minstrel_ht (`net/mac80211/rc80211_minstrel_ht.c`, 6.x) as a
//! scenario's rate control, in place of txop's Rust (issue 28, "bring your patch"): a
//! driver developer's patched tree runs in every scenario, compare and sweep.
//!
//! [`minstrel_ht`] finds the source (Debian's `linux-source-6.12` tarball by default, or
//! a tree the user names), builds it at run time with the C compiler against the same
//! user-space shim the test-time oracle uses (`crates/kernel-oracle/shim/mac80211/`,
//! embedded here), caches the shared object under a directory keyed by a hash of every
//! input, loads it (`libloading`) and hands the core a
//! [`txop_core::mac80211::rate_control::ExternalCode`]: the core drives it through
//! `ExternalRateControl` as it drives its own minstrel_ht, and never builds or loads
//! anything itself (it stays sans-I/O).
//!
//! The code runs as the kernel-oracle harness drives it (docs/reference/kernel-oracle.md,
//! "minstrel_ht"): jiffies at HZ = 10^9 (txop's nanoseconds), txop's per-station sample
//! table installed before every call, statuses as A-MPDU statuses. Where the harness
//! finds both agree, a scenario gives the same results on either (`tests/kernel_minstrel.rs`).
//!
//! Errors are one line naming the file, and for a tree that does not build against the
//! shim, the file, the line and the symbol the compiler or linker names.

pub mod airtime;
pub mod aql;
pub mod extract;
pub mod fq;
mod link;
pub mod scheduler;
mod source;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use txop_core::mac80211::airtime_code::ExternalAirtimeCode;
use txop_core::mac80211::aql::ExternalAqlCode;
use txop_core::mac80211::fq::ExternalFqCode;
use txop_core::mac80211::rate_control::ExternalCode;
use txop_core::mac80211::scheduler::ExternalSchedulerCode;

pub use link::{
    from_kernel, kernel_group, to_kernel, KernelMinstrelCode, MinstrelSetup, StateView, TableEntry,
    CCK_GROUP, OFDM_GROUP, RC_USE_RTS_CTS, VHT_GROUP_0,
};
pub use source::DEFAULT_TARBALL;

/// Loaded code of one unit by source (`None`: the default tarball), so that a
/// comparison or a sweep of many runs builds and loads each tree once per process.
type Loaded<T> = Mutex<Option<HashMap<Option<PathBuf>, T>>>;

static LOADED_MINSTREL_HT: Loaded<ExternalCode> = Mutex::new(None);
static LOADED_FQ: Loaded<ExternalFqCode> = Mutex::new(None);
static LOADED_AQL: Loaded<ExternalAqlCode> = Mutex::new(None);
static LOADED_SCHEDULER: Loaded<ExternalSchedulerCode> = Mutex::new(None);
static LOADED_AIRTIME: Loaded<ExternalAirtimeCode> = Mutex::new(None);

/// The code `loaded` holds for `src`, or what `build` makes of it (then kept).
fn once<T: Copy>(
    loaded: &Loaded<T>,
    src: Option<&Path>,
    build: impl FnOnce(Option<&Path>) -> Result<T, String>,
) -> Result<T, String> {
    let key = src.map(Path::to_path_buf);
    let mut loaded = loaded.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(code) = loaded.as_ref().and_then(|m| m.get(&key)) {
        return Ok(*code);
    }
    let code = build(src)?;
    loaded.get_or_insert_with(HashMap::new).insert(key, code);
    Ok(code)
}

/// The kernel's minstrel_ht from `src` (a kernel source tree; `None`: the Debian
/// tarball [`DEFAULT_TARBALL`], or the one `TXOP_KERNEL_TARBALL` names), built and
/// loaded once per process, or a one-line error: the directory or file missing, or the
/// file, line and symbol a tree fails to build with.
pub fn minstrel_ht(src: Option<&Path>) -> Result<ExternalCode, String> {
    once(&LOADED_MINSTREL_HT, src, |src| {
        KernelMinstrelCode::build(src).map(|c| ExternalCode(c))
    })
}

/// The kernel's fq and CoDel (`include/net/fq_impl.h`, `codel_impl.h`) from `src`, as
/// [`minstrel_ht`] builds and loads minstrel_ht, glued as mac80211 glues them
/// (kernel-oracle's `shim/oracle.c`).
pub fn fq(src: Option<&Path>) -> Result<ExternalFqCode, String> {
    once(&LOADED_FQ, src, |src| {
        fq::KernelFqCode::build(src).map(|c| ExternalFqCode(c))
    })
}

/// The kernel's AQL accounting and checks (`net/mac80211/sta_info.c`, `tx.c`) from
/// `src`, as [`minstrel_ht`] builds and loads minstrel_ht (kernel-oracle's
/// `shim/mac80211/scheduler.c`).
pub fn aql(src: Option<&Path>) -> Result<ExternalAqlCode, String> {
    once(&LOADED_AQL, src, |src| {
        aql::KernelAqlCode::build(src).map(|c| ExternalAqlCode(c))
    })
}

/// The kernel's 6.12 TXQ scheduler (`ieee80211_next_txq`, `__ieee80211_schedule_txq`,
/// `ieee80211_txq_may_transmit`, `ieee80211_txq_schedule_start` of
/// `net/mac80211/tx.c`, `ieee80211_sta_register_airtime` of `sta_info.c`) from `src`,
/// as [`minstrel_ht`] builds and loads minstrel_ht (kernel-oracle's
/// `shim/mac80211/scheduler.c`).
pub fn scheduler(src: Option<&Path>) -> Result<ExternalSchedulerCode, String> {
    once(&LOADED_SCHEDULER, src, |src| {
        scheduler::KernelSchedulerCode::build(src).map(|c| ExternalSchedulerCode(c))
    })
}

/// The kernel's airtime estimate (`net/mac80211/airtime.c`) from `src`, as
/// [`minstrel_ht`] builds and loads minstrel_ht (kernel-oracle's
/// `shim/mac80211/airtime_api.c`).
pub fn airtime(src: Option<&Path>) -> Result<ExternalAirtimeCode, String> {
    once(&LOADED_AIRTIME, src, |src| {
        airtime::KernelAirtimeCode::build(src).map(|c| ExternalAirtimeCode(c))
    })
}

/// Loads the shared object `object` for the process's lifetime.
pub(crate) fn load(object: &Path) -> Result<&'static libloading::Library, String> {
    // SAFETY: the object is a shim just compiled (or cached under the hash of its
    // inputs); it has no initialisers beyond static data.
    let lib = unsafe { libloading::Library::new(object) }
        .map_err(|e| format!("{}: cannot load: {e}", object.display()))?;
    Ok(Box::leak(Box::new(lib)))
}

/// The function `name` of a loaded shim, as the C signature `T`.
pub(crate) fn sym<T: Copy>(
    lib: &'static libloading::Library,
    object: &Path,
    name: &str,
) -> Result<T, String> {
    // SAFETY: T is the symbol's C signature as the shim defines it.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("{}: no `{name}`: {e}", object.display()))
}

/// Where built objects and extracted sources are kept: `TXOP_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/txop`, else `~/.cache/txop`, else the temporary directory's `txop`;
/// always its `kernel/` subdirectory.
pub fn cache_dir() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("TXOP_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("txop")))
        .or_else(|| env("HOME").map(|d| d.join(".cache/txop")))
        .unwrap_or_else(|| std::env::temp_dir().join("txop"))
        .join("kernel")
}
