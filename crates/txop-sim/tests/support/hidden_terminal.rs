//! Independent analytic reference: two saturated hidden stations uploading to one AP.
//!
//! Topology: stations A and B each hear the AP and the AP hears both; A and B do not
//! hear each other. Both always have a frame for the AP (fixed payload, no
//! aggregation, legacy DCF). Nothing from the txop crates is used: durations come from
//! [`super::bianchi`]'s PPDU arithmetic (IEEE Std 802.11 clauses 15–17), the rest is
//! plain `std`.
//!
//! # The model
//!
//! An exact analysis of the two-station protocol below, as an embedded Markov chain
//! solved numerically, with throughput by renewal–reward (the framework of Bianchi,
//! "Performance analysis of the IEEE 802.11 distributed coordination function",
//! IEEE JSAC 18(3):535–547, 2000). The chain is embedded at the instants a station
//! starts counting down a *fresh* backoff draw (the "revealer"); its state is the
//! revealer's stage and the other station's whole situation relative to that instant
//! (counting with a known transmit time; deferring with a residual counter; or inside
//! its exchange, with which of its frames are still good). Between two such instants
//! everything is deterministic given the revealer's draw, so a state's row is the
//! W_i outcomes of one deterministic run each. The reachable states (about 1.4·10⁵ at
//! 54 Mbit/s, 2.3·10⁵ at 6 Mbit/s) are found as probability reaches them; the
//! stationary law comes from lazy power iteration; a few seconds per case.
//!
//! Why not a published closed form: the classic extension of Bianchi's fixed point to
//! hidden stations (an attempt fails if the hidden station attempts in any of the V
//! slots around it, p = 1 − (1 − τ)^V, kept here as [`classic_vulnerable_period`])
//! treats the hidden station's attempts as independent of one's own. They are not:
//! the loser of a contention hears the winner's ACK (or CTS), freezes, and resumes
//! DIFS after it *together with the winner*, so the two re-synchronise after every
//! success and the next collision depends only on the difference of their counters;
//! after a collision both double their windows together. At 54 Mbit/s the classic
//! model gives p = 0.55 (V = data frame in slots; 0.65 with twice that) where the
//! exact value is 0.35. Tsertou & Laurenson ("Revisiting the hidden terminal problem
//! in a CSMA/CA wireless network", IEEE Trans. Mobile Computing 7(7):817–831, 2008)
//! and Jang & Sichitiu ("IEEE 802.11 saturation throughput analysis in the presence
//! of hidden terminals", IEEE/ACM Trans. Networking 20(2):557–570, 2012) build models
//! on exactly this correlation, but the tool library holds only their first pages,
//! not their equations or printed numbers, so neither is implemented equation by
//! equation here and no paper's table is reproduced. With two stations the exact
//! chain is small enough to solve instead; it is checked against a separately written
//! Monte Carlo of the same rules (agreement within its statistical error, ≈ 0.5 %),
//! and, where the stations cannot miss each other, against Bianchi.
//!
//! # Protocol rules (what "exact" is exact for)
//!
//! 1. Backoff (legacy DCF, 10.3.4.3): a station that resumes at r (DIFS already
//!    included) with counter k transmits at r + k·slot. If the AP starts a frame at t
//!    and the station has not started transmitting, it freezes with the slot
//!    boundaries up to and including t counted: k − ⌊(t − r)/slot⌋ left; a station
//!    whose backoff ends at or before t + aCCATime ([`HiddenPair::cca_detect_ns`]) has
//!    not detected the AP's frame and transmits.
//! 2. A station hears every frame of the AP that starts while it is not transmitting,
//!    and nothing of the other station. After an ACK it defers to the ACK's end plus
//!    DIFS; a CTS sets its NAV to the end of the ACK that closes the exchange
//!    (CTS + SIFS + DATA + SIFS + ACK), then DIFS. Every AP frame is decodable, so EIFS
//!    never applies.
//! 3. At the AP (equal powers, no capture): a station's frame is lost if the other's
//!    frame overlaps it at any instant, or if it overlaps any frame the AP sends. The
//!    AP answers a good frame SIFS after its end (ACK to data, CTS to RTS) without
//!    sensing the medium, so a frame started in that SIFS is lost and the first one
//!    is not.
//! 4. Success (ACK received): resume at the ACK's end + DIFS with a fresh draw from
//!    CWmin. Failure: the sender waits its response timeout after the end of its
//!    RTS or data frame, resumes DIFS after that (or after the NAV/ACK it heard
//!    meanwhile, if later), doubles its window; after `retry_limit` failed attempts
//!    the frame is dropped and the window resets. RTS/CTS: the data frame follows
//!    SIFS after the CTS; a lost data frame fails the attempt like a lost RTS (one
//!    retry counter for both).
//! 5. Ties between events at one instant: frame starts, then frame ends, then AP
//!    responses, then ends of exchanges, then resumptions.
//!
//! # Left out (where a simulator may legitimately differ)
//!
//! Propagation delay (0); capture and the SINR of partial overlaps (any overlap loses
//! both frames); channel errors; beacons and any other AP traffic; the AP's own EIFS;
//! separate short/long retry counters (dot11LongRetryLimit for data after RTS);
//! energy detection of the tail of an AP frame a station missed the start of.
//! Nothing is decoupled or averaged: the retry limit, the first-attempt window and
//! the dependence between the two stations' attempts are all in the chain.
//! The predictions are long-run averages and symmetric (per station = total / 2);
//! over shorter spans one station can hold the medium for many frames while the
//! other sits at a high backoff stage.
//!
//! Sensitivity to the rules (802.11a, 1500 B): the aCCATime window at the AP's
//! response (rule 1) moves RTS/CTS from p = 0.216 (0 µs) to 0.181 (4 µs) at
//! 54 Mbit/s and from 0.200 to 0.193 at 6 Mbit/s, while throughput moves < 1 %;
//! basic access moves < 0.1 %. A simulator that
//! resolves that window differently should be compared with the matching setting.
//!
//! Include it next to `bianchi.rs`:
//!
//! ```ignore
//! #[path = "support/bianchi.rs"]
//! mod bianchi;
//! #[path = "support/hidden_terminal.rs"]
//! mod hidden_terminal;
//! ```
#![allow(dead_code)]

use super::bianchi::{mpdu_bytes, tau_of_p, Access, PhyKind, PhyParams, MAC_HEADER_NON_QOS};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Time in nanoseconds.
pub type Ns = i64;

/// "No time": an instant before every other (a station that heard nothing).
const NO_TIME: Ns = i64::MIN / 4;

/// The inputs of the model: timing, backoff and frame durations of the two stations
/// (both identical, both saturated).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HiddenPair {
    /// aSlotTime.
    pub slot_ns: Ns,
    /// aSIFSTime.
    pub sifs_ns: Ns,
    /// DIFS = aSIFSTime + 2 aSlotTime.
    pub difs_ns: Ns,
    /// How long after the end of an RTS or data frame its sender waits for the CTS or
    /// ACK before it counts the attempt as failed: aSIFSTime + aSlotTime +
    /// aRxPHYStartDelay (IEEE 802.11-2020 10.3.2.9, 10.3.2.11).
    pub response_timeout_ns: Ns,
    /// aCCATime: a station whose backoff ends less than this after the AP's response
    /// started has not yet detected it and transmits.
    pub cca_detect_ns: Ns,
    /// aCWmin.
    pub cw_min: u32,
    /// aCWmax.
    pub cw_max: u32,
    /// Transmission attempts per frame (dot11ShortRetryLimit = 7): after the last
    /// failure the frame is dropped and the window resets to CWmin.
    pub retry_limit: u32,
    /// Data PPDU duration.
    pub data_ns: Ns,
    /// ACK PPDU duration.
    pub ack_ns: Ns,
    /// RTS PPDU duration.
    pub rts_ns: Ns,
    /// CTS PPDU duration.
    pub cts_ns: Ns,
    /// MSDU payload per frame; the throughput counts these bytes.
    pub payload_bytes: u32,
    /// Basic access or RTS/CTS before every data frame.
    pub access: Access,
}

fn us_to_ns(us: f64) -> Ns {
    (us * 1000.0).round() as Ns
}

impl HiddenPair {
    /// The pair on `phy` (non-QoS data frames: 24-byte header + LLC/SNAP + payload +
    /// FCS at the data rate; ACK, RTS and CTS at the control-response rate), retry
    /// limit 7, the response timeout and aCCATime of the PHY (OFDM: aRxPHYStartDelay
    /// 25 µs, aCCATime 4 µs, Table 17-21; DSSS long preamble: 192 µs and 15 µs).
    pub fn from_phy(phy: &PhyParams, payload_bytes: u32, access: Access) -> Self {
        let (rx_start_us, cca_us) = match phy.kind {
            PhyKind::Ofdm5Ghz | PhyKind::HeSu5Ghz { .. } => (25.0, 4.0),
            PhyKind::DsssLong => (192.0, 15.0),
        };
        HiddenPair {
            slot_ns: us_to_ns(phy.slot_us),
            sifs_ns: us_to_ns(phy.sifs_us),
            difs_ns: us_to_ns(phy.difs_us),
            response_timeout_ns: us_to_ns(phy.sifs_us + phy.slot_us + rx_start_us),
            cca_detect_ns: us_to_ns(cca_us),
            cw_min: phy.cw_min,
            cw_max: phy.cw_max,
            retry_limit: 7,
            data_ns: us_to_ns(phy.data_duration_us(mpdu_bytes(MAC_HEADER_NON_QOS, payload_bytes))),
            ack_ns: us_to_ns(phy.ack_duration_us()),
            rts_ns: us_to_ns(phy.rts_duration_us()),
            cts_ns: us_to_ns(phy.cts_duration_us()),
            payload_bytes,
            access,
        }
    }

    /// The same pair with the other access method.
    pub fn with_access(mut self, access: Access) -> Self {
        self.access = access;
        self
    }

    /// Window size W_i = min(2^i (CWmin + 1), CWmax + 1) of backoff stage `i`.
    pub fn window(&self, stage: u32) -> u32 {
        let cap = self.cw_max as u64 + 1;
        let w = ((self.cw_min as u64 + 1) << stage.min(40)).min(cap);
        w as u32
    }

    /// Duration of the frame a contention win starts with: the data frame, or the RTS.
    fn first_ns(&self) -> Ns {
        match self.access {
            Access::Basic => self.data_ns,
            Access::RtsCts => self.rts_ns,
        }
    }

    /// Start of the data frame of an RTS/CTS exchange that started at `start`.
    fn data_start(&self, start: Ns) -> Ns {
        start + self.rts_ns + self.sifs_ns + self.cts_ns + self.sifs_ns
    }
}

/// Where a station's exchange stands: the next thing that happens in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Step {
    /// The first frame (data, or RTS) ends.
    FirstEnd,
    /// The AP starts its CTS.
    CtsStart,
    /// The station starts the data frame (RTS/CTS).
    DataStart,
    /// The data frame ends (RTS/CTS).
    DataEnd,
    /// The AP starts its ACK.
    AckStart,
    /// The exchange is over: the ACK ended, or the response timeout expired.
    Done,
}

/// One station's exchange, from the start of its first frame until it is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Exchange {
    start: Ns,
    step: Step,
    next_at: Ns,
    /// The first frame (data, or RTS) has not been hit so far.
    first_ok: bool,
    /// The data frame of an RTS/CTS exchange has not been hit so far.
    data_ok: bool,
    /// End of the NAV or ACK the station heard from the AP while in this exchange
    /// ([`NO_TIME`] if none): it resumes DIFS after the later of this and its own end.
    heard_end: Ns,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    /// Counting down; it transmits at `tx_at`. It started counting no later than now,
    /// so the slot boundaries before any later busy instant t number
    /// `slots − ceil((tx_at − t) / slot)`.
    Counting { tx_at: Ns },
    /// Deferring until `resume` (DIFS included), then counting down `counter` slots;
    /// `None`: a fresh draw from the window of its stage.
    Waiting { resume: Ns, counter: Option<u32> },
    /// In an exchange.
    Busy(Exchange),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Station {
    /// Backoff stage = failed attempts of the current frame.
    stage: u32,
    phase: Phase,
}

/// The state of the embedded chain: taken at the instant one station (the revealer)
/// starts counting with a fresh backoff draw; times relative to that instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct State {
    revealer_stage: u32,
    other: Station,
}

/// What happens between two reveals.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Reward {
    attempts: f64,
    failures: f64,
    successes: f64,
    drops: f64,
    time_ns: f64,
}

impl Reward {
    fn add_scaled(&mut self, r: &Reward, w: f64) {
        self.attempts += w * r.attempts;
        self.failures += w * r.failures;
        self.successes += w * r.successes;
        self.drops += w * r.drops;
        self.time_ns += w * r.time_ns;
    }
}

// Event priorities at equal times: frame starts first (a station whose backoff ends
// when the AP's response starts transmits, deaf to it), exchanges end before anyone
// resumes, residual counters resume before a fresh draw is revealed.
const PRIO_FRAME_START: u8 = 0;
const PRIO_FRAME_END: u8 = 1;
const PRIO_RESPONSE: u8 = 2;
const PRIO_DONE: u8 = 3;
const PRIO_RESUME: u8 = 4;
const PRIO_REVEAL: u8 = 5;

fn ceil_div(a: Ns, b: Ns) -> Ns {
    debug_assert!(a >= 0 && b > 0);
    (a + b - 1) / b
}

impl HiddenPair {
    fn next_event(&self, st: &Station) -> (Ns, u8) {
        match st.phase {
            Phase::Counting { tx_at } => (tx_at, PRIO_FRAME_START),
            Phase::Waiting {
                resume,
                counter: Some(_),
            } => (resume, PRIO_RESUME),
            Phase::Waiting {
                resume,
                counter: None,
            } => (resume, PRIO_REVEAL),
            Phase::Busy(x) => (
                x.next_at,
                match x.step {
                    Step::DataStart => PRIO_FRAME_START,
                    Step::FirstEnd | Step::DataEnd => PRIO_FRAME_END,
                    Step::CtsStart | Step::AckStart => PRIO_RESPONSE,
                    Step::Done => PRIO_DONE,
                },
            ),
        }
    }

    /// Which of the station's frames is on the air at `t` (`Some(true)`: the first
    /// frame, `Some(false)`: the data frame after RTS/CTS).
    fn frame_in_air(&self, st: &Station, t: Ns) -> Option<bool> {
        let Phase::Busy(x) = st.phase else {
            return None;
        };
        if x.start <= t && t < x.start + self.first_ns() {
            return Some(true);
        }
        if self.access == Access::RtsCts && x.first_ok {
            let d0 = self.data_start(x.start);
            if d0 <= t && t < d0 + self.data_ns {
                return Some(false);
            }
        }
        None
    }

    /// Whether the AP is transmitting a response (CTS or ACK) to the station at `t`.
    fn ap_responding(&self, st: &Station, t: Ns) -> bool {
        let Phase::Busy(x) = st.phase else {
            return false;
        };
        let inside = |a: Ns, d: Ns| a <= t && t < a + d;
        match self.access {
            Access::Basic => {
                x.first_ok && inside(x.start + self.data_ns + self.sifs_ns, self.ack_ns)
            }
            Access::RtsCts => {
                let e1 = x.start + self.rts_ns;
                let d_end = self.data_start(x.start) + self.data_ns;
                (x.first_ok && inside(e1 + self.sifs_ns, self.cts_ns))
                    || (x.first_ok && x.data_ok && inside(d_end + self.sifs_ns, self.ack_ns))
            }
        }
    }

    /// The station's frame on the air at `t`, if any, is lost.
    fn hit(&self, st: &mut Station, t: Ns) {
        if let Some(first) = self.frame_in_air(st, t) {
            if let Phase::Busy(x) = &mut st.phase {
                if first {
                    x.first_ok = false;
                } else {
                    x.data_ok = false;
                }
            }
        }
    }

    /// The AP started a response at `t` that keeps the station (not its addressee)
    /// from the medium until `busy_end` (the ACK's end, or the NAV a CTS sets).
    fn hear(&self, st: &mut Station, t: Ns, busy_end: Ns) {
        if self.frame_in_air(st, t).is_some() {
            return; // transmitting: deaf to it
        }
        match &mut st.phase {
            Phase::Counting { tx_at } => {
                if *tx_at <= t + self.cca_detect_ns {
                    return; // its backoff ends before it can detect the response
                }
                let left = ceil_div(*tx_at - t, self.slot_ns) as u32;
                st.phase = Phase::Waiting {
                    resume: busy_end + self.difs_ns,
                    counter: Some(left),
                };
            }
            Phase::Waiting { resume, .. } => {
                *resume = (*resume).max(busy_end + self.difs_ns);
            }
            Phase::Busy(x) => {
                x.heard_end = x.heard_end.max(busy_end);
            }
        }
    }

    /// Runs both stations from `state` (the revealer drew `draw` slots) until one of
    /// them starts counting with a fresh draw; returns that state and what happened.
    fn evolve(&self, state: &State, draw: u32) -> (State, Reward) {
        let mut st = [
            Station {
                stage: state.revealer_stage,
                phase: Phase::Counting {
                    tx_at: draw as Ns * self.slot_ns,
                },
            },
            state.other,
        ];
        let mut r = Reward::default();
        loop {
            let e0 = self.next_event(&st[0]);
            let e1 = self.next_event(&st[1]);
            let i = usize::from(e1 < e0);
            let j = 1 - i;
            let t = if i == 0 { e0.0 } else { e1.0 };
            match st[i].phase {
                Phase::Counting { .. } => {
                    r.attempts += 1.0;
                    let mut x = Exchange {
                        start: t,
                        step: Step::FirstEnd,
                        next_at: t + self.first_ns(),
                        first_ok: true,
                        data_ok: true,
                        heard_end: NO_TIME,
                    };
                    if self.frame_in_air(&st[j], t).is_some() {
                        self.hit(&mut st[j], t);
                        x.first_ok = false;
                    }
                    if self.ap_responding(&st[j], t) {
                        x.first_ok = false;
                    }
                    st[i].phase = Phase::Busy(x);
                }
                Phase::Waiting {
                    counter: Some(k), ..
                } => {
                    st[i].phase = Phase::Counting {
                        tx_at: t + k as Ns * self.slot_ns,
                    };
                }
                Phase::Waiting { counter: None, .. } => {
                    let other = st[j];
                    return (
                        State {
                            revealer_stage: st[i].stage,
                            other: self.shifted(other, t),
                        },
                        Reward {
                            time_ns: t as f64,
                            ..r
                        },
                    );
                }
                Phase::Busy(mut x) => {
                    match x.step {
                        Step::FirstEnd => {
                            (x.step, x.next_at) = match (x.first_ok, self.access) {
                                (true, Access::Basic) => (Step::AckStart, t + self.sifs_ns),
                                (true, Access::RtsCts) => (Step::CtsStart, t + self.sifs_ns),
                                (false, _) => (Step::Done, t + self.response_timeout_ns),
                            };
                        }
                        Step::CtsStart => {
                            self.hit(&mut st[j], t);
                            let nav_end = t
                                + self.cts_ns
                                + self.sifs_ns
                                + self.data_ns
                                + self.sifs_ns
                                + self.ack_ns;
                            self.hear(&mut st[j], t, nav_end);
                            (x.step, x.next_at) = (Step::DataStart, t + self.cts_ns + self.sifs_ns);
                        }
                        Step::DataStart => {
                            if self.frame_in_air(&st[j], t).is_some() {
                                self.hit(&mut st[j], t);
                                x.data_ok = false;
                            }
                            (x.step, x.next_at) = (Step::DataEnd, t + self.data_ns);
                        }
                        Step::DataEnd => {
                            (x.step, x.next_at) = if x.data_ok {
                                (Step::AckStart, t + self.sifs_ns)
                            } else {
                                (Step::Done, t + self.response_timeout_ns)
                            };
                        }
                        Step::AckStart => {
                            self.hit(&mut st[j], t);
                            self.hear(&mut st[j], t, t + self.ack_ns);
                            (x.step, x.next_at) = (Step::Done, t + self.ack_ns);
                        }
                        Step::Done => {
                            let s = &mut st[i];
                            if x.first_ok && x.data_ok {
                                r.successes += 1.0;
                                s.stage = 0;
                            } else {
                                r.failures += 1.0;
                                s.stage += 1;
                                if s.stage >= self.retry_limit {
                                    r.drops += 1.0;
                                    s.stage = 0;
                                }
                            }
                            s.phase = Phase::Waiting {
                                resume: t.max(x.heard_end) + self.difs_ns,
                                counter: None,
                            };
                            continue;
                        }
                    }
                    st[i].phase = Phase::Busy(x);
                }
            }
        }
    }

    /// `st` with its times made relative to `t`.
    fn shifted(&self, st: Station, t: Ns) -> Station {
        let phase = match st.phase {
            Phase::Counting { tx_at } => Phase::Counting { tx_at: tx_at - t },
            Phase::Waiting { resume, counter } => Phase::Waiting {
                resume: resume - t,
                counter,
            },
            Phase::Busy(x) => Phase::Busy(Exchange {
                start: x.start - t,
                next_at: x.next_at - t,
                heard_end: if x.heard_end <= t {
                    NO_TIME
                } else {
                    x.heard_end - t
                },
                ..x
            }),
        };
        Station { phase, ..st }
    }
}

/// FxHash (rustc's hasher): the chain's states are hashed millions of times.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Transitions to the states `first .. first + len`, each with probability `p`.
#[derive(Clone, Copy, Debug)]
struct Run {
    first: u32,
    len: u32,
    p: f64,
}

/// One state's outgoing transitions and expected reward per visit.
struct Row {
    runs: Vec<Run>,
    reward: Reward,
}

/// The model's predictions for each of the two (identical) stations and in total.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    /// Probability that an attempt (the data frame, or the RTS and what follows it)
    /// fails: failed attempts / attempts.
    pub collision_probability: f64,
    /// Probability that a frame is dropped after `retry_limit` failed attempts.
    pub drop_probability: f64,
    /// Attempts per second of one station.
    pub attempts_per_s: f64,
    /// MSDU payload delivered per second by one station.
    pub throughput_per_station_bps: f64,
    /// Both stations together.
    pub throughput_total_bps: f64,
    /// States of the chain reached from the start (both stations fresh at stage 0).
    pub states: usize,
    /// Power iterations until convergence.
    pub iterations: usize,
}

impl HiddenPair {
    fn row(&self, s: &State, index: &mut FxMap<State, u32>, states: &mut Vec<State>) -> Row {
        let w = self.window(s.revealer_stage);
        let mut next: Vec<(u32, f64)> = Vec::with_capacity(w as usize);
        let mut reward = Reward::default();
        let p = 1.0 / w as f64;
        for k in 0..w {
            let (n, r) = self.evolve(s, k);
            let id = *index.entry(n).or_insert_with(|| {
                states.push(n);
                (states.len() - 1) as u32
            });
            next.push((id, p));
            reward.add_scaled(&r, p);
        }
        next.sort_unstable_by_key(|e| e.0);
        next.dedup_by(|b, a| {
            if a.0 == b.0 {
                a.1 += b.1;
                true
            } else {
                false
            }
        });
        // Consecutive state ids with equal probability become one run.
        let mut runs: Vec<Run> = Vec::new();
        for (id, q) in next {
            match runs.last_mut() {
                Some(r) if r.first + r.len == id && r.p == q => r.len += 1,
                _ => runs.push(Run {
                    first: id,
                    len: 1,
                    p: q,
                }),
            }
        }
        Row { runs, reward }
    }

    /// Solves the chain: its stationary law at reveals by power iteration, then the
    /// long-run rates by renewal–reward (expected reward per reveal / expected time per
    /// reveal). Rows are built the first time a state carries probability.
    pub fn solve(&self) -> Prediction {
        let start = State {
            revealer_stage: 0,
            other: Station {
                stage: 0,
                phase: Phase::Waiting {
                    resume: 0,
                    counter: None,
                },
            },
        };
        let mut index: FxMap<State, u32> = FxMap::default();
        index.insert(start, 0);
        let mut states = vec![start];
        let mut rows: Vec<Row> = Vec::new();
        let mut pi = vec![1.0f64];
        let mut next: Vec<f64> = Vec::new();
        let mut diff: Vec<f64> = Vec::new();
        let mut history: Vec<(f64, f64)> = Vec::new();
        let mut iterations = 0;
        loop {
            iterations += 1;
            assert!(
                iterations <= 100_000,
                "the hidden-terminal chain did not converge"
            );
            while rows.len() < pi.len() {
                let st = states[rows.len()];
                let row = self.row(&st, &mut index, &mut states);
                rows.push(row);
            }
            next.clear();
            next.resize(states.len(), 0.0);
            diff.clear();
            diff.resize(states.len() + 1, 0.0);
            for (&m, row) in pi.iter().zip(&rows) {
                if m == 0.0 {
                    continue;
                }
                for r in &row.runs {
                    let f = r.first as usize;
                    if r.len == 1 {
                        next[f] += m * r.p;
                    } else {
                        diff[f] += m * r.p;
                        diff[f + r.len as usize] -= m * r.p;
                    }
                }
            }
            let mut acc = 0.0;
            for (x, d) in next.iter_mut().zip(&diff) {
                acc += d;
                *x += acc;
            }
            // Lazy step (π ← (π + πP) / 2): the same stationary law, and the chain's
            // periodic components die out.
            pi.resize(next.len(), 0.0);
            let total: f64 = pi.iter().zip(&next).map(|(a, b)| a + b).sum();
            for (a, b) in pi.iter_mut().zip(&next) {
                *a = (*a + b) / total;
            }
            let tot = self.expected(&pi, &rows);
            history.push((tot.failures / tot.attempts, tot.successes / tot.time_ns));
            // Converged when the last 100 iterations agree to 1e-9: the law approaches
            // its limit in damped oscillations, so consecutive values alone can agree
            // long before.
            if let Some(last) = history.len().checked_sub(100) {
                let close = |f: fn(&(f64, f64)) -> f64| {
                    let (lo, hi) = history[last..]
                        .iter()
                        .map(f)
                        .fold((f64::MAX, f64::MIN), |(l, h), x| (l.min(x), h.max(x)));
                    hi - lo <= 1e-9 * hi
                };
                if close(|h| h.0) && close(|h| h.1) {
                    break;
                }
            }
        }
        let tot = self.expected(&pi, &rows);
        let secs = tot.time_ns * 1e-9;
        let bits = 8.0 * self.payload_bytes as f64;
        Prediction {
            collision_probability: tot.failures / tot.attempts,
            drop_probability: tot.drops / (tot.successes + tot.drops),
            attempts_per_s: tot.attempts / secs / 2.0,
            throughput_per_station_bps: tot.successes * bits / secs / 2.0,
            throughput_total_bps: tot.successes * bits / secs,
            states: states.len(),
            iterations,
        }
    }

    /// Expected reward per reveal under the law `pi` (states without a row yet carry
    /// no probability).
    fn expected(&self, pi: &[f64], rows: &[Row]) -> Reward {
        let mut tot = Reward::default();
        for (&m, row) in pi.iter().zip(rows) {
            tot.add_scaled(&row.reward, m);
        }
        tot
    }
}

/// The classic vulnerable-period extension of Bianchi's fixed point, for comparison:
/// each station attempts with probability τ(p) in a slot (Bianchi's τ equation with
/// the retry limit, [`tau_of_p`]), and its attempt fails when the hidden station
/// attempts in any of the `vulnerable_slots` slots around it:
/// p = 1 − (1 − τ)^V. Returns (τ, p). With V = 1 it is Bianchi's two-station model.
pub fn classic_vulnerable_period(
    phy: &PhyParams,
    retry_limit: u32,
    vulnerable_slots: f64,
) -> (f64, f64) {
    let p_of = |tau: f64| 1.0 - (1.0 - tau).powf(vulnerable_slots);
    // τ(p(τ)) − τ decreases from τ(0) > 0 at τ = 0 to < 0 at τ = 1: bisection.
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if tau_of_p(phy, Some(retry_limit), p_of(mid)) > mid {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo, p_of(lo))
}
