//! The 802.11 frames of a captured PPDU (802.11-2016 9.3), byte for byte, with their
//! FCS.
//!
//! Addresses: the AP (node 0, also the BSSID) is `02:00:00:00:00:00` and station *n*
//! `02:00:00:00:hh:ll` (*n* in the last two bytes): locally administered. Frames are the
//! lengths the model gives their PPDUs: a beacon is padded with a vendor-specific
//! element to the model's beacon length, so that Wireshark's durations agree with the
//! model's.

use txop_core::capture::{CapturedFrame, CapturedMpdu, CapturedPpdu};
use txop_core::NodeId;

/// The broadcast address.
pub const BROADCAST: [u8; 6] = [0xff; 6];
/// A QoS data MAC header: frame control, duration, three addresses, sequence control,
/// QoS control.
pub const QOS_HEADER_BYTES: usize = 26;
/// A data MAC header without QoS control.
pub const DATA_HEADER_BYTES: usize = 24;
/// LLC/SNAP in front of the IP packet (RFC 1042).
pub const LLC_SNAP_BYTES: usize = 8;
/// The frame check sequence.
pub const FCS_BYTES: usize = 4;

/// The MAC address txop gives `node`.
pub fn mac_address(node: NodeId) -> [u8; 6] {
    let [hi, lo] = node.0.to_be_bytes();
    [0x02, 0, 0, 0, hi, lo]
}

/// The SSID of every captured BSS.
pub const SSID: &[u8] = b"txop";

/// Append the FCS (CRC-32 over the frame from `from`) to `out`.
pub fn push_fcs(out: &mut Vec<u8>, from: usize) {
    let fcs = crc32fast::hash(&out[from..]);
    out.extend_from_slice(&fcs.to_le_bytes());
}

/// The whole length of one data MPDU of `ppdu` carrying an IP packet of `ip_bytes`.
pub fn data_mpdu_bytes(ppdu: &CapturedPpdu, ip_bytes: u32) -> usize {
    header_bytes(ppdu) + LLC_SNAP_BYTES + ip_bytes as usize + FCS_BYTES
}

fn header_bytes(ppdu: &CapturedPpdu) -> usize {
    match ppdu.frame {
        CapturedFrame::Data { qos: false, .. } => DATA_HEADER_BYTES,
        _ => QOS_HEADER_BYTES,
    }
}

/// Append the MAC header and LLC/SNAP of `mpdu` of data PPDU `ppdu` to `out`; the IP
/// packet (`ethertype` 0x0800 or 0x86dd) and the FCS follow.
pub fn data_header(ppdu: &CapturedPpdu, mpdu: &CapturedMpdu, ethertype: u16, out: &mut Vec<u8>) {
    mac_header(ppdu, mpdu, false, out);
    out.extend_from_slice(&[0xaa, 0xaa, 0x03, 0, 0, 0]);
    out.extend_from_slice(&ethertype.to_be_bytes());
}

/// Append the MAC header of `mpdu`, an A-MSDU, to `out`: a QoS data header with the
/// QoS control field's "A-MSDU Present" bit (bit 7, `IEEE80211_QOS_CTL_A_MSDU_PRESENT`;
/// 802.11-2016 9.2.4.5.9); the subframes ([`amsdu_subframe_header`]) and the FCS follow.
pub fn amsdu_header(ppdu: &CapturedPpdu, mpdu: &CapturedMpdu, out: &mut Vec<u8>) {
    mac_header(ppdu, mpdu, true, out);
}

/// Append an A-MSDU subframe's header for an MSDU of `ip_bytes` and its LLC/SNAP
/// (802.11-2016 9.3.2.2.2): DA, SA, and the length of what follows (LLC/SNAP and the IP
/// packet, big-endian); the IP packet and, unless it is the last subframe, the padding
/// to 4 bytes follow. DA and SA are the MSDU's ends as address 3 names the wired side:
/// the AP's address on that side.
pub fn amsdu_subframe_header(
    ppdu: &CapturedPpdu,
    ip_bytes: u32,
    ethertype: u16,
    out: &mut Vec<u8>,
) {
    let ap = mac_address(NodeId::AP);
    let sta = if ppdu.transmitter.is_ap() {
        ppdu.receiver.map_or(BROADCAST, mac_address)
    } else {
        mac_address(ppdu.transmitter)
    };
    let (da, sa) = if ppdu.transmitter.is_ap() {
        (sta, ap)
    } else {
        (ap, sta)
    };
    out.extend_from_slice(&da);
    out.extend_from_slice(&sa);
    let len = (LLC_SNAP_BYTES as u32 + ip_bytes) as u16;
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&[0xaa, 0xaa, 0x03, 0, 0, 0]);
    out.extend_from_slice(&ethertype.to_be_bytes());
}

/// The MAC header of a data MPDU (no LLC/SNAP); `amsdu` sets the QoS control field's
/// A-MSDU Present bit.
fn mac_header(ppdu: &CapturedPpdu, mpdu: &CapturedMpdu, amsdu: bool, out: &mut Vec<u8>) {
    let (tid, qos) = match ppdu.frame {
        CapturedFrame::Data { tid, qos } => (tid, qos),
        _ => (0, true),
    };
    let ap = mac_address(NodeId::AP);
    let ta = mac_address(ppdu.transmitter);
    let ra = ppdu.receiver.map_or(BROADCAST, mac_address);
    // Type data (2), subtype QoS data (8) or data (0); To DS from a station, From DS
    // from the AP; Retry on a retransmission.
    let fc0 = if qos { 0x88 } else { 0x08 };
    let mut fc1 = if ppdu.transmitter.is_ap() { 0x02 } else { 0x01 };
    if mpdu.retry {
        fc1 |= 0x08;
    }
    out.extend_from_slice(&[fc0, fc1]);
    out.extend_from_slice(&ppdu.duration_us.to_le_bytes());
    out.extend_from_slice(&ra);
    out.extend_from_slice(&ta);
    // Address 3: the source (From DS) or destination (To DS) beyond the AP: the AP's
    // own address, as the wired side is not modelled by MAC address (for an A-MSDU
    // the BSSID in any case, 802.11-2016 Table 9-26).
    out.extend_from_slice(&ap);
    out.extend_from_slice(&(mpdu.seq << 4).to_le_bytes());
    if qos {
        // TID, normal ack policy (an A-MPDU's implicit BlockAck request), A-MSDU
        // Present.
        let a = if amsdu { 0x80 } else { 0 };
        out.extend_from_slice(&[(tid & 0x0f) | a, 0]);
    }
}

/// Append the whole frame of a PPDU that is not data (control frames, beacon, null
/// data), FCS included. `tsf_us`: the beacon's timestamp.
pub fn other_frame(ppdu: &CapturedPpdu, tsf_us: u64, out: &mut Vec<u8>) {
    let from = out.len();
    let ta = mac_address(ppdu.transmitter);
    let ra = ppdu.receiver.map_or(BROADCAST, mac_address);
    let dur = ppdu.duration_us.to_le_bytes();
    match ppdu.frame {
        CapturedFrame::Ack | CapturedFrame::Cts | CapturedFrame::CtsToSelf => {
            let fc0 = if ppdu.frame == CapturedFrame::Ack {
                0xd4
            } else {
                0xc4
            };
            out.extend_from_slice(&[fc0, 0]);
            out.extend_from_slice(&dur);
            out.extend_from_slice(&ra);
        }
        CapturedFrame::Rts => {
            out.extend_from_slice(&[0xb4, 0]);
            out.extend_from_slice(&dur);
            out.extend_from_slice(&ra);
            out.extend_from_slice(&ta);
        }
        CapturedFrame::BlockAck { tid, ssn, bitmap } => {
            out.extend_from_slice(&[0x94, 0]);
            out.extend_from_slice(&dur);
            out.extend_from_slice(&ra);
            out.extend_from_slice(&ta);
            // BA control: compressed bitmap (bit 2), TID in bits 12–15.
            let control: u16 = 0x0004 | u16::from(tid & 0x0f) << 12;
            out.extend_from_slice(&control.to_le_bytes());
            out.extend_from_slice(&(ssn << 4).to_le_bytes());
            out.extend_from_slice(&bitmap.to_le_bytes());
        }
        CapturedFrame::PsPoll => {
            // Duration/ID carries the AID, bits 14 and 15 set.
            out.extend_from_slice(&[0xa4, 0]);
            out.extend_from_slice(&(ppdu.transmitter.0 | 0xc000).to_le_bytes());
            out.extend_from_slice(&ra);
            out.extend_from_slice(&ta);
        }
        CapturedFrame::NullData { pm } => {
            // Null data (type 2, subtype 4), To DS, PM bit.
            out.extend_from_slice(&[0x48, 0x01 | if pm { 0x10 } else { 0 }]);
            out.extend_from_slice(&dur);
            out.extend_from_slice(&ra);
            out.extend_from_slice(&ta);
            out.extend_from_slice(&ra);
            out.extend_from_slice(&[0, 0]);
        }
        CapturedFrame::Beacon { .. } => beacon(ppdu, tsf_us, out),
        CapturedFrame::Data { .. } => {}
    }
    push_fcs(out, from);
}

/// A beacon: header, fixed fields (the configured beacon interval), SSID, rates, TIM
/// (the configured DTIM period and this beacon's DTIM count), and a vendor-specific
/// element that pads it to the model's beacon length.
fn beacon(ppdu: &CapturedPpdu, tsf_us: u64, out: &mut Vec<u8>) {
    let CapturedFrame::Beacon {
        k,
        tim,
        interval_tu,
        dtim_period,
        dtim_count,
    } = ppdu.frame
    else {
        return;
    };
    let from = out.len();
    let ap = mac_address(NodeId::AP);
    out.extend_from_slice(&[0x80, 0, 0, 0]);
    out.extend_from_slice(&BROADCAST);
    out.extend_from_slice(&ap);
    out.extend_from_slice(&ap);
    out.extend_from_slice(&(((k & 0xfff) as u16) << 4).to_le_bytes());
    out.extend_from_slice(&tsf_us.to_le_bytes());
    // Beacon interval, capability: ESS, short slot time.
    out.extend_from_slice(&interval_tu.to_le_bytes());
    out.extend_from_slice(&0x0401u16.to_le_bytes());
    out.push(0);
    out.push(SSID.len() as u8);
    out.extend_from_slice(SSID);
    // Supported rates: 6, 9, 12, 18, 24, 36, 48, 54 Mbit/s (6, 12, 24 basic).
    out.extend_from_slice(&[1, 8, 0x8c, 0x12, 0x98, 0x24, 0xb0, 0x48, 0x60, 0x6c]);
    // TIM: DTIM count, DTIM period, bitmap control (offset 0), partial virtual bitmap
    // of AIDs 0–63.
    let bitmap = tim.to_le_bytes();
    out.extend_from_slice(&[5, 3 + 8, dtim_count, dtim_period, 0]);
    out.extend_from_slice(&bitmap);
    let body_end = out.len() - from + FCS_BYTES;
    let want = ppdu.psdu_bytes as usize;
    if want >= body_end + 2 + 3 {
        // Vendor specific (221): an OUI (locally administered) and zeros.
        let len = (want - body_end - 2).min(255);
        out.push(221);
        out.push(len as u8);
        out.extend_from_slice(&[0x02, 0, 0]);
        out.resize(out.len() + len - 3, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use txop_core::mac::edca::Ac;
    use txop_core::phy::TxVector;
    use txop_core::Nanos;

    fn ppdu(frame: CapturedFrame, psdu_bytes: u32) -> CapturedPpdu {
        CapturedPpdu {
            start: Nanos::ZERO,
            end: Nanos::from_us(100),
            transmitter: NodeId(3),
            receiver: Some(NodeId::AP),
            frame,
            aggregated: false,
            mpdus: Vec::new(),
            txv: TxVector::Ofdm { rate_mbps: 24 },
            psdu_bytes,
            duration_us: 44,
            received: true,
            signal_dbm: None,
            noise_dbm: -95.0,
            ac: Ac::Be,
            tx_try: 1,
            chain: Vec::new(),
            aql_pending_us: None,
            amsdu_msdus: Vec::new(),
        }
    }

    #[test]
    fn control_and_management_frames_have_the_models_lengths() {
        use txop_core::phy::rates::{ACK_BYTES, BLOCK_ACK_BYTES, CTS_BYTES, RTS_BYTES};
        let cases = [
            (CapturedFrame::Ack, ACK_BYTES),
            (CapturedFrame::Cts, CTS_BYTES),
            (CapturedFrame::CtsToSelf, CTS_BYTES),
            (CapturedFrame::Rts, RTS_BYTES),
            (
                CapturedFrame::BlockAck {
                    tid: 5,
                    ssn: 4095,
                    bitmap: 7,
                },
                BLOCK_ACK_BYTES,
            ),
            (CapturedFrame::PsPoll, 20),
            (CapturedFrame::NullData { pm: true }, 28),
            (
                CapturedFrame::Beacon {
                    k: 3,
                    tim: 0b110,
                    interval_tu: 50,
                    dtim_period: 3,
                    dtim_count: 0,
                },
                200,
            ),
        ];
        for (frame, bytes) in cases {
            let mut out = Vec::new();
            other_frame(&ppdu(frame, bytes), 1234, &mut out);
            assert_eq!(out.len(), bytes as usize, "{frame:?}");
            // The FCS is the CRC-32 of the rest.
            let n = out.len();
            assert_eq!(
                u32::from_le_bytes(out[n - 4..].try_into().unwrap()),
                crc32fast::hash(&out[..n - 4])
            );
        }
    }

    #[test]
    fn data_header_sets_to_ds_retry_and_sequence() {
        let mut p = ppdu(CapturedFrame::Data { tid: 6, qos: true }, 0);
        let m = CapturedMpdu {
            packet: txop_core::Packet::new(1, NodeId(3), NodeId::AP, 100),
            seq: 0xabc,
            retry: true,
            attempts: 2,
            dequeued_at: Nanos::ZERO,
            received: true,
            given_up: false,
        };
        p.mpdus.push(m);
        let mut out = Vec::new();
        data_header(&p, &m, 0x0800, &mut out);
        assert_eq!(out.len(), QOS_HEADER_BYTES + LLC_SNAP_BYTES);
        assert_eq!(&out[..2], &[0x88, 0x09]);
        assert_eq!(u16::from_le_bytes([out[2], out[3]]), 44);
        assert_eq!(&out[10..16], &mac_address(NodeId(3)));
        assert_eq!(u16::from_le_bytes([out[22], out[23]]), 0xabc << 4);
        assert_eq!(out[24], 6);
        assert_eq!(data_mpdu_bytes(&p, 100), 100 + 38);
    }
}
