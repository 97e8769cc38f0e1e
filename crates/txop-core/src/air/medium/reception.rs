//! Reception by SINR: a receiver locked on one PPDU, the interference it suffers piece by
//! piece, and whether what it locked on gets through.
//!
//! A receiver locks on the first preamble it detects ([`crate::phy::space`]: at or above
//! the preamble detection threshold, with an SINR of at least
//! [`PREAMBLE_MIN_SINR_DB`](crate::phy::space::PREAMBLE_MIN_SINR_DB)). From then on every
//! PPDU that starts or ends elsewhere changes the interference; the reception is cut into
//! pieces of constant interference ([`RxLock`]), and each piece of each MPDU gets through
//! with the probability the error model gives at that piece's SINR, for that piece's
//! bytes ([`ln_success`]): a frame's pieces multiply, as ns-3's `InterferenceHelper`
//! combines a frame's chunks. A piece free of interference is decided at the link's own
//! SNR exactly as without space, so a reception nobody interferes with draws what it drew
//! before.

use crate::phy::channel::{ln_success, snr_threshold_db, WATERFALL_WIDTH_DB};
use crate::phy::space::mw_to_dbm;
use crate::phy::{DsssPreamble, TxVector};
use crate::Nanos;

/// How long the receiver needs the preamble clean to synchronise to a PPDU: the legacy
/// training fields and SIGNAL of an OFDM or HT/VHT PPDU (16 + 4 µs, 17.3.3), the PLCP
/// preamble and header of a DSSS one (192 or 96 µs, 16.2.2).
pub(crate) fn sync_time(tx: &TxVector) -> Nanos {
    match tx {
        TxVector::Dsss {
            preamble: DsssPreamble::Long,
            ..
        } => Nanos::from_us(192),
        TxVector::Dsss { .. } => Nanos::from_us(96),
        _ => Nanos::from_us(20),
    }
}

/// The log of a piece's success under interference: the error model's waterfall at the
/// piece's SINR, except that a piece more than the waterfall's width below the rate's
/// threshold (where a 1000-byte frame is lost nine times in ten) is lost whatever its
/// length. The waterfall is fitted on whole frames of 1000 bytes; scaled down to the few
/// bytes of an RTS or of a slice of an MPDU it would let them through at SINRs where the
/// decoder's bit errors are far beyond what its code corrects.
fn ln_success_under_interference(tx: &TxVector, sinr_db: f64, bytes: f64) -> f64 {
    if sinr_db < snr_threshold_db(tx) - WATERFALL_WIDTH_DB {
        f64::NEG_INFINITY
    } else {
        ln_success(tx, sinr_db, bytes)
    }
}

/// A stretch of a reception under constant interference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Piece {
    /// Where it starts.
    pub(crate) from: Nanos,
    /// Where it ends.
    pub(crate) to: Nanos,
    /// The power of every other PPDU on the air at the receiver, mW.
    pub(crate) interference_mw: f64,
}

/// A receiver locked on one PPDU.
#[derive(Clone, Debug, Default)]
pub(crate) struct RxLock {
    /// The node whose PPDU it is locked on.
    pub(crate) from: usize,
    /// When that PPDU started.
    pub(crate) start: Nanos,
    /// Until when the receiver is synchronising to it ([`sync_time`] after its start):
    /// interference that pushes the SINR under the preamble's minimum before then loses
    /// the lock.
    pub(crate) sync_until: Nanos,
    /// Its power at the receiver, mW: what the reception is decided on (the link's own
    /// SNR when there is a link between the two, so fading counts).
    pub(crate) signal_mw: f64,
    /// Its mean power at the receiver from the space, mW: its share of the energy the
    /// receiver senses (what is left is interference).
    pub(crate) power_mw: f64,
    /// Closed pieces, in time order.
    pub(crate) pieces: Vec<Piece>,
    /// The open piece: since when, and at which interference.
    open_from: Nanos,
    open_interference_mw: f64,
}

impl RxLock {
    /// Lock on `from`'s PPDU starting at `start` with `signal_mw`, under
    /// `interference_mw` (reusing `pieces`' allocation).
    pub(crate) fn lock(
        &mut self,
        from: usize,
        start: Nanos,
        sync: Nanos,
        signal_mw: f64,
        power_mw: f64,
        interference_mw: f64,
    ) {
        self.from = from;
        self.start = start;
        self.sync_until = start + sync;
        self.signal_mw = signal_mw;
        self.power_mw = power_mw;
        self.pieces.clear();
        self.open_from = start;
        self.open_interference_mw = interference_mw;
    }

    /// The interference changed to `interference_mw` at `t`.
    pub(crate) fn change(&mut self, t: Nanos, interference_mw: f64) {
        self.close(t);
        self.open_interference_mw = interference_mw;
    }

    /// Close the open piece at `t` (the PPDU ended, or the interference changes).
    pub(crate) fn close(&mut self, t: Nanos) {
        if t > self.open_from {
            self.pieces.push(Piece {
                from: self.open_from,
                to: t,
                interference_mw: self.open_interference_mw,
            });
        }
        self.open_from = t;
    }

    /// Whether any piece had interference.
    pub(crate) fn interfered(&self) -> bool {
        self.pieces.iter().any(|p| p.interference_mw > 0.0)
    }

    /// The lowest SINR (dB) over the pieces, with `noise_mw` of noise.
    pub(crate) fn min_sinr_db(&self, noise_mw: f64) -> f64 {
        let worst = self
            .pieces
            .iter()
            .map(|p| p.interference_mw)
            .fold(0.0, f64::max);
        mw_to_dbm(self.signal_mw / (noise_mw + worst))
    }

    /// The probability that `bytes` bytes sent with `tx` over `[from, to)` of the PPDU
    /// get through, at `signal_mw` over `noise_mw` plus each piece's interference.
    pub(crate) fn success(
        &self,
        tx: &TxVector,
        signal_mw: f64,
        noise_mw: f64,
        from: Nanos,
        to: Nanos,
        bytes: u32,
    ) -> f64 {
        let span = (to - from).as_ns().max(1) as f64;
        let mut ln = 0.0;
        for p in &self.pieces {
            let (a, b) = (p.from.max(from), p.to.min(to));
            if b <= a {
                continue;
            }
            let share = (b - a).as_ns() as f64 / span;
            let sinr_db = mw_to_dbm(signal_mw / (noise_mw + p.interference_mw));
            ln += if p.interference_mw > 0.0 {
                ln_success_under_interference(tx, sinr_db, bytes as f64 * share)
            } else {
                ln_success(tx, sinr_db, bytes as f64 * share)
            };
        }
        ln.exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::channel::ErrorModel;
    use crate::phy::space::dbm_to_mw;

    #[test]
    fn pieces_follow_the_interference() {
        let mut r = RxLock::default();
        r.lock(3, Nanos::from_us(10), Nanos::ZERO, 1.0, 1.0, 0.0);
        r.change(Nanos::from_us(20), 0.5);
        r.change(Nanos::from_us(20), 0.25); // two changes at one instant: one piece
        r.change(Nanos::from_us(30), 0.0);
        r.close(Nanos::from_us(50));
        let ps: Vec<_> = r
            .pieces
            .iter()
            .map(|p| {
                (
                    p.from.as_ns() / 1000,
                    p.to.as_ns() / 1000,
                    p.interference_mw,
                )
            })
            .collect();
        assert_eq!(ps, vec![(10, 20, 0.0), (20, 30, 0.25), (30, 50, 0.0)]);
        assert!(r.interfered());
        // Noise 0.25 mW: the worst piece is 1 / 0.5 = 3.01 dB.
        assert!((r.min_sinr_db(0.25) - 3.0103).abs() < 1e-3);
    }

    #[test]
    fn a_clean_reception_succeeds_as_the_error_model_says() {
        let tx = TxVector::Ofdm { rate_mbps: 54 };
        let noise = dbm_to_mw(-94.0);
        let signal = dbm_to_mw(-94.0 + 22.0);
        let mut r = RxLock::default();
        r.lock(1, Nanos::ZERO, Nanos::ZERO, signal, signal, 0.0);
        r.close(Nanos::from_us(300));
        let p = r.success(&tx, signal, noise, Nanos::ZERO, Nanos::from_us(300), 1500);
        let per = ErrorModel::Snr { snr_db: 22.0 }.per(&tx, 1500);
        assert!((1.0 - p - per).abs() < 1e-9, "{p} {per}");
        // Half the frame under interference as strong as the signal: that half is lost.
        r.lock(1, Nanos::ZERO, Nanos::ZERO, signal, signal, 0.0);
        r.change(Nanos::from_us(150), signal);
        r.close(Nanos::from_us(300));
        let p = r.success(&tx, signal, noise, Nanos::ZERO, Nanos::from_us(300), 1500);
        assert!(p < 1e-6, "{p}");
        // An MPDU in the clean first half still gets through.
        let first = r.success(&tx, signal, noise, Nanos::ZERO, Nanos::from_us(150), 750);
        let clean = 1.0 - ErrorModel::Snr { snr_db: 22.0 }.per(&tx, 750);
        assert!((first - clean).abs() < 1e-9);
    }
}
