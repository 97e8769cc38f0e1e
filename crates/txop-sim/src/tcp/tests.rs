//! End-to-end checks of sender + receiver over a simulated bottleneck, against
//! independently computed expectations (the CUBIC curve, β, Reno's slope, link
//! capacity).

use super::harness::{run, run_fin, Aqm, Path, Sample};
use super::{BbrMode, CaState, CongestionControl, TcpConfig};
use txop_core::Nanos;

const BETA: f64 = 717.0 / 1024.0;
const C: f64 = 0.4;

fn secs(s: u64) -> Nanos {
    Nanos::from_secs(s)
}

/// Indices of the samples on which fast recovery started.
fn recovery_entries(samples: &[Sample]) -> Vec<usize> {
    (1..samples.len())
        .filter(|&i| {
            samples[i].fast_recoveries > samples[i - 1].fast_recoveries
                && samples[i].state == CaState::Recovery
        })
        .collect()
}

/// Goodput as a fraction of the link rate.
fn goodput(bytes: u64, duration: Nanos, rate_bps: u64) -> f64 {
    bytes as f64 * 8.0 / duration.as_secs_f64() / rate_bps as f64
}

/// 1. A single CUBIC flow fills a 10 Mbit/s bottleneck and its FIFO.
#[test]
fn cubic_fills_the_link_and_the_fifo() {
    let path = Path::default_10m();
    let dur = secs(30);
    let h = run(TcpConfig::default(), path.clone(), None, dur);
    let g = goodput(h.receiver.bytes_received(), dur, path.rate_bps);
    eprintln!(
        "cubic 10M/40ms/100pkt: goodput {:.1} % of link, peak queue {} / {}, drops {}, \
         fast recoveries {}, timeouts {}",
        g * 100.0,
        h.run.max_queue,
        path.buffer_pkts,
        h.run.drops,
        h.sender.stats().fast_recoveries,
        h.sender.stats().timeouts
    );
    assert!(g > 0.90, "goodput {g}");
    assert_eq!(h.run.max_queue, path.buffer_pkts);
    assert_eq!(h.sender.stats().timeouts, 0);
    // Bounded memory: the receiver holds no out-of-order ranges at the end of a clean
    // window, the scoreboard never exceeds the window (checked on every ACK).
    assert!(h.receiver.ooo_ranges() <= 64);
}

/// 2. Between two losses, cwnd follows W(t) = C(t − K)³ + W_max with W_max and K
///    computed here from the cwnd recorded just before each reduction.
#[test]
fn cubic_window_follows_the_cubic_function_between_losses() {
    let path = Path::default_10m();
    let h = run(TcpConfig::default(), path.clone(), None, secs(40));
    let s = &h.run.samples;
    assert_eq!(h.sender.stats().timeouts, 0);
    let entries = recovery_entries(s);
    assert!(entries.len() >= 4, "{} losses", entries.len());
    let base_rtt = path.base_rtt(1448).as_secs_f64();
    let mut prev_wmax = 0.0f64;
    let mut epochs = 0;
    let (mut worst, mut sum_err, mut n_err) = (0.0f64, 0.0f64, 0usize);
    for (k, &e) in entries.iter().enumerate() {
        let w_before = s[e - 1].cwnd as f64;
        // Fast convergence, as RFC 9438 §4.7.
        let w_max = if w_before < prev_wmax {
            w_before * (1.0 + BETA) / 2.0
        } else {
            w_before
        };
        prev_wmax = w_max;
        let w_epoch = (w_before * BETA).floor();
        let Some(&next) = entries.get(k + 1) else {
            break;
        };
        // The epoch starts with the first ACK after recovery.
        let Some(start) = (e..next).find(|&i| s[i].state == CaState::Open) else {
            continue;
        };
        let t0 = s[start].t;
        let kk = ((w_max - w_epoch) / C).cbrt();
        let mut seen = 0;
        for smp in &s[start..next] {
            if smp.state != CaState::Open {
                continue;
            }
            let t = (smp.t - t0).as_secs_f64() + base_rtt;
            let target = C * (t - kk).powi(3) + w_max;
            let err = (smp.cwnd as f64 - target).abs() / target;
            worst = worst.max(err);
            sum_err += err;
            n_err += 1;
            seen += 1;
        }
        if seen > 100 {
            epochs += 1;
        }
        eprintln!(
            "epoch {k}: W_max {w_max:.1}, cwnd_epoch {w_epoch}, K {kk:.2} s, length {:.2} s",
            (s[next].t - t0).as_secs_f64()
        );
    }
    let mean = sum_err / n_err as f64;
    eprintln!(
        "cubic fit over {epochs} epochs, {n_err} samples: max error {:.2} %, mean {:.2} %",
        worst * 100.0,
        mean * 100.0
    );
    assert!(epochs >= 3);
    assert!(worst < 0.05, "max relative error {worst}");
    assert!(mean < 0.02, "mean relative error {mean}");
}

/// 3. CUBIC backs off to β = 717/1024, NewReno to 1/2, and NewReno grows by one
///    segment per RTT between losses.
#[test]
fn backoff_ratios_and_reno_slope() {
    let path = Path::default_10m();
    for cc in [CongestionControl::Cubic, CongestionControl::NewReno] {
        let cfg = TcpConfig::default().with_cc(cc);
        let h = run(cfg, path.clone(), None, secs(40));
        let s = &h.run.samples;
        let entries = recovery_entries(s);
        assert!(entries.len() >= 3, "{cc:?}: {} losses", entries.len());
        let expect = match cc {
            CongestionControl::Cubic => BETA,
            CongestionControl::NewReno => 0.5,
            CongestionControl::Bbr => unreachable!("loss-based only"),
        };
        let mut ratios = vec![];
        for &e in &entries {
            let before = s[e - 1].cwnd as f64;
            let ssthresh = s[e].ssthresh as f64;
            ratios.push(ssthresh / before);
            assert!(
                (ssthresh - before * expect).abs() <= 1.0,
                "{cc:?}: ssthresh {ssthresh} after cwnd {before}"
            );
            // Recovery ends with cwnd = ssthresh.
            let exit = (e..s.len())
                .find(|&i| s[i].state != CaState::Recovery)
                .unwrap();
            assert!(s[exit].cwnd >= s[e].ssthresh && s[exit].cwnd <= s[e].ssthresh + 1);
        }
        let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
        eprintln!(
            "{cc:?}: {} reductions, back-off ratio mean {mean:.3} (min {:.3}, max {:.3})",
            ratios.len(),
            ratios.iter().cloned().fold(1.0, f64::min),
            ratios.iter().cloned().fold(0.0, f64::max)
        );
        if cc == CongestionControl::NewReno {
            // Slope: Δcwnd per round trip, the round trips counted with the path's own
            // RTT measurements (∫ dt / RTT).
            for w in entries.windows(2) {
                let Some(start) = (w[0]..w[1]).find(|&i| s[i].state == CaState::Open) else {
                    continue;
                };
                let end = w[1] - 1;
                let mut rounds = 0.0;
                let mut rtt = s[start].path_rtt.unwrap_or(path.base_rtt(1448));
                for i in start + 1..=end {
                    if let Some(r) = s[i].path_rtt {
                        rtt = r;
                    }
                    rounds += (s[i].t - s[i - 1].t).as_secs_f64() / rtt.as_secs_f64();
                }
                let grown = (s[end].cwnd - s[start].cwnd) as f64;
                let slope = grown / rounds;
                eprintln!(
                    "newreno: cwnd {} → {} over {rounds:.1} RTTs: {slope:.3} segments/RTT",
                    s[start].cwnd, s[end].cwnd
                );
                assert!((slope - 1.0).abs() < 0.1, "slope {slope}");
            }
        }
    }
}

/// 4. With CE marking instead of drops, an ECN flow has no loss, backs off on marks
///    at most once per RTT and keeps the queue short. (The threshold, 20 ms, is about
///    half the base RTT: what CUBIC's β = 0.7 needs to keep the link busy; with 5 ms
///    the queue is shorter still and goodput drops to ≈ 74 %.)
#[test]
fn ecn_marks_instead_of_drops() {
    let mut path = Path::default_10m();
    path.aqm = Aqm::CeAbove(Nanos::from_ms(20));
    let cfg = TcpConfig {
        ecn: true,
        ..TcpConfig::default()
    };
    let dur = secs(30);
    let h = run(cfg, path.clone(), None, dur);
    let tail = run(TcpConfig::default(), Path::default_10m(), None, dur);
    let st = h.sender.stats();
    let g = goodput(h.receiver.bytes_received(), dur, path.rate_bps);
    let reductions: Vec<Nanos> = h
        .run
        .samples
        .windows(2)
        .filter(|w| w[1].ecn_reductions > w[0].ecn_reductions)
        .map(|w| w[1].t)
        .collect();
    let min_gap = reductions.windows(2).map(|w| w[1] - w[0]).min().unwrap();
    eprintln!(
        "ecn, CE above 20 ms: marks {}, drops {}, retransmits {}, reductions {}, min gap \
         between reductions {min_gap}, mean sojourn {}, max queue {}, goodput {:.1} %",
        h.run.marks,
        h.run.drops,
        st.retransmits,
        st.ecn_reductions,
        h.run.mean_sojourn(),
        h.run.max_queue,
        g * 100.0
    );
    assert_eq!(
        (h.run.drops, st.retransmits, st.timeouts, st.fast_recoveries),
        (0, 0, 0, 0)
    );
    assert!(h.run.marks > 0 && st.ecn_reductions > 10);
    assert_eq!(st.ecn_reductions as usize, reductions.len());
    assert!(
        min_gap >= path.base_rtt(1448),
        "two reductions within an RTT"
    );
    eprintln!(
        "  same flow without ECN over the plain FIFO: mean sojourn {}, drops {}",
        tail.run.mean_sojourn(),
        tail.run.drops
    );
    assert!(h.run.mean_sojourn() < Nanos::from_ms(20));
    assert!(h.run.mean_sojourn() * 3 < tail.run.mean_sojourn());
    assert!(h.run.max_queue < path.buffer_pkts / 2);
    assert!(g > 0.90, "goodput {g}");
}

/// 4b. With CoDel (txop-core's fq_codel) on the bottleneck, ECN-capable flows are
///     marked rather than dropped and back off; without ECN they are dropped.
#[test]
fn codel_marks_ecn_flows_and_drops_the_others() {
    let mut path = Path::default_10m();
    path.aqm = Aqm::Codel;
    path.buffer_pkts = 1000;
    let dur = secs(20);
    for ecn in [true, false] {
        let cfg = TcpConfig {
            ecn,
            ..TcpConfig::default()
        };
        let h = run(cfg, path.clone(), None, dur);
        let st = h.sender.stats();
        let g = goodput(h.receiver.bytes_received(), dur, path.rate_bps);
        eprintln!(
            "codel, ecn {ecn}: marks {}, drops {}, retransmits {}, ecn reductions {}, fast \
             recoveries {}, mean sojourn {}, goodput {:.1} %",
            h.run.marks,
            h.run.drops,
            st.retransmits,
            st.ecn_reductions,
            st.fast_recoveries,
            h.run.mean_sojourn(),
            g * 100.0
        );
        if ecn {
            assert_eq!((h.run.drops, st.retransmits, st.timeouts), (0, 0, 0));
            assert!(h.run.marks > 0 && st.ecn_reductions > 0);
        } else {
            assert_eq!(h.run.marks, 0);
            assert!(h.run.drops > 0 && st.fast_recoveries > 0);
        }
        assert!(h.run.mean_sojourn() < Nanos::from_ms(20));
        assert!(g > 0.85, "goodput {g}");
    }
}

/// 5. A path that blackholes for 2 s: RTOs back off exponentially from ≥ 200 ms and
///    the flow resumes.
#[test]
fn rto_backoff_over_a_blackhole() {
    let mut path = Path::default_10m();
    path.blackhole = Some((secs(5), secs(7)));
    let h = run(TcpConfig::default(), path.clone(), None, secs(15));
    let ev = &h.run.rto_events;
    let gaps: Vec<Nanos> = ev.windows(2).map(|w| w[1].0 - w[0].0).collect();
    let last_ack_before = h
        .run
        .samples
        .iter()
        .filter(|s| s.t < ev[0].0)
        .map(|s| s.t)
        .next_back()
        .unwrap();
    let fmt: Vec<String> = ev
        .iter()
        .map(|(t, _)| format!("{:.3}", t.as_secs_f64()))
        .collect();
    eprintln!(
        "blackhole 5–7 s: RTOs at {fmt:?} s, first {} after the last ACK, gaps {gaps:?}",
        ev[0].0 - last_ack_before
    );
    assert!(ev.len() >= 3);
    assert!(ev[0].0 - last_ack_before >= Nanos::from_ms(200));
    for w in gaps.windows(2) {
        assert_eq!(w[1], w[0] * 2, "RTO doubles");
    }
    assert!(gaps[0] >= Nanos::from_ms(400));
    // Every RTO of the episode came while the path was dead or right after.
    assert!(ev
        .iter()
        .all(|(t, rto)| *t >= secs(5) && *rto >= Nanos::from_ms(200)));
    // The flow resumes: the first retransmission after 7 s gets through, the state
    // returns to Open, and the link is used again.
    let resumed = ev.last().unwrap().0;
    assert!(resumed >= secs(7) && resumed < secs(9));
    let after: Vec<&Sample> = h.run.samples.iter().filter(|s| s.t > resumed).collect();
    assert!(after.iter().any(|s| s.state == CaState::Open));
    let delivered_late = h.run.arrivals.iter().filter(|(t, _)| *t > secs(10)).count();
    let g = delivered_late as f64 * 1500.0 * 8.0 / 5.0 / path.rate_bps as f64;
    eprintln!("after recovery (10–15 s): {:.1} % of the link", g * 100.0);
    assert!(g > 0.9);
}

/// 6. A few random losses are repaired by SACK fast retransmit without an RTO, and
///    every byte arrives exactly once, in order.
#[test]
fn sack_recovery_without_rto_delivers_every_byte() {
    let total = 3_000_000u64;
    for cc in [CongestionControl::Cubic, CongestionControl::NewReno] {
        let mut path = Path::default_10m();
        path.buffer_pkts = 1000;
        path.random_loss = 0.01;
        path.random_loss_below = total - 30 * 1448;
        path.seed = 42;
        let h = run(
            TcpConfig::default().with_cc(cc),
            path,
            Some(total),
            secs(60),
        );
        let st = h.sender.stats();
        let rs = h.receiver.stats();
        eprintln!(
            "{cc:?}, 1 % random loss: drops {}, retransmits {}, fast recoveries {}, timeouts \
             {}, done at {:?}",
            h.run.drops, st.retransmits, st.fast_recoveries, st.timeouts, h.run.done_at
        );
        assert!(h.run.drops >= 5);
        assert_eq!(st.timeouts, 0);
        assert!(st.fast_recoveries >= 3);
        // Only the dropped segments were retransmitted, and each arrived once.
        assert_eq!(st.retransmits, h.run.drops);
        assert_eq!(rs.duplicate_segments, 0);
        assert_eq!(h.receiver.bytes_received(), total);
        assert!(h.sender.is_done());
        assert!(rs.fin_received);
        // The receiver saw each byte range exactly once.
        let mut seqs: Vec<u64> = h.run.arrivals.iter().map(|a| a.1).collect();
        seqs.sort_unstable();
        let n = seqs.len();
        seqs.dedup();
        assert_eq!(n, seqs.len());
        assert_eq!(n as u64, total.div_ceil(1448));
    }
}

/// 7. Delayed ACKs: one per segment for the first 16, about one per two after, and
///    the 40 ms timer for a lone last segment.
#[test]
fn delayed_acks_quickack_and_timer() {
    let mut timer_acks = 0;
    for segments in [401u64, 402] {
        let total = segments * 1448;
        // No FIN: it would be ACKed at once.
        let h = run_fin(
            TcpConfig::default(),
            Path::default_10m(),
            Some(total),
            secs(20),
            false,
        );
        assert!(h.sender.is_done());
        let arr = &h.run.arrivals;
        let acks = &h.run.acks;
        // Quick-ack: each of the first 16 arrivals is ACKed at once.
        for (k, (t, _)) in arr.iter().take(16).enumerate() {
            assert_eq!(acks[k].0, *t);
            assert!(!acks[k].2);
        }
        // Steady state.
        let after = acks.len() - 16;
        let ratio = after as f64 / (arr.len() - 16) as f64;
        eprintln!(
            "{segments} segments: {} ACKs ({} by timer), {ratio:.3} ACKs per segment after \
             the quick-ack phase",
            acks.len(),
            acks.iter().filter(|a| a.2).count()
        );
        assert!((0.49..0.55).contains(&ratio), "{ratio}");
        // Timer ACKs come 40 ms after the lone segment they acknowledge.
        for a in acks.iter().filter(|a| a.2) {
            let last = arr
                .iter()
                .filter(|x| x.0 <= a.0)
                .map(|x| x.0)
                .next_back()
                .unwrap();
            assert_eq!(a.0 - last, Nanos::from_ms(40));
            timer_acks += 1;
        }
    }
    assert!(timer_acks >= 1, "an odd last segment waits for the timer");
}

/// 8. HyStart ends slow start on the delay increase, before the first loss, well
///    below what the buffer would hold.
#[test]
fn hystart_exits_slow_start_before_loss() {
    let mut path = Path::default_10m();
    path.buffer_pkts = 300;
    let bdp = 10e6 * path.base_rtt(1448).as_secs_f64() / 8.0 / 1500.0;
    let capacity = bdp + path.buffer_pkts as f64;
    for hystart in [true, false] {
        let cfg = TcpConfig {
            hystart,
            ..TcpConfig::default()
        };
        let h = run(cfg, path.clone(), None, secs(10));
        let s = &h.run.samples;
        let first = s.iter().find(|x| x.ssthresh < 0x7fff_ffff).unwrap();
        let first_drop = h.run.drop_times.first().copied().unwrap_or(Nanos::MAX);
        eprintln!(
            "hystart {hystart}: slow start ended at {:.3} s with cwnd {} (state {:?}; first \
             drop at {}); BDP {bdp:.0} + buffer {} = {capacity:.0} packets",
            first.t.as_secs_f64(),
            first.cwnd,
            first.state,
            first_drop,
            path.buffer_pkts
        );
        if hystart {
            assert_eq!(first.state, CaState::Open);
            assert!(first.t < first_drop);
            let exit = h.sender.stats().hystart_exit_cwnd.unwrap();
            assert_eq!(exit, first.ssthresh);
            assert!((exit as f64) < capacity / 3.0, "exit cwnd {exit}");
            assert!(exit >= 16);
        } else {
            assert!(first.state == CaState::Recovery || first.state == CaState::Loss);
            assert!(s
                .iter()
                .filter(|x| x.t < first.t)
                .all(|x| x.cwnd as f64 >= 1.0));
            assert!(s.iter().map(|x| x.cwnd).max().unwrap() as f64 > capacity * 0.9);
        }
    }
}

/// 9. Two identical runs give identical traces; pacing spreads segments.
#[test]
fn deterministic_and_pacing_spreads_segments() {
    let mut path = Path::default_10m();
    path.random_loss = 0.002;
    path.seed = 9;
    let a = run(TcpConfig::default(), path.clone(), None, secs(10));
    let b = run(TcpConfig::default(), path.clone(), None, secs(10));
    assert_eq!(a.run.samples, b.run.samples);
    assert_eq!(a.run.sent, b.run.sent);
    let cwnd: Vec<u32> = a.run.samples.iter().map(|s| s.cwnd).collect();
    assert!(cwnd.len() > 1000);

    let burst = |sent: &[(Nanos, u64, u32)]| -> usize {
        let mut best = 0;
        let mut i = 0;
        while i < sent.len() {
            let j = (i..sent.len())
                .find(|&j| sent[j].0 != sent[i].0)
                .unwrap_or(sent.len());
            best = best.max(j - i);
            i = j;
        }
        best
    };
    let path = Path::default_10m();
    for pacing in [false, true] {
        let cfg = TcpConfig {
            pacing,
            ..TcpConfig::default()
        };
        let dur = secs(20);
        let h = run(cfg, path.clone(), None, dur);
        // Linux does not pace the first 10 segments (the initial window).
        let b = burst(&h.run.sent[10..]);
        let g = goodput(h.receiver.bytes_received(), dur, path.rate_bps);
        eprintln!(
            "pacing {pacing}: largest burst at one instant {b}, goodput {:.1} %, peak queue {}",
            g * 100.0,
            h.run.max_queue
        );
        if pacing {
            assert!(b <= 2, "burst of {b}");
            assert!(g > 0.90);
        } else {
            assert!(b > 2);
        }
    }
}

#[test]
fn mss_from_mtu() {
    assert_eq!(TcpConfig::for_mtu(1500).mss_bytes, 1448);
    assert_eq!(TcpConfig::default().mss_bytes, 1448);
    assert_eq!(TcpConfig::default().initial_cwnd_segments, 10);
}

// ---------------------------------------------------------------------------------
// BBR v1 (`tcp_bbr.c`). Expectations come from the path (link rate, propagation RTT,
// BDP) and Linux's constants, not from the implementation's own reports.
// ---------------------------------------------------------------------------------

fn bbr_cfg() -> TcpConfig {
    TcpConfig::default().with_cc(CongestionControl::Bbr)
}

/// The default 10 Mbit/s, 40 ms path with a deep FIFO: 250 packets, 300 ms, ≈ 7 BDP.
fn deep_fifo_10m() -> Path {
    Path {
        buffer_pkts: 250,
        ..Path::default_10m()
    }
}

/// Payload bytes per second the link carries with full segments.
fn payload_rate(path: &Path) -> f64 {
    path.rate_bps as f64 / 8.0 * 1448.0 / 1500.0
}

/// Bandwidth-delay product of the path in full segments.
fn bdp_segments(path: &Path) -> f64 {
    payload_rate(path) * path.base_rtt(1448).as_secs_f64() / 1448.0
}

fn mode(s: &Sample) -> BbrMode {
    s.bbr.expect("a BBR sample").mode
}

/// Mean queueing delay (harness-measured RTT − propagation RTT) of the ACKs after `from`.
fn mean_queue_delay(samples: &[Sample], from: Nanos, base_rtt: Nanos) -> Nanos {
    let d: Vec<u64> = samples
        .iter()
        .filter(|s| s.t >= from)
        .filter_map(|s| s.path_rtt)
        .map(|r| r.saturating_sub(base_rtt).as_ns())
        .collect();
    Nanos(d.iter().sum::<u64>() / d.len().max(1) as u64)
}

/// Utilisation of the link by segments arriving at the receiver in `[from, to)`.
fn link_utilisation(arrivals: &[(Nanos, u64)], from: Nanos, to: Nanos, rate_bps: u64) -> f64 {
    let n = arrivals
        .iter()
        .filter(|(t, _)| *t >= from && *t < to)
        .count();
    n as f64 * 1500.0 * 8.0 / (to - from).as_secs_f64() / rate_bps as f64
}

/// 11. BBR fills a 10 Mbit/s bottleneck with a deep FIFO, its bandwidth estimate is
///     the link's payload rate, and its standing queue stays well under one BDP,
///     where CUBIC on the same path fills the buffer.
#[test]
fn bbr_fills_the_link_with_a_small_standing_queue() {
    let path = deep_fifo_10m();
    let dur = secs(30);
    let base = path.base_rtt(1448);
    let bdp = bdp_segments(&path);
    let bbr = run(bbr_cfg(), path.clone(), None, dur);
    let cubic = run(TcpConfig::default(), path.clone(), None, dur);
    let from = secs(2);
    let util = link_utilisation(&bbr.run.arrivals, from, dur, path.rate_bps);
    let g = goodput(bbr.receiver.bytes_received(), dur, path.rate_bps);
    let bw = bbr.sender.stats().bbr.unwrap().bw_bytes_per_s as f64;
    let bbr_delay = mean_queue_delay(&bbr.run.samples, from, base);
    let cubic_delay = mean_queue_delay(&cubic.run.samples, from, base);
    let bbr_max_q = bbr
        .run
        .samples
        .iter()
        .filter(|s| s.t >= from)
        .map(|s| s.queue_pkts)
        .max();
    let cubic_util = link_utilisation(&cubic.run.arrivals, from, dur, path.rate_bps);
    eprintln!(
        "10M/40ms/250pkt, BDP {bdp:.1} segments: BBR utilisation {:.1} % after 2 s \
         (goodput {:.1} %), bw estimate {bw:.0} B/s (link payload {:.0}), queue delay \
         {bbr_delay} mean, max queue {bbr_max_q:?} pkts after 2 s, drops {}; CUBIC \
         utilisation {:.1} %, queue delay {cubic_delay} mean, drops {}",
        util * 100.0,
        g * 100.0,
        payload_rate(&path),
        bbr.run.drops,
        cubic_util * 100.0,
        cubic.run.drops
    );
    assert!(util > 0.90, "utilisation {util}");
    assert!(g > 0.90, "goodput {g}");
    // Delivery-rate sampling measures the bottleneck (within 1 %).
    assert!((bw / payload_rate(&path) - 1.0).abs() < 0.01, "bw {bw}");
    // The standing queue: well under one BDP (one base RTT of delay) on average and
    // at its peak; CUBIC's is several times larger.
    assert!(bbr_delay < Nanos(base.0 / 4), "BBR queue delay {bbr_delay}");
    assert!(
        (bbr_max_q.unwrap() as f64) < bdp,
        "BBR peak queue {bbr_max_q:?}"
    );
    assert!(cubic_delay > base, "CUBIC queue delay {cubic_delay}");
    assert!(cubic_delay > bbr_delay * 10, "{cubic_delay} vs {bbr_delay}");
    assert_eq!(bbr.sender.stats().timeouts, 0);
}

/// 12. The state machine over the same path: STARTUP exits a few round trips after
///     the pipe fills, DRAIN empties the queue STARTUP built, PROBE_BW cycles pacing
///     gains [1.25, 0.75, 1 × 6] one propagation RTT each, and PROBE_RTT comes about
///     every 10 s and holds cwnd at 4 segments for at least 200 ms.
#[test]
fn bbr_startup_drain_probe_bw_and_probe_rtt() {
    let path = deep_fifo_10m();
    let base = path.base_rtt(1448);
    let bdp = bdp_segments(&path);
    let h = run(bbr_cfg(), path.clone(), None, secs(35));
    let s = &h.run.samples;

    // STARTUP: the pipe is full once the bottleneck queue starts to build for good
    // (queue non-empty on 10 consecutive ACKs).
    let fill = (0..s.len() - 10)
        .find(|&i| s[i..i + 10].iter().all(|x| x.queue_pkts > 0))
        .unwrap();
    let drain = s.iter().position(|x| mode(x) == BbrMode::Drain).unwrap();
    assert!(s[..drain].iter().all(|x| mode(x) == BbrMode::Startup));
    // Round trips between them, counted with the path's own RTT measurements.
    let mut rounds = 0.0;
    let mut rtt = base;
    for i in fill + 1..=drain {
        if let Some(r) = s[i].path_rtt {
            rtt = r;
        }
        rounds += (s[i].t - s[i - 1].t).as_secs_f64() / rtt.as_secs_f64();
    }
    // DRAIN: it ends when the queue is about gone.
    let probe_bw = s.iter().position(|x| mode(x) == BbrMode::ProbeBw).unwrap();
    let q_startup = s[drain].queue_pkts;
    let q_drained = s[probe_bw].queue_pkts;
    let drain_time = s[probe_bw].t - s[drain].t;
    eprintln!(
        "STARTUP: pipe full at {:.3} s, DRAIN from {:.3} s ({rounds:.1} round trips later) \
         with {q_startup} packets queued; PROBE_BW from {:.3} s ({drain_time} later) with \
         {q_drained} queued (BDP {bdp:.1})",
        s[fill].t.as_secs_f64(),
        s[drain].t.as_secs_f64(),
        s[probe_bw].t.as_secs_f64()
    );
    // 3 rounds without 25 % growth (`bbr_full_bw_cnt`), plus the round in flight.
    // (The delivery-rate samples lag the pipe by up to a round: up to 6 in all.)
    assert!((2.0..=6.0).contains(&rounds), "{rounds} rounds");
    assert!(
        q_startup as f64 > bdp / 2.0,
        "STARTUP overshoot {q_startup}"
    );
    // DRAIN's gain 1/2.885 empties the overshoot in about one round; what is left is
    // the quantisation budget (3 × 2 segments here).
    assert!(
        q_drained <= 10 && q_drained * 4 <= q_startup,
        "{q_drained} left"
    );
    assert!(drain_time <= base * 4, "DRAIN took {drain_time}");

    // PROBE_BW: the distinct pacing rates of a steady stretch (2 s to 9.5 s).
    let steady: Vec<&Sample> = s
        .iter()
        .filter(|x| x.t >= secs(2) && x.t < Nanos::from_ms(9500))
        .collect();
    assert!(steady.iter().all(|x| mode(x) == BbrMode::ProbeBw));
    let mut rates: Vec<u64> = steady.iter().map(|x| x.pacing_rate.unwrap()).collect();
    rates.sort_unstable();
    rates.dedup();
    assert_eq!(rates.len(), 3, "{rates:?}");
    let (lo, cruise, hi) = (rates[0] as f64, rates[1] as f64, rates[2] as f64);
    eprintln!(
        "PROBE_BW pacing rates {rates:?}: {:.4} / {:.4} of cruise, cruise {:.4} of the \
         link's payload rate",
        lo / cruise,
        hi / cruise,
        cruise / payload_rate(&path)
    );
    assert!((hi / cruise - 1.25).abs() < 0.002);
    assert!((lo / cruise - 0.75).abs() < 0.002);
    // Cruise = BtlBw × 0.99 (`bbr_pacing_margin_percent`).
    assert!((cruise / payload_rate(&path) - 0.99).abs() < 0.005);
    // Phase order and length: each 1.25 phase is followed by 0.75 and then by six
    // phases at 1.0, each at least one propagation RTT.
    let mut changes: Vec<(Nanos, u64)> = vec![];
    for x in &steady {
        let r = x.pacing_rate.unwrap();
        if changes.last().is_none_or(|c| c.1 != r) {
            changes.push((x.t, r));
        }
    }
    let starts: Vec<usize> = (1..changes.len())
        .filter(|&i| changes[i].1 == rates[2])
        .collect();
    assert!(starts.len() >= 15, "{} cycles", starts.len());
    let mut periods = vec![];
    for w in starts.windows(2) {
        let (a, b) = (w[0], w[1]);
        assert_eq!(b - a, 3, "1.25 → 0.75 → 1.0 → 1.25");
        assert_eq!(changes[a + 1].1, rates[0]);
        assert_eq!(changes[a + 2].1, rates[1]);
        let high = changes[a + 1].0 - changes[a].0;
        let cruise_len = changes[b].0 - changes[a + 2].0;
        assert!(high >= base, "1.25 phase {high}");
        assert!(cruise_len >= base * 6, "six 1.0 phases in {cruise_len}");
        periods.push((changes[b].0 - changes[a].0).as_secs_f64());
    }
    let period = periods.iter().sum::<f64>() / periods.len() as f64;
    eprintln!(
        "gain cycle: {} cycles, mean period {:.1} ms = {:.2} propagation RTTs",
        periods.len(),
        period * 1e3,
        period / base.as_secs_f64()
    );
    assert!(period >= 7.0 * base.as_secs_f64() && period <= 9.5 * base.as_secs_f64());

    // PROBE_RTT: entries and exits.
    let mut episodes: Vec<(usize, usize)> = vec![];
    for i in 1..s.len() {
        if mode(&s[i]) == BbrMode::ProbeRtt && mode(&s[i - 1]) != BbrMode::ProbeRtt {
            let end = (i..s.len())
                .find(|&j| mode(&s[j]) != BbrMode::ProbeRtt)
                .unwrap_or(s.len() - 1);
            episodes.push((i, end));
        }
    }
    let fmt: Vec<String> = episodes
        .iter()
        .map(|&(a, b)| {
            format!(
                "{:.3} s for {:.0} ms",
                s[a].t.as_secs_f64(),
                (s[b].t - s[a].t).as_secs_f64() * 1e3
            )
        })
        .collect();
    eprintln!("PROBE_RTT: {fmt:?}");
    assert_eq!(episodes.len(), 3, "in 35 s");
    // The first comes 10 s after the min RTT was measured (the first ACK), the next
    // 10 s after each one ends.
    assert!(s[episodes[0].0].t >= secs(10) && s[episodes[0].0].t < secs(10) + base * 2);
    for w in episodes.windows(2) {
        let gap = s[w[1].0].t - s[w[0].1].t;
        assert!(gap >= secs(10) && gap < secs(10) + base * 2, "gap {gap}");
    }
    for &(a, b) in &episodes {
        let during = &s[a..b];
        assert!(during.iter().all(|x| x.cwnd <= 4));
        // 200 ms at ≤ 4 segments in flight (after draining to it), then one round.
        let at_four = during.iter().find(|x| x.in_flight <= 4).unwrap().t;
        assert!(s[b].t - at_four >= Nanos::from_ms(200));
        assert!(s[b].t - s[a].t <= Nanos::from_ms(200) + base * 4);
        // The queue empties: the propagation delay is seen again.
        assert!(during.iter().any(|x| x.queue_pkts == 0));
        // cwnd comes back.
        assert!(s[b].cwnd as f64 >= bdp);
    }
}

/// 13. Random loss of 1 % of first transmissions on a 10 Mbit/s, 100 ms path: BBR
///     does not treat loss as congestion and keeps the link busy; CUBIC backs off on
///     every loss and gets a fraction (Mathis: ≈ 1.22 MSS / (RTT √p) ≈ 1.4 Mbit/s
///     for Reno).
#[test]
fn bbr_keeps_its_rate_under_random_loss() {
    let path = Path {
        one_way: Nanos::from_ms(50),
        random_loss: 0.01,
        ..Path::default_10m()
    };
    let dur = secs(30);
    let bbr = run(bbr_cfg(), path.clone(), None, dur);
    let cubic = run(TcpConfig::default(), path.clone(), None, dur);
    let gb = goodput(bbr.receiver.bytes_received(), dur, path.rate_bps);
    let gc = goodput(cubic.receiver.bytes_received(), dur, path.rate_bps);
    let sb = bbr.sender.stats();
    eprintln!(
        "1 % loss, 10M/100ms: BBR goodput {:.1} % ({} losses, {} recoveries, {} RTOs, \
         policer mode {}), CUBIC {:.1} % ({} losses): ratio {:.1}",
        gb * 100.0,
        sb.losses_detected,
        sb.fast_recoveries,
        sb.timeouts,
        sb.bbr.unwrap().lt_use_bw,
        gc * 100.0,
        cubic.sender.stats().losses_detected,
        gb / gc
    );
    assert!(bbr.run.drops > 100 && cubic.run.drops > 30);
    assert!(gb > 0.85, "BBR goodput {gb}");
    assert!(gb > 3.0 * gc, "BBR {gb} vs CUBIC {gc}");
    // 1 % is far below the long-term estimator's 20 % policer threshold.
    assert!(!sb.bbr.unwrap().lt_use_bw);
}

/// 14. Same seed, same trajectory (random loss included); another loss seed changes it.
#[test]
fn bbr_is_deterministic() {
    let path = Path {
        random_loss: 0.005,
        ..deep_fifo_10m()
    };
    let a = run(bbr_cfg(), path.clone(), None, secs(12));
    let b = run(bbr_cfg(), path.clone(), None, secs(12));
    assert_eq!(a.run.samples, b.run.samples);
    assert_eq!(a.run.sent, b.run.sent);
    assert_eq!(a.sender.stats(), b.sender.stats());
    let c = run(bbr_cfg(), Path { seed: 2, ..path }, None, secs(12));
    assert_ne!(a.run.sent, c.run.sent);
}

/// A Linux receiver's window bounds what is in flight: without auto-tuning
/// (`tcp_moderate_rcvbuf` 0) a 6.12 receiver offers at most its clamp, 64076 B
/// rounded to the scale (64128 B = 44.3 segments), so a 1000-packet FIFO behind a
/// 6 Mbit/s link never holds more than that window's packets; with auto-tuning the
/// buffer grows with what is read per receiver RTT and the queue grows past it, over
/// several RTTs rather than at once.
#[test]
fn linux_receive_window_bounds_the_queue_until_autotuning_grows_it() {
    use super::{LinuxReceive, ReceiveWindow};
    let path = Path {
        rate_bps: 6_000_000,
        buffer_pkts: 1000,
        one_way: Nanos::from_ms(2),
        ..Path::default_10m()
    };
    let cfg = |moderate_rcvbuf| TcpConfig {
        receive: ReceiveWindow::Linux(LinuxReceive {
            moderate_rcvbuf,
            ..LinuxReceive::linux_6_12()
        }),
        ..TcpConfig::default()
    };
    let fixed = run(cfg(false), path.clone(), None, secs(10));
    let window_pkts = 64_128usize.div_ceil(1448);
    assert!(
        fixed.run.max_queue <= window_pkts,
        "queue {} beyond the window's {window_pkts} packets",
        fixed.run.max_queue
    );
    assert_eq!(fixed.run.drops, 0);
    let rw = fixed.receiver.linux_window().expect("a Linux receiver");
    assert_eq!(rw.window_clamp_bytes(), 64_076);
    // The window-limited flow still fills the link (64 KB ≫ 6 Mbit/s × 4 ms).
    let g = goodput(fixed.receiver.bytes_received(), secs(10), path.rate_bps);
    assert!(g > 0.9, "goodput {g}");

    let tuned = run(cfg(true), path.clone(), None, secs(10));
    let rw = tuned.receiver.linux_window().unwrap();
    assert!(
        rw.window_clamp_bytes() > 64_076 * 4,
        "clamp {}",
        rw.window_clamp_bytes()
    );
    assert!(tuned.run.max_queue > 4 * window_pkts);
    // What is in flight never exceeds what the receiver last offered.
    for s in &tuned.run.samples {
        assert!(s.in_flight as u64 * 1448 <= rw.rcvbuf_bytes());
    }
    // The queue at 0.5 s is a fraction of its peak: it grew over several RTTs.
    let at = |t: Nanos| {
        tuned
            .run
            .samples
            .iter()
            .take_while(|s| s.t <= t)
            .last()
            .map_or(0, |s| s.queue_pkts)
    };
    eprintln!(
        "6.12 receiver, 6 Mbit/s, 1000-packet FIFO: queue at 0.25 s {}, 0.5 s {}, 1 s {}, 2 s {}, peak {}; clamp {} B",
        at(Nanos::from_ms(250)),
        at(Nanos::from_ms(500)),
        at(secs(1)),
        at(secs(2)),
        tuned.run.max_queue,
        rw.window_clamp_bytes()
    );
    assert!(at(Nanos::from_ms(250)) < tuned.run.max_queue / 4);
}

/// The flow's series as the simulator records them (`FlowStats::tcp_sample` after every
/// ACK), for a connection that one forced loss hits while its window is held at 64
/// segments by the receive window: each step's cwnd is the sender's at the step's last
/// ACK, 64 segments before the loss, and after it the window comes down to CUBIC's
/// ssthresh, 64 × 717/1024 = 44 segments (RFC 9438 §4.6, `cubictcp_recalc_ssthresh`),
/// never lower, from where it grows again; srtt is the path's RTT while the window is
/// far below the path's capacity (2 × 250 ms, and at most a window's serialisation,
/// 0.75 ms, of queue), and the delivery rate a window per RTT.
#[test]
fn series_show_cubic_backing_off_once_after_one_loss() {
    use txop_core::network::Host;
    let mss = 1448u64;
    let cfg = TcpConfig {
        rwnd_bytes: 64 * mss,
        ..TcpConfig::default()
    };
    let mut path = Path::default_10m();
    path.one_way = Nanos::from_ms(250);
    // A window of 64 segments crosses 1 Gbit/s in 0.75 ms: no queue to speak of.
    path.rate_bps = 1_000_000_000;
    path.drop_seq = Some(600 * mss);
    let secs_run = 12.0;
    let h = run(cfg, path.clone(), None, Nanos::from_secs(12));
    let r = h
        .flow
        .result(0, ("tcp", ""), Host::Server, Host::Station(1), secs_run);
    assert_eq!(h.run.drops, 1, "one forced loss, nothing else");
    assert_eq!(r.retransmits, Some(1));
    let step = Nanos::from_ms(200);
    let cwnd = &r.cwnd_series_bytes;
    assert_eq!(cwnd.len(), 60);
    // Each step's value is the sender's cwnd after the last ACK before the step's end;
    // the steps before the first ACK (at one RTT) take the first.
    let first_ack = h.run.samples[0].t;
    for (j, &c) in cwnd.iter().enumerate() {
        let end = step * (j as u64 + 1);
        let last = h.run.samples.iter().rfind(|s| s.t < end);
        let segments = last.map_or(h.run.samples[0].cwnd, |s| s.cwnd);
        assert_eq!(c, segments as u64 * mss, "step {j}");
        assert_eq!(r.srtt_series_ms[j].is_some(), end > first_ack, "step {j}");
    }
    let full = 64 * mss;
    let reached = cwnd.iter().position(|&c| c == full).unwrap();
    let cut = reached + cwnd[reached..].iter().position(|&c| c < full).unwrap();
    assert!(
        cut - reached >= 10,
        "held at 64 segments until the loss: {cwnd:?}"
    );
    let ssthresh = 64 * 717 / 1024 * mss;
    assert_eq!(cwnd[cut], ssthresh, "{cwnd:?}");
    assert_eq!(cwnd[cut..].iter().min(), Some(&ssthresh), "{cwnd:?}");
    assert!(cwnd.last() > Some(&ssthresh), "grows again: {cwnd:?}");
    let rtt_ms = path.base_rtt(1448).as_ms_f64();
    for &v in r.srtt_series_ms.iter().take(cut).flatten() {
        assert!(
            v >= rtt_ms && v < rtt_ms + 0.75,
            "srtt {v} ms, path {rtt_ms} ms"
        );
    }
    // CUBIC does not pace here; it samples its delivery rate: 64 segments per RTT.
    assert!(r.pacing_rate_series_bps.is_empty() && r.bbr_mode_series.is_empty());
    let rate = r.delivery_rate_series_bps[cut - 1].unwrap() as f64;
    let expect = 64.0 * mss as f64 * 8.0 / path.base_rtt(1448).as_secs_f64();
    assert!((rate / expect - 1.0).abs() < 0.05, "{rate} vs {expect}");
}
