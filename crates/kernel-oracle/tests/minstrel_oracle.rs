//! Differential test: the kernel's own minstrel_ht (`net/mac80211/rc80211_minstrel_ht.c`
//! of 6.12, built by this crate from the installed Linux source) and txop's
//! [`MinstrelHt`] in its 6.x design run the same random transmit-status sequences at the
//! same times.
//!
//! Each sequence sets up one peer (802.11b/a/g/n/ac, 2.4 or 5 GHz, 20/40/80 MHz, short GI
//! or not, 1 or 2 streams) on hardware with 1–4 rate slots and 3–12 tries a stage (or
//! none registered), then repeats: the clock advances; both choose the rates of the next
//! PPDU (`minstrel_ht_get_rate` / [`MinstrelHt::rates`]); the PPDU takes a random number
//! of the chain's tries and an A-MPDU of 1–32 MPDUs gets a random share acknowledged;
//! both learn from that status (`minstrel_ht_tx_status` / [`MinstrelHt::tx_status`]).
//!
//! At setup and after every step the two must agree on: the rates the peer supports;
//! whether the PPDU probes and at which rate (the sample choice); `max_tp_rate[0..4]`
//! and `max_prob_rate`; the rate table the driver gets (rate, tries and RTS/CTS of every
//! stage); `avg_ampdu_len`; and for every supported rate `attempts`, `success`,
//! `last_attempts`, `last_success`, `att_hist`, `succ_hist`, `prob_avg`, `prob_avg_1`,
//! `retry_count`, `retry_count_rtscts` and `retry_updated`. No `WARN_ON` may fire in
//! the kernel code.
//!
//! What txop does differently on purpose (groups of 3 and 4 streams, CCK with the short
//! preamble, stages capped at 1–2 tries, the sample table's drawing) is listed in
//! docs/reference/kernel-oracle.md and mapped here explicitly.
//!
//! 10 000 sequences from a fixed seed by default (seconds in release);
//! `TXOP_ORACLE_CASES` and `TXOP_ORACLE_SEED` run more or others. A divergence fails
//! with the first differing step, both sides' values and (shrunk by proptest) the
//! sequence.

use kernel_oracle::minstrel::{KernelMinstrel, MinstrelSetup, StatusStage, GROUPS, RC_USE_RTS_CTS};
// txop's group numbers and the kernel's (txop has at most 2 streams): the mapping
// scenarios use too.
use txop_kernel::{from_kernel, to_kernel};
mod support;

use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use std::sync::Mutex;
use txop_core::mac80211::minstrel_ht::{MinstrelHt, PeerCaps};
use txop_core::mac80211::rate_chain::{RateChain, RateIdx, TxStatus};
use txop_core::mac80211::rate_control::{HwRateCaps, MinstrelEra};
use txop_core::phy::{Band, ChannelWidth, Standard};
use txop_core::Nanos;

#[derive(Clone, Copy, Debug)]
struct Setup {
    caps: PeerCaps,
    hw: HwRateCaps,
    seed: u64,
}

fn setups() -> impl Strategy<Value = Setup> {
    // (standard, band): b/g only in 2.4 GHz, a/ac only in 5 GHz, n in both.
    let peer = prop_oneof![
        1 => Just((Standard::B, Band::Ghz2_4)),
        1 => Just((Standard::G, Band::Ghz2_4)),
        1 => Just((Standard::A, Band::Ghz5)),
        2 => Just((Standard::N, Band::Ghz2_4)),
        2 => Just((Standard::N, Band::Ghz5)),
        2 => Just((Standard::Ac, Band::Ghz5)),
    ];
    let width = prop_oneof![
        Just(ChannelWidth::Mhz20),
        Just(ChannelWidth::Mhz40),
        Just(ChannelWidth::Mhz80)
    ];
    // txop caps every stage at max_rate_tries; the kernel gives a stage 2 (or 3) tries
    // whatever the hardware registered: compared where that cap never bites (≥ 3).
    let tries = prop_oneof![Just(0u8), 3u8..=12];
    (
        peer,
        width,
        any::<bool>(),
        1u8..=2,
        1u8..=4,
        tries,
        any::<u64>(),
    )
        .prop_map(
            |((standard, band), width, sgi, max_nss, max_rates, max_rate_tries, seed)| Setup {
                caps: PeerCaps {
                    standard,
                    band,
                    width,
                    sgi,
                    max_nss,
                    // txop leaves the long-preamble twins of the short CCK rates out of
                    // the peer's rates; the kernel keeps both: compared with the long one.
                    short_preamble: false,
                },
                hw: HwRateCaps {
                    max_rates,
                    max_rate_tries,
                },
                seed,
            },
        )
}

/// One step: the gap before the next PPDU, the tries it takes (modulo the chain's), its
/// A-MPDU length, the share acknowledged, and the delay until its status.
#[derive(Clone, Copy, Debug)]
struct Step {
    gap_us: u64,
    tries: u32,
    ampdu_len: u8,
    ack_percent: u8,
    status_delay_us: u64,
}

/// Statuses come at least 1.25 ms apart, so no rate's `u16` attempt counter (the
/// kernel's) can wrap within a 50 ms interval (40 × 32 MPDUs × 48 tries < 65 536).
fn steps() -> impl Strategy<Value = Vec<Step>> {
    let gap = prop_oneof![9 => 0u64..4_000, 1 => 4_000u64..300_000];
    let ack = prop_oneof![Just(0u8), Just(100u8), 0u8..=100];
    prop::collection::vec(
        (gap, 0u32..64, 1u8..=32, ack, 1_250u64..4_000).prop_map(
            |(gap_us, tries, ampdu_len, ack_percent, status_delay_us)| Step {
                gap_us,
                tries,
                ampdu_len,
                ack_percent,
                status_delay_us,
            },
        ),
        1..300,
    )
}

/// The kernel's sta setup for txop's peer (txop-kernel's, as scenarios set it up).
fn kernel_setup(s: &Setup, txop: &MinstrelHt) -> MinstrelSetup {
    MinstrelSetup::new(&s.caps, s.hw, txop.sample_table())
}

/// One single-stream HT20 peer in 5 GHz, long GI, on ath9k (4 slots, 10 tries).
fn ht20_ath9k(seed: u64) -> Setup {
    Setup {
        caps: PeerCaps {
            standard: Standard::N,
            band: Band::Ghz5,
            width: ChannelWidth::Mhz20,
            sgi: false,
            max_nss: 1,
            short_preamble: false,
        },
        hw: HwRateCaps::ATH9K,
        seed,
    }
}

/// The stages of `chain`'s status as the kernel gets them: each stage's rate and the
/// tries it took of `tries_used`.
fn status_stages(chain: &RateChain, tries_used: u32) -> Vec<StatusStage> {
    chain
        .stages()
        .iter()
        .zip(chain.tries_per_stage(tries_used))
        .map(|(s, t)| StatusStage {
            rate: to_kernel(s.rate),
            tries: u32::from(t),
        })
        .collect()
}

#[derive(Debug, Default)]
struct Coverage {
    sequences: u64,
    steps: u64,
    probes: u64,
    stats_updates: u64,
    max_tp_changes: u64,
    max_prob_changes: u64,
    multi_stage_statuses: u64,
    legacy_sequences: u64,
    vht_sequences: u64,
}

static COVERAGE: Mutex<Coverage> = Mutex::new(Coverage {
    sequences: 0,
    steps: 0,
    probes: 0,
    stats_updates: 0,
    max_tp_changes: 0,
    max_prob_changes: 0,
    multi_stage_statuses: 0,
    legacy_sequences: 0,
    vht_sequences: 0,
});

/// Fails the case with the step, what differs and both values.
macro_rules! agree {
    ($step:expr, $what:expr, $txop:expr, $kernel:expr) => {{
        let (t, k) = ($txop, $kernel);
        if t != k {
            return Err(TestCaseError::fail(format!(
                "first divergence at step {}: {}\n  txop:   {:?}\n  kernel: {:?}",
                $step, $what, t, k
            )));
        }
    }};
}

/// Both sides' state after `step`: the rates chosen, the rate table, every rate's
/// statistics.
fn compare(
    step: usize,
    what: &str,
    txop: &MinstrelHt,
    kernel: &mut KernelMinstrel,
    rates: &[RateIdx],
) -> Result<(), TestCaseError> {
    let k = kernel.state();
    agree!(
        step,
        format!("{what}: WARN_ON in the kernel code"),
        0,
        k.warnings
    );
    agree!(
        step,
        format!("{what}: max_tp_rate[0..4]"),
        txop.max_tp_rates().map(to_kernel),
        k.max_tp_rate
    );
    let prob = txop
        .rate_idx(&txop.max_prob_rate())
        .map(to_kernel)
        .unwrap_or(u32::MAX);
    agree!(
        step,
        format!("{what}: max_prob_rate"),
        prob,
        k.max_prob_rate
    );
    agree!(
        step,
        format!("{what}: avg_ampdu_len"),
        txop.avg_ampdu_len_frac() as u32,
        k.avg_ampdu_len
    );
    let table: Vec<(i32, u32, bool)> = txop
        .rate_table()
        .stages()
        .iter()
        .map(|s| (to_kernel(s.rate) as i32, u32::from(s.tries), s.rts))
        .collect();
    let ktable: Vec<(i32, u32, bool)> = k.table[..k.n_table as usize]
        .iter()
        .map(|e| (e.rate, e.count, e.flags & RC_USE_RTS_CTS != 0))
        .collect();
    agree!(
        step,
        format!("{what}: rate table (rate, tries, RTS/CTS)"),
        table,
        ktable
    );
    for &r in rates {
        let t = txop.rate_counters(r).expect("a supported rate");
        let kr = kernel.rate(to_kernel(r));
        agree!(
            step,
            format!(
                "{what}: statistics of rate {} (kernel {:#x})",
                r.0,
                to_kernel(r)
            ),
            (
                t.attempts,
                t.success,
                t.last_attempts,
                t.last_success,
                t.att_hist as u32,
                t.succ_hist as u32,
                u32::from(t.prob_avg),
                u32::from(t.prob_avg_1),
                u32::from(t.retry_count),
                u32::from(t.retry_count_rtscts),
                u32::from(t.retry_updated)
            ),
            (
                kr.attempts,
                kr.success,
                kr.last_attempts,
                kr.last_success,
                kr.att_hist,
                kr.succ_hist,
                kr.prob_avg,
                kr.prob_avg_1,
                kr.retry_count,
                kr.retry_count_rtscts,
                kr.retry_updated
            )
        );
    }
    Ok(())
}

fn run(setup: &Setup, steps: &[Step]) -> Result<(), TestCaseError> {
    let mut txop = MinstrelHt::new(MinstrelEra::Linux6, &setup.caps, setup.hw, setup.seed);
    let mut kernel = KernelMinstrel::new(&kernel_setup(setup, &txop), 0)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let rates: Vec<RateIdx> = txop.supported_rates().iter().map(|(r, _)| *r).collect();

    // The rates the peer supports.
    let mut ksupported = Vec::new();
    for g in 0..GROUPS {
        let mask = kernel.supported(g);
        for i in 0..16 {
            if mask & (1 << i) != 0 {
                ksupported.push(from_kernel(g << 4 | i).map(|r| r.0));
            }
        }
    }
    let mut tsupported: Vec<Option<u16>> = rates.iter().map(|r| Some(r.0)).collect();
    ksupported.sort();
    tsupported.sort();
    agree!(
        0,
        "supported rates (txop's numbering)",
        tsupported,
        ksupported
    );
    compare(0, "setup", &txop, &mut kernel, &rates)?;

    let mut cov = Coverage::default();
    let mut now = Nanos::ZERO;
    let mut last = kernel.state();
    for (i, st) in steps.iter().enumerate() {
        let n = i + 1;
        now += Nanos::from_us(st.gap_us);
        let chain = txop.rates(now);
        let ksample = kernel.get_rate(now.as_ns());
        let tsample = chain.probe.then(|| to_kernel(chain.first().rate));
        agree!(
            n,
            format!("get_rate at {now}: probe (sample rate)"),
            tsample,
            ksample
        );
        if ksample.is_some() {
            cov.probes += 1;
        }

        let total = chain.total_tries();
        let tries_used = st.tries % total + 1;
        let ampdu_len = st.ampdu_len;
        let mut ack_len = (u32::from(ampdu_len) * u32::from(st.ack_percent) / 100) as u8;
        if tries_used < total {
            // The chain stopped early: the block ack came back.
            ack_len = ack_len.max(1);
        }
        now += Nanos::from_us(st.status_delay_us);
        let status = TxStatus {
            chain: &chain,
            tries_used,
            acked: ack_len > 0,
            ampdu_len: u16::from(ampdu_len),
            ampdu_ack_len: u16::from(ack_len),
        };
        let stages = status_stages(&chain, tries_used);
        if stages.iter().filter(|s| s.tries > 0).count() > 1 {
            cov.multi_stage_statuses += 1;
        }
        txop.tx_status(now, &status);
        kernel.tx_status(now.as_ns(), &stages, ampdu_len, ack_len, chain.probe);
        let what = format!(
            "tx_status at {now} ({tries_used} of {total} tries, {ack_len}/{ampdu_len} acked, chain {:?})",
            stages.iter().map(|s| (s.rate, s.tries)).collect::<Vec<_>>()
        );
        compare(n, &what, &txop, &mut kernel, &rates)?;
        let k = kernel.state();
        cov.stats_updates += u64::from(k.last_stats_update != last.last_stats_update);
        cov.max_tp_changes += u64::from(k.max_tp_rate[0] != last.max_tp_rate[0]);
        cov.max_prob_changes += u64::from(k.max_prob_rate != last.max_prob_rate);
        last = k;
    }
    let mut c = COVERAGE.lock().unwrap_or_else(|e| e.into_inner());
    c.sequences += 1;
    c.steps += steps.len() as u64;
    c.probes += cov.probes;
    c.stats_updates += cov.stats_updates;
    c.max_tp_changes += cov.max_tp_changes;
    c.max_prob_changes += cov.max_prob_changes;
    c.multi_stage_statuses += cov.multi_stage_statuses;
    c.legacy_sequences += u64::from(!matches!(setup.caps.standard, Standard::N | Standard::Ac));
    c.vht_sequences += u64::from(setup.caps.standard == Standard::Ac);
    Ok(())
}

#[test]
fn txop_minstrel_ht_matches_the_kernels_step_by_step() {
    let probe_setup = ht20_ath9k(1);
    let txop = MinstrelHt::new(MinstrelEra::Linux6, &probe_setup.caps, probe_setup.hw, 1);
    // No kernel source: one line saying how to install it, before any case runs.
    if let Err(e) = KernelMinstrel::new(&kernel_setup(&probe_setup, &txop), 0) {
        panic!("{e}");
    }
    let mut runner = TestRunner::new(support::config());
    if let Err(e) = runner.run(&(setups(), steps()), |(setup, steps)| run(&setup, &steps)) {
        panic!("{e}\n({})", kernel_oracle::minstrel::MINSTREL_SOURCE);
    }
    let c = COVERAGE.lock().unwrap_or_else(|e| e.into_inner());
    eprintln!(
        "minstrel oracle: {c:?} ({})",
        kernel_oracle::minstrel::MINSTREL_SOURCE
    );
    support::assert_reached(&[
        ("a probe", c.probes),
        ("a statistics update", c.stats_updates),
        ("a change of max_tp_rate[0]", c.max_tp_changes),
        ("a change of max_prob_rate", c.max_prob_changes),
        ("a status spanning several stages", c.multi_stage_statuses),
        ("a legacy (non-HT) peer", c.legacy_sequences),
        ("a VHT peer", c.vht_sequences),
    ]);
}

/// A splitmix64 stream: the closed loop's own random draws, shared by both sides.
struct Draws(u64);

impl Draws {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// What one closed-loop run measured (the kernel's code and txop's agreeing at every
/// step).
#[derive(Debug, Default)]
struct LoopFigures {
    /// Share of the time `max_tp_rate[0]` is `rate`.
    max_tp_share: f64,
    /// Times `max_tp_rate[0]` became `rate`.
    episodes: u32,
    /// Mean length of those spells, s.
    mean_spell_s: f64,
    /// Share of the data airtime spent at `rate` (probes included).
    airtime_share: f64,
    /// Delivered payload, Mbit/s.
    throughput_mbps: f64,
    /// PPDUs whose whole chain went without a block ack.
    chains_exhausted: u32,
    /// Tries that went without a block ack.
    failed_tries: u32,
    /// MPDUs given up after 7 attempts (txop's `retry_limit` drops).
    retry_limit_drops: u32,
    /// PPDUs sent.
    ppdus: u32,
    /// 0.2 s steps whose airtime-weighted mean PHY rate (txop's `rate_series_bps`) is
    /// above 22 Mbit/s (MCS2 is 19.5, MCS3 26), and the steps in all.
    steps_above_22_mbps: u32,
    steps: u32,
    /// Probes sent at `rate`, and how many of them got through.
    probes_at_rate: u32,
    probes_at_rate_ok: u32,
}

/// One saturated HT20 downlink (5 GHz, long GI, 1 stream, ath9k's 4 slots × 10 tries)
/// where every MPDU of 1500 payload bytes (+38 B of MAC overhead) sent at MCS m is
/// received with probability `1 − per[m]`, independently, as txop's exchange draws it.
/// PPDUs are built as txop builds them for ath9k (`txpath.rs`, `ath_lookup_rate`): an
/// A-MPDU of at most 64 MPDUs that fits 4 ms at the slowest rate of the chain, a probe
/// alone (with `probes_alone`; otherwise a probe is sized as any other PPDU). The hardware repeats the PPDU down the chain until one try gets a block ack
/// (any MPDU received); minstrel hears `tries`, `ampdu_len` and the MPDUs acked. MPDUs
/// not acked go back ahead of new ones and are given up after 7 attempts (each try of
/// a PPDU is an attempt of each of its MPDUs, as txop counts them). Time
/// advances by each try's airtime (AIFS, the mean backoff of the try's window, RTS/CTS on
/// the stages that ask for it, data, SIFS, block ack). Both minstrels see the same
/// statuses at the same times and must agree after every one; the figures are measured
/// on `rate` (minstrel's number).
fn closed_loop(
    per: &[f64; 8],
    seconds: f64,
    seed: u64,
    rate: RateIdx,
    probes_alone: bool,
) -> Result<LoopFigures, String> {
    let setup = ht20_ath9k(seed);
    let mut txop = MinstrelHt::new(MinstrelEra::Linux6, &setup.caps, setup.hw, seed);
    let mut kernel =
        KernelMinstrel::new(&kernel_setup(&setup, &txop), 0).map_err(|e| e.to_string())?;
    let rates: Vec<RateIdx> = txop.supported_rates().iter().map(|(r, _)| *r).collect();
    let mut draws = Draws(seed);
    let mpdu_bytes = 1500 + 38;
    let subframe_bytes = (mpdu_bytes + 4u32).div_ceil(4) * 4;
    let ctl = txop_core::phy::TxVector::Ofdm { rate_mbps: 24 };
    let ba = ctl.ppdu_duration(32, Band::Ghz5);
    let rts_cts = ctl.ppdu_duration(20, Band::Ghz5) + ctl.ppdu_duration(14, Band::Ghz5);
    let (sifs, slot) = (Nanos::from_us(16), Nanos::from_us(9));
    let aifs = sifs + slot * 3;
    let fits_4ms = |txv: &txop_core::phy::TxVector| {
        (1..=64u32)
            .take_while(|n| {
                txv.ppdu_duration(n * subframe_bytes, Band::Ghz5) <= Nanos::from_us(4_000)
            })
            .last()
            .unwrap_or(1)
    };
    let mcs_of = |r: RateIdx| usize::from(r.0 & 0xf);
    let end = Nanos::from_ns((seconds * 1e9) as u64);
    let mut now = Nanos::ZERO;
    let mut f = LoopFigures::default();
    let (mut at_rate_ns, mut airtime_rate_ns, mut airtime_ns) = (0u64, 0u64, 0u64);
    let mut delivered = 0u64;
    let mut step = 0usize;
    // Attempts so far of the MPDUs waiting for a retransmission, oldest first.
    let mut retries: std::collections::VecDeque<u32> = std::collections::VecDeque::new();
    // Per 0.2 s step: (Σ airtime × PHY rate, Σ airtime), by the end of each try.
    let mut series = vec![(0f64, 0f64); (seconds / 0.2).ceil() as usize + 1];
    while now < end {
        step += 1;
        let before = txop.max_tp_rates()[0];
        let chain = txop.rates(now);
        let ksample = kernel.get_rate(now.as_ns());
        if chain.probe.then(|| to_kernel(chain.first().rate)) != ksample {
            return Err(format!(
                "step {step}: sample choice differs: txop {chain:?}, kernel {ksample:?}"
            ));
        }
        let ampdu_len = if chain.probe && probes_alone {
            1
        } else {
            chain
                .stages()
                .iter()
                .map(|s| fits_4ms(&s.txv))
                .min()
                .unwrap_or(1)
        };
        let start = now;
        let mut mpdus: Vec<u32> = (0..ampdu_len)
            .map(|_| retries.pop_front().unwrap_or(0))
            .collect();
        let mut ok = vec![false; mpdus.len()];
        let (mut tries_used, mut acked, mut cw) = (0u32, 0u32, 15u64);
        'chain: for s in chain.stages() {
            for _ in 0..s.tries {
                tries_used += 1;
                let data = s.txv.ppdu_duration(ampdu_len * subframe_bytes, Band::Ghz5);
                let backoff = Nanos::from_ns(slot.as_ns() * cw / 2);
                cw = (cw * 2 + 1).min(1023);
                let protect = if s.rts {
                    rts_cts + sifs * 2
                } else {
                    Nanos::ZERO
                };
                now += aifs + backoff + protect + data + sifs + ba;
                airtime_ns += data.as_ns();
                let last = series.len() - 1;
                let bin = &mut series[((now.as_ns() / 200_000_000) as usize).min(last)];
                bin.0 += data.as_ns() as f64 * s.txv.data_rate_bps() as f64;
                bin.1 += data.as_ns() as f64;
                if s.rate == rate {
                    airtime_rate_ns += data.as_ns();
                }
                let p_ok = 1.0 - per[mcs_of(s.rate)];
                mpdus.iter_mut().for_each(|a| *a += 1);
                ok.iter_mut().for_each(|o| *o = draws.unit() < p_ok);
                acked = ok.iter().filter(|&&o| o).count() as u32;
                if acked > 0 {
                    break 'chain;
                }
                f.failed_tries += 1;
            }
        }
        for (&a, &o) in mpdus.iter().zip(&ok).rev() {
            if o {
                continue;
            }
            if a >= 7 {
                f.retry_limit_drops += 1;
            } else {
                retries.push_front(a);
            }
        }
        f.ppdus += 1;
        f.chains_exhausted += u32::from(acked == 0);
        delivered += u64::from(acked);
        if chain.probe && chain.first().rate == rate {
            f.probes_at_rate += 1;
            f.probes_at_rate_ok += u32::from(acked > 0 && tries_used == 1);
        }
        let status = TxStatus {
            chain: &chain,
            tries_used,
            acked: acked > 0,
            ampdu_len: ampdu_len as u16,
            ampdu_ack_len: acked as u16,
        };
        let stages = status_stages(&chain, tries_used);
        txop.tx_status(now, &status);
        kernel.tx_status(
            now.as_ns(),
            &stages,
            ampdu_len as u8,
            acked as u8,
            chain.probe,
        );
        if let Err(e) = compare(step, "closed loop", &txop, &mut kernel, &rates) {
            return Err(e.to_string());
        }
        if before == rate {
            at_rate_ns += (now - start).as_ns();
        }
        let after = txop.max_tp_rates()[0];
        if after == rate && before != rate {
            f.episodes += 1;
        }
    }
    let total_s = now.as_ns() as f64 / 1e9;
    let full = &series[..(seconds / 0.2).round() as usize];
    f.steps = full.len() as u32;
    f.steps_above_22_mbps = full
        .iter()
        .filter(|(w, t)| *t > 0.0 && w / t > 22e6)
        .count() as u32;
    f.max_tp_share = at_rate_ns as f64 / now.as_ns() as f64;
    f.mean_spell_s = if f.episodes > 0 {
        at_rate_ns as f64 / 1e9 / f64::from(f.episodes)
    } else {
        0.0
    };
    f.airtime_share = airtime_rate_ns as f64 / airtime_ns as f64;
    f.throughput_mbps = delivered as f64 * 1500.0 * 8.0 / total_s / 1e6;
    Ok(f)
}

/// Issue 28's first question: txop's minstrel_ht 6.x at a steady 11 dB on HT20 keeps
/// making MCS3 (which delivers about a third of its MPDUs there) its main rate for
/// spells of about 0.2 s. The kernel's own minstrel_ht, fed the same per-MPDU success
/// probabilities (txop's PER model at 11 dB), PPDUs built the same way and the same
/// draws, makes the same decisions at every step, spells included: the oscillation is
/// the kernel's algorithm on this link, not a txop departure. With probes aggregated
/// (which ath9k does not do) the spells nearly vanish: single-MPDU probes feeding the
/// 6.x noise filter are the cause. The figures print with `--nocapture`
/// (docs/reference/kernel-oracle.md quotes them).
#[test]
fn the_kernels_minstrel_also_returns_to_mcs3_at_11_db() {
    use txop_core::phy::channel::ErrorModel;
    use txop_core::phy::{GuardInterval, TxVector};
    let error = ErrorModel::Snr { snr_db: 11.0 };
    let per: [f64; 8] = std::array::from_fn(|mcs| {
        let txv = TxVector::Ht {
            mcs: mcs as u8,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long,
        };
        error.per(&txv, 1500 + 38)
    });
    eprintln!(
        "11 dB, 1538-byte MPDUs, MPDU loss per MCS 0-7: {:?}",
        per.map(|p| (p * 1000.0).round() / 1000.0)
    );
    let mcs3 = RateIdx(3); // group 0 (HT20, long GI, 1 stream), MCS3
    let seconds = support::env_u64("TXOP_ORACLE_LOOP_S", 6) as f64;
    let mean_share = |probes_alone: bool| {
        let mut total = 0.0;
        for seed in 1..=5u64 {
            let f = closed_loop(&per, seconds, seed, mcs3, probes_alone)
                .unwrap_or_else(|e| panic!("{e}"));
            eprintln!("probes alone {probes_alone}, seed {seed}, {seconds} s: {f:?}");
            if probes_alone {
                // The spells the issue describes: MCS3 is taken up again and again,
                // for a few statistics intervals each, although it delivers only
                // about a third.
                assert!(
                    f.episodes >= 2,
                    "seed {seed}: MCS3 never became the main rate twice: {f:?}"
                );
                assert!(
                    f.mean_spell_s > 0.05 && f.mean_spell_s < 1.0,
                    "seed {seed}: spells of {} s",
                    f.mean_spell_s
                );
            }
            total += f.max_tp_share;
        }
        total / 5.0
    };
    let alone = mean_share(true);
    // The mechanism: with probes aggregated like any other PPDU, an interval's success
    // ratio at MCS3 is an average over several MPDUs, the filter has little to
    // over-shoot on, and the spells (nearly) go.
    let aggregated = mean_share(false);
    eprintln!(
        "MCS3 is max_tp_rate[0] for {:.1} % of the time with probes alone (ath9k), \
         {:.1} % with probes aggregated (mean of 5 runs)",
        alone * 100.0,
        aggregated * 100.0
    );
    assert!(
        aggregated < alone / 4.0,
        "aggregated probes: {aggregated}, probes alone: {alone}"
    );
}
