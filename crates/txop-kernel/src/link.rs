//! The loaded kernel minstrel_ht behind the core's `ExternalRateControl`: one `struct
//! kmin` (kernel-oracle's `shim/mac80211/minstrel.c`: one hw, one station) per link.

use crate::source::{Source, MINSTREL_HT};
use std::ffi::c_void;
use std::path::Path;
use std::sync::Mutex;
use txop_core::mac80211::minstrel_ht::{MinstrelHt, PeerCaps};
use txop_core::mac80211::rate_chain::{RateChain, RateIdx, RateStage, TxStatus, MAX_RATE_STAGES};
use txop_core::mac80211::rate_control::{
    CodeOrigin, ExternalRateControl, HwRateCaps, MinstrelEra, RateControlCode,
};
use txop_core::phy::{Band, ChannelWidth, Standard, TxVector};
use txop_core::Nanos;

/// `MINSTREL_CCK_GROUP` (4 streams: after 16 HT groups).
pub const CCK_GROUP: u32 = 16;
/// `MINSTREL_OFDM_GROUP`.
pub const OFDM_GROUP: u32 = 17;
/// `MINSTREL_VHT_GROUP_0`.
pub const VHT_GROUP_0: u32 = 18;
/// `IEEE80211_TX_RC_USE_RTS_CTS`.
pub const RC_USE_RTS_CTS: u32 = 1;
/// Groups txop's minstrel_ht has (8 HT, CCK, OFDM, 12 VHT).
const TXOP_GROUPS: u32 = 22;

/// txop's minstrel numbers its groups as the kernel does but for at most 2 streams
/// (`MINSTREL_MAX_STREAMS` 4 in the kernel): 8 HT groups, CCK 8, OFDM 9, 12 VHT groups
/// from 10, each ordered width → short GI → streams. The kernel's number of txop's
/// group `g` (the order of groups, which the sample walks follow, is the same).
pub fn kernel_group(g: u32) -> u32 {
    let split = |k: u32| (k % 2 + 1, (k / 2) % 2, k / 4); // (streams, sgi, bw)
    match g {
        0..=7 => {
            let (s, sgi, bw) = split(g);
            8 * bw + 4 * sgi + s - 1
        }
        8 => CCK_GROUP,
        9 => OFDM_GROUP,
        _ => {
            let (s, sgi, bw) = split(g - 10);
            VHT_GROUP_0 + 8 * bw + 4 * sgi + s - 1
        }
    }
}

/// The kernel's `MI_RATE` of txop's rate number.
pub fn to_kernel(r: RateIdx) -> u32 {
    kernel_group(u32::from(r.0 >> 4)) << 4 | u32::from(r.0 & 0xf)
}

/// txop's rate number of the kernel's `MI_RATE`, if txop has its group.
pub fn from_kernel(k: u32) -> Option<RateIdx> {
    let (kg, i) = (k >> 4, k & 0xf);
    (0..TXOP_GROUPS)
        .find(|&g| kernel_group(g) == kg)
        .map(|g| RateIdx((g << 4 | i) as u16))
}

/// `struct kmin_params`: the peer and hardware the kernel's minstrel is set up for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct MinstrelSetup {
    /// `NL80211_BAND_2GHZ` (0) or `NL80211_BAND_5GHZ` (1).
    pub band: u32,
    /// The peer's supported rates include the CCK rates (2.4 GHz).
    pub cck: u32,
    /// The peer's supported rates include the legacy OFDM rates.
    pub ofdm: u32,
    /// `ht_cap.ht_supported`.
    pub ht: u32,
    /// `vht_cap.vht_supported` (MCS 0–9 for each of `nss` streams).
    pub vht: u32,
    /// Short GI: `IEEE80211_HT_CAP_SGI_20 | SGI_40`, `IEEE80211_VHT_CAP_SHORT_GI_80`.
    pub sgi: u32,
    /// `enum ieee80211_sta_rx_bandwidth` (0 = 20 MHz, 1 = 40, 2 = 80).
    pub bandwidth: u32,
    /// Spatial streams the peer receives (HT `rx_mask`, VHT `tx_mcs_map`).
    pub nss: u32,
    /// The station and the BSS use the short preamble.
    pub short_preamble: u32,
    /// `hw->max_rates`.
    pub max_rates: u32,
    /// `hw->max_rate_tries` (0: minstrel's default 7).
    pub max_rate_tries: u32,
    /// The sample table installed for this station (`sample_table[col][i]`).
    pub sample_table: [[u8; 10]; 10],
}

impl MinstrelSetup {
    /// The kernel's station setup for txop's peer `caps` on `hw`, with the sample table
    /// txop drew for the link.
    pub fn new(caps: &PeerCaps, hw: HwRateCaps, sample_table: [[u8; 10]; 10]) -> MinstrelSetup {
        let bw = |w: ChannelWidth| match w {
            ChannelWidth::Mhz20 => 0,
            ChannelWidth::Mhz40 => 1,
            // No minstrel_ht group is wider than 80 MHz.
            ChannelWidth::Mhz80 | ChannelWidth::Mhz160 => 2,
        };
        let (ht, vht, bandwidth) = match caps.standard {
            Standard::N => (1, 0, bw(caps.width).min(1)),
            Standard::Ac => (1, 1, bw(caps.width)),
            _ => (0, 0, 0),
        };
        let two_four = caps.band == Band::Ghz2_4;
        MinstrelSetup {
            band: if two_four { 0 } else { 1 },
            cck: u32::from(two_four && caps.standard != Standard::A),
            // Every peer but 802.11b lists the OFDM rates (an HT peer's are unused by
            // minstrel_ht but give its lowest rate in 5 GHz).
            ofdm: u32::from(caps.standard != Standard::B),
            ht,
            vht,
            sgi: u32::from(caps.sgi),
            bandwidth,
            nss: u32::from(caps.max_nss),
            short_preamble: u32::from(caps.short_preamble),
            max_rates: u32::from(hw.max_rates),
            max_rate_tries: u32::from(hw.max_rate_tries),
            sample_table,
        }
    }
}

/// One entry of the rate table minstrel hands mac80211 (`sta->rates->rate[i]`), its
/// rate translated back to minstrel's number by the kernel's own lookup.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct TableEntry {
    /// `MI_RATE(group, index)`.
    pub rate: i32,
    /// `count` (tries; the RTS/CTS count on stages that use RTS/CTS).
    pub count: u32,
    /// `count_cts`.
    pub count_cts: u32,
    /// `count_rts`.
    pub count_rts: u32,
    /// `IEEE80211_TX_RC_*` flags.
    pub flags: u32,
}

/// `struct kmin_state_view`: the parts of `struct minstrel_ht_sta` the harness
/// compares, and the rate table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct StateView {
    /// `max_tp_rate[0..4]`.
    pub max_tp_rate: [u32; 4],
    /// `max_prob_rate`.
    pub max_prob_rate: u32,
    /// `avg_ampdu_len` (fixed point, 4096 = 1).
    pub avg_ampdu_len: u32,
    /// `sample_seq`.
    pub sample_seq: u32,
    /// `sample_time` (ns).
    pub sample_time: u64,
    /// `last_stats_update` (ns).
    pub last_stats_update: u64,
    /// Entries of the rate table in use.
    pub n_table: u32,
    /// The rate table.
    pub table: [TableEntry; 4],
    /// `sample[INC, JUMP, SLOW].sample_rates`.
    pub sample_rates: [[u32; 5]; 3],
    /// `WARN_ON`s fired in the kernel code so far (this thread).
    pub warnings: u32,
}

type NewFn = unsafe extern "C" fn(*const MinstrelSetup, u64) -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type CloneFn = unsafe extern "C" fn(*const c_void) -> *mut c_void;
type GetRateFn = unsafe extern "C" fn(*mut c_void, u64, *mut u32) -> u32;
type TxStatusFn =
    unsafe extern "C" fn(*mut c_void, u64, *const u32, *const u32, u32, u32, u32, u32);
type StateFn = unsafe extern "C" fn(*mut c_void, *mut StateView);
type TableUpdatesFn = unsafe extern "C" fn(*mut c_void) -> u32;

/// The shim's C API (`shim/mac80211/minstrel.c`), looked up in the loaded object.
struct Api {
    new: NewFn,
    free: FreeFn,
    clone: CloneFn,
    get_rate: GetRateFn,
    tx_status: TxStatusFn,
    state: StateFn,
    table_updates: TableUpdatesFn,
}

/// The kernel's minstrel_ht, built and loaded: makes one link per station. Lives as
/// long as the process (the object is never unloaded).
pub struct KernelMinstrelCode {
    origin: CodeOrigin,
    api: Api,
    /// The kernel's sample table is one per module: calls into this object are
    /// serialised, each installing its link's table first (the shim's `kmin_enter`).
    lock: Mutex<()>,
}

impl KernelMinstrelCode {
    /// Build (or find in the cache) and load the code of `src` (`None`: the tarball).
    pub(crate) fn build(src: Option<&Path>) -> Result<&'static KernelMinstrelCode, String> {
        let source = Source::read(&MINSTREL_HT, src)?;
        let (object, fnv64) = source.build()?;
        let lib = crate::load(&object)?;
        let api = Api {
            new: crate::sym(lib, &object, "kmin_new")?,
            free: crate::sym(lib, &object, "kmin_free")?,
            clone: crate::sym(lib, &object, "kmin_clone")?,
            get_rate: crate::sym(lib, &object, "kmin_get_rate")?,
            tx_status: crate::sym(lib, &object, "kmin_tx_status")?,
            state: crate::sym(lib, &object, "kmin_state")?,
            table_updates: crate::sym(lib, &object, "kmin_table_updates")?,
        };
        Ok(Box::leak(Box::new(KernelMinstrelCode {
            origin: CodeOrigin {
                unit: "minstrel_ht",
                path: source.path,
                version: source.version,
                fnv64: format!("{fnv64:016x}"),
            },
            api,
            lock: Mutex::new(()),
        })))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.lock.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl RateControlCode for KernelMinstrelCode {
    fn origin(&self) -> &CodeOrigin {
        &self.origin
    }

    fn link(
        &'static self,
        caps: &PeerCaps,
        hw: HwRateCaps,
        seed: u64,
    ) -> Box<dyn ExternalRateControl> {
        // txop's minstrel_ht of the same link gives the rate numbering and the sample
        // table (drawn from the link's seed), as in the differential test.
        let txop = MinstrelHt::new(MinstrelEra::Linux6, caps, hw, seed);
        let setup = MinstrelSetup::new(caps, hw, txop.sample_table());
        let raw = {
            let _g = self.lock();
            // SAFETY: `setup` outlives the call; the result is owned by the link.
            unsafe { (self.api.new)(&setup, 0) }
        };
        assert!(!raw.is_null(), "kmin_new: out of memory");
        let mut link = KernelMinstrelLink {
            code: self,
            raw,
            rates: txop.supported_rates(),
            table: *txop.rate_table(),
            table_updates: u32::MAX,
        };
        link.refresh_table();
        Box::new(link)
    }
}

/// One link's `struct kmin`.
struct KernelMinstrelLink {
    code: &'static KernelMinstrelCode,
    raw: *mut c_void,
    /// The peer's rates in txop's numbering (what results and the transmit path use).
    rates: Vec<(RateIdx, TxVector)>,
    /// minstrel's rate table (`sta->rates`) in txop's terms, read again only when
    /// minstrel sets a new one (every 50 ms at most, or on sudden death).
    table: RateChain,
    /// `kmin_table_updates` when `table` was read.
    table_updates: u32,
}

// SAFETY: the `struct kmin` is only reached through `code`'s lock, and every call sets
// the shim's per-thread clock first (`kmin_enter`), so it may move between threads.
unsafe impl Send for KernelMinstrelLink {}

impl std::fmt::Debug for KernelMinstrelLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelMinstrelLink")
            .field("origin", &self.code.origin)
            .finish_non_exhaustive()
    }
}

impl KernelMinstrelLink {
    /// Reads the rate table again if minstrel has set one since (`kmin_state`, whose
    /// table entries minstrel's own lookup translated to `MI_RATE`).
    // perf: the table is read and translated once per update, not per PPDU.
    fn refresh_table(&mut self) {
        // SAFETY: self.raw is live and only this link reaches it; the counter is
        // this station's, not module-wide state, so no lock is needed.
        let updates = unsafe { (self.code.api.table_updates)(self.raw) };
        if updates == self.table_updates {
            return;
        }
        let mut v = StateView::default();
        {
            let _g = self.code.lock();
            // SAFETY: self.raw is live; `v` is a valid out-pointer.
            unsafe { (self.code.api.state)(self.raw, &mut v) };
        }
        let table = &v.table[..(v.n_table as usize).clamp(1, MAX_RATE_STAGES)];
        let mut stages = [self.stage(0, 1, false); MAX_RATE_STAGES];
        for (s, e) in stages.iter_mut().zip(table) {
            *s = self.stage(e.rate as u32, e.count, e.flags & RC_USE_RTS_CTS != 0);
        }
        if let Some(chain) = RateChain::from_stages(&stages[..table.len()], false) {
            self.table = chain;
        }
        self.table_updates = updates;
    }

    /// The stage of txop's rate for the kernel's `MI_RATE`.
    fn stage(&self, kernel_rate: u32, tries: u32, rts: bool) -> RateStage {
        let rate = from_kernel(kernel_rate).unwrap_or_default();
        let txv = self
            .rates
            .iter()
            .find(|(r, _)| *r == rate)
            .map_or(self.rates[0].1, |(_, t)| *t);
        RateStage {
            txv,
            rate,
            tries: tries.min(u32::from(u8::MAX)) as u8,
            rts,
        }
    }
}

impl ExternalRateControl for KernelMinstrelLink {
    fn rate_set(&self) -> Vec<(RateIdx, TxVector)> {
        self.rates.clone()
    }

    /// `minstrel_ht_get_rate`, then the chain as `rate_control_fill_sta_table` builds it:
    /// the rate table, or on a probe one try at the sample rate ahead of the table's
    /// stages after the first (what txop's minstrel_ht does too).
    fn rates(&mut self, now: Nanos) -> RateChain {
        let mut sample = 0u32;
        let probe = {
            let _g = self.code.lock();
            // SAFETY: self.raw is live; `sample` is a valid out-pointer.
            unsafe { (self.code.api.get_rate)(self.raw, now.as_ns(), &mut sample) != 0 }
        };
        self.refresh_table();
        if !probe {
            return self.table;
        }
        let rest = &self.table.stages()[1..];
        let mut stages = [self.stage(sample, 1, false); MAX_RATE_STAGES];
        stages[1..=rest.len()].copy_from_slice(rest);
        RateChain::from_stages(&stages[..=rest.len()], true).unwrap_or(self.table)
    }

    /// `minstrel_ht_tx_status` with the PPDU's A-MPDU status: each stage's tries.
    fn tx_status(&mut self, now: Nanos, status: &TxStatus<'_>) {
        let chain = status.chain;
        let tries = chain.tries_per_stage(status.tries_used);
        let mut rates = [0u32; MAX_RATE_STAGES];
        let mut counts = [0u32; MAX_RATE_STAGES];
        for (i, (s, t)) in chain.stages().iter().zip(tries).enumerate() {
            rates[i] = to_kernel(s.rate);
            counts[i] = u32::from(t);
        }
        let ampdu_len = u32::from(status.ampdu_len.max(1));
        let ack_len = u32::from(status.ampdu_ack_len).min(ampdu_len);
        {
            let _g = self.code.lock();
            // SAFETY: self.raw is live; both arrays hold `stages().len()` entries.
            unsafe {
                (self.code.api.tx_status)(
                    self.raw,
                    now.as_ns(),
                    rates.as_ptr(),
                    counts.as_ptr(),
                    chain.stages().len() as u32,
                    ampdu_len,
                    ack_len,
                    u32::from(chain.probe),
                )
            }
        }
        self.refresh_table();
    }

    fn clone_box(&self) -> Box<dyn ExternalRateControl> {
        let raw = {
            let _g = self.code.lock();
            // SAFETY: self.raw is live; the copy is owned by the new link.
            unsafe { (self.code.api.clone)(self.raw) }
        };
        assert!(!raw.is_null(), "kmin_clone: out of memory");
        Box::new(KernelMinstrelLink {
            code: self.code,
            raw,
            rates: self.rates.clone(),
            table: self.table,
            table_updates: self.table_updates,
        })
    }
}

impl Drop for KernelMinstrelLink {
    fn drop(&mut self) {
        let _g = self.code.lock();
        // SAFETY: self.raw came from kmin_new or kmin_clone and is freed once.
        unsafe { (self.code.api.free)(self.raw) }
    }
}
