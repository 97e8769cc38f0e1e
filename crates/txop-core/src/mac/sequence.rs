//! An exchange as data: the PPDUs of one data frame exchange, in order, each with its
//! sender, rate, size, duration and Duration field, built once from one protection
//! decision ([`LinkAirtime::protection_for`]) by [`FrameSequence::data`].
//!
//! Both media read the same sequence: one collision domain lays it out whole when the
//! exchange starts (`air/exchange.rs`) and the capture records it from there
//! (`capture.rs`); the per-node medium steps through it PPDU by PPDU (`air/medium/spatial.rs`),
//! each SIFS after the previous one if that one got through. A PPDU's Duration field
//! covers the rest of the sequence (802.11-2016 9.2.5: the time to the end of the
//! response, with its SIFS gaps), which is the NAV it sets at a third party that
//! decodes it (10.3.2.4).

use crate::mac::link_airtime::LinkAirtime;
use crate::mac::protection::Protection;
use crate::phy::rates::{ACK_BYTES, BLOCK_ACK_BYTES, CTS_BYTES, RTS_BYTES};
use crate::phy::TxVector;
use crate::Nanos;

/// What a PPDU is within its exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum PpduKind {
    /// Request to send (holder → peer).
    Rts,
    /// Clear to send (peer → holder).
    Cts,
    /// CTS-to-self in front of a protected data PPDU (holder, to nobody).
    CtsToSelf,
    /// The data PPDU (holder → peer).
    Data,
    /// ACK or BlockAck (peer → holder).
    Response,
    /// One of the MAC's own frames (`mac/frame.rs`): a station's null-data frame or
    /// PS-Poll (holder → its AP), or the AP's beacon (to every station).
    Own,
}

impl PpduKind {
    /// Whether the exchange's holder sends it (else its peer does).
    pub(crate) fn sent_by_holder(self) -> bool {
        matches!(
            self,
            PpduKind::Rts | PpduKind::CtsToSelf | PpduKind::Data | PpduKind::Own
        )
    }

    /// Whether it is addressed to the other end of the exchange (a CTS-to-self is
    /// addressed to its own sender).
    pub(crate) fn addressed(self) -> bool {
        self != PpduKind::CtsToSelf
    }
}

/// How an exchange ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExchangeOutcome {
    /// Acknowledged (for an A-MPDU: a BlockAck came back, possibly with holes).
    Acked,
    /// No response: every MPDU was lost on the channel.
    Failed,
    /// Two or more transmissions overlapped.
    Collision,
}

/// One PPDU of a frame sequence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SequencePpdu {
    pub(crate) kind: PpduKind,
    /// Its rate: the data's own, the control-response rate of the data's rate for the
    /// response, the link's protection-frame rate for RTS, CTS and CTS-to-self.
    pub(crate) txv: TxVector,
    /// PSDU bytes.
    pub(crate) bytes: u32,
    pub(crate) duration: Nanos,
    /// Its Duration field: the time from its end to the end of the sequence.
    pub(crate) nav_after: Nanos,
}

/// The PPDUs of one data exchange: the protection (RTS and CTS, or a CTS-to-self, or
/// nothing), the data PPDU and its response, SIFS apart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FrameSequence {
    ppdus: [SequencePpdu; 4],
    len: u8,
}

impl FrameSequence {
    /// The sequence of a `psdu_bytes` data PPDU at `txv` (an A-MPDU if `aggregated`) on
    /// a link with durations `air` at that rate, protected by `protection`, answered at
    /// the link's control-response rate.
    #[inline]
    pub(crate) fn data(
        air: &LinkAirtime,
        protection: Protection,
        txv: TxVector,
        psdu_bytes: u32,
        aggregated: bool,
        sifs: Nanos,
    ) -> FrameSequence {
        let ppdu = |kind, txv, bytes, duration| SequencePpdu {
            kind,
            txv,
            bytes,
            duration,
            nav_after: Nanos::ZERO,
        };
        let (protect, ctl) = (air.rts_cts_txv, air.ctl_txv);
        let none = ppdu(PpduKind::Response, ctl, 0, Nanos::ZERO);
        let mut ppdus = [none; 4];
        let mut len = 0;
        let mut push = |p| {
            ppdus[len] = p;
            len += 1;
        };
        match protection {
            Protection::RtsCts => {
                push(ppdu(PpduKind::Rts, protect, RTS_BYTES, air.rts));
                push(ppdu(PpduKind::Cts, protect, CTS_BYTES, air.cts));
            }
            Protection::CtsToSelf => push(ppdu(
                PpduKind::CtsToSelf,
                protect,
                CTS_BYTES,
                air.cts_to_self - sifs,
            )),
            Protection::Off => {}
        }
        push(ppdu(
            PpduKind::Data,
            txv,
            psdu_bytes,
            air.data.duration(psdu_bytes),
        ));
        let response_bytes = if aggregated {
            BLOCK_ACK_BYTES
        } else {
            ACK_BYTES
        };
        push(ppdu(
            PpduKind::Response,
            ctl,
            response_bytes,
            air.response(aggregated),
        ));
        // Each Duration field covers what follows it, SIFS before each.
        let mut after = Nanos::ZERO;
        for p in ppdus[..len].iter_mut().rev() {
            p.nav_after = after;
            after = after + sifs + p.duration;
        }
        FrameSequence {
            ppdus,
            len: len as u8,
        }
    }

    /// The sequence of one of the MAC's own frames: the frame (`bytes` at `txv`), then,
    /// if it is acknowledged (a station's frame, not a beacon), an ACK at `ack_txv`
    /// taking `ack` (10.3.2.9).
    #[inline]
    pub(crate) fn own(
        txv: TxVector,
        bytes: u32,
        duration: Nanos,
        ack: Option<(TxVector, Nanos)>,
        sifs: Nanos,
    ) -> FrameSequence {
        let frame = SequencePpdu {
            kind: PpduKind::Own,
            txv,
            bytes,
            duration,
            nav_after: Nanos::ZERO,
        };
        let mut ppdus = [frame; 4];
        let mut len = 1;
        if let Some((ack_txv, ack_duration)) = ack {
            ppdus[0].nav_after = sifs + ack_duration;
            ppdus[1] = SequencePpdu {
                kind: PpduKind::Response,
                txv: ack_txv,
                bytes: ACK_BYTES,
                duration: ack_duration,
                nav_after: Nanos::ZERO,
            };
            len = 2;
        }
        FrameSequence { ppdus, len }
    }

    /// Its PPDUs, in order.
    #[inline]
    pub(crate) fn ppdus(&self) -> &[SequencePpdu] {
        &self.ppdus[..self.len as usize]
    }

    /// Its `kind` PPDU (a sequence holds each kind at most once).
    #[inline]
    pub(crate) fn get(&self, kind: PpduKind) -> &SequencePpdu {
        self.ppdus()
            .iter()
            .find(|p| p.kind == kind)
            .expect("the sequence holds that PPDU")
    }

    /// The PPDU that follows the `kind` one, if any.
    #[inline]
    pub(crate) fn after(&self, kind: PpduKind) -> Option<PpduKind> {
        let ppdus = self.ppdus();
        let i = ppdus.iter().position(|p| p.kind == kind)?;
        ppdus.get(i + 1).map(|p| p.kind)
    }

    /// The PPDU whose response its holder waits for when `lost` did not get through:
    /// `lost` itself if the holder sent it (its addressee answers nothing), else the
    /// one it answers (a CTS answers the RTS, a response the data or the MAC's own
    /// frame). Its rate sets the response timeout (10.3.2.9).
    #[inline]
    pub(crate) fn eliciting(&self, lost: PpduKind) -> &SequencePpdu {
        if lost.sent_by_holder() {
            return self.get(lost);
        }
        let ppdus = self.ppdus();
        let i = ppdus
            .iter()
            .position(|p| p.kind == lost)
            .expect("the sequence holds that PPDU");
        &ppdus[i - 1]
    }

    /// The first PPDU's kind: the exchange's first frame on the air.
    #[inline]
    pub(crate) fn first(&self) -> PpduKind {
        self.ppdus[0].kind
    }

    /// The time from the sequence's start to the data PPDU's start: the protection
    /// frames with the SIFS after each.
    #[inline]
    pub(crate) fn data_offset(&self, sifs: Nanos) -> Nanos {
        self.ppdus()
            .iter()
            .take_while(|p| p.kind != PpduKind::Data)
            .fold(Nanos::ZERO, |t, p| t + p.duration + sifs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::rates::control_response_rate;
    use crate::phy::timing::PhyTiming;
    use crate::phy::{Band, Standard};

    /// The Duration fields as 802.11-2016 9.2.5 gives them, written out per frame: RTS
    /// → 3 SIFS + CTS + data + response; CTS and CTS-to-self → 2 SIFS + data +
    /// response; data → SIFS + response; the response → 0.
    #[test]
    fn durations_cover_the_rest_of_the_exchange() {
        let timing = PhyTiming::new(Standard::G, Band::Ghz2_4);
        let sifs = timing.sifs;
        let txv = TxVector::Ofdm { rate_mbps: 54 };
        let ctl = control_response_rate(&txv, Standard::G);
        for (link, protection) in [
            (Protection::Off, Protection::Off),
            (Protection::Off, Protection::RtsCts),
            (Protection::CtsToSelf, Protection::CtsToSelf),
            (Protection::RtsCts, Protection::RtsCts),
        ] {
            let air = LinkAirtime::new(&txv, &timing, link);
            for aggregated in [false, true] {
                let s = FrameSequence::data(&air, protection, txv, 1_538, aggregated, sifs);
                assert_eq!(s.get(PpduKind::Response).txv, ctl);
                let data = air.data.duration(1_538);
                let resp = air.response(aggregated);
                let kinds: Vec<PpduKind> = s.ppdus().iter().map(|p| p.kind).collect();
                let expected_kinds = match protection {
                    Protection::RtsCts => vec![PpduKind::Rts, PpduKind::Cts],
                    Protection::CtsToSelf => vec![PpduKind::CtsToSelf],
                    Protection::Off => vec![],
                };
                assert_eq!(kinds[..kinds.len() - 2], expected_kinds[..]);
                assert_eq!(s.get(PpduKind::Data).nav_after, sifs + resp);
                assert_eq!(s.get(PpduKind::Response).nav_after, Nanos::ZERO);
                match protection {
                    Protection::RtsCts => {
                        let rts = s.get(PpduKind::Rts);
                        assert_eq!(rts.nav_after, sifs * 3 + air.cts + data + resp);
                        assert_eq!(s.get(PpduKind::Cts).nav_after, sifs * 2 + data + resp);
                        assert_eq!(s.data_offset(sifs), air.rts + sifs + air.cts + sifs);
                        assert_eq!(s.first(), PpduKind::Rts);
                        assert_eq!(s.after(PpduKind::Rts), Some(PpduKind::Cts));
                    }
                    Protection::CtsToSelf => {
                        let c = s.get(PpduKind::CtsToSelf);
                        assert_eq!(c.nav_after, sifs * 2 + data + resp);
                        assert_eq!(s.data_offset(sifs), air.cts_to_self);
                        assert_eq!(c.txv, air.rts_cts_txv);
                    }
                    Protection::Off => {
                        assert_eq!(s.data_offset(sifs), Nanos::ZERO);
                        assert_eq!(s.first(), PpduKind::Data);
                    }
                }
                assert_eq!(s.after(PpduKind::Data), Some(PpduKind::Response));
                assert_eq!(s.after(PpduKind::Response), None);
            }
        }
    }

    /// The frame a holder waited on when a PPDU was lost (10.3.2.9): the RTS when
    /// it or its CTS was lost, the data when it or its response was, the MAC's own
    /// frame when it or its ACK was. An 802.11g link whose RTS goes at a DSSS rate and
    /// its data at OFDM tells them apart by the timeout.
    #[test]
    fn a_lost_response_is_waited_for_at_the_rate_of_what_it_answers() {
        let timing = PhyTiming::new(Standard::G, Band::Ghz2_4);
        let sifs = timing.sifs;
        let txv = TxVector::Ofdm { rate_mbps: 54 };
        let air = LinkAirtime::new(&txv, &timing, Protection::RtsCts);
        let s = FrameSequence::data(&air, Protection::RtsCts, txv, 1_538, false, sifs);
        for (lost, waited) in [
            (PpduKind::Rts, PpduKind::Rts),
            (PpduKind::Cts, PpduKind::Rts),
            (PpduKind::Data, PpduKind::Data),
            (PpduKind::Response, PpduKind::Data),
        ] {
            assert_eq!(s.eliciting(lost).kind, waited, "{lost:?}");
        }
        assert_eq!(s.eliciting(PpduKind::Cts).txv, air.rts_cts_txv);
        assert_eq!(s.eliciting(PpduKind::Response).txv, txv);
        let ack = Some((air.rts_cts_txv, air.cts));
        let own = FrameSequence::own(txv, 30, Nanos::from_us(40), ack, sifs);
        assert_eq!(own.eliciting(PpduKind::Response).kind, PpduKind::Own);
        assert_eq!(own.eliciting(PpduKind::Own).kind, PpduKind::Own);
    }
}
