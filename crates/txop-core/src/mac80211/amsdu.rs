//! A-MSDU as mac80211 builds it: at enqueue, a new frame joins the tail frame of its
//! own fq flow (`ieee80211_amsdu_aggregate`, `net/mac80211/tx.c`; reference §16).
//!
//! # Model
//!
//! * The joined frames travel as one **carrier** [`Packet`]: the flow's tail packet,
//!   whose [`Packet::amsdu_msdus`] counts the MSDUs it carries and whose
//!   [`Packet::len_bytes`] becomes [`carrier_len_bytes`] of the A-MSDU, so that every
//!   length rule downstream (the MPDU's `len + 38`, the A-MPDU builder, the PPDU's
//!   duration, AQL's estimate, fq's byte backlog) sees the aggregated frame, as the
//!   kernel's `skb->len` does. The MSDUs themselves wait in the transmitter's
//!   [`AmsduStore`] until the carrier is acknowledged or dropped; delivery and drops
//!   give them back one by one ([`AmsduStore::unpack`]).
//! * The kernel's join test compares `skb->len + head->len` with the limit *before*
//!   the new subframe's header and the previous one's padding are added
//!   ([`join_test_bytes`]), so an A-MSDU may end up to 22 + 3 bytes longer than the
//!   limit it was tested against; the model keeps that.
//! * No crypto header: the 802.11 header is the 26-byte QoS data header, as in the
//!   rest of the model ([`QOS_DATA_OVERHEAD_BYTES`]).

use crate::mac::ampdu::QOS_DATA_OVERHEAD_BYTES;
use crate::mac80211::minstrel_ht::MinstrelHt;
use crate::packet::Packet;
use crate::phy::TxVector;
use std::collections::HashMap;

/// The A-MSDU subframe header: DA (6), SA (6), Length (2) (802.11-2016 9.3.2.2.2,
/// Figure 9-70; the kernel's `struct ethhdr` pushed in front of each subframe).
pub const SUBFRAME_HEADER_BYTES: u32 = 14;
/// LLC/SNAP (RFC 1042) in front of each MSDU's IP packet: 6 bytes of `rfc1042_header`
/// and the 2-byte ethertype.
pub const LLC_SNAP_BYTES: u32 = 8;
/// The QoS data MAC header the kernel's `fast_tx->hdr_len` counts without its LLC
/// part (no crypto header in the model).
pub const QOS_HEADER_BYTES: u32 = 26;
/// An Ethernet header (`ETH_HLEN`): the frame `ieee80211_amsdu_aggregate` is handed,
/// before its 802.11 encapsulation, is this plus the IP packet.
pub const ETH_HEADER_BYTES: u32 = 14;

/// `IEEE80211_MAX_MPDU_LEN_HT_3839`: an HT station without the HT Capabilities
/// "Maximum A-MSDU Length" bit (`ht.c`).
pub const MAX_LEN_HT_3839: u16 = 3839;
/// `IEEE80211_MAX_MPDU_LEN_HT_7935`: an HT station with that bit.
pub const MAX_LEN_HT_7935: u16 = 7935;
/// `IEEE80211_MAX_MPDU_LEN_VHT_3895`: VHT (and HE on 6 GHz) "Maximum MPDU Length" 0,
/// and the kernel's default for a reserved value (`vht.c`, `he.c`).
pub const MAX_LEN_VHT_3895: u16 = 3895;
/// `IEEE80211_MAX_MPDU_LEN_VHT_7991`: "Maximum MPDU Length" 1.
pub const MAX_LEN_VHT_7991: u16 = 7991;
/// `IEEE80211_MAX_MPDU_LEN_VHT_11454`: "Maximum MPDU Length" 2.
pub const MAX_LEN_VHT_11454: u16 = 11454;
/// `IEEE80211_MAX_MPDU_LEN_HT_BA`: the rate-control cap every station starts with
/// (`sta_info.c`, `link_sta->agg.max_rc_amsdu_len`), kept by a rate control that never
/// sets another, and minstrel_ht's cap for a station without VHT.
pub const MAX_LEN_HT_BA: u16 = 4095;
/// The values a station may advertise, the ones [`AmsduConfig::max_len_bytes`] takes.
pub const STATION_MAX_LENS: [u16; 5] = [
    MAX_LEN_HT_3839,
    MAX_LEN_HT_7935,
    MAX_LEN_VHT_3895,
    MAX_LEN_VHT_7991,
    MAX_LEN_VHT_11454,
];
/// `hw->max_tx_fragments` mt76 sets when its driver leaves it 0 (`mac80211.c`,
/// `mt76_phy_init`); mt76's chips that build A-MSDUs in hardware set 4 and take
/// `MT_DRV_AMSDU_OFFLOAD` instead of mac80211's A-MSDU.
pub const MT76_MAX_TX_FRAGMENTS: u16 = 16;

/// The subframe of one MSDU whose IP packet is `ip_bytes` long, without padding: its
/// header, LLC/SNAP and the IP packet (802.11-2016 9.3.2.2.2).
pub const fn subframe_bytes(ip_bytes: u32) -> u32 {
    SUBFRAME_HEADER_BYTES + LLC_SNAP_BYTES + ip_bytes
}

/// Padding after a subframe of `bytes` that another subframe follows: to a multiple of
/// 4 bytes (802.11-2016 9.3.2.2.2: "Each A-MSDU subframe (except the last) is padded
/// so that its length is a multiple of 4 octets").
pub const fn pad_bytes(bytes: u32) -> u32 {
    (4 - bytes % 4) % 4
}

/// The length of an A-MSDU of MSDUs whose IP packets are `ip_bytes`: every subframe
/// padded to 4 bytes but the last.
pub fn amsdu_bytes(ip_bytes: impl IntoIterator<Item = u32>) -> u32 {
    let mut len = 0;
    let mut pad = 0;
    for ip in ip_bytes {
        let sub = subframe_bytes(ip);
        len += pad + sub;
        pad = pad_bytes(sub);
    }
    len
}

/// The [`Packet::len_bytes`] a carrier of an A-MSDU of `amsdu_bytes` gets: the
/// A-MSDU less the LLC/SNAP the model's per-MPDU overhead already counts, so that
/// `len + QOS_DATA_OVERHEAD_BYTES` is the MPDU: MAC header, A-MSDU, FCS.
pub const fn carrier_len_bytes(amsdu_bytes: u32) -> u32 {
    amsdu_bytes - LLC_SNAP_BYTES
}

/// The MPDU carrying an A-MSDU of `amsdu_bytes`: QoS header, the A-MSDU, FCS.
pub const fn amsdu_mpdu_bytes(amsdu_bytes: u32) -> u32 {
    carrier_len_bytes(amsdu_bytes) + QOS_DATA_OVERHEAD_BYTES
}

/// What `ieee80211_amsdu_aggregate` compares with the limit when a frame of
/// `new_ip_bytes` would join a tail frame: `skb->len + head->len`, where `skb` is still
/// the Ethernet frame (14 + IP) and `head` the tail's 802.11 frame as it is (its QoS
/// header and, if it carries one MSDU, LLC/SNAP and IP; else the A-MSDU so far, last
/// subframe unpadded). `tail_len_bytes` is the tail's [`Packet::len_bytes`]: a plain
/// MSDU's IP length, or a carrier's ([`carrier_len_bytes`]); either way the tail's
/// 802.11 frame is that plus the 26-byte header and 8 bytes.
pub const fn join_test_bytes(tail_len_bytes: u32, new_ip_bytes: u32) -> u32 {
    (ETH_HEADER_BYTES + new_ip_bytes) + (QOS_HEADER_BYTES + LLC_SNAP_BYTES + tail_len_bytes)
}

/// A-MSDU on a node: whether its driver lets mac80211 build them and the limits of
/// its peers (one set for every peer: the scenario gives one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmsduConfig {
    /// The driver sets `IEEE80211_HW_TX_AMSDU` (and `TX_FRAG_LIST`): mt76 without
    /// hardware A-MSDU, iwlwifi, rtw88, rtw89 in 6.12; not ath9k, ath10k or ath11k.
    pub enabled: bool,
    /// The peer's advertised maximum (`max_amsdu_len`): one of [`STATION_MAX_LENS`],
    /// or 0 for the kernel's value when the capability says nothing (3839 for an HT
    /// peer, 3895 for a VHT or HE one). A VHT-class value on an HT peer is taken as
    /// the HT value below it, an HT value on a VHT peer as given.
    pub max_len_bytes: u16,
    /// The peer's "Max Number Of MSDUs In A-MSDU" (Extended Capabilities, `4 << (4 −
    /// val)`: 32, 16 or 8); 0 = no limit (`ieee80211_sta_set_max_amsdu_subframes`).
    pub max_subframes: u16,
    /// `hw->max_tx_fragments`: the skbs (each linear here) one A-MSDU may have;
    /// 0 = no limit. mt76: 16.
    pub max_frags: u16,
}

impl AmsduConfig {
    /// A-MSDU off: what every driver txop's presets model does (ath9k, the ath10k-like
    /// firmware).
    pub const OFF: AmsduConfig = AmsduConfig {
        enabled: false,
        max_len_bytes: 0,
        max_subframes: 0,
        max_frags: MT76_MAX_TX_FRAGMENTS,
    };
}

impl Default for AmsduConfig {
    fn default() -> AmsduConfig {
        AmsduConfig::OFF
    }
}

/// The PHY class of a peer, for its advertised A-MSDU limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerClass {
    /// No HT: mac80211 leaves `max_amsdu_len` at 0, so nothing ever joins.
    Legacy,
    /// HT: 3839 or 7935.
    Ht,
    /// VHT, and HE (which carries VHT capabilities on 5 GHz): 3895, 7991 or 11454.
    Vht,
}

impl PeerClass {
    /// The class of a peer whose rates are `rates` (its best format decides).
    pub fn of(rates: impl IntoIterator<Item = TxVector>) -> PeerClass {
        let mut class = PeerClass::Legacy;
        for r in rates {
            match r {
                TxVector::Vht { .. } | TxVector::He { .. } => return PeerClass::Vht,
                TxVector::Ht { .. } => class = PeerClass::Ht,
                _ => {}
            }
        }
        class
    }

    /// The peer's `max_amsdu_len` for the configured value (0 = the capability's
    /// default).
    pub fn max_len_bytes(self, configured: u16) -> u16 {
        match self {
            PeerClass::Legacy => 0,
            PeerClass::Ht if configured >= MAX_LEN_HT_7935 => MAX_LEN_HT_7935,
            PeerClass::Ht => MAX_LEN_HT_3839,
            PeerClass::Vht if configured == 0 => MAX_LEN_VHT_3895,
            PeerClass::Vht => configured,
        }
    }
}

/// `MCS_DURATION(1, 0, bps)` of minstrel_ht (ns): the data symbols of an average MPDU
/// (1200 B in an A-MPDU of 16) at one stream, long GI, `bits_per_symbol` of HT20.
const fn mcs_duration_ns(bits_per_symbol: u32) -> u32 {
    let nbits: u32 = 1200 * 16 * 8;
    let syms = nbits.div_ceil(bits_per_symbol);
    syms * 4000 / 16
}

/// `minstrel_ht_get_max_amsdu_len` (6.12 `rc80211_minstrel_ht.c`): the A-MSDU cap rate
/// control sets from its most robust rate (rate-control.md §7). `None` means no cap
/// (the kernel's 0: VHT peer, fast and reliable); `Some(1)` stops A-MSDU altogether.
pub fn minstrel_cap_bytes(m: &MinstrelHt, vht_peer: bool) -> Option<u16> {
    let prob_rate = m.max_prob_rate();
    let Some(idx) = m.rate_idx(&prob_rate) else {
        return Some(1);
    };
    if m.prob_avg(idx).unwrap_or(0.0) < 0.5 {
        return Some(1);
    }
    let duration = m.airtime_ns(idx).unwrap_or(u32::MAX);
    if duration > mcs_duration_ns(52) {
        return Some(500);
    }
    if duration > mcs_duration_ns(104) {
        return Some(1600);
    }
    let tp0 = m.max_tp_rates()[0];
    if duration > mcs_duration_ns(260) || m.prob_avg(tp0).unwrap_or(0.0) < 0.75 {
        return Some(3200);
    }
    if !vht_peer {
        return Some(MAX_LEN_HT_BA);
    }
    None
}

/// The limit a frame joining `tid`'s tail is tested against: the peer's
/// `max_amsdu_len`, lowered by rate control's cap (`max_rc_amsdu_len`, if not 0). The
/// per-TID cap (`max_tid_amsdu_len`) is set by no driver txop models and is left out.
pub fn effective_max_len(peer_max: u16, rc_cap: Option<u16>) -> u32 {
    let len = u32::from(peer_max);
    match rc_cap {
        Some(cap) => len.min(u32::from(cap)),
        None => len,
    }
}

/// The limits one join is tested against.
#[derive(Clone, Copy, Debug)]
pub struct JoinLimits {
    /// [`effective_max_len`].
    pub max_len_bytes: u32,
    /// [`AmsduConfig::max_subframes`] (0 = none).
    pub max_subframes: u16,
    /// [`AmsduConfig::max_frags`] (0 = none).
    pub max_frags: u16,
}

/// `ieee80211_amsdu_aggregate`'s tests, for a frame of `new_ip_bytes` joining a tail
/// of `tail_len_bytes` that carries `tail_msdus` MSDUs (1 for a plain frame): the
/// length test (`skb->len + head->len > max_amsdu_len` refuses), the subframe count
/// (`n > max_subframes`) and the fragment count (`nfrags > max_frags`, one per linear
/// skb). Returns the tail's new [`Packet::len_bytes`] if the frame joins.
pub fn join(
    tail_len_bytes: u32,
    tail_msdus: u8,
    new_ip_bytes: u32,
    limits: &JoinLimits,
) -> Option<u32> {
    if join_test_bytes(tail_len_bytes, new_ip_bytes) > limits.max_len_bytes {
        return None;
    }
    let n = u32::from(tail_msdus.max(1)) + 1;
    if n > u32::from(u8::MAX) {
        return None;
    }
    if limits.max_subframes != 0 && n > u32::from(limits.max_subframes) {
        return None;
    }
    if limits.max_frags != 0 && n > u32::from(limits.max_frags) {
        return None;
    }
    // The A-MSDU so far: a plain tail becomes its first subframe (its header pushed
    // in by `ieee80211_amsdu_prepare_head`).
    let so_far = if tail_msdus <= 1 {
        subframe_bytes(tail_len_bytes)
    } else {
        tail_len_bytes + LLC_SNAP_BYTES
    };
    let amsdu = so_far + pad_bytes(so_far) + subframe_bytes(new_ip_bytes);
    Some(carrier_len_bytes(amsdu))
}

/// The MSDUs of one A-MSDU in flight, whether its receiver has released them and
/// whether its transmitter is done with it (acknowledged, or given up after it was
/// received): the entry goes when both hold, or when it is dropped unreleased.
#[derive(Clone, Debug)]
struct Entry {
    msdus: Vec<Packet>,
    delivered: bool,
    tx_done: bool,
}

/// The MSDUs of a node's A-MSDUs, by carrier ([`Packet::id`] of the first MSDU),
/// from the join until the carrier is acknowledged or dropped.
#[derive(Clone, Debug, Default)]
pub struct AmsduStore {
    entries: HashMap<u64, Entry>,
    /// MSDUs held beyond the carriers themselves, of A-MSDUs not yet released.
    extra_undelivered: u64,
}

impl AmsduStore {
    /// `next` joins the tail `tail` (which becomes, or already is, a carrier).
    pub fn joined(&mut self, tail: &Packet, next: Packet) {
        let e = self.entries.entry(tail.id).or_insert_with(|| Entry {
            msdus: vec![{
                let mut first = *tail;
                first.amsdu_msdus = 0;
                first
            }],
            delivered: false,
            tx_done: false,
        });
        e.msdus.push(next);
        self.extra_undelivered += 1;
    }

    /// The MSDUs `carrier` holds (empty for a plain packet).
    pub fn msdus(&self, carrier: &Packet) -> &[Packet] {
        if carrier.amsdu_msdus < 2 {
            return &[];
        }
        self.entries
            .get(&carrier.id)
            .map_or(&[], |e| e.msdus.as_slice())
    }

    /// The receiver released `carrier`: hand `emit` its MSDUs (with the carrier's
    /// ECN mark and timestamps), once; the entry stays for the transmitter's
    /// retransmissions until [`AmsduStore::done`]. A plain packet is handed on as it
    /// is.
    pub fn unpack(&mut self, carrier: Packet, mut emit: impl FnMut(Packet)) {
        if carrier.amsdu_msdus < 2 {
            emit(carrier);
            return;
        }
        let Some(e) = self.entries.get_mut(&carrier.id) else {
            return;
        };
        if !e.delivered {
            e.delivered = true;
            self.extra_undelivered -= e.msdus.len() as u64 - 1;
            for (i, m) in e.msdus.iter().enumerate() {
                emit(carry_marks(&carrier, m, i == 0));
            }
        }
        if e.tx_done {
            self.entries.remove(&carrier.id);
        }
    }

    /// The transmitter is done with `carrier` (acknowledged, or given up after its
    /// receiver took it): forget it once the receiver has released it too.
    pub fn done(&mut self, carrier: &Packet) {
        if carrier.amsdu_msdus < 2 {
            return;
        }
        if let Some(e) = self.entries.get_mut(&carrier.id) {
            if e.delivered {
                self.entries.remove(&carrier.id);
            } else {
                e.tx_done = true;
            }
        }
    }

    /// No A-MSDU is in flight.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `carrier` was dropped before its receiver released it: its MSDUs, each as
    /// dropped; a plain packet alone.
    pub fn dropped(&mut self, carrier: Packet, mut emit: impl FnMut(Packet)) {
        if carrier.amsdu_msdus < 2 {
            emit(carrier);
            return;
        }
        if let Some(e) = self.entries.remove(&carrier.id) {
            if !e.delivered {
                self.extra_undelivered -= e.msdus.len() as u64 - 1;
                for (i, m) in e.msdus.iter().enumerate() {
                    emit(carry_marks(&carrier, m, i == 0));
                }
            }
        }
    }

    /// MSDUs held beyond their carriers, of A-MSDUs not yet released: what a count of
    /// packets inside the model adds to its count of carriers.
    pub fn extra_undelivered(&self) -> u64 {
        self.extra_undelivered
    }
}

/// An MSDU as it leaves its A-MSDU: its own identity, length and ECN codepoint, the
/// carrier's queueing time. The first MSDU also takes the carrier's ECN mark (CoDel's
/// `INET_ECN_set_ce` marks the IP header the skb's network header points at, the
/// first subframe's) and its AQL charge.
fn carry_marks(carrier: &Packet, msdu: &Packet, first: bool) -> Packet {
    let mut p = *msdu;
    if first {
        p.ecn = carrier.ecn;
        p.aql_us = carrier.aql_us;
    } else {
        p.aql_us = 0;
    }
    p.queued_at = carrier.queued_at;
    p.amsdu_msdus = 0;
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, NodeId};

    /// 802.11-2016 9.3.2.2.2 (Figure 9-70): a subframe is DA (6), SA (6), Length (2)
    /// and the MSDU, here LLC/SNAP (8) and the IP packet; every subframe but the last
    /// is padded to a multiple of 4 octets. Worked by hand: two 1500-byte packets are
    /// 1522 + 2 + 1522; three 100-byte ones 122 + 2, 122 + 2, 122; a 41-byte one
    /// (63 bytes, 1 of padding) before a 40-byte one (62).
    #[test]
    fn lengths_follow_the_standard() {
        assert_eq!(SUBFRAME_HEADER_BYTES, 6 + 6 + 2);
        assert_eq!(subframe_bytes(1500), 1522);
        assert_eq!(amsdu_bytes([1500]), 1522);
        assert_eq!(amsdu_bytes([1500, 1500]), 1522 + 2 + 1522);
        assert_eq!(amsdu_bytes([100, 100, 100]), 124 + 124 + 122);
        assert_eq!(amsdu_bytes([41, 40]), 63 + 1 + 62);
        assert_eq!(amsdu_bytes([40, 41]), 62 + 2 + 63);
        for a in 0..8 {
            assert_eq!((subframe_bytes(a) + pad_bytes(subframe_bytes(a))) % 4, 0);
            assert!(pad_bytes(subframe_bytes(a)) < 4);
        }
        // The MPDU: QoS header 26, the A-MSDU, FCS 4.
        assert_eq!(amsdu_mpdu_bytes(amsdu_bytes([1500, 1500])), 26 + 3046 + 4);
    }

    /// `join` builds the lengths `amsdu_bytes` gives, one frame at a time.
    #[test]
    fn joins_add_up_to_the_standard_length() {
        let unlimited = JoinLimits {
            max_len_bytes: u32::MAX,
            max_subframes: 0,
            max_frags: 0,
        };
        let sizes = [1500, 41, 40, 52, 1, 1499, 600];
        let mut len = sizes[0];
        for (k, &ip) in sizes.iter().enumerate().skip(1) {
            len = join(len, k as u8, ip, &unlimited).expect("no limit");
            assert_eq!(
                len,
                carrier_len_bytes(amsdu_bytes(sizes[..=k].iter().copied()))
            );
        }
    }

    /// The kernel's length test (`skb->len + head->len > max_amsdu_len`, `skb` still
    /// an Ethernet frame, `head` the 802.11 frame so far), worked by hand for 1500-byte
    /// packets: the second is tested at 1514 + (26 + 8 + 1500) = 3048 and the A-MSDU
    /// becomes 26 + 3046 = 3072 long; each further one at 1514 + the frame so far, which
    /// then grows by 2 + 1522. So 4095 (and 3839, 3895) take 2, 7935 and 7991 take 5
    /// (the fifth tested at 1514 + 6120 = 7634), 11454 takes 7 (10682 ≤ 11454 < 12206).
    #[test]
    fn the_length_limit_as_the_kernel_tests_it() {
        let count = |max_len: u32| {
            let limits = JoinLimits {
                max_len_bytes: max_len,
                max_subframes: 0,
                max_frags: 0,
            };
            let (mut len, mut n) = (1500, 1u8);
            while let Some(l) = join(len, n, 1500, &limits) {
                len = l;
                n += 1;
            }
            n
        };
        assert_eq!(join_test_bytes(1500, 1500), 3048);
        for (max, n) in [
            (3047, 1),
            (3048, 2),
            (3839, 2),
            (3895, 2),
            (4095, 2),
            (4586, 3),
            (7935, 5),
            (7991, 5),
            (11454, 7),
        ] {
            assert_eq!(count(max), n, "max_amsdu_len {max}");
        }
        // rate control's "no A-MSDU" (1) refuses everything.
        assert_eq!(count(1), 1);
    }

    /// `max_amsdu_subframes` and `max_tx_fragments` bound the count (`n >` refuses).
    #[test]
    fn subframe_and_fragment_limits() {
        let run = |max_subframes, max_frags| {
            let limits = JoinLimits {
                max_len_bytes: u32::MAX,
                max_subframes,
                max_frags,
            };
            let (mut len, mut n) = (60, 1u8);
            while let Some(l) = join(len, n, 60, &limits) {
                len = l;
                n += 1;
            }
            n
        };
        assert_eq!(run(8, 0), 8);
        assert_eq!(run(0, 16), 16);
        assert_eq!(run(32, 4), 4);
        assert_eq!(run(0, 0), 255, "the carrier's count is a byte");
    }

    /// `MCS_DURATION(1, 0, 52 / 104 / 260)`: ceil(153 600 / bps) symbols of 4 µs over 16.
    #[test]
    fn minstrel_thresholds() {
        assert_eq!(mcs_duration_ns(52), 2954 * 4000 / 16);
        assert_eq!(mcs_duration_ns(104), 1477 * 4000 / 16);
        assert_eq!(mcs_duration_ns(260), 591 * 4000 / 16);
    }

    #[test]
    fn peer_limits_by_class() {
        assert_eq!(PeerClass::Legacy.max_len_bytes(11454), 0);
        assert_eq!(PeerClass::Ht.max_len_bytes(0), 3839);
        assert_eq!(PeerClass::Ht.max_len_bytes(3895), 3839);
        assert_eq!(PeerClass::Ht.max_len_bytes(11454), 7935);
        assert_eq!(PeerClass::Vht.max_len_bytes(0), 3895);
        assert_eq!(PeerClass::Vht.max_len_bytes(11454), 11454);
        assert_eq!(effective_max_len(11454, Some(MAX_LEN_HT_BA)), 4095);
        assert_eq!(effective_max_len(7991, None), 7991);
    }

    /// The store gives each MSDU back once: on release (the first with the carrier's
    /// ECN mark), or on a drop before release; and counts the MSDUs beyond the carriers.
    #[test]
    fn the_store_gives_each_msdu_back_once() {
        let msdu = |id| Packet::new(id, NodeId::AP, NodeId(1), 100);
        let mut s = AmsduStore::default();
        let mut carrier = msdu(1);
        s.joined(&carrier, msdu(2));
        s.joined(&carrier, msdu(3));
        carrier.amsdu_msdus = 3;
        carrier.len_bytes = carrier_len_bytes(amsdu_bytes([100; 3]));
        carrier.ecn = Ecn::Ce;
        assert_eq!(s.msdus(&carrier).len(), 3);
        assert_eq!(s.extra_undelivered(), 2);
        // Acknowledged before the receiver released it (held for reordering).
        s.done(&carrier);
        let mut out = Vec::new();
        s.unpack(carrier, |p| out.push(p));
        assert_eq!(out.iter().map(|p| p.id).collect::<Vec<_>>(), [1, 2, 3]);
        assert!(out.iter().all(|p| p.len_bytes == 100 && p.amsdu_msdus == 0));
        assert_eq!(out[0].ecn, Ecn::Ce);
        assert_eq!(out[1].ecn, Ecn::NotEct);
        assert!(s.is_empty());
        assert_eq!(s.extra_undelivered(), 0);
        // Released, then given up by its sender: nothing more.
        let mut c2 = msdu(10);
        s.joined(&c2, msdu(11));
        c2.amsdu_msdus = 2;
        s.unpack(c2, |p| out.push(p));
        s.unpack(c2, |p| out.push(p));
        assert_eq!(out.len(), 5);
        s.done(&c2);
        assert!(s.is_empty());
        // Dropped unreleased: its MSDUs, as dropped.
        let mut c3 = msdu(20);
        s.joined(&c3, msdu(21));
        c3.amsdu_msdus = 2;
        let mut dropped = Vec::new();
        s.dropped(c3, |p| dropped.push(p.id));
        assert_eq!(dropped, [20, 21]);
        assert!(s.is_empty());
        assert_eq!(s.extra_undelivered(), 0);
    }
}
