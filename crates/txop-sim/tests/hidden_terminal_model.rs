//! Checks of the two-hidden-station reference model (`support/hidden_terminal.rs`):
//! against a separately written Monte Carlo of the same protocol rules, against
//! Bianchi's model where the two must agree, and in the directions they must move.

#[path = "support/bianchi.rs"]
mod bianchi;
#[path = "support/hidden_terminal.rs"]
mod hidden_terminal;
#[path = "support/space_cells.rs"]
mod space_cells;

use bianchi::{Access, Dcf, Model, PhyParams, Timing};
use hidden_terminal::{classic_vulnerable_period, HiddenPair, Ns, Prediction};
use space_cells::hidden_pair;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::OnceLock;

fn pair(rate_mbps: f64, access: Access) -> HiddenPair {
    HiddenPair::from_phy(&PhyParams::ofdm_5ghz(rate_mbps), 1500, access)
}

/// splitmix64: a small, fixed-seed generator for the Monte Carlo.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform on 0..n.
    fn below(&mut self, n: u32) -> u32 {
        (((self.next() >> 32) * n as u64) >> 32) as u32
    }
}

/// What a station is doing, in the Monte Carlo.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// Counting `slots` from `from`; transmits at `from + slots * slot`.
    Count { from: Ns, slots: u32 },
    /// Medium busy (or DIFS running) until `resume`, then counts `slots`.
    Defer { resume: Ns, slots: u32 },
    /// In its own exchange.
    Exchange,
}

#[derive(Clone, Copy, Debug)]
struct Sta {
    stage: u32,
    mode: Mode,
    /// Invalidates scheduled transmissions and resumptions.
    gen: u64,
    /// End of the NAV/ACK heard during its own exchange.
    heard_end: Ns,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// Station starts its RTS/data (generation-checked); or its data after the CTS.
    TxStart(usize, u64),
    DataStart(usize),
    /// A station's frame ends (frame index).
    FrameEnd(usize),
    /// The AP's CTS (true) or ACK (false) to a station starts.
    Response(usize, bool),
    /// The station's exchange is over (success?).
    Done(usize, bool),
    /// Deferral over (generation-checked).
    Resume(usize, u64),
}

impl Ev {
    /// Order at equal times, as in the model: frame starts, frame ends, responses,
    /// exchange ends, resumptions.
    fn rank(&self) -> u8 {
        match self {
            Ev::TxStart(..) | Ev::DataStart(_) => 0,
            Ev::FrameEnd(_) => 1,
            Ev::Response(..) => 2,
            Ev::Done(..) => 3,
            Ev::Resume(..) => 4,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    sta: usize,
    start: Ns,
    end: Ns,
    ok: bool,
    rts: bool,
}

/// A separately written event-driven Monte Carlo of the model's rules (absolute
/// times, an event queue, a frame list at the AP): per-attempt failure probability
/// and total throughput (bit/s) over `secs` simulated seconds.
fn monte_carlo(m: &HiddenPair, secs: i64, seed: u64) -> (f64, f64) {
    let rts = m.access == Access::RtsCts;
    let mut rng = Rng(seed);
    let mut q: BinaryHeap<Reverse<(Ns, u8, u64, Ev)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |q: &mut BinaryHeap<Reverse<(Ns, u8, u64, Ev)>>, t: Ns, e: Ev| {
        seq += 1;
        q.push(Reverse((t, e.rank(), seq, e)));
    };
    let mut sta = [Sta {
        stage: 0,
        mode: Mode::Exchange,
        gen: 0,
        heard_end: Ns::MIN,
    }; 2];
    for (s, st) in sta.iter_mut().enumerate() {
        st.mode = Mode::Count {
            from: m.difs_ns,
            slots: rng.below(m.window(0)),
        };
        if let Mode::Count { from, slots } = st.mode {
            push(&mut q, from + slots as Ns * m.slot_ns, Ev::TxStart(s, 0));
        }
    }
    let mut frames: Vec<Frame> = Vec::new();
    let mut ap_tx: Vec<(Ns, Ns)> = Vec::new();
    let (mut attempts, mut failures, mut successes) = (0u64, 0u64, 0u64);
    let end = secs * 1_000_000_000;
    // Each station's latest frame, and whether it is on the air at t.
    let mut latest: [Option<usize>; 2] = [None; 2];
    let on_air = |frames: &[Frame], latest: &[Option<usize>; 2], s: usize, t: Ns| {
        latest[s].filter(|&i| frames[i].start <= t && t < frames[i].end)
    };
    while let Some(Reverse((t, _, _, ev))) = q.pop() {
        if t > end {
            break;
        }
        ap_tx.retain(|a| a.1 + 10_000_000 > t);
        match ev {
            Ev::TxStart(s, g) | Ev::Resume(s, g) if g != sta[s].gen => {}
            Ev::Resume(s, _) => {
                if let Mode::Defer { resume, slots } = sta[s].mode {
                    sta[s].mode = Mode::Count {
                        from: resume,
                        slots,
                    };
                    let g = sta[s].gen;
                    push(&mut q, resume + slots as Ns * m.slot_ns, Ev::TxStart(s, g));
                }
            }
            Ev::TxStart(s, _) | Ev::DataStart(s) => {
                let first = matches!(ev, Ev::TxStart(..));
                if first {
                    attempts += 1;
                    sta[s].mode = Mode::Exchange;
                    sta[s].heard_end = Ns::MIN;
                    sta[s].gen += 1;
                }
                let dur = if first && rts { m.rts_ns } else { m.data_ns };
                let mut f = Frame {
                    sta: s,
                    start: t,
                    end: t + dur,
                    ok: true,
                    rts: first && rts,
                };
                if let Some(i) = on_air(&frames, &latest, 1 - s, t) {
                    frames[i].ok = false;
                    f.ok = false;
                }
                if ap_tx.iter().any(|&(a, b)| a <= t && t < b) {
                    f.ok = false;
                }
                frames.push(f);
                latest[s] = Some(frames.len() - 1);
                push(&mut q, f.end, Ev::FrameEnd(frames.len() - 1));
            }
            Ev::FrameEnd(i) => {
                let f = frames[i];
                if f.ok {
                    push(&mut q, t + m.sifs_ns, Ev::Response(f.sta, f.rts));
                } else {
                    push(&mut q, t + m.response_timeout_ns, Ev::Done(f.sta, false));
                }
            }
            Ev::Response(s, cts) => {
                let dur = if cts { m.cts_ns } else { m.ack_ns };
                ap_tx.push((t, t + dur));
                let o = 1 - s;
                let deaf = on_air(&frames, &latest, o, t);
                if let Some(i) = deaf {
                    frames[i].ok = false;
                }
                let busy_end = if cts {
                    t + m.cts_ns + m.sifs_ns + m.data_ns + m.sifs_ns + m.ack_ns
                } else {
                    t + m.ack_ns
                };
                if deaf.is_none() {
                    match sta[o].mode {
                        Mode::Count { from, slots } => {
                            let tx_at = from + slots as Ns * m.slot_ns;
                            if tx_at > t + m.cca_detect_ns {
                                let passed = if t >= from {
                                    ((t - from) / m.slot_ns) as u32
                                } else {
                                    0
                                };
                                sta[o].gen += 1;
                                let resume = busy_end + m.difs_ns;
                                sta[o].mode = Mode::Defer {
                                    resume,
                                    slots: slots - passed,
                                };
                                push(&mut q, resume, Ev::Resume(o, sta[o].gen));
                            }
                        }
                        Mode::Defer { resume, slots } => {
                            let later = busy_end + m.difs_ns;
                            if later > resume {
                                sta[o].gen += 1;
                                sta[o].mode = Mode::Defer {
                                    resume: later,
                                    slots,
                                };
                                push(&mut q, later, Ev::Resume(o, sta[o].gen));
                            }
                        }
                        Mode::Exchange => sta[o].heard_end = sta[o].heard_end.max(busy_end),
                    }
                }
                if cts {
                    push(&mut q, t + m.cts_ns + m.sifs_ns, Ev::DataStart(s));
                } else {
                    push(&mut q, t + m.ack_ns, Ev::Done(s, true));
                }
            }
            Ev::Done(s, ok) => {
                if ok {
                    successes += 1;
                    sta[s].stage = 0;
                } else {
                    failures += 1;
                    sta[s].stage += 1;
                    if sta[s].stage >= m.retry_limit {
                        sta[s].stage = 0;
                    }
                }
                let resume = t.max(sta[s].heard_end) + m.difs_ns;
                sta[s].gen += 1;
                sta[s].mode = Mode::Defer {
                    resume,
                    slots: rng.below(m.window(sta[s].stage)),
                };
                push(&mut q, resume, Ev::Resume(s, sta[s].gen));
            }
        }
    }
    let bits = successes as f64 * 8.0 * m.payload_bytes as f64;
    (failures as f64 / attempts as f64, bits / secs as f64)
}

fn within(got: f64, want: f64, rel: f64) -> bool {
    ((got - want) / want).abs() <= rel
}

/// The four cases of the issue, solved once for all tests: (rate, access, prediction).
fn cases() -> &'static [(f64, Access, Prediction)] {
    static CASES: OnceLock<Vec<(f64, Access, Prediction)>> = OnceLock::new();
    CASES.get_or_init(|| {
        let mut v = Vec::new();
        for rate in [54.0, 6.0] {
            for access in [Access::Basic, Access::RtsCts] {
                v.push((rate, access, pair(rate, access).solve()));
            }
        }
        v
    })
}

/// The chain solved exactly and the Monte Carlo agree (1.5 %; the Monte Carlo's own
/// error is about 0.5 %), for both access methods at a short and a long frame, and
/// with both aCCATime settings where that matters (RTS/CTS at 54 Mbit/s).
#[test]
fn chain_matches_monte_carlo() {
    let mut checks: Vec<(HiddenPair, Prediction, i64)> = cases()
        .iter()
        .map(|&(rate, access, p)| (pair(rate, access), p, if rate > 10.0 { 300 } else { 1500 }))
        .collect();
    let mut no_cca = pair(54.0, Access::RtsCts);
    no_cca.cca_detect_ns = 0;
    checks.push((no_cca, no_cca.solve(), 300));
    let mut failures = Vec::new();
    for (m, p, secs) in checks {
        let (mc_p, mc_s) = monte_carlo(&m, secs, 7);
        let line = format!(
            "data {} ns {:?} cca {} ns: chain p {:.4} S {:.3} Mbit/s, Monte Carlo p {mc_p:.4} \
             S {:.3} Mbit/s",
            m.data_ns,
            m.access,
            m.cca_detect_ns,
            p.collision_probability,
            p.throughput_total_bps / 1e6,
            mc_s / 1e6
        );
        println!("{line}");
        if !within(mc_p, p.collision_probability, 0.015)
            || !within(mc_s, p.throughput_total_bps, 0.015)
        {
            failures.push(line);
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// When a frame, SIFS and aCCATime together fit in one slot, a station cannot start
/// inside the other's frame or its SIFS unless both chose the same slot, and it hears
/// the ACK before its next boundary: the two hidden stations behave exactly like two
/// stations in range under legacy DCF. Bianchi–Tinnirello's two-station model (an
/// approximation: it decouples the stations) must then be close: p within 6 %,
/// throughput within 2 % (measured: +5.1 %, +0.7 %).
#[test]
fn frames_shorter_than_a_slot_reduce_to_bianchi() {
    let phy = PhyParams::ofdm_5ghz(54.0);
    let mut m = HiddenPair::from_phy(&phy, 1500, Access::Basic);
    (m.data_ns, m.sifs_ns, m.ack_ns, m.cca_detect_ns) = (3000, 1000, 3000, 0);
    assert!(m.data_ns + m.sifs_ns + m.cca_detect_ns < m.slot_ns);
    let p = m.solve();
    let model = Model::new(phy, 1500, 2).with_dcf(Dcf::Corrected);
    let (tau, bianchi_p) = model.tau_p();
    let us = |ns: Ns| ns as f64 / 1000.0;
    let timing = Timing {
        ts_us: us(m.data_ns + m.sifs_ns + m.ack_ns + m.difs_ns),
        tc_us: us(m.data_ns + m.response_timeout_ns + m.difs_ns),
    };
    let bianchi_s = model.throughput_mbps_given(tau, timing) * 1e6;
    println!(
        "chain p {:.4} S {:.2} Mbit/s; Bianchi p {bianchi_p:.4} S {:.2} Mbit/s",
        p.collision_probability,
        p.throughput_total_bps / 1e6,
        bianchi_s / 1e6
    );
    assert!(within(p.collision_probability, bianchi_p, 0.06));
    assert!(within(p.throughput_total_bps, bianchi_s, 0.02));
}

/// From 8 slots on, a longer data frame is a longer window for the hidden station:
/// the collision probability rises and the throughput falls. (Below 8 slots the
/// exact model is not monotonic: 1, 2, 4, 8 slots give p = 0.183, 0.195, 0.182,
/// 0.184, confirmed by the Monte Carlo; which of the two frames a near-miss destroys,
/// both or only the later one in the AP's SIFS, depends on where the frame ends in the
/// slot grid.)
#[test]
fn collision_probability_rises_with_frame_length() {
    let mut prev: Option<Prediction> = None;
    for data_ns in [144_000, 248_000, 576_000] {
        let mut m = pair(54.0, Access::Basic);
        let p = if data_ns == m.data_ns {
            cases()[0].2 // 54 Mbit/s basic access: 248 µs
        } else {
            m.data_ns = data_ns;
            m.solve()
        };
        println!(
            "data {data_ns} ns: p {:.4} S {:.2} Mbit/s",
            p.collision_probability,
            p.throughput_total_bps / 1e6
        );
        if let Some(q) = prev {
            assert!(p.collision_probability > q.collision_probability);
            assert!(p.throughput_total_bps < q.throughput_total_bps);
        }
        prev = Some(p);
    }
}

/// RTS/CTS: only the RTS is exposed, and the CTS silences the hidden station for the
/// data frame, so attempts fail less often and more gets through than with basic
/// access, at both rates.
#[test]
fn rts_cts_collides_less_than_basic_access() {
    for rate in [54.0, 6.0] {
        let get = |a| cases().iter().find(|c| c.0 == rate && c.1 == a).unwrap().2;
        let (basic, rts) = (get(Access::Basic), get(Access::RtsCts));
        assert!(
            rts.collision_probability < basic.collision_probability,
            "{rate}"
        );
        assert!(
            rts.throughput_total_bps > basic.throughput_total_bps,
            "{rate}"
        );
    }
}

/// The classic vulnerable-period model with a one-slot window is Bianchi's two-station
/// fixed point, to rounding.
#[test]
fn classic_model_with_one_slot_is_bianchi() {
    for rate in [6.0, 54.0] {
        let phy = PhyParams::ofdm_5ghz(rate);
        let (tau, p) = classic_vulnerable_period(&phy, 7, 1.0);
        let (bt, bp) = Model::new(phy, 1500, 2).tau_p();
        assert!((tau - bt).abs() < 1e-12 && (p - bp).abs() < 1e-12, "{rate}");
    }
}

/// Prints the predictions; run with
/// `cargo test -p txop-sim --release --test hidden_terminal_model -- --ignored --nocapture`.
#[test]
#[ignore]
fn print_predictions() {
    println!("802.11a, 1500-byte MSDU, DCF (CW 15/1023, retry limit 7), two hidden stations");
    println!("rate  access  p(attempt fails)  drop/frame  per station Mbit/s  total Mbit/s  classic p (V = T/slot)");
    for &(rate, access, p) in cases() {
        let m = pair(rate, access);
        let first = if access == Access::Basic {
            m.data_ns
        } else {
            m.rts_ns
        };
        let (_, classic) = classic_vulnerable_period(
            &PhyParams::ofdm_5ghz(rate),
            7,
            first as f64 / m.slot_ns as f64,
        );
        println!(
            "{rate:4}  {access:?}  {:.4}  {:.4}  {:.3}  {:.3}  {classic:.4}",
            p.collision_probability,
            p.drop_probability,
            p.throughput_per_station_bps / 1e6,
            p.throughput_total_bps / 1e6
        );
    }
}

/// txop's MAC against the model, for the four cases: throughput within 10 % for all of
/// them, the collision probability within 10 % for basic access. Under RTS/CTS txop's
/// collision probability (0.205 at 54 Mbit/s) sits 13 % above the model's (0.181) and
/// beside ns-3 3.37's (0.200, `bench/ns3/hidden.cc`). The model's value there moves by
/// 19 % with how long a station takes to sense the AP's CTS (0.216 with no aCCATime),
/// and it leaves out the carrier sense a station keeps for an AP frame whose preamble
/// it missed while sending its own RTS, which txop and ns-3 both model; it is held to
/// 15 % there.
#[test]
fn txop_matches_the_model() {
    let mut failures = Vec::new();
    for &(rate, access, ref want) in cases() {
        let rts = access == Access::RtsCts;
        let run = hidden_pair(rate as u32, rts, true);
        let (mbps, p) = (run.mbps, run.collision_probability());
        let want_mbps = want.throughput_total_bps / 1e6;
        println!(
            "{rate} Mbit/s {access:?}: txop {mbps:.3} Mbit/s p {p:.4}; model {want_mbps:.3} Mbit/s p {:.4}",
            want.collision_probability
        );
        let p_tolerance = if rts { 0.15 } else { 0.10 };
        if !within(mbps, want_mbps, 0.10) || !within(p, want.collision_probability, p_tolerance) {
            failures.push(format!(
                "{rate} {access:?}: {mbps:.3}/{p:.4} vs {want_mbps:.3}/{:.4}",
                want.collision_probability
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
