//! minstrel_ht, the rate control mac80211 runs for drivers that leave rate control to
//! the host (`net/mac80211/rc80211_minstrel_ht.c`), as a pure, clock-free unit: one
//! [`MinstrelHt`] per station link, driven by the PPDUs the driver builds
//! ([`MinstrelHt::rates`]) and the transmit status the hardware reports
//! ([`MinstrelHt::tx_status`]). Time only enters through the `now` those calls carry;
//! statistics are updated from tx status, as in the kernel (no timer), so they only
//! move while traffic flows.
//!
//! Both designs Linux has run (rate-control.md §1), chosen by [`MinstrelEra`]:
//!
//! * **6.x** ([`MinstrelEra::Linux6`], ≥ 5.11): the 2nd-order noise filter over the
//!   success ratio every 50 ms, untried rates inheriting the best probability of the
//!   faster rates of their group, at most one probe per 20 ms from the INC/JUMP/SLOW
//!   lists (`sample.rs`).
//! * **≤ 5.10** ([`MinstrelEra::Linux5_10`]): the 75 % EWMA every 50 ms and look-around
//!   sampling from a random sample table (`sample_legacy.rs`), with the old three-stage
//!   chain.
//!
//! Shared by both: the rate groups and the average-MPDU airtime table (`groups.rs`), the
//! throughput metric and the choice of `max_tp_rate[0..3]` and `max_prob_rate`
//! (`select.rs`), sudden death, and the retry chain with per-stage tries (`chain.rs`).
//!
//! Where txop departs from the kernel:
//!
//! * The random sample table is per station, drawn from the seed given to
//!   [`MinstrelHt::new`] (the kernel has one table per module, drawn at load time).
//! * [`MinstrelEra::Linux5_10`] is the EWMA design of ≤ 5.4, as the reference and ns-3
//!   describe the pre-5.11 algorithm. Kernels 5.5–5.10 already defaulted to the noise
//!   filter (`new_avg`, Sept. 2019) and then updated every 25 ms on multi-rate-retry
//!   hardware; that hybrid is not modelled. Non-HT peers, which ≤ 5.10 handed to the
//!   legacy `minstrel` (its own 10 %-of-frames look-around), run this unit's CCK/OFDM
//!   groups instead, and the 5.1–5.10 "sample switch" for hardware with one rate slot
//!   is not modelled (look-around with the single-slot restrictions instead).
//! * Probes: as in `rate_control_fill_sta_table`, the probe takes the first slot of
//!   the chain with one try and the later stages come from the rate table's slots 1…
//!   (so a probe chain is `[sample, max_tp1, max_tp2, max_prob]`, not the sample
//!   ahead of the whole normal chain).
//! * Tries: a stage below 20 % probability gets 2 tries, including below 10 % (the
//!   kernel's `minstrel_calc_retransmit` sets 1 but `minstrel_ht_set_rate` overrides
//!   it), and `hw->max_rate_tries` caps each stage, not the chain
//!   (`include/net/mac80211.h`: "maximum number of tries for each stage").
//! * Sampling shares: ≤ 5.10's look-around samples one PPDU in `17 + 2 · avg_ampdu_len`
//!   (2 % with A-MPDUs of 16, about 5 % without aggregation); the "10 % of frames" the
//!   reference quotes is the legacy `minstrel`'s `lookaround_rate_mrr` (and ns-3's
//!   attribute for it). 6.x probes once per 20 ms and once more right after each
//!   statistics update (the kernel resets `sample_time` there): up to 3 per 51 ms.

mod chain;
mod groups;
mod sample;
mod sample_legacy;
mod select;
mod stats;

use crate::mac80211::rate_chain::{RateChain, RateIdx, RateStage, TxStatus, MAX_RATE_STAGES};
use crate::mac80211::rate_control::{HwRateCaps, MinstrelEra};
use crate::phy::{Band, ChannelWidth, Standard, TxVector};
use crate::rng::{RngStream, StreamKind};
use crate::time::Nanos;
use groups::{AirtimeTable, GROUP_RATES, N_GROUPS};
use sample::SampleLists;
use sample_legacy::Lookaround;
use stats::RateStats;

/// Statistics interval: `HZ / 20` in 6.x; `HZ / 10` halved in tx status in ≤ 5.10
/// (rate-control.md §1). 50 ms either way.
pub const STATS_INTERVAL: Nanos = Nanos::from_ms(50);
/// Shortest time between two probes in 6.x (`MINSTREL_SAMPLE_INTERVAL`, `HZ / 50`).
/// Every statistics update also allows the next frame to probe at once.
pub const SAMPLE_INTERVAL: Nanos = Nanos::from_ms(20);
/// Tries per stage when the hardware registers no `max_rate_tries` (mac80211's
/// default in `minstrel_ht_alloc`).
pub const DEFAULT_MAX_RATE_TRIES: u8 = 7;
/// Number of best-throughput rates kept (`MAX_THR_RATES`).
const MAX_THR_RATES: usize = 4;
/// Key of the sample-table stream within [`StreamKind::Misc`] ("mins").
const SAMPLE_TABLE_STREAM: u64 = 0x6d69_6e73;
/// Columns of the random sample table (`SAMPLE_COLUMNS`).
const SAMPLE_COLUMNS: usize = 10;

/// What a peer and its BSS support, as far as rate control needs it (what
/// `minstrel_ht_update_caps` reads from `ieee80211_sta`'s HT/VHT capabilities and the
/// BSS configuration).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerCaps {
    /// The PHY standard the link runs: b → the CCK group; a → OFDM; g → CCK and
    /// OFDM; n → HT (and CCK in 2.4 GHz); ac → VHT only.
    pub standard: Standard,
    /// The band: CCK rates exist only in 2.4 GHz; the legacy ACK overhead is at
    /// 1 Mbit/s in 2.4 GHz and 6 Mbit/s in 5 GHz.
    pub band: Band,
    /// The widest channel the peer receives on: groups up to this width (HT at most
    /// 40 MHz; legacy always 20 MHz).
    pub width: ChannelWidth,
    /// The peer receives short-GI HT/VHT frames: adds the short-GI groups.
    pub sgi: bool,
    /// Spatial streams the peer receives (1 or 2; txop's PHY has at most 2).
    pub max_nss: u8,
    /// The BSS uses the short DSSS preamble: CCK rates above 1 Mbit/s go out with it.
    pub short_preamble: bool,
}

/// minstrel's record of one rate (`struct minstrel_rate_stats`), as
/// [`MinstrelHt::rate_counters`] reports it. Probabilities are fixed point, 4096 = 100 %.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateCounters {
    /// MPDU attempts in the current statistics interval.
    pub attempts: u32,
    /// MPDUs acknowledged in the current interval.
    pub success: u32,
    /// `attempts` of the previous interval.
    pub last_attempts: u32,
    /// `success` of the previous interval.
    pub last_success: u32,
    /// All attempts since the station was set up.
    pub att_hist: u64,
    /// All successes since the station was set up.
    pub succ_hist: u64,
    /// The averaged success probability (`prob_avg`).
    pub prob_avg: u16,
    /// The noise filter's previous output (`prob_avg_1`, 6.x).
    pub prob_avg_1: u16,
    /// Tries of a chain stage at this rate without RTS/CTS (`retry_count`).
    pub retry_count: u8,
    /// Tries with RTS/CTS (`retry_count_rtscts`).
    pub retry_count_rtscts: u8,
    /// `retry_count` is up to date for this interval (`retry_updated`).
    pub retry_updated: bool,
}

/// Per-group state (`struct minstrel_mcs_group_data`).
#[derive(Clone, Copy, Debug, Default)]
struct GroupData {
    /// Position in the sample table (row of the table) for this group's draws.
    index: u8,
    /// Column of the sample table this group draws from.
    column: u8,
    /// The group's best-throughput rates (`max_group_tp_rate`).
    max_group_tp_rate: [u16; MAX_THR_RATES],
    /// The group's most robust rate (`max_group_prob_rate`).
    max_group_prob_rate: u16,
    /// Statistics of each rate.
    rates: [RateStats; GROUP_RATES],
}

/// minstrel_ht for one station link: chooses the retry chain of every PPDU and learns
/// from its transmit status (`struct minstrel_ht_sta`).
#[derive(Clone, Debug)]
pub struct MinstrelHt {
    era: MinstrelEra,
    /// Rate slots used (`min(hw->max_rates, 4)`, at least 1).
    max_rates: u8,
    /// Tries at most per stage (`mp->max_retry`).
    max_retry: u8,
    /// The peer is an HT (or VHT) station (`sta->ht_cap.ht_supported`).
    ht_supported: bool,
    short_preamble: bool,
    supported: [u16; N_GROUPS],
    airtime: AirtimeTable,
    /// Per-A-MPDU overheads in µs (`mi->overhead*`): a 0-byte frame and an ACK at
    /// 6 Mbit/s; with RTS/CTS two more ACK durations; legacy ones at the lowest rate.
    overhead_us: u32,
    overhead_rtscts_us: u32,
    overhead_legacy_us: u32,
    overhead_legacy_rtscts_us: u32,
    groups: [GroupData; N_GROUPS],
    max_tp_rate: [u16; MAX_THR_RATES],
    max_prob_rate: u16,
    /// Average A-MPDU length, fixed point (`avg_ampdu_len`).
    avg_ampdu_len: i32,
    /// MPDUs and PPDUs reported since the last statistics update.
    ampdu_len_sum: u32,
    ampdu_packets: u32,
    last_stats_update: Nanos,
    /// The rate table (`sta->rates`), rebuilt whenever the choice changes.
    table: RateChain,
    /// Random permutations of 0..10 (`sample_table[SAMPLE_COLUMNS][MCS_GROUP_RATES]`).
    sample_table: [[u8; GROUP_RATES]; SAMPLE_COLUMNS],
    /// 6.x probing state.
    sample: SampleLists,
    /// ≤ 5.10 look-around state.
    lookaround: Lookaround,
}

impl MinstrelHt {
    /// Rate control for a link to a peer with `caps`, on hardware `hw`, in the design
    /// of `era`. `seed` draws the per-station random sample table (callers give each
    /// link its own seed). Sets up as `minstrel_ht_update_caps`: overheads, supported
    /// rates, a first statistics update (every rate untried) and the initial rate
    /// table at the lowest rates. The link's history starts at time 0.
    pub fn new(era: MinstrelEra, caps: &PeerCaps, hw: HwRateCaps, seed: u64) -> MinstrelHt {
        let supported = groups::supported_rates(caps);
        let ht_supported = matches!(caps.standard, Standard::N | Standard::Ac);
        // `mi->overhead`: a 0-byte frame and a 10-byte ACK, both at 6 Mbit/s (OFDM).
        let ack_us = groups::frame_duration_us(caps.band, 10, 60, true, true);
        let overhead_us = groups::frame_duration_us(caps.band, 0, 60, true, true) + ack_us;
        // `mi->overhead_legacy`: an ACK at the peer's lowest rate (1 Mbit/s DSSS in
        // 2.4 GHz, 6 Mbit/s OFDM in 5 GHz).
        let (ctl_rate, erp) = match caps.band {
            Band::Ghz2_4 => (10, false),
            Band::Ghz5 => (60, true),
        };
        let legacy_ack_us = groups::frame_duration_us(caps.band, 10, ctl_rate, erp, true);
        let max_rates = hw.max_rates.clamp(1, MAX_RATE_STAGES as u8);
        let max_retry = if hw.max_rate_tries > 0 {
            hw.max_rate_tries
        } else {
            DEFAULT_MAX_RATE_TRIES
        };
        let mut rng = RngStream::new(seed, StreamKind::Misc, SAMPLE_TABLE_STREAM);
        let mut sample_table = [[0u8; GROUP_RATES]; SAMPLE_COLUMNS];
        for column in &mut sample_table {
            *column = sample::random_permutation(&mut rng);
        }
        let placeholder = RateChain::single(TxVector::Ofdm { rate_mbps: 6 }, RateIdx(0), 1);
        let mut mi = MinstrelHt {
            era,
            max_rates,
            max_retry,
            ht_supported,
            short_preamble: caps.short_preamble,
            supported,
            airtime: AirtimeTable::new(era),
            overhead_us,
            overhead_rtscts_us: overhead_us + 2 * ack_us,
            overhead_legacy_us: legacy_ack_us,
            overhead_legacy_rtscts_us: 3 * legacy_ack_us,
            groups: [GroupData::default(); N_GROUPS],
            max_tp_rate: [0; MAX_THR_RATES],
            max_prob_rate: 0,
            avg_ampdu_len: stats::frac(1, 1) as i32,
            ampdu_len_sum: 0,
            ampdu_packets: 0,
            last_stats_update: Nanos::ZERO,
            table: placeholder,
            sample_table,
            sample: SampleLists::default(),
            lookaround: Lookaround::new(max_rates),
        };
        // ≤ 5.10 keeps `max_prob_rate` from one update to the next, so it must start at
        // a rate the peer supports (the group's first, as the throughput lists start),
        // not at index 0, which is an HT rate a legacy peer cannot receive.
        mi.max_prob_rate = mi.initial_indices().1;
        mi.update_stats(Nanos::ZERO);
        mi.update_rates();
        mi
    }

    /// The retry chain for the next PPDU, built at `now` (`minstrel_ht_get_rate` and
    /// `rate_control_fill_sta_table`). Normally the rate table: 6.x
    /// `[max_tp0, max_tp1, max_tp2, max_prob]`, ≤ 5.10 `[max_tp0, max_tp1, max_prob]`,
    /// cut to the hardware's rate slots, RTS/CTS on every stage after the first. When
    /// minstrel wants to probe, the first stage is instead one try at the sample rate
    /// and `probe` is set.
    pub fn rates(&mut self, now: Nanos) -> RateChain {
        let sample = match self.era {
            MinstrelEra::Linux6 => self.next_probe_6(now),
            MinstrelEra::Linux5_10 => self.next_probe_lookaround(),
        };
        match sample {
            Some(rate) => self.probe_chain(rate),
            None => self.table,
        }
    }

    /// Learns from the hardware's report on one PPDU at `now` (`minstrel_ht_tx_status`):
    /// every stage adds `tries · ampdu_len` attempts to its rate and the last stage
    /// tried adds `ampdu_ack_len` successes; sudden death replaces a collapsing
    /// `max_tp_rate[0]`/`[1]` at once; once more than [`STATS_INTERVAL`] has passed
    /// since the last update the statistics are updated and the rate table rebuilt.
    pub fn tx_status(&mut self, now: Nanos, status: &TxStatus<'_>) {
        let ampdu_len = u32::from(status.ampdu_len.max(1));
        let ack_len = u32::from(status.ampdu_ack_len).min(ampdu_len);
        if self.era == MinstrelEra::Linux5_10 {
            self.lookaround_on_status();
        }
        self.ampdu_packets += 1;
        self.ampdu_len_sum = self.ampdu_len_sum.saturating_add(ampdu_len);

        let chain = status.chain;
        let tries = chain.tries_per_stage(status.tries_used);
        let stages = chain.stages();
        // The kernel walks the reported stages until the first one that is unused or
        // not one of its rates; that last valid stage carries the successes.
        let n_valid = stages
            .iter()
            .zip(tries)
            .take_while(|(s, t)| *t > 0 && self.is_supported(s.rate.0))
            .count();
        for (i, (stage, t)) in stages.iter().zip(tries).take(n_valid).enumerate() {
            let mrs = self.stats_mut(stage.rate.0);
            mrs.attempts = mrs.attempts.saturating_add(u32::from(t) * ampdu_len);
            if i + 1 == n_valid {
                mrs.success = mrs.success.saturating_add(ack_len);
            }
        }

        let mut update = false;
        if self.max_rates > 1 {
            update |= self.sudden_death();
        }
        if now > self.last_stats_update + STATS_INTERVAL {
            update = true;
            self.update_stats(now);
        }
        if update {
            self.update_rates();
        }
    }

    /// minstrel's expected throughput at `max_tp_rate[0]` in kbit/s
    /// (`minstrel_ht_get_expected_throughput`: the throughput metric in packets per
    /// 100 ms, times 10, times 1200 · 8 bits, over 1024).
    pub fn expected_throughput_kbps(&self) -> u32 {
        let rate = self.max_tp_rate[0];
        let tp = self.tp_avg(rate, self.prob(rate));
        tp * 10 * groups::AVG_PKT_SIZE_BYTES * 8 / 1024
    }

    /// The current best-throughput rate, `max_tp_rate[0]`.
    pub fn max_tp_rate(&self) -> TxVector {
        self.txv(self.max_tp_rate[0])
    }

    /// The four best-throughput rates, best first, in minstrel's numbering.
    pub fn max_tp_rates(&self) -> [RateIdx; MAX_THR_RATES] {
        self.max_tp_rate.map(RateIdx)
    }

    /// The current most robust rate, `max_prob_rate`.
    pub fn max_prob_rate(&self) -> TxVector {
        self.txv(self.max_prob_rate)
    }

    /// The chain a PPDU gets when minstrel does not probe (`sta->rates`).
    pub fn rate_table(&self) -> &RateChain {
        &self.table
    }

    /// The design this instance runs.
    pub fn era(&self) -> MinstrelEra {
        self.era
    }

    /// The transmission rate of `rate` in minstrel's numbering, if the peer supports
    /// it.
    pub fn txvector(&self, rate: RateIdx) -> Option<TxVector> {
        self.is_supported(rate.0)
            .then(|| groups::txvector(groups::rate_group(rate.0), groups::rate_index(rate.0)))
            .flatten()
    }

    /// Every rate the peer supports, with its number, group by group (slowest group
    /// kinds first as minstrel numbers them).
    pub fn supported_rates(&self) -> Vec<(RateIdx, TxVector)> {
        (0..N_GROUPS)
            .flat_map(|g| (0..GROUP_RATES).map(move |i| (g, i)))
            .filter_map(|(g, i)| {
                let r = RateIdx((g << 4 | i) as u16);
                self.txvector(r).map(|t| (r, t))
            })
            .collect()
    }

    /// `txv` in minstrel's numbering, if the peer supports it.
    pub fn rate_idx(&self, txv: &TxVector) -> Option<RateIdx> {
        groups::rate_of(txv)
            .filter(|&r| self.is_supported(r))
            .map(RateIdx)
    }

    /// minstrel's averaged success probability of `rate` (0 to 1), if the peer
    /// supports it.
    pub fn prob_avg(&self, rate: RateIdx) -> Option<f64> {
        self.is_supported(rate.0)
            .then(|| f64::from(self.prob(rate.0)) / f64::from(1u32 << stats::SCALE))
    }

    /// The average-MPDU airtime of `rate` in ns (the kernel's table, low bits
    /// cleared), if the peer supports it.
    pub fn airtime_ns(&self, rate: RateIdx) -> Option<u32> {
        self.is_supported(rate.0)
            .then(|| self.airtime.duration_ns(rate.0))
    }

    /// The average A-MPDU length minstrel assumes (`minstrel_ht_avg_ampdu_len`).
    pub fn avg_ampdu_len(&self) -> u32 {
        self.avg_ampdu_len_mpdus()
    }

    /// The counters and estimates minstrel keeps for `rate`
    /// (`struct minstrel_rate_stats`), if the peer supports it: what the kernel-oracle
    /// harness compares with the kernel's own code.
    pub fn rate_counters(&self, rate: RateIdx) -> Option<RateCounters> {
        self.is_supported(rate.0).then(|| {
            let s = self.stats(rate.0);
            RateCounters {
                attempts: s.attempts,
                success: s.success,
                last_attempts: s.last_attempts,
                last_success: s.last_success,
                att_hist: s.att_hist,
                succ_hist: s.succ_hist,
                prob_avg: s.prob_avg,
                prob_avg_1: s.prob_avg_1,
                retry_count: s.retry_count,
                retry_count_rtscts: s.retry_count_rtscts,
                retry_updated: s.retry_updated,
            }
        })
    }

    /// The random sample table this station draws from (`sample_table[column][i]`,
    /// a permutation of 0..10 per column): the kernel-oracle harness installs it in
    /// the kernel's code, whose module-wide table is drawn differently.
    pub fn sample_table(&self) -> [[u8; GROUP_RATES]; SAMPLE_COLUMNS] {
        self.sample_table
    }

    /// The fixed-point average A-MPDU length (`mi->avg_ampdu_len`, 4096 = 1 MPDU).
    pub fn avg_ampdu_len_frac(&self) -> i32 {
        self.avg_ampdu_len
    }

    // ---- helpers shared by the submodules ----

    fn is_supported(&self, rate: u16) -> bool {
        let (g, i) = (groups::rate_group(rate), groups::rate_index(rate));
        g < N_GROUPS && self.supported[g] & (1 << i) != 0
    }

    #[inline]
    fn stats(&self, rate: u16) -> &RateStats {
        &self.groups[groups::rate_group(rate)].rates[groups::rate_index(rate)]
    }

    #[inline]
    fn stats_mut(&mut self, rate: u16) -> &mut RateStats {
        &mut self.groups[groups::rate_group(rate)].rates[groups::rate_index(rate)]
    }

    #[inline]
    fn prob(&self, rate: u16) -> u32 {
        u32::from(self.stats(rate).prob_avg)
    }

    #[inline]
    fn duration_ns(&self, rate: u16) -> u32 {
        self.airtime.duration_ns(rate)
    }

    fn txv(&self, rate: u16) -> TxVector {
        groups::txvector(groups::rate_group(rate), groups::rate_index(rate))
            .unwrap_or(TxVector::Ofdm { rate_mbps: 6 })
    }

    /// `minstrel_ht_avg_ampdu_len`: the EWMA's integer part (6.x), or 16 when there is
    /// none yet in ≤ 5.10. (6.x guesses from `max_tp_rate[0]`'s duration only on
    /// hardware without A-MPDU length status, which txop's tx status always has.)
    fn avg_ampdu_len_mpdus(&self) -> u32 {
        if self.avg_ampdu_len <= 0 {
            return match self.era {
                MinstrelEra::Linux5_10 => groups::AVG_AMPDU_SIZE,
                MinstrelEra::Linux6 => 1,
            };
        }
        stats::trunc(self.avg_ampdu_len as u32).max(1)
    }

    /// The chain of a probe at `rate`: one try at it, no RTS/CTS, then the rate
    /// table's stages after the first.
    fn probe_chain(&self, rate: u16) -> RateChain {
        let mut stages = [*self.table.first(); MAX_RATE_STAGES];
        stages[0] = RateStage {
            txv: self.txv(rate),
            rate: RateIdx(rate),
            tries: 1,
            rts: false,
        };
        let rest = &self.table.stages()[1..];
        stages[1..=rest.len()].copy_from_slice(rest);
        RateChain::from_stages(&stages[..=rest.len()], true).unwrap_or(self.table)
    }

    /// `minstrel_ht_get_rate`'s CCK check: a CCK sample is only sent when its preamble
    /// is the one the BSS uses.
    fn cck_preamble_mismatch(&self, rate: u16) -> bool {
        groups::rate_group(rate) == groups::CCK_GROUP
            && (groups::rate_index(rate) >= 4) != self.short_preamble
    }
}
