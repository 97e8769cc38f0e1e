//! End-to-end checks of sender + receiver over a simulated bottleneck, against
//! independently computed expectations (the CUBIC curve, β, Reno's slope, link
//! capacity).

use super::harness::{run, run_fin, Aqm, Path, Sample};
use super::{CaState, CongestionControl, TcpConfig};
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
