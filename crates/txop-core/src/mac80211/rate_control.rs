//! Which rate control picks a station's rates, and what the hardware offers it.
//!
//! mac80211 runs one rate control per station (`rate_control_ops`): minstrel_ht on
//! every modelled driver that leaves rate control to the host (rate-control.md §1).
//! `fixed` keeps one configured rate (txop before rate control; what the Bianchi
//! validation uses) and `ideal` is an SNR oracle, an upper bound as ns-3's
//! `IdealWifiManager`.

use crate::mac::ampdu::QOS_DATA_OVERHEAD_BYTES;
use crate::mac80211::minstrel_ht::{MinstrelHt, PeerCaps};
use crate::mac80211::rate_chain::{RateChain, RateIdx, TxStatus};
use crate::phy::channel::{ErrorModel, RATE_SELECTION_FRAME_BYTES};
use crate::phy::link_channel::LinkChannel;
use crate::phy::{DsssPreamble, TxVector};
use crate::Nanos;

/// The rate control of a station's links.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RateControlKind {
    /// The configured rate for every PPDU.
    #[default]
    Fixed,
    /// The best rate for the link's SNR at the moment the PPDU is built.
    Ideal,
    /// minstrel_ht; `None` runs the era of the station's stack.
    MinstrelHt(Option<MinstrelEra>),
    /// Rate-control code from outside the core, loaded by the front end: the kernel's
    /// own `rc80211_minstrel_ht.c` built at run time (`crates/txop-kernel`, scenario
    /// name [`EXTERNAL_MINSTREL_HT`]). The core only drives it through
    /// [`ExternalRateControl`]; it neither builds nor loads it.
    External(ExternalCode),
}

/// The scenario name of the kernel's own minstrel_ht run in place of txop's
/// ([`RateControlKind::External`]; issue 28, "bring your patch").
pub const EXTERNAL_MINSTREL_HT: &str = "minstrel_ht-kernel";

/// Where external rate-control code came from, for the results to say which code ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeOrigin {
    /// The unit it replaces (`minstrel_ht`).
    pub unit: &'static str,
    /// The tarball or source tree it was built from.
    pub path: String,
    /// The kernel version its top Makefile gives (`6.12.117`), or `unknown`.
    pub version: String,
    /// FNV-1a 64 of the files compiled, hexadecimal.
    pub fnv64: String,
}

/// Rate-control code the front end built and loaded: makes one
/// [`ExternalRateControl`] per link, as mac80211 calls `alloc_sta` and `rate_init`
/// once per station.
pub trait RateControlCode: Send + Sync + std::panic::RefUnwindSafe {
    /// Where the code came from.
    fn origin(&self) -> &CodeOrigin;
    /// The rate control of one link to a peer with `caps` on hardware `hw`; `seed` is
    /// the link's own (txop's minstrel_ht draws its sample table from it).
    fn link(
        &'static self,
        caps: &PeerCaps,
        hw: HwRateCaps,
        seed: u64,
    ) -> Box<dyn ExternalRateControl>;
}

/// One link's external rate control, driven as `LinkRateControl` drives txop's own:
/// a chain per PPDU, a status per PPDU. Rates are numbered as txop's minstrel_ht
/// numbers them (`RateIdx`), so per-rate results read the same.
pub trait ExternalRateControl: Send + std::fmt::Debug {
    /// The rates it may put in a chain, with their indices.
    fn rate_set(&self) -> Vec<(RateIdx, TxVector)>;
    /// The chain for the next PPDU, built at `now`.
    fn rates(&mut self, now: Nanos) -> RateChain;
    /// The hardware's report of one PPDU at `now`.
    fn tx_status(&mut self, now: Nanos, status: &TxStatus<'_>);
    /// An independent copy in the same state (a cell is `Clone`).
    fn clone_box(&self) -> Box<dyn ExternalRateControl>;
}

/// A handle on loaded [`RateControlCode`]: `Copy`, as the other kinds, because the
/// code lives as long as the process (a shared object is never unloaded). Two handles
/// are equal when their code has the same origin.
#[derive(Clone, Copy)]
pub struct ExternalCode(pub &'static dyn RateControlCode);

impl PartialEq for ExternalCode {
    fn eq(&self, other: &Self) -> bool {
        self.0.origin() == other.0.origin()
    }
}

impl Eq for ExternalCode {}

impl std::fmt::Debug for ExternalCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ExternalCode")
            .field(self.0.origin())
            .finish()
    }
}

impl RateControlKind {
    /// Every kind, by the name a scenario gives it.
    pub const NAMES: [(&'static str, RateControlKind); 5] = [
        ("fixed", RateControlKind::Fixed),
        ("ideal", RateControlKind::Ideal),
        ("minstrel_ht", RateControlKind::MinstrelHt(None)),
        (
            "minstrel_ht-5.10",
            RateControlKind::MinstrelHt(Some(MinstrelEra::Linux5_10)),
        ),
        (
            "minstrel_ht-6",
            RateControlKind::MinstrelHt(Some(MinstrelEra::Linux6)),
        ),
    ];

    /// The kind called `name`, or `None`.
    pub fn from_name(name: &str) -> Option<RateControlKind> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, k)| k)
    }

    /// This kind with the era of minstrel_ht made explicit: `stack_era` when none is
    /// named.
    pub fn resolved(self, stack_era: MinstrelEra) -> RateControlKind {
        match self {
            RateControlKind::MinstrelHt(None) => RateControlKind::MinstrelHt(Some(stack_era)),
            k => k,
        }
    }

    /// The name a scenario gives this kind.
    pub fn name(self) -> &'static str {
        if let RateControlKind::External(_) = self {
            return EXTERNAL_MINSTREL_HT;
        }
        Self::NAMES
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("fixed", |&(n, _)| n)
    }
}

/// The two designs of minstrel_ht Linux has run (rate-control.md §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinstrelEra {
    /// Up to 5.10: EWMA statistics and look-around sampling of about 10 % of frames.
    Linux5_10,
    /// 5.11 and later (6.x): the noise filter, and at most one probe per 20 ms from the
    /// INC/JUMP/SLOW lists.
    Linux6,
}

/// What the hardware offers rate control (`struct ieee80211_hw`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HwRateCaps {
    /// Stages of a retry chain the hardware executes (`hw->max_rates`; ath9k 4).
    pub max_rates: u8,
    /// Tries of each stage at most (`hw->max_rate_tries`, "maximum number of tries for
    /// each stage"; ath9k 10, mac80211's default 7 when a driver sets none).
    pub max_rate_tries: u8,
}

impl HwRateCaps {
    /// ath9k (`ath9k_set_hw_capab`): 4 rate slots, 10 tries.
    pub const ATH9K: HwRateCaps = HwRateCaps {
        max_rates: 4,
        max_rate_tries: 10,
    };
}

/// Values kept per rate a link may use, found by the [`RateIdx`] its rate control
/// gives the rate.
#[derive(Clone, Debug)]
pub(crate) struct RateMap<T> {
    /// Per `RateIdx.0`: the position in `entries`, or `u16::MAX` for no entry.
    index_of: Vec<u16>,
    entries: Vec<T>,
}

impl<T> RateMap<T> {
    /// One entry per rate of `rates`, made by `make`.
    pub(crate) fn new(
        rates: &[(RateIdx, TxVector)],
        mut make: impl FnMut(&TxVector) -> T,
    ) -> RateMap<T> {
        let len = rates
            .iter()
            .map(|(r, _)| r.0 as usize + 1)
            .max()
            .unwrap_or(0);
        let mut index_of = vec![u16::MAX; len];
        let mut entries = Vec::with_capacity(rates.len());
        for (r, txv) in rates {
            index_of[r.0 as usize] = entries.len() as u16;
            entries.push(make(txv));
        }
        RateMap { index_of, entries }
    }

    /// The position of `rate` among the entries (the order of the rates given to
    /// [`RateMap::new`]).
    #[inline]
    pub(crate) fn position(&self, rate: RateIdx) -> usize {
        self.index_of[rate.0 as usize] as usize
    }

    /// The entry of `rate` (one of the rates given to [`RateMap::new`]).
    #[inline]
    pub(crate) fn get(&self, rate: RateIdx) -> &T {
        &self.entries[self.position(rate)]
    }

    /// The entry of `rate`, to change.
    #[inline]
    pub(crate) fn get_mut(&mut self, rate: RateIdx) -> &mut T {
        let i = self.position(rate);
        &mut self.entries[i]
    }

    /// Every entry, in the order of the rates given to [`RateMap::new`].
    pub(crate) fn entries(&self) -> &[T] {
        &self.entries
    }
}

/// A station link's rate control as its transmitter runs it: one per link of a
/// node's transmit path.
#[derive(Clone, Debug)]
pub(crate) enum LinkRateControl {
    /// The configured rate. A lone MPDU is retried in place up to the retry limit; an
    /// A-MPDU gets one try and its subframes go back to the driver for software retry
    /// (txop before rate control, kept so that fixed-rate results do not move).
    Fixed {
        /// The rate of every PPDU.
        txv: TxVector,
        /// Tries of a lone MPDU (the cell's retry limit).
        retry_limit: u8,
    },
    /// The best rate for the link's SNR when the PPDU is built, tried as `Fixed` tries.
    Ideal {
        /// The rates the peer supports, `RateIdx(i)` being `candidates[i]`.
        candidates: Vec<TxVector>,
        /// The link's SNR (dB) when it is constant.
        snr_db: f64,
        /// The link's SNR over time, when the channel changes (then it decides).
        channel: Option<LinkChannel>,
        /// Tries of a lone MPDU (the cell's retry limit).
        retry_limit: u8,
    },
    /// minstrel_ht of one kernel era.
    MinstrelHt(Box<MinstrelHt>),
    /// Code loaded from outside the core ([`RateControlKind::External`]).
    External(Box<dyn ExternalRateControl>),
}

impl Clone for Box<dyn ExternalRateControl> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

impl LinkRateControl {
    /// The rates this rate control may put in a chain, with their indices.
    pub(crate) fn rate_set(&self) -> Vec<(RateIdx, TxVector)> {
        match self {
            LinkRateControl::Fixed { txv, .. } => vec![(RateIdx(0), *txv)],
            LinkRateControl::Ideal { candidates, .. } => candidates
                .iter()
                .enumerate()
                .map(|(i, t)| (RateIdx(i as u16), *t))
                .collect(),
            LinkRateControl::MinstrelHt(m) => m.supported_rates(),
            LinkRateControl::External(e) => e.rate_set(),
        }
    }

    /// The chain for the next PPDU, built at `now`; `aggregated` if it is an A-MPDU.
    pub(crate) fn rates(&mut self, now: Nanos, aggregated: bool) -> RateChain {
        // `aggregated` sets fixed-rate tries; minstrel_ht's chains are the same either way.
        match self {
            LinkRateControl::Fixed { txv, retry_limit } => {
                RateChain::single(*txv, RateIdx(0), fixed_tries(aggregated, *retry_limit))
            }
            LinkRateControl::Ideal {
                candidates,
                snr_db,
                channel,
                retry_limit,
            } => {
                let snr = channel.as_ref().map_or(*snr_db, |c| c.snr_db(now));
                let i = ideal_rate(candidates, snr);
                RateChain::single(
                    candidates[i],
                    RateIdx(i as u16),
                    fixed_tries(aggregated, *retry_limit),
                )
            }
            LinkRateControl::MinstrelHt(m) => m.rates(now),
            LinkRateControl::External(e) => e.rates(now),
        }
    }

    /// The hardware's report of one PPDU.
    pub(crate) fn tx_status(&mut self, now: Nanos, status: &TxStatus<'_>) {
        match self {
            LinkRateControl::Fixed { .. } | LinkRateControl::Ideal { .. } => {}
            LinkRateControl::MinstrelHt(m) => m.tx_status(now, status),
            LinkRateControl::External(e) => e.tx_status(now, status),
        }
    }
}

/// Tries of a one-stage chain (fixed and ideal): one for an A-MPDU, whose failed
/// subframes go back to the driver for software retry; the retry limit for a lone MPDU,
/// retried in place.
fn fixed_tries(aggregated: bool, retry_limit: u8) -> u8 {
    if aggregated {
        1
    } else {
        retry_limit
    }
}

/// The position in `candidates` (not empty) of the rate that delivers most at `snr_db`:
/// the highest PHY rate × (1 − PER) of a full-size MPDU (1500 bytes of payload and a
/// QoS data header), the first of equals. Unlike a "PER below 10 %" rule, this takes a
/// faster rate that loses a few frames when it still delivers more, as the best fixed
/// rate does.
pub(crate) fn ideal_rate(candidates: &[TxVector], snr_db: f64) -> usize {
    let model = ErrorModel::Snr { snr_db };
    let mpdu_bytes = RATE_SELECTION_FRAME_BYTES + QOS_DATA_OVERHEAD_BYTES;
    let mut best = (0, f64::MIN);
    for (i, c) in candidates.iter().enumerate() {
        let delivered = c.data_rate_bps() as f64 * (1.0 - model.per(c, mpdu_bytes));
        if delivered > best.1 {
            best = (i, delivered);
        }
    }
    best.0
}

/// An SNR (dB) at which `txv` is the rate that delivers most among the rates of its
/// peer (`peer_rates`, judged as `ideal_rate` judges) and loses at most 10 % of
/// full-size MPDUs: the middle of that SNR range (on a 0.1 dB grid from −10 to 60 dB),
/// or 3 dB into it for the fastest rate, whose range has no top. `None` if it never wins. What "a station at MCS 1"
/// means once a rate control chooses: a station whose channel makes MCS 1 the best.
pub fn snr_where_best(txv: &TxVector) -> Option<f64> {
    let candidates = peer_rates(txv);
    let me = candidates.iter().position(|c| c == txv)?;
    let grid = (-100..=600).map(|k| f64::from(k) / 10.0);
    let mpdu_bytes = RATE_SELECTION_FRAME_BYTES + QOS_DATA_OVERHEAD_BYTES;
    // Where it wins and gets through: below its threshold the slowest rate "wins" with
    // next to nothing delivered.
    let wins: Vec<f64> = grid
        .filter(|&snr| {
            ideal_rate(&candidates, snr) == me
                && ErrorModel::Snr { snr_db: snr }.per(txv, mpdu_bytes) <= 0.1
        })
        .collect();
    let (lo, hi) = (*wins.first()?, *wins.last()?);
    Some(if hi >= 60.0 {
        lo + 3.0
    } else {
        (lo + hi) / 2.0
    })
}

/// The rates a peer configured at `txv` supports, slowest first: the same family,
/// width and guard interval, up to its streams (HT MCS 0 to `8·nss − 1`; VHT MCS 0–9
/// valid for each stream count up to `nss`; HE-MCS 0–11 for each stream count up to
/// `nss` with the peer's GI, HE-LTF, PPDU format and packet padding (HE-MCS 0–2 for an
/// ER SU peer); the eight OFDM rates; the four DSSS/CCK rates, 1 Mbit/s with the long
/// preamble).
pub(crate) fn peer_rates(txv: &TxVector) -> Vec<TxVector> {
    match *txv {
        TxVector::Dsss { preamble, .. } => [1000, 2000, 5500, 11000]
            .map(|r| TxVector::Dsss {
                rate_kbps: r,
                preamble: if r == 1000 {
                    DsssPreamble::Long
                } else {
                    preamble
                },
            })
            .to_vec(),
        TxVector::Ofdm { .. } => [6, 9, 12, 18, 24, 36, 48, 54]
            .map(|r| TxVector::Ofdm { rate_mbps: r })
            .to_vec(),
        TxVector::Ht { mcs, width, gi } => (0..8 * (mcs / 8 + 1))
            .map(|m| TxVector::Ht { mcs: m, width, gi })
            .collect(),
        TxVector::Vht { nss, width, gi, .. } => (1..=nss.max(1))
            .flat_map(|n| {
                (0..10u8).map(move |m| TxVector::Vht {
                    mcs: m,
                    nss: n,
                    width,
                    gi,
                })
            })
            .filter(|t| t.validate().is_ok())
            .collect(),
        TxVector::He {
            nss,
            width,
            gi,
            ltf,
            format,
            pe,
            ..
        } => (1..=nss.max(1))
            .flat_map(|n| {
                (0..=crate::phy::he::HE_MAX_MCS).map(move |m| TxVector::He {
                    mcs: m,
                    nss: n,
                    width,
                    gi,
                    ltf,
                    format,
                    pe,
                })
            })
            .filter(|t| t.validate().is_ok())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::{ChannelWidth, GuardInterval};

    /// At the SNR `snr_where_best` gives, the rate is the one that delivers most, and
    /// the SNRs rise with the MCS.
    #[test]
    fn each_mcs_has_an_snr_where_it_is_best() {
        let ht = |mcs| TxVector::Ht {
            mcs,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long,
        };
        let mut last = f64::MIN;
        for mcs in 0..8 {
            let snr = snr_where_best(&ht(mcs)).expect("every MCS wins somewhere");
            eprintln!("MCS {mcs}: {snr:.1} dB");
            let c = peer_rates(&ht(mcs));
            assert_eq!(c[ideal_rate(&c, snr)], ht(mcs), "MCS {mcs} at {snr} dB");
            let per = ErrorModel::Snr { snr_db: snr }.per(&ht(mcs), 1538);
            assert!(per <= 0.1, "MCS {mcs} loses {per} at {snr} dB");
            assert!(snr > last, "MCS {mcs}: {snr} dB after {last}");
            last = snr;
        }
        let ofdm = TxVector::Ofdm { rate_mbps: 24 };
        let snr = snr_where_best(&ofdm).unwrap();
        let c = peer_rates(&ofdm);
        assert_eq!(c[ideal_rate(&c, snr)], ofdm);
    }
}
