//! The medium of a cell without space: one collision domain (reference §11.1).
//!
//! Every node hears every PPDU at its link's SNR, so the outcome of an exchange is known
//! when it starts: the engine (`air/contention.rs`, `air/exchange.rs`) lays it out whole
//! and the medium holds just the one exchange on the air and whether there is one. The
//! engine's delivery and exchange-end timers step it (`air/timer.rs`).

use crate::air::exchange::Exchange;

/// One collision domain's state: the exchange on the air, if any.
#[derive(Clone, Debug, Default)]
pub(crate) struct SharedMedium {
    /// An exchange is on the air (from the access that starts it to the end of its
    /// busy period): every node's view of the medium is busy.
    pub(crate) busy: bool,
    /// The exchange on the air (meaningful while `busy`): its transmissions, laid out
    /// whole, and their outcome.
    pub(crate) exch: Exchange,
}

impl SharedMedium {
    /// MPDUs of the exchange on the air not yet taken by their receiver: after the data
    /// PPDU ended, what the receiver decoded belongs to it (released or held for
    /// reordering), not to the air any more.
    pub(crate) fn packets_in_air(&self) -> u64 {
        if !self.busy {
            return 0;
        }
        let mut n = 0;
        for tx in &self.exch.txs {
            let received = |k: usize| self.exch.delivered && tx.ok.get(k) == Some(&true);
            n += (0..tx.ppdu.mpdus.len()).filter(|&k| !received(k)).count() as u64;
        }
        n
    }
}
