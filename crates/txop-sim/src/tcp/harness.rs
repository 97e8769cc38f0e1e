//! Test harness: one sender and one receiver joined by a simulated path — a
//! bottleneck link of fixed rate with a FIFO of limited size (tail drop), optionally
//! marking CE above a sojourn threshold or running CoDel (txop-core's `fq_codel`),
//! and a fixed propagation delay each way. ACKs come back without queueing or loss.
//! Driven by the simulator's [`EventQueue`].

use super::conn::{ack_sample, Reported};
use super::{Segment, TcpConfig, TcpReceiver, TcpSender};
use std::collections::{BTreeMap, VecDeque};
use txop_core::aqm::fq_codel::{FqCodel, FqCodelParams};
use txop_core::network::EventQueue;
use txop_core::packet::Ecn;
use txop_core::rng::{RngStream, StreamKind};
use txop_core::{Nanos, NodeId, Packet};
use txop_results::FlowStats;

/// What the bottleneck does besides tail drop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Aqm {
    /// Plain FIFO.
    TailDrop,
    /// Mark ECT packets CE (drop the others) when their sojourn at dequeue exceeds the
    /// threshold.
    CeAbove(Nanos),
    /// txop-core's fq_codel with Linux defaults (5 ms / 100 ms, ECN), one flow.
    Codel,
}

/// The path.
#[derive(Clone, Debug)]
pub struct Path {
    pub rate_bps: u64,
    /// FIFO limit in packets (waiting, not counting the one on the wire).
    pub buffer_pkts: usize,
    pub one_way: Nanos,
    pub aqm: Aqm,
    /// Drop every data packet entering in `[from, to)`.
    pub blackhole: Option<(Nanos, Nanos)>,
    /// Probability of dropping a first transmission (below `random_loss_below`).
    pub random_loss: f64,
    pub random_loss_below: u64,
    /// Drop the first transmission of the segment that starts at this sequence number.
    pub drop_seq: Option<u64>,
    pub seed: u64,
}

impl Path {
    /// 10 Mbit/s, 20 ms each way, 100 packets of buffer, tail drop.
    pub fn default_10m() -> Path {
        Path {
            rate_bps: 10_000_000,
            buffer_pkts: 100,
            one_way: Nanos::from_ms(20),
            aqm: Aqm::TailDrop,
            blackhole: None,
            random_loss: 0.0,
            random_loss_below: u64::MAX,
            drop_seq: None,
            seed: 1,
        }
    }

    /// Serialisation time of `bytes`.
    pub fn tx_time(&self, bytes: u32) -> Nanos {
        Nanos(bytes as u64 * 8 * 1_000_000_000 / self.rate_bps)
    }

    /// Smallest RTT: both propagation delays plus one full packet on the wire.
    pub fn base_rtt(&self, mss: u32) -> Nanos {
        self.one_way * 2 + self.tx_time(mss + super::HEADER_BYTES)
    }
}

/// The sender's state after each ACK.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub t: Nanos,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub state: super::CaState,
    pub in_flight: u32,
    pub ecn_reductions: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub rto: Nanos,
    /// Harness-measured RTT of the newest segment this ACK covers (first
    /// transmissions only).
    pub path_rtt: Option<Nanos>,
    /// Pacing rate (bytes/s), when pacing.
    pub pacing_rate: Option<u64>,
    /// BBR's model (BBR only).
    pub bbr: Option<super::BbrInfo>,
    /// Packets waiting at the bottleneck when the ACK arrived.
    pub queue_pkts: usize,
}

/// Everything a run recorded.
#[derive(Debug, Default)]
pub struct Run {
    pub samples: Vec<Sample>,
    /// Data segments as the sender emitted them: (time, seq, len).
    pub sent: Vec<(Nanos, u64, u32)>,
    /// Data segments arriving at the receiver: (time, seq).
    pub arrivals: Vec<(Nanos, u64)>,
    /// ACKs leaving the receiver: (time, ack, by the delayed-ACK timer).
    pub acks: Vec<(Nanos, u64, bool)>,
    pub drops: u64,
    pub marks: u64,
    pub max_queue: usize,
    /// Σ sojourn and count of dequeued packets.
    pub sojourn_sum: Nanos,
    pub dequeued: u64,
    pub max_sojourn: Nanos,
    /// Time the sender finished (finite transfers).
    pub done_at: Option<Nanos>,
    /// Retransmission timeouts: (time, RTO armed after it).
    pub rto_events: Vec<(Nanos, Nanos)>,
    /// Times of drops (any cause).
    pub drop_times: Vec<Nanos>,
}

impl Run {
    fn note_drop(&mut self, now: Nanos) {
        self.drops += 1;
        self.drop_times.push(now);
    }

    pub fn mean_sojourn(&self) -> Nanos {
        Nanos(self.sojourn_sum.0 / self.dequeued.max(1))
    }
}

enum Ev {
    SenderWake(u64),
    ReceiverWake(u64),
    LinkFree,
    AtReceiver(Segment),
    AtSender(Segment),
}

enum Queue {
    Fifo(VecDeque<(Nanos, Segment)>),
    Codel(Box<FqCodel>, BTreeMap<u64, Segment>),
}

/// The simulation of one connection over the path.
pub struct Harness {
    pub path: Path,
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    pub run: Run,
    /// The connection's flow statistics, sampled after every ACK as the simulator
    /// samples them.
    pub flow: FlowStats,
    reported: Reported,
    q: EventQueue<Ev>,
    queue: Queue,
    busy: bool,
    sender_gen: u64,
    sender_sched: Option<Nanos>,
    receiver_gen: u64,
    receiver_sched: Option<Nanos>,
    rng: RngStream,
    highest_sent: u64,
    /// First-transmission send times by segment end.
    first_tx: BTreeMap<u64, Nanos>,
    next_id: u64,
    stalls: u32,
}

impl Harness {
    /// `fin`: the sender closes (FIN on its last segment).
    pub fn new(cfg: TcpConfig, path: Path, bytes: Option<u64>, fin: bool) -> Harness {
        let queue = match path.aqm {
            Aqm::Codel => {
                let params = FqCodelParams {
                    limit: path.buffer_pkts as u32,
                    ..FqCodelParams::default()
                };
                Queue::Codel(Box::new(FqCodel::new(params)), BTreeMap::new())
            }
            _ => Queue::Fifo(VecDeque::new()),
        };
        let mut sender = TcpSender::new(cfg, Nanos::ZERO, bytes);
        if fin {
            sender.close();
        }
        let rng = RngStream::new(path.seed, StreamKind::Misc, 7);
        let mut h = Harness {
            path,
            sender,
            receiver: TcpReceiver::new(cfg),
            run: Run::default(),
            flow: FlowStats::tcp(),
            reported: Reported::default(),
            q: EventQueue::default(),
            queue,
            busy: false,
            sender_gen: 0,
            sender_sched: None,
            receiver_gen: 0,
            receiver_sched: None,
            rng,
            highest_sent: 0,
            first_tx: BTreeMap::new(),
            next_id: 0,
            stalls: 0,
        };
        h.pump_sender(Nanos::ZERO);
        h
    }

    fn queue_len(&self) -> usize {
        match &self.queue {
            Queue::Fifo(f) => f.len(),
            Queue::Codel(q, _) => q.len_packets(),
        }
    }

    fn enqueue(&mut self, now: Nanos, seg: Segment) {
        if let Some((a, b)) = self.path.blackhole {
            if now >= a && now < b {
                self.run.note_drop(now);
                return;
            }
        }
        let first = seg.seq >= self.highest_sent;
        if first {
            self.highest_sent = seg.end();
        }
        if first && self.path.drop_seq == Some(seg.seq) {
            self.run.note_drop(now);
            return;
        }
        if first
            && self.path.random_loss > 0.0
            && seg.end() <= self.path.random_loss_below
            && self.rng.bernoulli(self.path.random_loss)
        {
            self.run.note_drop(now);
            return;
        }
        match &mut self.queue {
            Queue::Fifo(f) => {
                if f.len() >= self.path.buffer_pkts {
                    self.run.note_drop(now);
                    return;
                }
                f.push_back((now, seg));
            }
            Queue::Codel(q, segs) => {
                let mut p = Packet::new(self.next_id, NodeId(1), NodeId(2), seg.ip_len());
                p.ecn = if seg.ect { Ecn::Ect0 } else { Ecn::NotEct };
                p.token = self.next_id;
                segs.insert(self.next_id, seg);
                self.next_id += 1;
                let mut drops = Vec::new();
                q.enqueue(now, p, &mut drops);
                for d in drops {
                    segs.remove(&d.packet.token);
                    self.run.note_drop(now);
                }
            }
        }
        self.run.max_queue = self.run.max_queue.max(self.queue_len());
        if !self.busy {
            self.start_link(now);
        }
    }

    fn start_link(&mut self, now: Nanos) {
        let next = match &mut self.queue {
            Queue::Fifo(f) => loop {
                let Some((at, mut seg)) = f.pop_front() else {
                    break None;
                };
                let sojourn = now - at;
                if let Aqm::CeAbove(th) = self.path.aqm {
                    if sojourn > th {
                        if seg.ect {
                            seg.ce = true;
                            self.run.marks += 1;
                        } else {
                            self.run.note_drop(now);
                            continue;
                        }
                    }
                }
                break Some((seg, sojourn));
            },
            Queue::Codel(q, segs) => {
                let mut drops = Vec::new();
                let p = q.dequeue(now, &mut drops);
                for d in drops {
                    segs.remove(&d.packet.token);
                    self.run.note_drop(now);
                }
                p.map(|p| {
                    let mut seg = segs.remove(&p.token).expect("segment of packet");
                    if p.ecn == Ecn::Ce {
                        seg.ce = true;
                        self.run.marks += 1;
                    }
                    (seg, now - p.queued_at)
                })
            }
        };
        let Some((seg, sojourn)) = next else {
            self.busy = false;
            return;
        };
        self.run.sojourn_sum += sojourn;
        self.run.dequeued += 1;
        self.run.max_sojourn = self.run.max_sojourn.max(sojourn);
        self.busy = true;
        let done = now + self.path.tx_time(seg.ip_len());
        self.q.push(done, Ev::LinkFree);
        self.q.push(done + self.path.one_way, Ev::AtReceiver(seg));
    }

    fn pump_sender(&mut self, now: Nanos) {
        while let Some(seg) = self.sender.poll_transmit(now) {
            assert!(seg.len > 0);
            self.run.sent.push((now, seg.seq, seg.len));
            self.first_tx.entry(seg.end()).or_insert(now);
            self.enqueue(now, seg);
        }
        let t = self.sender.poll_timeout();
        if t != self.sender_sched {
            self.sender_sched = t;
            if let Some(t) = t {
                self.sender_gen += 1;
                self.q.push(t.max(now), Ev::SenderWake(self.sender_gen));
            }
        }
        if self.run.done_at.is_none() && self.sender.is_done() {
            self.run.done_at = Some(now);
        }
    }

    fn pump_receiver(&mut self, now: Nanos, by_timer: bool) {
        while let Some(ack) = self.receiver.poll_ack(now) {
            self.run.acks.push((now, ack.ack, by_timer));
            self.q.push(now + self.path.one_way, Ev::AtSender(ack));
        }
        let t = self.receiver.poll_timeout();
        if t != self.receiver_sched {
            self.receiver_sched = t;
            if let Some(t) = t {
                self.receiver_gen += 1;
                self.q.push(t.max(now), Ev::ReceiverWake(self.receiver_gen));
            }
        }
    }

    fn on_ack(&mut self, now: Nanos, ack: Segment) {
        self.sender.on_ack(now, &ack);
        let path_rtt = self
            .first_tx
            .range(..=ack.ack)
            .next_back()
            .filter(|(end, _)| **end == ack.ack)
            .map(|(_, t)| now - *t);
        // Forget what is acknowledged (bounded memory).
        while let Some((&end, _)) = self.first_tx.first_key_value() {
            if end > ack.ack {
                break;
            }
            self.first_tx.pop_first();
        }
        let sample = ack_sample(&mut self.sender, &mut self.reported);
        self.flow.tcp_sample(now, sample);
        let s = self.sender.stats();
        self.run.samples.push(Sample {
            t: now,
            cwnd: s.cwnd_segments,
            ssthresh: s.ssthresh_segments,
            state: s.state,
            in_flight: s.in_flight,
            ecn_reductions: s.ecn_reductions,
            retransmits: s.retransmits,
            timeouts: s.timeouts,
            fast_recoveries: s.fast_recoveries,
            rto: s.rto,
            path_rtt,
            pacing_rate: s.pacing_rate,
            bbr: s.bbr,
            queue_pkts: self.queue_len(),
        });
        self.sender.check_invariants();
        assert!(s.packets_out as u64 * 1448 <= self.sender.config().rwnd_bytes + 1448);
    }

    /// Run until `until` (or until a finite transfer is done and the path is idle).
    pub fn run_until(&mut self, until: Nanos) {
        while let Some(t) = self.q.peek_time() {
            if t > until {
                break;
            }
            let (now, ev) = self.q.pop().unwrap();
            match ev {
                Ev::SenderWake(g) => {
                    if g != self.sender_gen {
                        continue;
                    }
                    self.sender_sched = None;
                    let before = self.run.sent.len();
                    let timeouts = self.sender.stats().timeouts;
                    self.sender.handle_timeout(now);
                    self.pump_sender(now);
                    let st = self.sender.stats();
                    if st.timeouts > timeouts {
                        self.run.rto_events.push((now, st.rto));
                    }
                    if self.run.sent.len() == before && st.timeouts == timeouts {
                        self.stalls += 1;
                        assert!(self.stalls < 1000, "sender wakes without progress");
                    } else {
                        self.stalls = 0;
                    }
                }
                Ev::ReceiverWake(g) => {
                    if g != self.receiver_gen {
                        continue;
                    }
                    self.receiver_sched = None;
                    self.receiver.handle_timeout(now);
                    self.pump_receiver(now, true);
                }
                Ev::LinkFree => self.start_link(now),
                Ev::AtReceiver(seg) => {
                    self.run.arrivals.push((now, seg.seq));
                    self.receiver.on_segment(now, &seg);
                    self.pump_receiver(now, false);
                }
                Ev::AtSender(ack) => {
                    self.on_ack(now, ack);
                    self.pump_sender(now);
                }
            }
        }
    }
}

/// Run a connection over `path` for `duration` (a finite one ends with FIN).
pub fn run(cfg: TcpConfig, path: Path, bytes: Option<u64>, duration: Nanos) -> Harness {
    run_fin(cfg, path, bytes, duration, true)
}

/// [`run`], choosing whether the sender closes.
pub fn run_fin(
    cfg: TcpConfig,
    path: Path,
    bytes: Option<u64>,
    duration: Nanos,
    fin: bool,
) -> Harness {
    let mut h = Harness::new(cfg, path, bytes, fin);
    h.run_until(duration);
    h
}
