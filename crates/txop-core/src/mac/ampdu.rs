//! MPDU and A-MPDU sizes, and the limits an aggregate is built under
//! (802.11-2016 9.7 A-MPDU format; reference §11.3).

use crate::Nanos;

/// QoS data MAC header (26) + LLC/SNAP (8) + FCS (4): the bytes an MSDU gains on the air.
/// The same 38 bytes mac80211's airtime estimate adds (`skb->len + 38`, reference §6.5).
pub const QOS_DATA_OVERHEAD_BYTES: u32 = 26 + 8 + 4;
/// Non-QoS data header (24) + LLC/SNAP (8) + FCS (4), for legacy DCF.
pub const DATA_OVERHEAD_BYTES: u32 = 24 + 8 + 4;

/// The MAC header and FCS around each MPDU's payload: a QoS data frame's or a plain
/// data frame's.
pub fn mpdu_overhead(qos: bool) -> u32 {
    if qos {
        QOS_DATA_OVERHEAD_BYTES
    } else {
        DATA_OVERHEAD_BYTES
    }
}
/// A-MPDU subframe delimiter.
pub const DELIMITER_BYTES: u32 = 4;
/// HT maximum A-MPDU length (2^16 − 1).
pub const HT_MAX_AMPDU_BYTES: u32 = 65_535;
/// VHT maximum A-MPDU length (2^20 − 1).
pub const VHT_MAX_AMPDU_BYTES: u32 = 1_048_575;
/// Block-ack window of HT/VHT (`IEEE80211_MAX_AMPDU_BUF_HT`).
pub const BA_WINDOW: u16 = 64;
/// aPPDUMaxTime for HT/VHT (5.484 ms; reference §11.2 marks it \[U\]).
pub const PPDU_MAX_TIME: Nanos = Nanos(5_484_000);

/// Where an A-MPDU's subframes lie in time: the PPDU's `duration` from `start`,
/// spread over its PSDU in proportion to the bytes before and in each subframe. It
/// places them where something happens during the PPDU: interference that covers part
/// of it, a receiver that leaves before its end. Both media use it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SubframeClock {
    start: Nanos,
    duration_ns: u64,
    psdu_bytes: u64,
    offset_bytes: u64,
}

/// One subframe's time on the air, as [`SubframeClock`] places it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SubframeSpan {
    /// Where the previous subframe ended (the PPDU's start for the first).
    pub(crate) from: Nanos,
    /// When its last bit arrives: at least 1 ns after the PPDU's start, and not after
    /// its end.
    pub(crate) to: Nanos,
}

impl SubframeClock {
    /// The clock of a PPDU of `duration` from `start` carrying `psdu_bytes`.
    pub(crate) fn new(start: Nanos, duration: Nanos, psdu_bytes: u32) -> SubframeClock {
        SubframeClock {
            start,
            duration_ns: duration.as_ns(),
            psdu_bytes: u64::from(psdu_bytes.max(1)),
            offset_bytes: 0,
        }
    }

    /// The next subframe, of `bytes` (MPDU and overhead).
    pub(crate) fn next(&mut self, bytes: u32) -> SubframeSpan {
        let psdu = self.psdu_bytes;
        let from = self.start + Nanos(self.duration_ns * self.offset_bytes / psdu);
        self.offset_bytes += u64::from(bytes);
        let end = self.offset_bytes.min(psdu);
        let to = self.start + Nanos((self.duration_ns * end / psdu).max(1));
        SubframeSpan { from, to }
    }
}

/// Running PSDU length of an A-MPDU as subframes are appended: every subframe but the
/// last is padded to a multiple of 4 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AmpduLength {
    /// Length if the aggregate ended now.
    pub(crate) psdu_bytes: u32,
    /// Subframes appended so far.
    pub(crate) subframes: u16,
    pad_of_last: u32,
}

impl AmpduLength {
    /// The PSDU length if a subframe carrying `mpdu_bytes` were appended.
    pub(crate) fn with(&self, mpdu_bytes: u32) -> u32 {
        self.psdu_bytes + self.pad_of_last + DELIMITER_BYTES + mpdu_bytes
    }

    /// Append a subframe carrying `mpdu_bytes`: its delimiter, the MPDU, and (once
    /// another follows) the padding to a multiple of 4 bytes.
    pub(crate) fn push(&mut self, mpdu_bytes: u32) {
        self.psdu_bytes = self.with(mpdu_bytes);
        self.pad_of_last = (4 - (DELIMITER_BYTES + mpdu_bytes) % 4) % 4;
        self.subframes += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ampdu_length_pads_all_but_last() {
        let mut a = AmpduLength::default();
        a.push(1538);
        assert_eq!(a.psdu_bytes, 1542);
        // 1542 is not a multiple of 4: 2 bytes of padding before the next delimiter.
        assert_eq!(a.with(1538), 1542 + 2 + 1542);
        a.push(1538);
        assert_eq!(a.psdu_bytes, 3086);
        assert_eq!(a.subframes, 2);
    }
}
