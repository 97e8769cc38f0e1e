//! Driver and firmware queues below mac80211, and the hardware queue of built PPDUs.
//!
//! The driver holds, per (link, TID), the packets it has taken (ath9k's `tid->buf_q`
//! before mac80211 TXQs existed, or an ath10k-like firmware's MSDU queue), the MPDUs to
//! retransmit (`tid->retry_q`) and the block-ack window; it builds aggregates from them
//! and puts them in the per-AC hardware queue the MAC transmits from.
//!
//! [`bus`] is the host bus between a station's host CPU and its WLAN chip;
//! `firmware_stage` what an mt76- or ath11k-like firmware stage keeps (issue 30).

pub(crate) mod airtime_report;
pub mod bus;
pub(crate) mod firmware_stage;

use crate::mac::ampdu::{AmpduLength, BA_WINDOW};
use crate::mac::blockack::{Mpdu, TxTid};
use crate::mac::edca::Ac;
use crate::mac80211::rate_chain::{RateChain, RateIdx, RateStage};
use crate::mac80211::txq::{LinkId, Tid, TxqId};
use crate::packet::Packet;
use crate::phy::{Band, TxVector};
use crate::Nanos;
use std::collections::VecDeque;

/// Data TIDs per link (user priorities 0–7), as [`crate::mac80211::txq`] numbers them.
pub(crate) use crate::mac80211::txq::NUM_TIDS;
/// ath9k `ATH_NON_AGGR_MIN_QDEPTH`: a TID without aggregation is served only while the
/// hardware queue holds fewer PPDUs than this.
pub(crate) const ATH_NON_AGGR_MIN_QDEPTH: u32 = 8;
/// ath9k `ath_tx_form_burst`: non-aggregated frames go to the hardware in bursts of at
/// most two.
pub(crate) const ATH_BURST_FRAMES: u32 = 2;
/// The most PPDUs an ath9k hardware queue holds (queued or in the air), probes on a
/// block-ack session aside, when at most `ampdu_limit` count in `axq_ampdu_depth`
/// (`ATH_AGGR_MIN_QDEPTH`): a TID without a session adds a burst only while the queue
/// holds fewer than [`ATH_NON_AGGR_MIN_QDEPTH`] PPDUs, so such PPDUs never number more
/// than `ATH_NON_AGGR_MIN_QDEPTH - 1 + ATH_BURST_FRAMES`, and the counted ones at most
/// `ampdu_limit` (drivers/net/wireless/ath/ath9k/xmit.c, `ath_tx_sched_aggr`).
pub(crate) const fn ath9k_hw_depth_bound(ampdu_limit: u32) -> u32 {
    ATH_NON_AGGR_MIN_QDEPTH - 1 + ATH_BURST_FRAMES + ampdu_limit
}

/// One PPDU built by the driver: MPDUs of one (link, TID).
#[derive(Clone, Debug)]
pub(crate) struct Ppdu {
    /// The link it goes out on.
    pub(crate) link: LinkId,
    /// The TID of its MPDUs.
    pub(crate) tid: Tid,
    /// Its access category (the TID's, or BE without QoS).
    pub(crate) ac: Ac,
    /// Its MPDUs, in transmission order.
    pub(crate) mpdus: Vec<Mpdu>,
    /// Sent as an A-MPDU under block ack (answered by a BlockAck).
    pub(crate) aggregated: bool,
    /// Its TID has a block-ack session (ath9k's `BUF_AMPDU`), whether it goes out
    /// aggregated or alone (a probe, or a chain holding a legacy rate, for which
    /// `ath_lookup_rate` allows no aggregate): what the hardware queue's limits
    /// count it under ([`Ppdu::counts_in_ampdu_depth`]).
    pub(crate) ba_session: bool,
    /// PSDU length in bytes (A-MPDU subframes with delimiters and padding, or the one
    /// MPDU).
    pub(crate) psdu_bytes: u32,
    /// The rates and tries rate control chose for it.
    pub(crate) chain: RateChain,
    /// Transmissions of this PPDU so far (the hardware's tries along `chain`).
    pub(crate) tries: u32,
}

impl Default for Ppdu {
    /// An empty PPDU: no MPDU, link 0, TID 0, BE. What a transmission of one of the
    /// MAC's own frames carries in place of a data PPDU.
    fn default() -> Ppdu {
        Ppdu {
            link: LinkId(0),
            tid: Tid(0),
            ac: Ac::Be,
            mpdus: Vec::new(),
            aggregated: false,
            ba_session: false,
            psdu_bytes: 0,
            chain: RateChain::single(TxVector::Ofdm { rate_mbps: 6 }, RateIdx(0), 1),
            tries: 0,
        }
    }
}

impl Ppdu {
    /// ath9k counts it in the hardware queue's `axq_ampdu_depth`
    /// (`bf_is_ampdu_not_probing`, xmit.c): a frame of a block-ack session that is not a
    /// rate-control probe (`IEEE80211_TX_CTL_RATE_CTRL_PROBE`), aggregated or not.
    #[inline]
    pub(crate) fn counts_in_ampdu_depth(&self) -> bool {
        self.ba_session && !self.chain.probe
    }

    /// A probe on a block-ack session: counted in ath9k's `axq_depth` but not in
    /// `axq_ampdu_depth`, and checked only against the latter, so the hardware queue's
    /// limits do not bound it (rate control does: minstrel_ht probes at most once per
    /// 20 ms and once per statistics update).
    #[inline]
    pub(crate) fn is_session_probe(&self) -> bool {
        self.ba_session && self.chain.probe
    }

    /// The TXQ its MPDUs came from.
    pub(crate) fn txq(&self) -> TxqId {
        TxqId::new(self.link, self.tid)
    }

    /// The chain stage of its next transmission (the last stage once the chain is used
    /// up, which the path never lets happen).
    #[inline]
    pub(crate) fn stage(&self) -> &RateStage {
        self.chain
            .stage_of_try(self.tries)
            .unwrap_or_else(|| self.chain.stages().last().unwrap_or(self.chain.first()))
    }
}

/// What bounds one PPDU.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BuildLimits {
    /// The PHY rate and format.
    pub(crate) txv: TxVector,
    /// A-MPDU under block ack; otherwise exactly one MPDU.
    pub(crate) aggregated: bool,
    /// Most subframes in an A-MPDU.
    pub(crate) max_subframes: u16,
    /// Longest PSDU, bytes.
    pub(crate) max_bytes: u32,
    /// Bytes an MSDU gains as an MPDU (MAC header, LLC/SNAP, FCS).
    pub(crate) overhead_bytes: u32,
    /// The longest PSDU whose PPDU at `txv` lasts at most the longest data PPDU allowed
    /// (the aggregate's duration limit, aPPDUMaxTime and what the TXOP limit leaves;
    /// [`BuildLimits::psdu_bytes_within`]), or `None` if not even an empty one fits: the
    /// builder compares bytes instead of computing a duration per subframe.
    pub(crate) max_duration_psdu_bytes: Option<u32>,
}

impl BuildLimits {
    /// The longest PSDU whose PPDU at `txv` in `band` lasts at most `max_duration`, or
    /// `None` if none does. A PPDU's duration never decreases with its length (whole
    /// symbols, or bits at a fixed rate), so `duration(psdu) <= max_duration` exactly
    /// when `psdu` is at most this.
    pub(crate) fn psdu_bytes_within(
        txv: &TxVector,
        band: Band,
        max_duration: Nanos,
    ) -> Option<u32> {
        let fits = |len: u32| txv.ppdu_duration(len, band) <= max_duration;
        if !fits(0) {
            return None;
        }
        // Binary search for the last length that fits (far beyond any PHY's limit).
        let (mut lo, mut hi) = (0u32, 1u32 << 26);
        if fits(hi) {
            return Some(hi);
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(lo)
    }

    /// The PPDU of `psdu_bytes` at `txv` lasts at most `max_duration`.
    fn within_duration(&self, psdu_bytes: u32) -> bool {
        self.max_duration_psdu_bytes
            .is_some_and(|max| psdu_bytes <= max)
    }
}

/// Take `key` out of a round robin list (it is there at most once).
// perf: the TXQ taken out is usually the one at the front (the on-demand builder
// serves the front), so that is checked first and the search is kept out of line.
#[inline(always)]
fn remove_key(list: &mut VecDeque<TxqId>, key: TxqId) {
    if list.front() == Some(&key) {
        list.pop_front();
    } else {
        remove_key_inside(list, key);
    }
}

/// [`remove_key`] for a key not at the front.
#[cold]
#[inline(never)]
fn remove_key_inside(list: &mut VecDeque<TxqId>, key: TxqId) {
    if let Some(pos) = list.iter().position(|&k| k == key) {
        list.remove(pos);
    }
}

/// The driver's queues of one node.
#[derive(Clone, Debug)]
pub(crate) struct DriverQueues {
    /// Per TXQ ([`TxqId::index`]): the packets the driver holds, the MPDUs to
    /// retransmit and the block-ack window.
    tids: Vec<TxTid>,
    /// Built PPDUs per AC, next to transmit first.
    pub(crate) hw: [VecDeque<Ppdu>; 4],
    /// PPDUs the MAC took from `hw` and has not completed.
    pub(crate) in_air: [u32; 4],
    /// Of those, the ones ath9k counts in `axq_ampdu_depth`
    /// ([`Ppdu::counts_in_ampdu_depth`]).
    pub(crate) in_air_ampdu: [u32; 4],
    /// Of those, probes on a block-ack session ([`Ppdu::is_session_probe`]).
    pub(crate) in_air_session_probes: [u32; 4],
    /// Packets inside the driver, firmware or hardware per AC, until their completion.
    held: [u32; 4],
    /// The sum of `held` (a firmware's limit is on all ACs together; summing the four
    /// just after one was stored stalled the load).
    held_total: u32,
    /// The most `held` reached per AC when a packet was handed to the driver
    /// ([`DriverQueues::hold`], the only way in that the netdev queue's stop guards).
    peak_held: [u32; 4],
    /// The most `held_total` reached when a packet was handed to the driver.
    peak_held_total: u32,
    /// Round robin per AC of the TXQs with held or retry frames (the driver's or the
    /// firmware's own scheduling).
    active: [VecDeque<TxqId>; 4],
    /// Per TXQ: a bit per AC whose `active` list holds it, so that a packet joining an
    /// already listed TXQ (the common case) needs no search of the list.
    listed: Vec<u8>,
    spare: Vec<Vec<Mpdu>>,
    /// Links whose station dozes (reference §9.1; ath9k `ath_tx_aggr_sleep`): kept off
    /// the round robin, their frames held, until [`DriverQueues::resume`].
    paused: Vec<bool>,
    /// The firmware stage's own state (mt76's ring run and polled airtime).
    pub(crate) stage: firmware_stage::FirmwareState,
}

impl DriverQueues {
    /// Empty queues for a node with `n_links` links.
    pub(crate) fn new(n_links: usize) -> DriverQueues {
        let n_txqs = TxqId::first_of_link(n_links).index();
        DriverQueues {
            tids: (0..n_txqs).map(|_| TxTid::default()).collect(),
            hw: Default::default(),
            in_air: [0; 4],
            in_air_ampdu: [0; 4],
            in_air_session_probes: [0; 4],
            held: [0; 4],
            held_total: 0,
            peak_held: [0; 4],
            peak_held_total: 0,
            active: Default::default(),
            listed: vec![0; n_txqs],
            spare: Vec::new(),
            paused: vec![false; n_links],
            stage: Default::default(),
        }
    }

    /// A TXQ's driver queue: held packets, retransmissions, block-ack window.
    pub(crate) fn tid_mut(&mut self, txq: TxqId) -> &mut TxTid {
        &mut self.tids[txq.index()]
    }

    /// Packets in a TXQ's driver queue (not yet built into PPDUs).
    pub(crate) fn queued(&self, txq: TxqId) -> usize {
        self.tids[txq.index()].len()
    }

    #[inline]
    fn activate(&mut self, txq: TxqId, ac: Ac, front: bool) {
        if self.paused[txq.link().index()] {
            return;
        }
        let bit = 1u8 << ac.index();
        let listed = &mut self.listed[txq.index()];
        let list = &mut self.active[ac.index()];
        if *listed & bit != 0 {
            // perf: already at the front (a retransmission of the TXQ just served,
            // the common case), where it is to go.
            if !front || list.front() == Some(&txq) {
                return;
            }
            remove_key(list, txq);
        }
        *listed |= bit;
        if front {
            list.push_front(txq);
        } else {
            list.push_back(txq);
        }
    }

    /// A packet enters a TXQ's driver queue.
    // perf: inlined into the firmware push loop, one call per packet pushed.
    #[inline(always)]
    pub(crate) fn hold(&mut self, txq: TxqId, ac: Ac, packet: Packet) {
        self.tids[txq.index()].fifo.push_back(packet);
        self.held[ac.index()] += 1;
        self.held_total += 1;
        self.peak_held[ac.index()] = self.peak_held[ac.index()].max(self.held[ac.index()]);
        self.peak_held_total = self.peak_held_total.max(self.held_total);
        self.activate(txq, ac, false);
    }

    /// The most packets of `ac` the driver held just after it was handed one
    /// ([`DriverQueues::hold`]).
    pub(crate) fn peak_held(&self, ac: Ac) -> u32 {
        self.peak_held[ac.index()]
    }

    /// The most packets of all ACs the driver held just after it was handed one.
    pub(crate) fn peak_held_total(&self) -> u32 {
        self.peak_held_total
    }

    /// A failed MPDU goes back for software retransmission; its TXQ is served next.
    pub(crate) fn requeue(&mut self, txq: TxqId, ac: Ac, mpdu: Mpdu) {
        self.tids[txq.index()].requeue(mpdu);
        self.activate(txq, ac, true);
    }

    /// Packets of `ac` inside the driver, firmware or hardware, until their completion.
    pub(crate) fn held(&self, ac: Ac) -> u32 {
        self.held[ac.index()]
    }

    /// Packets of all ACs inside the driver, firmware or hardware.
    pub(crate) fn held_total(&self) -> u32 {
        self.held_total
    }

    /// One packet of `ac` completed (acknowledged or given up).
    pub(crate) fn release_held(&mut self, ac: Ac) {
        self.held[ac.index()] -= 1;
        self.held_total -= 1;
    }

    /// Number of TXQs with frames for `ac`.
    pub(crate) fn active_len(&self, ac: Ac) -> usize {
        self.active[ac.index()].len()
    }

    /// The next TXQ in the driver's own round robin for `ac`.
    pub(crate) fn next_active(&self, ac: Ac) -> Option<TxqId> {
        self.active[ac.index()].front().copied()
    }

    /// PPDUs of `ac` in the hardware queue or the air (ath9k's `axq_depth`).
    pub(crate) fn hw_depth(&self, ac: Ac) -> u32 {
        self.hw[ac.index()].len() as u32 + self.in_air[ac.index()]
    }

    /// PPDUs of `ac` in the hardware queue or the air that ath9k counts in
    /// `axq_ampdu_depth` ([`Ppdu::counts_in_ampdu_depth`]): every frame of a block-ack
    /// session but probes, A-MPDU or not.
    pub(crate) fn hw_ampdu_depth(&self, ac: Ac) -> u32 {
        self.hw[ac.index()]
            .iter()
            .filter(|p| p.counts_in_ampdu_depth())
            .count() as u32
            + self.in_air_ampdu[ac.index()]
    }

    /// [`DriverQueues::hw_depth`] less the probes on a block-ack session, which
    /// ath9k's queue limits do not bound ([`Ppdu::is_session_probe`]).
    pub(crate) fn hw_depth_bounded(&self, ac: Ac) -> u32 {
        let probes = self.hw[ac.index()]
            .iter()
            .filter(|p| p.is_session_probe())
            .count() as u32
            + self.in_air_session_probes[ac.index()];
        self.hw_depth(ac) - probes
    }

    /// The MAC takes `ppdu` out of the hardware queue of its AC for transmission.
    pub(crate) fn air_started(&mut self, ppdu: &Ppdu) {
        let ac = ppdu.ac.index();
        self.in_air[ac] += 1;
        self.in_air_ampdu[ac] += ppdu.counts_in_ampdu_depth() as u32;
        self.in_air_session_probes[ac] += ppdu.is_session_probe() as u32;
    }

    /// A transmission of `ppdu` ended.
    pub(crate) fn air_ended(&mut self, ppdu: &Ppdu) {
        let ac = ppdu.ac.index();
        self.in_air[ac] -= 1;
        self.in_air_ampdu[ac] -= ppdu.counts_in_ampdu_depth() as u32;
        self.in_air_session_probes[ac] -= ppdu.is_session_probe() as u32;
    }

    /// The front TXQ of `ac` could not be served: to the back of the list.
    pub(crate) fn skip(&mut self, ac: Ac) {
        if let Some(key) = self.active[ac.index()].pop_front() {
            self.active[ac.index()].push_back(key);
        }
    }

    /// After serving `txq`: to the back if it still holds frames, else off the list.
    // perf: inlined into `build`, its one caller.
    #[inline(always)]
    fn rotate(&mut self, ac: Ac, txq: TxqId) {
        let bit = 1u8 << ac.index();
        let listed = &mut self.listed[txq.index()];
        let list = &mut self.active[ac.index()];
        let keep = !self.tids[txq.index()].is_empty() && !self.paused[txq.link().index()];
        if keep && *listed & bit != 0 && list.len() == 1 && list.front() == Some(&txq) {
            // perf: alone on the list and staying (one busy TXQ per AC, the common
            // case), where taking it off and putting it back would leave it.
            return;
        }
        if *listed & bit != 0 {
            remove_key(list, txq);
            *listed &= !bit;
        }
        if keep {
            list.push_back(txq);
            *listed |= bit;
        }
    }

    /// The station of `link` dozes: take its TXQs off the round robin and put the PPDUs
    /// already built for it back on their TXQs, as ath9k requeues the frames the
    /// hardware filtered for a sleeping station. Frames in the air complete as usual.
    pub(crate) fn pause(&mut self, link: LinkId) {
        self.paused[link.index()] = true;
        for tid in Tid::all() {
            self.listed[TxqId::new(link, tid).index()] = 0;
        }
        for ac in 0..4 {
            self.active[ac].retain(|txq| txq.link() != link);
            let mut i = 0;
            while i < self.hw[ac].len() {
                if self.hw[ac][i].link != link {
                    i += 1;
                    continue;
                }
                if let Some(mut p) = self.hw[ac].remove(i) {
                    let q = &mut self.tids[p.txq().index()];
                    for m in p.mpdus.drain(..) {
                        q.requeue(m);
                    }
                    self.recycle(p);
                }
            }
        }
    }

    /// The station of `link` is awake again: its TXQs with frames rejoin the round
    /// robin (`ac_of` maps a TID to its AC).
    pub(crate) fn resume(&mut self, link: LinkId, ac_of: impl Fn(Tid) -> Ac) {
        self.paused[link.index()] = false;
        for tid in Tid::all() {
            let txq = TxqId::new(link, tid);
            if !self.tids[txq.index()].is_empty() {
                self.activate(txq, ac_of(tid), false);
            }
        }
    }

    /// Packets held for `link` (its TXQs' queues and built PPDUs), not those in the
    /// air.
    pub(crate) fn link_packets(&self, link: LinkId) -> usize {
        let queued: usize = Tid::all()
            .map(|tid| self.tids[TxqId::new(link, tid).index()].len())
            .sum();
        let hw: usize = self
            .hw
            .iter()
            .flatten()
            .filter(|p| p.link == link)
            .map(|p| p.mpdus.len())
            .sum();
        queued + hw
    }

    /// Build a PPDU from `txq`'s driver queue: retransmissions first, then held packets, then
    /// packets from `pull` (mac80211's TXQ, for drivers that pull), within `limits` and
    /// the block-ack window; `ba_session` says whether the TID has a block-ack session
    /// ([`Ppdu::ba_session`]), `limits.aggregated` whether this PPDU is an A-MPDU. A pulled packet that does not fit stays in the driver's
    /// queue for next time (as ath9k puts it back on the TID). Returns `None` if nothing
    /// could be taken.
    ///
    // perf: `pull` is generic so that a builder that never pulls (`|| None`, the
    // on-demand firmware) loses the pull branch entirely.
    #[allow(clippy::too_many_arguments)] // what one PPDU is built from, each its own
    pub(crate) fn build(
        &mut self,
        txq: TxqId,
        ac: Ac,
        limits: &BuildLimits,
        ba_session: bool,
        chain: RateChain,
        now: Nanos,
        pull: &mut impl FnMut() -> Option<Packet>,
    ) -> Option<Ppdu> {
        let mut mpdus = self.spare.pop().unwrap_or_default();
        mpdus.clear();
        let mut len = AmpduLength::default();
        let max_subframes = if limits.aggregated {
            limits.max_subframes.max(1)
        } else {
            1
        };
        let q = &mut self.tids[txq.index()];
        let mut pulled_held = 0u32;
        while len.subframes < max_subframes {
            // Candidate: a retransmission, or the head of the held packets. A pulled
            // packet joins the held ones (which are empty when pulling) at once: if it
            // does not fit it stays there, as putting it back at their front would
            // leave it; if it fits it is taken from there like any held packet.
            let (bytes, retry) = if let Some(m) = q.retry.front() {
                (m.packet.len_bytes, true)
            } else if limits.aggregated && !q.window_open(BA_WINDOW) {
                break;
            } else if let Some(p) = q.fifo.front() {
                (p.len_bytes, false)
            } else if let Some(p) = pull() {
                pulled_held += 1;
                let bytes = p.len_bytes;
                q.fifo.push_back(p);
                (bytes, false)
            } else {
                break;
            };
            let mpdu_bytes = bytes + limits.overhead_bytes;
            let psdu = if limits.aggregated {
                len.with(mpdu_bytes)
            } else {
                mpdu_bytes
            };
            let fits =
                len.subframes == 0 || (psdu <= limits.max_bytes && limits.within_duration(psdu));
            if !fits {
                break;
            }
            // The candidate exists (seen at the front above), so each take succeeds.
            if retry {
                if let Some(m) = q.retry.pop_front() {
                    mpdus.push(m);
                }
            } else {
                q.push_new(now, &mut mpdus);
            }
            len.push(mpdu_bytes);
        }
        self.held[ac.index()] += pulled_held;
        self.held_total += pulled_held;
        self.rotate(ac, txq);
        if mpdus.is_empty() {
            self.spare.push(mpdus);
            return None;
        }
        let psdu_bytes = if limits.aggregated {
            len.psdu_bytes
        } else {
            mpdus[0].packet.len_bytes + limits.overhead_bytes
        };
        Some(Ppdu {
            link: txq.link(),
            tid: txq.tid(),
            ac,
            mpdus,
            aggregated: limits.aggregated,
            ba_session,
            psdu_bytes,
            chain,
            tries: 0,
        })
    }

    /// Return a finished PPDU's buffer for reuse.
    pub(crate) fn recycle(&mut self, mut ppdu: Ppdu) {
        ppdu.mpdus.clear();
        self.spare.push(std::mem::take(&mut ppdu.mpdus));
    }

    /// Packets held anywhere in the driver (queues, hardware queue).
    pub(crate) fn packets(&self) -> u64 {
        let queued: usize = self.tids.iter().map(|t| t.len()).sum();
        let hw: usize = self.hw.iter().flatten().map(|p| p.mpdus.len()).sum();
        (queued + hw) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ath9k's hardware queue counts (xmit.c, `ath_tx_txqaddbuf` and
    /// `bf_is_ampdu_not_probing`): `axq_depth` every PPDU, `axq_ampdu_depth` every one
    /// of a block-ack session but probes, also one sent alone (issue 25: a chain holding
    /// a CCK rate gives no aggregate, and such PPDUs went uncounted), in the hardware
    /// queue and in the air alike.
    #[test]
    fn hardware_queue_depths_count_as_ath9k() {
        let ppdu = |aggregated, ba_session, probe| {
            let cck = TxVector::Dsss {
                rate_kbps: 11_000,
                preamble: crate::phy::DsssPreamble::Long,
            };
            let mut chain = RateChain::single(cck, RateIdx(0), 1);
            chain.probe = probe;
            Ppdu {
                aggregated,
                ba_session,
                chain,
                ..Ppdu::default()
            }
        };
        let mut d = DriverQueues::new(1);
        let ac = Ac::Be;
        // An A-MPDU, a session's frame sent alone at a legacy rate, a session's probe,
        // and a frame of a TID without a session.
        d.hw[ac.index()].push_back(ppdu(true, true, false));
        d.hw[ac.index()].push_back(ppdu(false, true, false));
        d.hw[ac.index()].push_back(ppdu(false, true, true));
        d.hw[ac.index()].push_back(ppdu(false, false, false));
        assert_eq!(d.hw_depth(ac), 4);
        assert_eq!(
            d.hw_ampdu_depth(ac),
            2,
            "the A-MPDU and the lone session frame"
        );
        assert_eq!(d.hw_depth_bounded(ac), 3, "all but the session's probe");
        // The same once in the air.
        while let Some(p) = d.hw[ac.index()].pop_front() {
            d.air_started(&p);
        }
        assert_eq!(
            (d.hw_depth(ac), d.hw_ampdu_depth(ac), d.hw_depth_bounded(ac)),
            (4, 2, 3)
        );
        d.air_ended(&ppdu(false, true, false));
        d.air_ended(&ppdu(false, true, true));
        assert_eq!(
            (d.hw_depth(ac), d.hw_ampdu_depth(ac), d.hw_depth_bounded(ac)),
            (2, 1, 2)
        );
    }

    /// The byte bound says exactly what the duration bound says, at every length, for
    /// every PHY format, at 4 ms (the aggregate limit), at a TXOP-limited bound and
    /// at bounds shorter than a preamble.
    #[test]
    fn duration_bound_as_bytes() {
        let vectors = crate::phy::rates::sample_vectors();
        for txv in vectors {
            for band in [Band::Ghz2_4, Band::Ghz5] {
                for max_us in [10, 100, 1_000, 2_080, 4_000, 5_484] {
                    let max = Nanos::from_us(max_us);
                    let bound = BuildLimits::psdu_bytes_within(&txv, band, max);
                    for len in 0..70_000u32 {
                        let fits = txv.ppdu_duration(len, band) <= max;
                        assert_eq!(
                            fits,
                            bound.is_some_and(|b| len <= b),
                            "{txv:?} {band:?} {max_us} µs, {len} B"
                        );
                    }
                }
            }
        }
    }
}
