//! [`AirWriter`]: captured PPDUs to a pcapng file of one radiotap interface (the air),
//! within the bounds of a [`CaptureConfig`].
//!
//! Each MPDU is one packet (an A-MPDU's subframes carry its A-MPDU status, one
//! reference per A-MPDU, the last one marked). A subframe its addressee lost has a bad
//! FCS. The pcapng timestamps are the radiotap TSFT's instants in ns (the end of the
//! PPDU, see [`crate::radiotap`]). txop's own facts about a data MPDU — how long it
//! waited in the queues, its attempts and the rate chain, the AP's pending AQL airtime,
//! whether it was given up — are the packet's pcapng comment.

use crate::frame;
use crate::radiotap::{self, RadiotapFields};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::blocks::interface_statistics::{
    InterfaceStatisticsBlock, InterfaceStatisticsOption,
};
use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::{DataLink, Endianness};
use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::time::Duration;
use txop_core::capture::{CapturedFrame, CapturedPpdu};
use txop_core::phy::{Band, TxVector};
use txop_core::{Nanos, Packet};

/// The default snap length: the headers up to TCP's options and a little payload.
pub const DEFAULT_SNAPLEN_BYTES: u32 = 256;
/// The default size bound of a capture file.
pub const DEFAULT_MAX_BYTES: u64 = 256 << 20;

/// What a capture keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureConfig {
    /// Only PPDUs that start within `[from, to)`; `None`: all.
    pub window: Option<(Nanos, Nanos)>,
    /// Only PPDUs sent by or to these stations (numbers from 1; beacons always);
    /// `None`: all.
    pub stations: Option<Vec<u16>>,
    /// Bytes kept of each packet (radiotap header included), at least 64.
    pub snaplen_bytes: u32,
    /// The file stops growing before it would pass this size; what is left out is
    /// counted in the file's closing statistics block.
    pub max_bytes: u64,
    /// The band (the radiotap channel).
    pub band: Band,
}

impl CaptureConfig {
    /// Everything, with the default snap length and size bound.
    pub fn new(band: Band) -> CaptureConfig {
        CaptureConfig {
            window: None,
            stations: None,
            snaplen_bytes: DEFAULT_SNAPLEN_BYTES,
            max_bytes: DEFAULT_MAX_BYTES,
            band,
        }
    }
}

/// What a capture wrote and left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// PPDUs written.
    pub ppdus: u64,
    /// Packets (frames; an A-MPDU's subframes each count) written.
    pub packets: u64,
    /// PPDUs outside the window or the station filter.
    pub filtered: u64,
    /// PPDUs left out because the file reached its size bound.
    pub over_size: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// Counts what goes through it.
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes captured PPDUs as a radiotap pcapng stream.
pub struct AirWriter<W: Write> {
    out: PcapNgWriter<Counting<W>>,
    cfg: CaptureConfig,
    stats: CaptureStats,
    /// The next A-MPDU's reference number.
    ampdu_ref: u32,
    /// Scratch: the packet being built, and its comment.
    buf: Vec<u8>,
    comment: String,
    /// Scratch: the comment's part that is the same for every MPDU of a PPDU.
    ppdu_facts: String,
    last_ns: u64,
}

fn pcap_err(e: pcap_file::PcapError) -> io::Error {
    match e {
        pcap_file::PcapError::IoError(e) => e,
        other => io::Error::other(other.to_string()),
    }
}

impl<W: Write> AirWriter<W> {
    /// A capture into `w`: writes the section header and the air's interface.
    /// `application`: what wrote it (the pcapng `shb_userappl`).
    pub fn new(w: W, cfg: CaptureConfig, application: &str) -> io::Result<AirWriter<W>> {
        let shb = SectionHeaderBlock {
            endianness: Endianness::Little,
            options: vec![
                SectionHeaderOption::UserApplication(Cow::Owned(application.to_owned())),
                SectionHeaderOption::Comment(Cow::Borrowed(
                    "txop's air: every PPDU once; radiotap TSFT and timestamps mark the end \
                     of the PPDU",
                )),
            ],
            ..SectionHeaderBlock::default()
        };
        let counting = Counting { inner: w, bytes: 0 };
        let mut out = PcapNgWriter::with_section_header(counting, shb).map_err(pcap_err)?;
        let idb = InterfaceDescriptionBlock {
            linktype: DataLink::IEEE802_11_RADIOTAP,
            snaplen: cfg.snaplen_bytes,
            options: vec![
                InterfaceDescriptionOption::IfName(Cow::Borrowed("air")),
                // Timestamps in ns (pcap-file writes them so).
                InterfaceDescriptionOption::IfTsResol(9),
            ],
        };
        out.write_pcapng_block(idb).map_err(pcap_err)?;
        Ok(AirWriter {
            out,
            cfg,
            stats: CaptureStats::default(),
            ampdu_ref: 0,
            buf: Vec::with_capacity(2048),
            comment: String::new(),
            ppdu_facts: String::new(),
            last_ns: 0,
        })
    }

    /// Whether `p` is within the window and the station filter (what a caller can ask
    /// before gathering its packets' facts).
    pub fn wants(&self, p: &CapturedPpdu) -> bool {
        if let Some((from, to)) = self.cfg.window {
            if p.start < from || p.start >= to {
                return false;
            }
        }
        match &self.cfg.stations {
            None => true,
            Some(list) => {
                let ends = [Some(p.transmitter), p.receiver];
                p.receiver.is_none()
                    || ends
                        .iter()
                        .flatten()
                        .any(|n| !n.is_ap() && list.contains(&n.0))
            }
        }
    }

    /// Write `p` (if within the bounds). `ip(packet, max_bytes, out)` appends the first
    /// `max_bytes` bytes (at most) of `packet`'s IP packet to `out` — its real bytes, or
    /// synthetic headers ([`crate::synth`]).
    pub fn write(
        &mut self,
        p: &CapturedPpdu,
        ip: &mut dyn FnMut(&Packet, usize, &mut Vec<u8>),
    ) -> io::Result<()> {
        if !self.wants(p) {
            self.stats.filtered += 1;
            return Ok(());
        }
        // A PPDU is written whole or not at all: its frames' sizes are bounded by the
        // snap length (plus block overhead and comment).
        let frames = p.mpdus.len().max(1) as u64;
        let worst = frames * (u64::from(self.cfg.snaplen_bytes) + 512);
        if self.out.get_ref().bytes + worst > self.cfg.max_bytes {
            self.stats.over_size += 1;
            return Ok(());
        }
        let end_us = p.end.as_ns() / 1000;
        let fields = RadiotapFields {
            tsft_us: end_us,
            bad_fcs: !p.received,
            txv: p.txv,
            band: self.cfg.band,
            signal_dbm: p.signal_dbm,
            noise_dbm: Some(p.noise_dbm),
            data_retries: None,
            ampdu: None,
        };
        if !matches!(p.frame, CapturedFrame::Data { .. }) {
            self.buf.clear();
            radiotap::write(&fields, &mut self.buf);
            frame::other_frame(p, p.start.as_ns() / 1000, &mut self.buf);
            self.comment.clear();
            self.emit(end_us * 1000, None)?;
            self.stats.ppdus += 1;
            return Ok(());
        }
        self.ppdu_facts.clear();
        let f = &mut self.ppdu_facts;
        if !p.chain.is_empty() {
            f.push_str(" chain=");
            for (k, (v, tries)) in p.chain.iter().enumerate() {
                if k > 0 {
                    f.push(',');
                }
                push_rate_label(f, v);
                let _ = write!(f, "x{tries}");
            }
        }
        if let Some(a) = p.aql_pending_us {
            let _ = write!(f, " aql_pending_us={a}");
        }
        let reference = self.ampdu_ref;
        self.ampdu_ref = self.ampdu_ref.wrapping_add(1);
        let n = p.mpdus.len();
        let mut prefix_bytes = 0u32;
        let mut amsdu_at = 0;
        for (i, m) in p.mpdus.iter().enumerate() {
            let last = i + 1 == n;
            let mpdu_bytes = frame::data_mpdu_bytes(p, m.packet.len_bytes);
            prefix_bytes += mpdu_bytes as u32;
            // The end of this subframe's share of the PPDU (see `radiotap`).
            let tsft_us = if last || !p.aggregated {
                end_us
            } else {
                (p.start + p.txv.ppdu_duration(prefix_bytes, self.cfg.band)).as_ns() / 1000
            };
            let f = RadiotapFields {
                tsft_us: tsft_us.min(end_us),
                bad_fcs: !m.received,
                data_retries: Some(p.tx_try.saturating_sub(1).min(255) as u8),
                ampdu: p.aggregated.then_some((reference, last)),
                ..fields
            };
            self.buf.clear();
            radiotap::write(&f, &mut self.buf);
            let rt_len = self.buf.len();
            let ethertype = 0x0800;
            let mac_from = self.buf.len();
            let k = usize::from(m.packet.amsdu_msdus);
            if k >= 2 {
                // An A-MSDU (reference §16): its subframes, each MSDU's IP packet
                // synthesized as for a lone MPDU, all but the last padded to 4 bytes.
                let msdus = p.amsdu_msdus.get(amsdu_at..amsdu_at + k).unwrap_or(&[]);
                amsdu_at += k;
                frame::amsdu_header(p, m, &mut self.buf);
                for (j, msdu) in msdus.iter().enumerate() {
                    let sub_from = self.buf.len();
                    frame::amsdu_subframe_header(p, msdu.len_bytes, ethertype, &mut self.buf);
                    let ip_from = self.buf.len();
                    ip(msdu, msdu.len_bytes as usize, &mut self.buf);
                    if self.buf.get(ip_from).is_some_and(|b| b >> 4 == 6) {
                        self.buf[ip_from - 2..ip_from].copy_from_slice(&0x86ddu16.to_be_bytes());
                    }
                    self.buf.resize(ip_from + msdu.len_bytes as usize, 0);
                    if j + 1 < msdus.len() {
                        let sub = self.buf.len() - sub_from;
                        self.buf.resize(self.buf.len() + (4 - sub % 4) % 4, 0);
                    }
                }
                frame::push_fcs(&mut self.buf, mac_from);
            } else {
                frame::data_header(p, m, ethertype, &mut self.buf);
                let whole = rt_len + mpdu_bytes;
                let snap = self.cfg.snaplen_bytes as usize;
                let ip_room = if whole <= snap {
                    m.packet.len_bytes as usize
                } else {
                    snap.saturating_sub(self.buf.len())
                };
                let ip_from = self.buf.len();
                ip(&m.packet, ip_room, &mut self.buf);
                // Set the ethertype from the IP version the packet turned out to have.
                if self.buf.get(ip_from).is_some_and(|b| b >> 4 == 6) {
                    self.buf[ip_from - 2..ip_from].copy_from_slice(&0x86ddu16.to_be_bytes());
                }
                self.buf
                    .resize(ip_from + ip_room.min(m.packet.len_bytes as usize), 0);
                if whole <= snap {
                    frame::push_fcs(&mut self.buf, mac_from);
                }
            }
            self.comment.clear();
            let c = &mut self.comment;
            let sojourn_us = m
                .dequeued_at
                .as_ns()
                .saturating_sub(m.packet.enqueued_at.as_ns())
                / 1000;
            let _ = write!(
                c,
                "txop: sojourn_us={sojourn_us} attempts={} try={}",
                m.attempts, p.tx_try
            );
            // perf: what every MPDU of the PPDU says alike is formatted once.
            c.push_str(&self.ppdu_facts);
            if m.given_up {
                c.push_str(" dropped=retry_limit");
            }
            if i == 0 {
                let _ = write!(
                    c,
                    " ppdu_start_ns={} ppdu_end_ns={} psdu_bytes={}",
                    p.start.as_ns(),
                    p.end.as_ns(),
                    p.psdu_bytes
                );
            }
            let original = (rt_len + mpdu_bytes) as u32;
            self.emit(tsft_us.min(end_us) * 1000, Some(original))?;
        }
        self.stats.ppdus += 1;
        Ok(())
    }

    /// Write the packet in `buf` (cut to the snap length), stamped `at_ns`, with the
    /// comment in `comment` if any. `original`: its length before the cut, if more
    /// than what `buf` holds.
    fn emit(&mut self, at_ns: u64, original: Option<u32>) -> io::Result<()> {
        let snap = self.cfg.snaplen_bytes as usize;
        let original_len = original.unwrap_or(self.buf.len() as u32);
        let data = &self.buf[..self.buf.len().min(snap)];
        // Timestamps never go back (records come in order of their ends).
        let at_ns = at_ns.max(self.last_ns);
        self.last_ns = at_ns;
        let options = if self.comment.is_empty() {
            Vec::new()
        } else {
            vec![EnhancedPacketOption::Comment(Cow::Borrowed(&self.comment))]
        };
        let epb = EnhancedPacketBlock {
            interface_id: 0,
            timestamp: Duration::from_nanos(at_ns),
            original_len,
            data: Cow::Borrowed(data),
            options,
        };
        self.out.write_pcapng_block(epb).map_err(pcap_err)?;
        self.stats.packets += 1;
        Ok(())
    }

    /// What was written and left out so far.
    pub fn stats(&self) -> CaptureStats {
        CaptureStats {
            bytes: self.out.get_ref().bytes,
            ..self.stats
        }
    }

    /// Close the capture: a statistics block says what was left out (the size bound).
    pub fn finish(mut self) -> io::Result<(W, CaptureStats)> {
        let mut options = vec![InterfaceStatisticsOption::IsbIfDrop(self.stats.over_size)];
        if self.stats.over_size > 0 {
            options.push(InterfaceStatisticsOption::Comment(Cow::Owned(format!(
                "txop: {} PPDUs left out: the file reached its size bound of {} bytes",
                self.stats.over_size, self.cfg.max_bytes
            ))));
        }
        let isb = InterfaceStatisticsBlock {
            interface_id: 0,
            timestamp: self.last_ns,
            options,
        };
        self.out.write_pcapng_block(isb).map_err(pcap_err)?;
        let stats = self.stats();
        let mut inner = self.out.into_inner();
        inner.flush()?;
        Ok((inner.inner, stats))
    }
}

/// Append a short rate name for comments: "OFDM24", "HT7", "VHT9x2", "HE11x2", "DSSS5.5".
fn push_rate_label(out: &mut String, v: &TxVector) {
    let _ = match *v {
        TxVector::Dsss { rate_kbps, .. } => write!(out, "DSSS{}", rate_kbps as f64 / 1000.0),
        TxVector::Ofdm { rate_mbps } => write!(out, "OFDM{rate_mbps}"),
        TxVector::Ht { mcs, .. } => write!(out, "HT{mcs}"),
        TxVector::Vht { mcs, nss, .. } => write!(out, "VHT{mcs}x{nss}"),
        TxVector::He { mcs, nss, .. } => write!(out, "HE{mcs}x{nss}"),
    };
}
