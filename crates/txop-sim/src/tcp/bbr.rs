//! BBR v1 congestion control as Linux implements it (`net/ipv4/tcp_bbr.c`, mainline
//! 4.9 → 6.x: Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue
//! 2016; draft-cardwell-iccrg-bbr-congestion-control-00).
//!
//! BBR models the path by two numbers and paces at their product:
//!
//! - **BtlBw**, the windowed maximum of the delivery-rate samples ([`super::rate`])
//!   over the last 10 round trips (`bbr_bw_rtts` = CYCLE_LEN + 2), rounds counted by
//!   delivered data (a round ends when a segment sent after its start is delivered).
//!   Application-limited samples enter the filter only if they raise it.
//! - **RTprop**, the minimum RTT over 10 s (`bbr_min_rtt_win_sec`).
//!
//! The pacing rate is `pacing_gain × BtlBw × 0.99` (`bbr_pacing_margin_percent`), the
//! congestion window `cwnd_gain × BtlBw × RTprop` plus the quantisation budget and the
//! ACK-aggregation allowance. Four modes set the gains:
//!
//! - **STARTUP**: both gains 2/ln 2 ≈ 2.885 (`bbr_high_gain`), until the bandwidth
//!   filter has not grown by 25 % in 3 non-app-limited rounds (`bbr_full_bw_thresh`,
//!   `bbr_full_bw_cnt`);
//! - **DRAIN**: pacing gain 1/2.885 until the data in the network is down to one BDP;
//! - **PROBE_BW**: cwnd gain 2, pacing gain cycling over [1.25, 0.75, 1, 1, 1, 1, 1, 1]
//!   with phases of one RTprop (the 1.25 phase lasts until inflight reaches 1.25 BDP
//!   or there is loss, the 0.75 phase ends early once inflight is down to 1 BDP),
//!   starting at a random phase other than 0.75;
//! - **PROBE_RTT**: when RTprop has not been refreshed for 10 s, cwnd is capped at 4
//!   segments (`bbr_cwnd_min_target`) for max(200 ms, one round) to drain the queue
//!   and measure the propagation delay, then the previous mode resumes.
//!
//! Loss does not reduce the model: on the first round of fast recovery the window is
//! packet-conserving, then it grows back towards the target, and the window before
//! recovery is restored when it ends (`bbr_set_cwnd_to_recover_or_restore`). The
//! long-term (policer) estimator (`bbr_lt_bw_sampling`) switches to the average rate
//! of two consecutive lossy (≥ 20 % loss) intervals of consistent rate.
//!
//! The arithmetic is Linux's: bandwidth in segments per µs << 24 (`BW_SCALE`), gains in
//! 1/256 (`BBR_UNIT`), RTTs in µs.
//!
//! Simplifications, each marked where it applies:
//! - `bbr_tso_segs_goal` is computed as Linux does (pacing rate >> `sk_pacing_shift`
//!   10, at least `bbr_min_tso_segs`: 1 below 1.2 Mbit/s, else 2), so the window
//!   budget matches a Linux host with TSO; the simulated sender still emits one
//!   segment at a time (no TSO/GSO bursts).
//! - `rs->is_ack_delayed` (the lone-runt-segment heuristic of `tcp_clean_rtx_queue`)
//!   is always false.
//! - The random initial PROBE_BW phase (`get_random_u32_below(7)`) comes from a
//!   SplitMix64 stream seeded from the connection's start time, so runs are
//!   reproducible.
//! - No `undo_cwnd` (the sender does not undo spurious recoveries).

use super::cc::{ConnInfo, Window};
use super::rate::RateSample;
use super::sender::CaState;
use super::TCP_INIT_CWND;
use txop_core::rng::mix64;
use txop_core::Nanos;

/// Bandwidth scale: segments per µs << 24 (`BW_SCALE`).
const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gain scale (`BBR_SCALE`): gains are in 1/256.
const BBR_SCALE: u32 = 8;
/// A gain of 1.0 (`BBR_UNIT`).
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// Phases of the PROBE_BW gain cycle (`CYCLE_LEN`).
pub const CYCLE_LEN: usize = 8;
/// Window of the bandwidth filter in rounds (`bbr_bw_rtts`).
pub const BW_FILTER_ROUNDS: u64 = CYCLE_LEN as u64 + 2;
/// Window of the min-RTT filter (`bbr_min_rtt_win_sec`).
pub const MIN_RTT_WINDOW: Nanos = Nanos::from_secs(10);
/// Minimum time at 4 segments in PROBE_RTT (`bbr_probe_rtt_mode_ms`).
pub const PROBE_RTT_DURATION: Nanos = Nanos::from_ms(200);
/// Below this pacing rate one segment per TSO burst (`bbr_min_tso_rate`, bit/s).
const MIN_TSO_RATE_BPS: u64 = 1_200_000;
/// Pace 1 % below the estimated bandwidth (`bbr_pacing_margin_percent`).
pub const PACING_MARGIN_PERCENT: u64 = 1;
/// 2/ln 2 (`bbr_high_gain` = 256 × 2885 / 1000 + 1 = 739).
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// 1/2.885 (`bbr_drain_gain` = 88).
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// Steady-state cwnd gain (`bbr_cwnd_gain`).
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// PROBE_BW pacing gains (`bbr_pacing_gain`).
pub const PACING_GAIN_CYCLE: [u32; CYCLE_LEN] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// The initial phase is drawn over this many phases (`bbr_cycle_rand`).
const CYCLE_RAND: u64 = 7;
/// Smallest cwnd, and PROBE_RTT's (`bbr_cwnd_min_target`).
pub const CWND_MIN_TARGET: u32 = 4;
/// Growth that counts as "more bandwidth" in STARTUP (`bbr_full_bw_thresh`, 1.25).
const FULL_BW_THRESH: u64 = BBR_UNIT as u64 * 5 / 4;
/// Rounds without such growth before the pipe is full (`bbr_full_bw_cnt`).
pub const FULL_BW_ROUNDS: u32 = 3;
/// Long-term estimator: minimum rounds per interval (`bbr_lt_intvl_min_rtts`).
const LT_INTVL_MIN_RTTS: u32 = 4;
/// Long-term estimator: lossy interval at ≥ 50/256 ≈ 20 % loss (`bbr_lt_loss_thresh`).
const LT_LOSS_THRESH: u64 = 50;
/// Long-term estimator: consistent rates within 1/8 (`bbr_lt_bw_ratio`).
const LT_BW_RATIO: u64 = BBR_UNIT as u64 / 8;
/// Long-term estimator: or within 4 kbit/s (`bbr_lt_bw_diff`, bytes/s).
const LT_BW_DIFF: u64 = 4000 / 8;
/// Long-term estimator: use lt_bw for this many rounds (`bbr_lt_bw_max_rtts`).
const LT_BW_MAX_RTTS: u32 = 48;
/// Gain of the ACK-aggregation allowance (`bbr_extra_acked_gain`).
const EXTRA_ACKED_GAIN: u64 = BBR_UNIT as u64;
/// Rounds per half of the extra-acked filter (`bbr_extra_acked_win_rtts`).
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// Reset the aggregation epoch after this many ACKed segments
/// (`bbr_ack_epoch_acked_reset_thresh`).
const ACK_EPOCH_ACKED_RESET: u32 = 1 << 20;
/// Cap of the aggregation allowance, as time at BtlBw (`bbr_extra_acked_max_us`).
const EXTRA_ACKED_MAX_US: u64 = 100_000;
/// `sk_pacing_shift` default: TSO bursts of about 1 ms at the pacing rate.
const PACING_SHIFT: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER`.
const GSO_MAX_BYTES: u64 = 65536 - 1 - 320;

/// BBR's mode (`enum bbr_mode`): defined with the results that report it, each step's
/// modes in `bbr_mode_series`.
pub use txop_results::flowstats::BbrMode;

/// BBR's model, for stats (what `bbr_get_info` reports, and more).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BbrInfo {
    pub mode: BbrMode,
    /// Estimated bottleneck bandwidth (BtlBw, or lt_bw when policed), payload bytes/s.
    pub bw_bytes_per_s: u64,
    /// RTprop, once measured.
    pub min_rtt: Option<Nanos>,
    /// Pacing and cwnd gains in 1/256.
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
    /// PROBE_BW phase (index into `PACING_GAIN_CYCLE`).
    pub cycle_idx: usize,
    /// STARTUP found the pipe full.
    pub full_bw_reached: bool,
    /// Rounds counted (`rtt_cnt`).
    pub rounds: u64,
    /// Entries into PROBE_RTT.
    pub probe_rtt_entries: u64,
    /// The long-term (policer) rate is in use.
    pub lt_use_bw: bool,
}

/// One sample of a windowed max filter (`struct minmax_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MinMaxSample {
    t: u64,
    v: u64,
}

/// Kathleen Nichols' windowed max filter over the best three samples (`lib/minmax.c`,
/// `minmax_running_max`), windowed in rounds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MaxFilter {
    s: [MinMaxSample; 3],
}

impl MaxFilter {
    fn get(&self) -> u64 {
        self.s[0].v
    }

    fn reset(&mut self, t: u64, v: u64) -> u64 {
        self.s = [MinMaxSample { t, v }; 3];
        v
    }

    fn running_max(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = MinMaxSample { t, v };
        if v >= self.s[0].v || t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        // minmax_subwin_update
        let dt = t.wrapping_sub(self.s[0].t);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }
}

/// The state of one BBR connection (`struct bbr`).
#[derive(Clone, Debug)]
pub struct Bbr {
    mss: u32,
    mode: BbrMode,
    /// Max filter of delivery-rate samples (segments/µs << 24), windowed in rounds.
    bw: MaxFilter,
    /// Rounds so far (`rtt_cnt`).
    rtt_cnt: u64,
    /// `tp->delivered` at which the next round starts.
    next_rtt_delivered: u64,
    /// Start of the current PROBE_BW phase (a `delivered_mstamp`).
    cycle_mstamp: Nanos,
    cycle_idx: usize,
    /// RTprop in µs; `u32::MAX` before the first sample.
    min_rtt_us: u32,
    min_rtt_stamp: Nanos,
    /// End of the 200 ms at 4 segments, once inflight got there.
    probe_rtt_done_stamp: Option<Nanos>,
    probe_rtt_round_done: bool,
    /// Modes entered since [`Bbr::take_entered`] last took them (bits of
    /// [`BbrMode::bit`]; not in the kernel: what the flow's series report).
    entered: u8,
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    full_bw_reached: bool,
    full_bw: u64,
    full_bw_cnt: u32,
    has_seen_rtt: bool,
    /// Last good cwnd, restored after recovery and PROBE_RTT.
    prior_cwnd: u32,
    pacing_gain: u32,
    cwnd_gain: u32,
    /// `sk_pacing_rate`, payload bytes per second.
    pacing_rate: u64,
    // Long-term (policer) estimator.
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u64,
    lt_last_delivered: u64,
    /// In ms, as Linux (`div_u64(delivered_mstamp, USEC_PER_MSEC)`).
    lt_last_stamp_ms: u64,
    lt_last_lost: u64,
    // ACK aggregation.
    ack_epoch_mstamp: Nanos,
    ack_epoch_acked: u32,
    extra_acked: [u32; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    rng: u64,
    probe_rtt_entries: u64,
}

fn us(t: Nanos) -> u64 {
    t.as_ns() / 1000
}

impl Bbr {
    /// `bbr_init` for a connection starting at `now` with window `w` and no RTT
    /// sample yet.
    pub fn new(mss: u32, w: &Window, now: Nanos) -> Bbr {
        let mut b = Bbr {
            mss,
            mode: BbrMode::Startup,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: Nanos::ZERO,
            cycle_idx: 0,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: now,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            entered: BbrMode::Startup.bit(),
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            full_bw_reached: false,
            full_bw: 0,
            full_bw_cnt: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            pacing_rate: 0,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            ack_epoch_mstamp: now,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            rng: mix64(now.as_ns() ^ 0xbb5),
            probe_rtt_entries: 0,
        };
        b.init_pacing_rate_from_rtt(None, w.cwnd);
        b
    }

    /// The pacing rate (`sk_pacing_rate`), payload bytes per second.
    pub fn pacing_rate(&self) -> u64 {
        self.pacing_rate
    }

    /// In PROBE_RTT: the sender marks itself application-limited on every ACK
    /// (`bbr_update_min_rtt`: low-rate samples are ignored).
    pub fn in_probe_rtt(&self) -> bool {
        self.mode == BbrMode::ProbeRtt
    }

    /// The state machine's mode (`bbr->mode`).
    pub fn mode(&self) -> BbrMode {
        self.mode
    }

    /// The model, for stats.
    pub fn info(&self) -> BbrInfo {
        BbrInfo {
            mode: self.mode,
            bw_bytes_per_s: (self.bw() * self.mss as u64 * 1_000_000) >> BW_SCALE,
            min_rtt: (self.min_rtt_us != u32::MAX).then(|| Nanos::from_us(self.min_rtt_us as u64)),
            pacing_gain: self.pacing_gain,
            cwnd_gain: self.cwnd_gain,
            cycle_idx: self.cycle_idx,
            full_bw_reached: self.full_bw_reached,
            rounds: self.rtt_cnt,
            probe_rtt_entries: self.probe_rtt_entries,
            lt_use_bw: self.lt_use_bw,
        }
    }

    /// `bbr_max_bw`.
    fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// `bbr_bw`: the long-term rate when policed, else BtlBw.
    fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// `bbr_rate_bytes_per_sec`: `rate` (segments/µs << 24) × gain × 99 %, in bytes/s.
    fn rate_bytes_per_sec(&self, rate: u64, gain: u32) -> u64 {
        let mut r = rate as u128 * self.mss as u128;
        r = (r * gain as u128) >> BBR_SCALE;
        r *= 1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT) as u128;
        (r >> BW_SCALE).min(u64::MAX as u128) as u64
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain × cwnd / RTT (1 ms before any RTT).
    fn init_pacing_rate_from_rtt(&mut self, srtt: Option<Nanos>, cwnd: u32) {
        let rtt_us = match srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                us(s).max(1)
            }
            None => 1000,
        };
        let bw = cwnd as u64 * BW_UNIT / rtt_us;
        self.pacing_rate = self.rate_bytes_per_sec(bw, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: never lower the rate before the pipe is full.
    fn set_pacing_rate(&mut self, bw: u64, gain: u32, c: &ConnInfo, cwnd: u32) {
        let rate = self.rate_bytes_per_sec(bw, gain);
        if !self.has_seen_rtt && c.srtt.is_some() {
            self.init_pacing_rate_from_rtt(c.srtt, cwnd);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal` (see the module doc: a budget, not bursts here).
    fn tso_segs_goal(&self) -> u32 {
        let min_tso_segs = if self.pacing_rate < MIN_TSO_RATE_BPS >> 3 {
            1
        } else {
            2
        };
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(GSO_MAX_BYTES);
        ((bytes / self.mss as u64) as u32)
            .max(min_tso_segs)
            .min(0x7f)
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self, cwnd: u32) {
        if self.prev_ca_state < CaState::Recovery && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw × min_rtt × gain), in segments.
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        let bdp = ((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128);
        bdp.min(u32::MAX as u128 / 2) as u32
    }

    /// `bbr_quantization_budget`.
    fn quantization_budget(&self, cwnd: u32) -> u32 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal();
        cwnd = (cwnd + 1) & !1;
        if self.mode == BbrMode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    fn inflight(&self, bw: u64, gain: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: inflight less what BtlBw delivers before the
    /// pacer releases the next segment.
    fn packets_in_net_at_edt(&self, inflight_now: u32, c: &ConnInfo) -> u32 {
        let interval_us = us(c.edt.max(c.now) - c.now);
        let interval_delivered = ((self.bw() as u128 * interval_us as u128) >> BW_SCALE) as u64;
        let mut at_edt = inflight_now as u64;
        if self.pacing_gain > BBR_UNIT {
            at_edt += self.tso_segs_goal() as u64;
        }
        at_edt.saturating_sub(interval_delivered) as u32
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.full_bw_reached {
            return 0;
        }
        let max_aggr = self.bw() * EXTRA_ACKED_MAX_US / BW_UNIT;
        let extra = self.extra_acked[0].max(self.extra_acked[1]) as u64;
        ((EXTRA_ACKED_GAIN * extra) >> BBR_SCALE).min(max_aggr) as u32
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: returns the window and whether packet
    /// conservation decides it.
    fn recover_or_restore(
        &mut self,
        rs: &RateSample,
        acked: u32,
        c: &ConnInfo,
        cwnd: u32,
    ) -> (u32, bool) {
        let mut cwnd = cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        let state = c.ca_state;
        let prev = self.prev_ca_state;
        if state == CaState::Recovery && prev != CaState::Recovery {
            // First round of recovery: packet conservation.
            self.packet_conservation = true;
            self.next_rtt_delivered = c.delivered;
            cwnd = c.in_flight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            // Recovery over: restore the window saved when it started.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(c.in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`.
    fn set_cwnd(
        &mut self,
        rs: &RateSample,
        acked: u32,
        bw: u64,
        gain: u32,
        c: &ConnInfo,
        w: &mut Window,
    ) {
        let mut cwnd = w.cwnd;
        if acked > 0 {
            let (c2, conserving) = self.recover_or_restore(rs, acked, c, cwnd);
            cwnd = c2;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target += self.ack_aggregation_cwnd();
                target = self.quantization_budget(target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || c.delivered < TCP_INIT_CWND as u64 {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        w.cwnd = cwnd.min(w.clamp);
        if self.mode == BbrMode::ProbeRtt {
            w.cwnd = w.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, rs: &RateSample, c: &ConnInfo) -> bool {
        let is_full_length =
            us(c.delivered_mstamp.saturating_sub(self.cycle_mstamp)) > self.min_rtt_us as u64;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(rs.prior_in_flight, c);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, c: &ConnInfo) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = c.delivered_mstamp;
    }

    /// `bbr_reset_probe_bw_mode`: start the cycle at a random phase other than 0.75.
    fn reset_probe_bw_mode(&mut self, c: &ConnInfo) {
        self.set_mode(BbrMode::ProbeBw);
        self.rng = self.rng.wrapping_add(1);
        let r = mix64(self.rng) % CYCLE_RAND;
        self.cycle_idx = CYCLE_LEN - 1 - r as usize;
        self.advance_cycle_phase(c);
    }

    /// Enter mode `m`, and remember it was entered, however briefly (DRAIN may end in
    /// the ACK that starts it, `bbr_check_drain`).
    fn set_mode(&mut self, m: BbrMode) {
        self.mode = m;
        self.entered |= m.bit();
    }

    /// The modes entered since the last call (bits of [`BbrMode::bit`]), for the
    /// flow's series.
    pub fn take_entered(&mut self) -> u8 {
        std::mem::take(&mut self.entered)
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self, c: &ConnInfo) {
        if !self.full_bw_reached {
            self.set_mode(BbrMode::Startup);
        } else {
            self.reset_probe_bw_mode(c);
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, c: &ConnInfo) {
        self.lt_last_stamp_ms = c.delivered_mstamp.as_ns() / 1_000_000;
        self.lt_last_delivered = c.delivered;
        self.lt_last_lost = c.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self, c: &ConnInfo) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(c);
    }

    /// `bbr_lt_bw_interval_done`.
    fn lt_bw_interval_done(&mut self, bw: u64, c: &ConnInfo) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT as u64 <= LT_BW_RATIO * self.lt_bw
                || self.rate_bytes_per_sec(diff, BBR_UNIT) <= LT_BW_DIFF
            {
                // Two intervals of consistent rate: policed.
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(c);
    }

    /// `bbr_lt_bw_sampling`: detect a token-bucket policer.
    fn lt_bw_sampling(&mut self, rs: &RateSample, c: &ConnInfo) {
        if self.lt_use_bw {
            if self.mode == BbrMode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(c);
                    self.reset_probe_bw_mode(c);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(c);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(c);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(c);
            return;
        }
        if rs.losses == 0 {
            return;
        }
        let lost = c.lost - self.lt_last_lost;
        let delivered = c.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (c.delivered_mstamp.as_ns() / 1_000_000).saturating_sub(self.lt_last_stamp_ms);
        if t_ms < 1 {
            return;
        }
        let bw = delivered * BW_UNIT / (t_ms * 1000);
        self.lt_bw_interval_done(bw, c);
    }

    /// `bbr_update_bw`: count rounds and feed the bandwidth filter.
    fn update_bw(&mut self, rs: &RateSample, c: &ConnInfo) {
        self.round_start = false;
        let (Some(delivered), Some(interval)) = (rs.delivered, rs.interval) else {
            return;
        };
        let interval_us = us(interval);
        if interval_us == 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = c.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs, c);
        let bw = delivered * BW_UNIT / interval_us;
        // App-limited samples only count if they raise the estimate.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_FILTER_ROUNDS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`: the largest excess of ACKed data over what BtlBw
    /// explains, windowed over 5–10 rounds.
    fn update_ack_aggregation(&mut self, rs: &RateSample, c: &ConnInfo, cwnd: u32) {
        if rs.acked_sacked == 0 || rs.delivered.is_none() || rs.interval.is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = us(c.delivered_mstamp.saturating_sub(self.ack_epoch_mstamp));
        let mut expected = (self.bw() as u128 * epoch_us as u128 / BW_UNIT as u128) as u64;
        if self.ack_epoch_acked as u64 <= expected
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = c.delivered_mstamp;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.ack_epoch_acked as u64 - expected).min(cwnd as u64) as u32;
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw * FULL_BW_THRESH) >> BBR_SCALE;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_ROUNDS;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, c: &ConnInfo, w: &mut Window) {
        if self.mode == BbrMode::Startup && self.full_bw_reached {
            self.set_mode(BbrMode::Drain);
            w.ssthresh = self.inflight(self.max_bw(), BBR_UNIT);
        }
        if self.mode == BbrMode::Drain
            && self.packets_in_net_at_edt(c.in_flight, c) <= self.inflight(self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(c);
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, c: &ConnInfo, w: &mut Window) {
        if self.probe_rtt_done_stamp.is_none_or(|t| c.now <= t) {
            return;
        }
        self.min_rtt_stamp = c.now;
        w.cwnd = w.cwnd.max(self.prior_cwnd);
        self.reset_mode(c);
    }

    /// `bbr_update_min_rtt`: the RTprop filter and PROBE_RTT.
    fn update_min_rtt(&mut self, rs: &RateSample, c: &ConnInfo, w: &mut Window) {
        let filter_expired = c.now > self.min_rtt_stamp + MIN_RTT_WINDOW;
        if let Some(rtt) = rs.rtt {
            let rtt_us = us(rtt).min(u32::MAX as u64 - 1) as u32;
            // `!rs->is_ack_delayed`: always true here (module doc).
            if rtt_us < self.min_rtt_us || filter_expired {
                self.min_rtt_us = rtt_us;
                self.min_rtt_stamp = c.now;
            }
        }
        if filter_expired && !self.idle_restart && self.mode != BbrMode::ProbeRtt {
            self.set_mode(BbrMode::ProbeRtt);
            self.probe_rtt_entries += 1;
            self.save_cwnd(w.cwnd);
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == BbrMode::ProbeRtt {
            // (The sender marks itself application-limited: see `in_probe_rtt`.)
            if self.probe_rtt_done_stamp.is_none() && c.in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = Some(c.now + PROBE_RTT_DURATION);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = c.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(c, w);
                }
            }
        }
        if rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            BbrMode::Startup => (HIGH_GAIN, HIGH_GAIN),
            BbrMode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            BbrMode::ProbeBw => (
                if self.lt_use_bw {
                    BBR_UNIT
                } else {
                    PACING_GAIN_CYCLE[self.cycle_idx]
                },
                CWND_GAIN,
            ),
            BbrMode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_main` (`.cong_control`): update the model from this ACK's rate sample,
    /// then set the pacing rate and the window.
    pub fn main(&mut self, w: &mut Window, c: &ConnInfo, rs: &RateSample) {
        // bbr_update_model
        self.update_bw(rs, c);
        self.update_ack_aggregation(rs, c, w.cwnd);
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(rs, c) {
            self.advance_cycle_phase(c);
        }
        self.check_full_bw_reached(rs);
        self.check_drain(c, w);
        self.update_min_rtt(rs, c, w);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, c, w.cwnd);
        self.set_cwnd(rs, rs.acked_sacked, bw, self.cwnd_gain, c, w);
    }

    /// `.ssthresh` (`bbr_ssthresh`): remember the window; ssthresh is unchanged.
    pub fn ssthresh(&mut self, w: &Window) -> u32 {
        self.save_cwnd(w.cwnd);
        w.ssthresh
    }

    /// `.cwnd_event(CA_EVENT_TX_START)`: restarting from idle while app-limited.
    pub fn on_tx_start(&mut self, c: &ConnInfo, w: &mut Window) {
        if !c.app_limited {
            return;
        }
        self.idle_restart = true;
        self.ack_epoch_mstamp = c.now;
        self.ack_epoch_acked = 0;
        match self.mode {
            // Pace at the estimated rate: no need for more speed.
            BbrMode::ProbeBw => self.set_pacing_rate(self.bw(), BBR_UNIT, c, w.cwnd),
            BbrMode::ProbeRtt => self.check_probe_rtt_done(c, w),
            _ => {}
        }
    }

    /// `.set_state(TCP_CA_Loss)`: an RTO ends the round and restarts full-pipe
    /// detection.
    pub fn on_enter_loss(&mut self, c: &ConnInfo) {
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0;
        self.round_start = true;
        let rs = RateSample {
            losses: 1,
            ..RateSample::default()
        };
        self.lt_bw_sampling(&rs, c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_linux_s() {
        assert_eq!(HIGH_GAIN, 739);
        assert!((HIGH_GAIN as f64 / 256.0 - 2.0 / std::f64::consts::LN_2).abs() < 0.005);
        assert_eq!(DRAIN_GAIN, 88);
        assert_eq!(CWND_GAIN, 512);
        assert_eq!(PACING_GAIN_CYCLE[0], 320);
        assert_eq!(PACING_GAIN_CYCLE[1], 192);
        assert_eq!(BW_FILTER_ROUNDS, 10);
    }

    /// The max filter keeps the best sample for its window, then falls back to the
    /// best younger one (`lib/minmax.c`).
    #[test]
    fn windowed_max_forgets_old_peaks() {
        let mut f = MaxFilter::default();
        f.reset(0, 0);
        assert_eq!(f.running_max(10, 1, 100), 100);
        assert_eq!(f.running_max(10, 3, 50), 100);
        assert_eq!(f.running_max(10, 7, 70), 100);
        assert_eq!(f.running_max(10, 11, 60), 100);
        // Round 12: the peak of round 1 is out of the window; 70 (round 7) is best.
        assert_eq!(f.running_max(10, 12, 40), 70);
        // Round 18: 70 expires too.
        assert_eq!(f.running_max(10, 18, 10), 60);
        assert_eq!(f.running_max(10, 30, 5), 5);
    }

    /// Pacing rate from bandwidth and gain: bw × mss × gain × 0.99.
    #[test]
    fn pacing_rate_arithmetic() {
        let w = Window {
            cwnd: 10,
            cwnd_cnt: 0,
            ssthresh: u32::MAX,
            clamp: u32::MAX,
        };
        let b = Bbr::new(1448, &w, Nanos::ZERO);
        // Initial: 2.885 × 10 segments per ms.
        let expect = 2.885 * 10.0 * 1448.0 * 1000.0 * 0.99;
        assert!((b.pacing_rate() as f64 / expect - 1.0).abs() < 0.002);
        // 1000 segments/s = 0.001 segments/µs.
        let bw = BW_UNIT / 1000;
        let r = b.rate_bytes_per_sec(bw, BBR_UNIT) as f64;
        assert!((r / (1000.0 * 1448.0 * 0.99) - 1.0).abs() < 1e-4, "{r}");
        let r = b.rate_bytes_per_sec(bw, PACING_GAIN_CYCLE[0]) as f64;
        assert!((r / (1250.0 * 1448.0 * 0.99) - 1.0).abs() < 1e-4, "{r}");
    }
}
