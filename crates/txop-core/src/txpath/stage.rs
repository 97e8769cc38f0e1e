//! The firmware stages of issue 30 wired into the transmit path: how frames move from
//! mac80211's TXQs into an mt76 or ath11k firmware, and how the airtime of their
//! exchanges comes back (firmware-queues.md §1.5, §2.2, §2.3, §3.2). The state they
//! keep is [`crate::driver::firmware_stage`]; the frames they hand over are held in
//! [`crate::driver::DriverQueues`] until their completion (the token, or the MSDU
//! descriptor, they hold), and the firmware builds PPDUs from them on demand without
//! asking mac80211 (`FirmwareStage::asks_may_transmit`).

use super::{PathQueue, QueueOccupancy, TxPath};
use crate::driver::firmware_stage::{mt76_report_tid, StationAirtime};
use crate::mac::edca::Ac;
use crate::mac80211::txq::{LinkId, Tid, TxqId, TxqKey};
use crate::packet::{DropReason, Dropped, NodeId, Packet};
use crate::stack::{DriverKind, FirmwareStage, Mt76Params};
use crate::Nanos;

impl TxPath {
    /// The firmware stage's turn for `ac` after a wake (an enqueue) or a completion:
    /// mt76's worker or mac80211's generic push.
    // perf: out of line, so that the ath10k-like push loop it branches off from keeps
    // its shape.
    #[cold]
    #[inline(never)]
    pub(super) fn run_firmware_stage(&mut self, now: Nanos, ac: Ac) {
        match self.cfg.firmware {
            FirmwareStage::Mt76(m) => self.mt76_worker(now, ac, m),
            FirmwareStage::GenericPush => self.generic_push(now, ac),
            FirmwareStage::Ath10kLike => {}
        }
    }

    /// The most `next_txq` hand-outs one scheduling pass may make: every TXQ a few
    /// times (the scheduler's own guards end a pass long before).
    fn pass_guard(&self) -> usize {
        4 * TxqId::first_of_link(self.links.len()).index() + 8
    }

    /// mt76's TX worker for one AC (`mt76_txq_schedule`, firmware-queues.md §2.2 rules
    /// M1, M2, M6, M7): rounds of `schedule_start` and `next_txq` while a round moves
    /// frames; each TXQ handed out gets a burst that stops when the TXQ is empty or
    /// AQL's station gate refuses (A2), when the ring is stopped (`ndesc − 32`
    /// entries written in this run; the model's DMA reads each frame at once, so the
    /// next run finds the ring empty) or when the tokens run out (`token_size − 64`
    /// in use, M8); then `return_txq` (to the head if frames remain and fairness is
    /// on, S8). A stopped ring or token pool ends the round at the returned TXQ (E3).
    /// 6.12's rules (M9): no non-AQL pre-check, and no PS handling here (a dozing
    /// station's TXQs are off the list, S10).
    fn mt76_worker(&mut self, now: Nanos, ac: Ac, m: Mt76Params) {
        let writable = m.ring_writable();
        self.drv.stage.ring.start();
        let guard = self.pass_guard();
        loop {
            self.schedule_start(now, ac);
            let mut moved = 0u32;
            let mut stopped = false;
            let mut handed = 0;
            while let Some(txq) = self.next_txq(now, ac) {
                handed += 1;
                loop {
                    stopped = self.drv.stage.ring.stopped(writable) || !self.driver_room(ac);
                    if stopped {
                        break;
                    }
                    let Some(p) = self.dequeue_txq(now, txq, ac) else {
                        break;
                    };
                    self.drv.hold(txq, ac, p);
                    self.drv.stage.ring.write();
                    moved += 1;
                }
                self.return_txq(now, txq, ac);
                if stopped || handed >= guard {
                    break;
                }
            }
            if moved == 0 || stopped || handed >= guard {
                break;
            }
        }
    }

    /// `ieee80211_handle_wake_tx_queue` (firmware-queues.md §1.5 rules P1–P3, §3.2
    /// rules K1–K3): one round over the AC's TXQs, each drained whole (dequeue returns
    /// nothing only when the TXQ is empty or, with AQL, at the station gate); a frame
    /// that finds the firmware full is dropped at the handoff (ath11k's `-ENOSPC`,
    /// freed with `ieee80211_free_txskb`, which gives its AQL estimate back, A5).
    fn generic_push(&mut self, now: Nanos, ac: Ac) {
        self.schedule_start(now, ac);
        let guard = self.pass_guard();
        let mut handed = 0;
        while let Some(txq) = self.next_txq(now, ac) {
            handed += 1;
            while let Some(p) = self.dequeue_txq(now, txq, ac) {
                if self.driver_room(ac) {
                    self.drv.hold(txq, ac, p);
                } else {
                    self.drop_at_handoff(now, txq.link(), ac, p);
                }
            }
            self.return_txq(now, txq, ac);
            if handed >= guard {
                break;
            }
        }
    }

    /// A frame dequeued from its TXQ that the firmware refused: freed through
    /// mac80211, which releases its AQL estimate (A5), and counted as dropped.
    fn drop_at_handoff(&mut self, now: Nanos, link: LinkId, ac: Ac, packet: Packet) {
        if let Some(gate) = self.aql.as_mut() {
            if packet.aql_us > 0 {
                gate.aql.complete(link, ac, packet.aql_us as u32);
            }
        }
        if let Some(d) = self.dql.as_mut() {
            d[ac.index()].completed(now, packet.len_bytes);
        }
        self.drops.push(Dropped {
            packet,
            reason: DropReason::QueueFull,
        });
    }

    /// An exchange's airtime as the driver reports it to mac80211: at once
    /// (`register_airtime` per exchange; ath9k and the ath10k-like firmware), in
    /// mt76's polled batches (firmware-queues.md §2.3 rules F3–F5: the WTBL counters
    /// accrue, a poll reports each station's per-AC increase under tid 0/1/4/6), or
    /// never (ath11k, firmware-queues.md §1.4 rule T4).
    #[inline]
    pub(crate) fn report_airtime(
        &mut self,
        now: Nanos,
        link: LinkId,
        tid: Tid,
        tx_us: u32,
        rx_us: u32,
    ) {
        if self.cfg.driver != DriverKind::Firmware || self.cfg.firmware.asks_may_transmit() {
            return self.register_airtime(now, link, tid, tx_us, rx_us);
        }
        let exchange = StationAirtime {
            link,
            ac: self.tid_ac(tid),
            tx_us: u64::from(tx_us),
            rx_us: u64::from(rx_us),
        };
        self.report_airtime_staged(now, exchange);
    }

    /// [`TxPath::report_airtime`] for the stages of issue 30: `exchange`'s airtime
    /// accrues to mt76's counters, or is not reported at all.
    #[cold]
    #[inline(never)]
    fn report_airtime_staged(&mut self, now: Nanos, exchange: StationAirtime) {
        match self.cfg.firmware {
            FirmwareStage::Ath10kLike | FirmwareStage::GenericPush => {}
            FirmwareStage::Mt76(m) => {
                let sched = &mut self.sched;
                self.drv
                    .stage
                    .airtime
                    .accrue(now, m.report_interval, exchange, &mut |r| {
                        if let Some(s) = sched.as_mut() {
                            let clamp = |us: u64| us.min(u64::from(u32::MAX)) as u32;
                            s.register_airtime(
                                now,
                                TxqKey::station(r.link, mt76_report_tid(r.ac)),
                                r.ac,
                                clamp(r.tx_us),
                                clamp(r.rx_us),
                            );
                        }
                    });
            }
        }
    }

    /// The firmware stage's own bounded queues, beside [`TxPath::queue_occupancy`]'s:
    /// mt76's ring (entries one worker run wrote, against `ndesc − 32`).
    pub(crate) fn stage_occupancy(&self, node: NodeId) -> Option<QueueOccupancy> {
        match (self.cfg.driver, self.cfg.firmware) {
            (DriverKind::Firmware, FirmwareStage::Mt76(m)) => Some(QueueOccupancy {
                node,
                queue: PathQueue::FirmwareRing,
                ac: None,
                peak: u64::from(self.drv.stage.ring.peak_written),
                limit: u64::from(m.ring_writable()),
            }),
            _ => None,
        }
    }

    /// mt76's polled airtime so far: accrued, reported, and the longest wait of
    /// accrued airtime for its poll (µs, µs, time).
    pub(crate) fn polled_airtime(&self) -> PolledAirtime {
        let a = &self.drv.stage.airtime;
        PolledAirtime {
            accrued_us: a.accrued_total_us,
            reported_us: a.reported_total_us,
            max_delay: a.max_delay,
        }
    }
}

/// The airtime an mt76 stage has accrued in its stations' counters and reported to
/// mac80211 at its polls (`TxPath::report_airtime`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PolledAirtime {
    /// TX and RX airtime the exchanges accrued, µs.
    pub accrued_us: u64,
    /// Of it, what the polls reported to the scheduler, µs.
    pub reported_us: u64,
    /// The longest an exchange's airtime waited for its poll.
    pub max_delay: Nanos,
}
