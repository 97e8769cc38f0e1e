//! EDCA: per-access-category channel access parameters and backoff state
//! (802.11-2016 10.22.2; reference §11.1).
//!
//! Backoff is not simulated slot by slot. Each EDCA function (EDCAF) keeps its backoff
//! counter and the time its counting started (`ifs_ref + AIFS`); when the medium turns
//! busy, the counter is reduced by the number of slot boundaries that passed. The cell
//! computes when contention ends from these counters.

use crate::phy::Standard;
use crate::rng::RngStream;
use crate::Nanos;
use serde::{Deserialize, Serialize};

/// Access category, in mac80211's index order (VO = 0 … BK = 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ac {
    /// Voice: user priorities 6 and 7; the smallest contention window.
    Vo = 0,
    /// Video: user priorities 4 and 5.
    Vi = 1,
    /// Best effort: user priorities 0 and 3, and every frame without QoS.
    Be = 2,
    /// Background: user priorities 1 and 2; the longest AIFS.
    Bk = 3,
}

impl Ac {
    /// The four ACs in index order, VO first: the order in which per-AC tables are
    /// kept and the cell looks for the AC that wins an internal collision.
    pub const ALL: [Ac; 4] = [Ac::Vo, Ac::Vi, Ac::Be, Ac::Bk];

    /// The AC as an index into per-AC tables (VO = 0 … BK = 3, mac80211's order).
    pub fn index(self) -> usize {
        self as usize
    }

    /// `ieee802_1d_to_ac[UP]` (net/mac80211/wme.c; reference §4.2).
    pub fn from_up(up: u8) -> Ac {
        match up & 7 {
            1 | 2 => Ac::Bk,
            0 | 3 => Ac::Be,
            4 | 5 => Ac::Vi,
            _ => Ac::Vo,
        }
    }

    /// Internal-collision priority: higher wins (VO > VI > BE > BK).
    pub fn priority(self) -> u8 {
        3 - self as u8
    }

    /// The AC's name in results and error messages: "VO", "VI", "BE" or "BK".
    pub fn name(self) -> &'static str {
        match self {
            Ac::Vo => "VO",
            Ac::Vi => "VI",
            Ac::Be => "BE",
            Ac::Bk => "BK",
        }
    }
}

/// One AC's EDCA parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EdcaParams {
    /// Slots after SIFS before the AC may count down: AIFS = SIFS + AIFSN × slot (at
    /// least 1; 2 is DIFS).
    pub aifsn: u8,
    /// The contention window after a success, in slots (2^k − 1).
    pub cw_min: u16,
    /// The largest contention window failures double it up to, in slots (2^k − 1).
    pub cw_max: u16,
    /// TXOP limit in µs; 0 means one frame (or A-MPDU) exchange per access.
    pub txop_limit_us: u32,
}

impl EdcaParams {
    /// The TXOP limit (zero: one exchange per access).
    pub fn txop_limit(&self) -> Nanos {
        Nanos::from_us(self.txop_limit_us as u64)
    }

    /// Check the parameters: AIFSN at least 1, both windows of the form 2^k − 1 and
    /// CWmin at most CWmax. The error names the offending parameter.
    pub fn validate(&self) -> Result<(), String> {
        let pow2m1 = |v: u16| (v as u32 + 1).is_power_of_two();
        if self.aifsn < 1 {
            return Err("aifsn must be at least 1".into());
        }
        if !pow2m1(self.cw_min) || !pow2m1(self.cw_max) {
            return Err("cw_min and cw_max must be 2^k - 1".into());
        }
        if self.cw_min > self.cw_max {
            return Err("cw_min must not exceed cw_max".into());
        }
        Ok(())
    }
}

/// The four ACs' parameters, indexed by [`Ac::index`].
pub type EdcaTable = [EdcaParams; 4];

const fn p(aifsn: u8, cw_min: u16, cw_max: u16, txop_limit_us: u32) -> EdcaParams {
    EdcaParams {
        aifsn,
        cw_min,
        cw_max,
        txop_limit_us,
    }
}

/// Which counter rule the backoff follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackoffRule {
    /// EDCA (10.22.2.4): at every slot boundary an EDCAF either decrements its counter or,
    /// at zero, transmits; the boundary at which another station starts transmitting
    /// still counts. This is the behaviour Bianchi's (2000) model assumes.
    Edca,
    /// Legacy DCF (10.3.4.3): the counter is decremented at the end of each idle slot, so
    /// the slot in which another transmission starts does not count (the behaviour
    /// Bianchi and Tinnirello's 2005 correction models).
    Dcf,
}

/// Non-AP STA EDCA defaults (802.11-2016 Table 9-155; mac80211 `ieee80211_set_wmm_default`).
pub fn sta_defaults(standard: Standard) -> EdcaTable {
    if standard == Standard::B {
        [
            p(2, 7, 15, 3264),
            p(2, 15, 31, 6016),
            p(3, 31, 1023, 0),
            p(7, 31, 1023, 0),
        ]
    } else {
        [
            p(2, 3, 7, 1504),
            p(2, 7, 15, 3008),
            p(3, 15, 1023, 0),
            p(7, 15, 1023, 0),
        ]
    }
}

/// The AP's own transmit EDCA (hostapd `tx_queue_data*` defaults; reference §11.1).
pub fn ap_defaults(standard: Standard) -> EdcaTable {
    if standard == Standard::B {
        [
            p(1, 7, 15, 3264),
            p(1, 15, 31, 6016),
            p(3, 31, 127, 0),
            p(7, 31, 1023, 0),
        ]
    } else {
        [
            p(1, 3, 7, 1504),
            p(1, 7, 15, 3008),
            p(3, 15, 63, 0),
            p(7, 15, 1023, 0),
        ]
    }
}

/// Legacy DCF without QoS: every AC uses DIFS (AIFSN 2) and aCWmin/aCWmax of the PHY.
pub fn dcf_defaults(standard: Standard) -> EdcaTable {
    let cw_min = if standard == Standard::B { 31 } else { 15 };
    [p(2, cw_min, 1023, 0); 4]
}

/// The backoff state of one EDCAF.
#[derive(Clone, Debug)]
pub struct Backoff {
    /// The AC's EDCA parameters.
    pub params: EdcaParams,
    /// Current contention window.
    pub cw: u16,
    /// Slots left, as of `counted_from`.
    pub slots: u32,
    /// Time of the first slot boundary the counter is counted from (ifs_ref + AIFS).
    pub counted_from: Nanos,
}

impl Backoff {
    /// A fresh EDCAF: CW at CWmin and a counter drawn from `[0, CWmin]`, counted from
    /// time zero until the caller sets `counted_from`.
    pub fn new(params: EdcaParams, rng: &mut RngStream) -> Backoff {
        let mut b = Backoff {
            params,
            cw: params.cw_min,
            slots: 0,
            counted_from: Nanos::ZERO,
        };
        b.draw(rng);
        b
    }

    /// Draw a new counter uniformly from [0, CW].
    pub fn draw(&mut self, rng: &mut RngStream) {
        self.slots = rng.uniform_inclusive(self.cw as u32);
    }

    /// After a failed attempt: CW ← min(2(CW+1) − 1, CWmax), new counter.
    pub fn fail(&mut self, rng: &mut RngStream) {
        self.cw = ((self.cw as u32 * 2 + 1).min(self.params.cw_max as u32)) as u16;
        self.draw(rng);
    }

    /// After a success, or when a frame is given up: CW ← CWmin, new counter.
    pub fn reset(&mut self, rng: &mut RngStream) {
        self.cw = self.params.cw_min;
        self.draw(rng);
    }

    /// When this EDCAF would transmit if the medium stays idle.
    pub fn tx_time(&self, slot: Nanos) -> Nanos {
        self.counted_from + slot * self.slots as u64
    }

    /// The medium was sensed busy at `busy_at`: count the slot boundaries that passed
    /// before it, per `rule`. Saturates at zero (post-backoff of an empty queue).
    pub fn freeze(&mut self, busy_at: Nanos, slot: Nanos, rule: BackoffRule) {
        if busy_at < self.counted_from || self.slots == 0 {
            return; // (an empty counter stays empty)
        }
        let whole = (busy_at - self.counted_from).as_ns() / slot.as_ns();
        let passed = match rule {
            BackoffRule::Edca => whole + 1,
            BackoffRule::Dcf => whole,
        };
        self.slots = self
            .slots
            .saturating_sub(passed.min(u32::MAX as u64) as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;

    #[test]
    fn default_tables_match_reference() {
        let sta = sta_defaults(Standard::N);
        assert_eq!(sta[Ac::Be.index()], p(3, 15, 1023, 0));
        assert_eq!(sta[Ac::Vo.index()].txop_limit_us, 1504);
        assert_eq!(sta[Ac::Vi.index()].txop_limit_us, 3008);
        let ap = ap_defaults(Standard::A);
        assert_eq!(ap[Ac::Be.index()].cw_max, 63);
        assert_eq!(ap[Ac::Vo.index()].aifsn, 1);
        for t in [sta, ap, dcf_defaults(Standard::B)] {
            for e in t {
                e.validate().unwrap();
            }
        }
    }

    #[test]
    fn up_to_ac_mapping() {
        let acs: Vec<Ac> = (0..8).map(Ac::from_up).collect();
        use Ac::*;
        assert_eq!(acs, vec![Be, Bk, Bk, Be, Vi, Vi, Vo, Vo]);
    }

    #[test]
    fn cw_doubles_to_max_and_resets() {
        let mut rng = RngStream::new(1, StreamKind::Backoff, 0);
        let mut b = Backoff::new(p(2, 15, 1023, 0), &mut rng);
        let mut cws = vec![b.cw];
        for _ in 0..7 {
            b.fail(&mut rng);
            cws.push(b.cw);
        }
        assert_eq!(cws, vec![15, 31, 63, 127, 255, 511, 1023, 1023]);
        b.reset(&mut rng);
        assert_eq!(b.cw, 15);
        assert!(b.slots <= 15);
    }

    #[test]
    fn freeze_counts_boundaries_per_rule() {
        let slot = Nanos::from_us(9);
        let mk = |slots| Backoff {
            params: p(2, 15, 1023, 0),
            cw: 15,
            slots,
            counted_from: Nanos::from_us(100),
        };
        // Busy exactly at the third boundary after the first (t0 + 3 slots).
        let busy = Nanos::from_us(100 + 27);
        let mut e = mk(10);
        e.freeze(busy, slot, BackoffRule::Edca);
        assert_eq!(e.slots, 6); // boundaries 0,1,2,3 all decremented
        let mut d = mk(10);
        d.freeze(busy, slot, BackoffRule::Dcf);
        assert_eq!(d.slots, 7); // three idle slots elapsed
                                // Busy before AIFS ended: no change.
        let mut early = mk(10);
        early.freeze(Nanos::from_us(99), slot, BackoffRule::Edca);
        assert_eq!(early.slots, 10);
    }
}
