//! Independent 802.11 arithmetic for the cell behaviour tests.
//!
//! Nothing here calls txop: PPDU durations are written out from the TXTIME equations
//! of IEEE 802.11-2016 (17.4.3 OFDM, 19.4.3 HT mixed format, 21.4.3 VHT), A-MPDU sizes
//! from 9.7, and the two-station contention estimate is a small Bianchi (2000)
//! computation with station-specific success times. All times are in microseconds.

#![allow(dead_code)]

/// 5 GHz OFDM timing (802.11-2016 Table 17-21).
pub(crate) const SLOT_US: u64 = 9;
pub(crate) const SIFS_US: u64 = 16;

/// QoS data header 26 + LLC/SNAP 8 + FCS 4.
pub(crate) const QOS_MPDU_OVERHEAD: u64 = 26 + 8 + 4;
/// FC 2 + Duration 2 + RA 6 + FCS 4.
pub(crate) const ACK_BYTES: u64 = 14;
/// Compressed BlockAck: FC 2 + Dur 2 + RA 6 + TA 6 + BA control 2 + SSC 2 + bitmap 8 + FCS 4.
pub(crate) const BLOCK_ACK_BYTES: u64 = 32;

fn ceil_div(a: u64, b: u64) -> u64 {
    a.div_ceil(b)
}

/// Bits in the DATA field before padding: SERVICE (16) + PSDU + tail (6 per encoder).
fn data_bits(psdu_bytes: u64, n_es: u64) -> u64 {
    16 + 8 * psdu_bytes + 6 * n_es
}

/// Legacy OFDM at 5 GHz: 20 µs preamble + SIGNAL, then 4 µs symbols.
/// `rate_mbps` × 4 = N_DBPS (6 → 24, …, 54 → 216).
pub(crate) fn ofdm_us(rate_mbps: u64, psdu_bytes: u64) -> u64 {
    let ndbps = rate_mbps * 4;
    20 + 4 * ceil_div(data_bits(psdu_bytes, 1), ndbps)
}

/// Long-GI symbols take 4 µs; short-GI symbols 3.6 µs with the data field rounded up
/// to a 4 µs boundary: 4·ceil(3.6·N_SYM/4) = 4·ceil(9·N_SYM/10).
fn data_field_us(n_sym: u64, short_gi: bool) -> u64 {
    if short_gi {
        4 * ceil_div(9 * n_sym, 10)
    } else {
        4 * n_sym
    }
}

/// HT mixed format, 1 or 2 spatial streams, one BCC encoder (≤ 300 Mbit/s).
/// Preamble L-STF 8 + L-LTF 8 + L-SIG 4 + HT-SIG 8 + HT-STF 4 + 4 per HT-LTF
/// (1 LTF for 1 SS, 2 for 2 SS): 36 / 40 µs.
pub(crate) fn ht_us(ndbps: u64, nss: u64, short_gi: bool, psdu_bytes: u64) -> u64 {
    let preamble = 20 + 8 + 4 + 4 * nss;
    let n_sym = ceil_div(data_bits(psdu_bytes, 1), ndbps);
    preamble + data_field_us(n_sym, short_gi)
}

/// VHT SU, 1 or 2 spatial streams. Preamble 20 + VHT-SIG-A 8 + VHT-STF 4 + 4 per
/// VHT-LTF + VHT-SIG-B 4: 40 / 44 µs.
pub(crate) fn vht_us(ndbps: u64, nss: u64, n_es: u64, short_gi: bool, psdu_bytes: u64) -> u64 {
    let preamble = 20 + 8 + 4 + 4 * nss + 4;
    let n_sym = ceil_div(data_bits(psdu_bytes, n_es), ndbps);
    preamble + data_field_us(n_sym, short_gi)
}

pub(crate) fn mpdu_bytes(msdu_bytes: u64) -> u64 {
    msdu_bytes + QOS_MPDU_OVERHEAD
}

/// PSDU of an A-MPDU of `n` equal MPDUs: 4-byte delimiter + MPDU per subframe, every
/// subframe but the last padded to a multiple of 4 bytes.
pub(crate) fn ampdu_bytes(n: u64, mpdu: u64) -> u64 {
    assert!(n >= 1);
    let sub = 4 + mpdu;
    let padded = ceil_div(sub, 4) * 4;
    (n - 1) * padded + sub
}

/// Which limit stopped an aggregate from growing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Binding {
    Subframes,
    Bytes,
    Duration,
}

/// The largest number of subframes that respects all three limits, and which limit
/// would be broken by one more subframe.
pub(crate) fn max_subframes(
    mpdu: u64,
    max_subframes: u64,
    max_bytes: u64,
    max_us: u64,
    ppdu_us: impl Fn(u64) -> u64,
) -> (u64, Binding) {
    let mut n = 1;
    loop {
        if n == max_subframes {
            return (n, Binding::Subframes);
        }
        let psdu = ampdu_bytes(n + 1, mpdu);
        if psdu > max_bytes {
            return (n, Binding::Bytes);
        }
        if ppdu_us(psdu) > max_us {
            return (n, Binding::Duration);
        }
        n += 1;
    }
}

/// Mean contention time of a lone EDCAF after an exchange: AIFS + CWmin/2 slots.
pub(crate) fn lone_contention_us(aifsn: u64, cw_min: u64) -> f64 {
    (SIFS_US + aifsn * SLOT_US) as f64 + cw_min as f64 / 2.0 * SLOT_US as f64
}

/// Bianchi (2000) for `n` saturated stations with the same backoff parameters but
/// each with its own success time. Stage i has window W_i = min((cw_min+1)·2^i,
/// cw_max+1); after `retry_limit` attempts the frame is dropped and the window resets.
/// A station's attempt probability per slot is E[attempts] / E[slots] per frame:
///   τ = Σ_{i<R} p^i / Σ_{i<R} p^i (W_i + 1)/2,  p = 1 − (1 − τ)^{n−1}.
pub(crate) struct Contention {
    pub(crate) cw_min: u64,
    pub(crate) cw_max: u64,
    pub(crate) retry_limit: u32,
    /// Idle slot (µs).
    pub(crate) slot_us: f64,
}

impl Contention {
    fn tau_of_p(&self, p: f64) -> f64 {
        let (mut num, mut den, mut pi) = (0.0, 0.0, 1.0);
        for i in 0..self.retry_limit {
            let w = ((self.cw_min + 1) << i).min(self.cw_max + 1) as f64;
            num += pi;
            den += pi * (w + 1.0) / 2.0;
            pi *= p;
        }
        num / den
    }

    /// The fixed point τ for `n` stations (bisection on τ − τ(p(τ))).
    pub(crate) fn tau(&self, n: u32) -> f64 {
        let f = |t: f64| t - self.tau_of_p(1.0 - (1.0 - t).powi(n as i32 - 1));
        let (mut lo, mut hi) = (1e-12, 1.0);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if f(mid) > 0.0 {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        0.5 * (lo + hi)
    }

    /// Per-station throughput (bit/s) for stations whose successful busy periods are
    /// `success_us[k]` (exchange + the interframe space before counting resumes), a
    /// collision busy period `collision_us` and `payload_bits` per success.
    pub(crate) fn per_station_bps(
        &self,
        success_us: &[f64],
        collision_us: f64,
        payload_bits: f64,
    ) -> Vec<f64> {
        let n = success_us.len() as u32;
        let tau = self.tau(n);
        let idle = (1.0 - tau).powi(n as i32);
        let ps_each = tau * (1.0 - tau).powi(n as i32 - 1);
        let pc = 1.0 - idle - n as f64 * ps_each;
        let slot = idle * self.slot_us
            + success_us.iter().map(|t| ps_each * t).sum::<f64>()
            + pc * collision_us;
        success_us
            .iter()
            .map(|_| ps_each * payload_bits / (slot * 1e-6))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_durations() {
        // 802.11-2016 / reference §11.2: ACK at 24 Mbit/s 28 µs, BlockAck 32 µs,
        // ACK at 6 Mbit/s 44 µs.
        assert_eq!(ofdm_us(24, ACK_BYTES), 28);
        assert_eq!(ofdm_us(24, BLOCK_ACK_BYTES), 32);
        assert_eq!(ofdm_us(6, ACK_BYTES), 44);
        // 1500 B MSDU at 54 Mbit/s: 58 symbols.
        assert_eq!(ofdm_us(54, mpdu_bytes(1500)), 20 + 4 * 58);
        assert_eq!(ampdu_bytes(1, 1538), 1542);
        assert_eq!(ampdu_bytes(2, 1538), 1544 + 1542);
    }

    #[test]
    fn bianchi_single_station_has_no_collisions() {
        let c = Contention {
            cw_min: 15,
            cw_max: 1023,
            retry_limit: 7,
            slot_us: 9.0,
        };
        assert!((c.tau(1) - 2.0 / 17.0).abs() < 1e-9);
    }
}
