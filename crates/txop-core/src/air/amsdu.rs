//! A-MSDUs leave the engine as the MSDUs they carry (`mac80211/amsdu.rs`, reference
//! §16): a carrier released by its receiver is reported as its MSDUs delivered, a
//! carrier dropped before that as its MSDUs dropped.

use super::{Air, Output};
use crate::budget::CellStamps;
use crate::packet::{DropReason, Packet};
use crate::Nanos;

impl Air {
    /// The outputs from `from` on were just released from node `txn`'s transmissions:
    /// replace each A-MSDU carrier among them by its MSDUs (once; a copy received
    /// again releases nothing), and return the packets and bytes now delivered there.
    #[cold]
    #[inline(never)]
    pub(crate) fn unpack_delivered(&mut self, txn: usize, from: usize) -> (u64, u64) {
        let tail: Vec<Output> = self.out.drain(from..).collect();
        let store = &mut self.nodes[txn].path.amsdu;
        let (mut pkts, mut bytes) = (0, 0);
        for o in tail {
            match o {
                Output::Delivered { at, packet, stamps } => store.unpack(packet, |p| {
                    pkts += 1;
                    bytes += u64::from(p.len_bytes);
                    // The MSDU's own time to its TXQ (it joined the carrier there),
                    // the carrier's from then on.
                    let stamps = CellStamps {
                        txq_at: p.txq_at(),
                        ..stamps
                    };
                    self.out.push_back(Output::Delivered {
                        at,
                        packet: p,
                        stamps,
                    });
                }),
                other => self.out.push_back(other),
            }
        }
        (pkts, bytes)
    }

    /// Node `n`'s path dropped the A-MSDU carrier `packet`: the MSDUs to report.
    /// `received` says the receiver took it all the same (a retry-limit drop of a
    /// frame whose BlockAck was lost), which reports nothing and leaves its MSDUs to
    /// the receiver's release.
    #[cold]
    #[inline(never)]
    pub(crate) fn msdus_dropped(
        &mut self,
        n: usize,
        packet: Packet,
        received: bool,
    ) -> Vec<Packet> {
        let store = &mut self.nodes[n].path.amsdu;
        let mut msdus = Vec::new();
        if received {
            store.done(&packet);
        } else {
            store.dropped(packet, |p| msdus.push(p));
        }
        msdus
    }

    /// Whether node `txn`'s releases may hold A-MSDU carriers.
    #[inline(always)]
    pub(crate) fn has_amsdus(&self, txn: usize) -> bool {
        !self.nodes[txn].path.amsdu.is_empty()
    }

    /// Report `packet` (an MSDU) dropped by node `n` at `now` (counters and output).
    pub(crate) fn report_msdu_drop(
        &mut self,
        now: Nanos,
        n: usize,
        packet: Packet,
        reason: DropReason,
    ) {
        let uplink = !packet.src.is_ap();
        // Every packet in a path travels between the AP and a station.
        if let Some(station) = if uplink { packet.src } else { packet.dst }.as_station() {
            let s = self.link_stats(station, uplink);
            match reason {
                DropReason::QueueFull => s.dropped_queue_full += 1,
                DropReason::RetryLimit => s.dropped_retry_limit += 1,
                DropReason::PsBuffer => s.dropped_ps_buffer += 1,
                _ => s.dropped_aqm += 1,
            }
        }
        self.out.push_back(Output::Dropped {
            at: now,
            node: self.nodes[n].id,
            packet,
            reason,
        });
    }
}
