//! The transmit stack a node runs, and the Linux eras as named presets.
//!
//! A stack is the chain above the MAC: qdisc → (mac80211 TXQs with fq + CoDel) →
//! scheduler, gated by a queue limit (AQL or DQL) → driver/firmware queue → hardware
//! queue. Each era of the kernel is a preset ([`preset`]); a scenario picks one with
//! `stack = "…"` and may override any knob.

use crate::aqm::codel::CodelParams;
use crate::mac80211::airtime_code::ExternalAirtimeCode;
use crate::mac80211::amsdu::AmsduConfig;
use crate::mac80211::aql::{AqlEstimator, AqlParams};
use crate::mac80211::classify::DscpMapping;
use crate::mac80211::fq::{ExternalFqCode, FqSetup, OverloadPolicy};
use crate::mac80211::rate_control::{HwRateCaps, MinstrelEra};
use crate::mac80211::scheduler::{ExternalSchedulerCode, MayTransmitAqlCheck, SchedulerKind};
use crate::Nanos;

/// The qdisc on the WiFi netdev (one instance per AC, under `mq`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QdiscKind {
    /// `IFF_NO_QUEUE`: packets go straight to mac80211's TXQs (or the driver).
    NoQueue,
    /// pfifo_fast, 3 bands, `txqueuelen` packets.
    PfifoFast {
        /// `txqueuelen`: packets held over the three bands before tail drop (1000).
        limit_packets: u32,
    },
    /// The fq_codel qdisc with Linux defaults (RFC 8290).
    FqCodel,
    /// Plain tail-drop FIFO.
    Fifo {
        /// Packets held before tail drop.
        limit_packets: u32,
    },
}

/// The driver (and firmware) model below mac80211.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriverKind {
    /// ath9k: software aggregation in the driver; the hardware queue holds at most
    /// `hw_queue_ppdus` built aggregates per AC (`ATH_AGGR_MIN_QDEPTH` = 2) of at most
    /// 32 subframes (`ATH_AMPDU_SUBFRAME_DEFAULT`), or fewer than 8 PPDUs while it serves
    /// a TID without aggregation (`ATH_NON_AGGR_MIN_QDEPTH`, bursts of 2 frames); failed
    /// subframes are retried in software. Without mac80211 TXQs the driver buffers up
    /// to `driver_queue_packets` per AC in its own per-TID queues before it stops the
    /// netdev queue (`txq_max_pending` = `ATH_MAX_QDEPTH` = `ATH_TXBUF` / 4 −
    /// `ATH_TXBUF_RESERVE` = 512 / 4 − 5 = 123, ath9k 3.x–4.8).
    Ath9k,
    /// ath10k-like firmware: the host pushes MSDUs into the firmware, which schedules
    /// stations round robin and aggregates on its own. The firmware holds up to
    /// `driver_queue_packets` MSDUs (ath10k 10.x: `TARGET_10X_NUM_MSDU_DESC` = 1424).
    /// With mac80211 TXQs the host pushes whenever the firmware has room and the
    /// queue limit (AQL/DQL) allows (pull-push).
    Firmware,
}

/// Which firmware stage sits under mac80211 when `driver` is
/// [`DriverKind::Firmware`]: who moves frames from the TXQs into the firmware, what
/// stops it, and how airtime comes back (firmware-queues.md §1.5, §2, §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirmwareStage {
    /// The ath10k-like firmware (pull-push): a push loop of up to 16 frames per TXQ
    /// turn while the firmware has room and AQL allows; the firmware asks
    /// `ieee80211_txq_may_transmit` before it serves a TXQ; airtime is charged per
    /// exchange. Every preset before issue 30.
    Ath10kLike,
    /// mt76 (mt7915/mt7996 families): the driver's own TXQ scheduler pulls rounds
    /// from mac80211 into a per-band DMA ring under a token pool; airtime comes back
    /// in polled batches (firmware-queues.md §2.2, §2.3).
    Mt76(Mt76Params),
    /// ath11k: mac80211's generic push (`ieee80211_handle_wake_tx_queue`) drains
    /// every TXQ whole into the firmware on every wake; a frame that finds the
    /// firmware full is dropped; no airtime is reported
    /// (firmware-queues.md §1.5, §3.2).
    GenericPush,
}

impl FirmwareStage {
    /// The firmware asks mac80211 (`ieee80211_txq_may_transmit`) before it serves a
    /// TXQ: only ath10k's pull mode does; neither mt76 nor ath11k calls it
    /// (firmware-queues.md §1.2 rule S11).
    #[inline]
    pub fn asks_may_transmit(self) -> bool {
        self == FirmwareStage::Ath10kLike
    }
}

/// The sizes and cadence of an mt76 firmware stage (firmware-queues.md §2.1, §2.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mt76Params {
    /// Entries of the band's TX data ring, shared by the four ACs (2048).
    pub ring_entries: u32,
    /// `MT_TXQ_FREE_THR`: the ring counts as stopped when `queued + 32 >= ndesc`.
    pub ring_free_thr: u32,
    /// The token pool (`*_TOKEN_SIZE`: 8192 mt7915, 16384 mt7996): one token per frame
    /// handed to the firmware until it reports the frame done.
    pub tokens: u32,
    /// How often the firmware's TX-free events poll the stations' airtime counters
    /// and report them (`register_airtime`): the model's stand-in for a cadence the
    /// driver does not set (firmware-queues.md §2.3 rule F5, unverified).
    pub report_interval: Nanos,
}

impl Mt76Params {
    /// `MT76_TOKEN_FREE_THR`: the rings are blocked at `token_size − 64` tokens in use
    /// (firmware-queues.md §2.2 rule M8).
    pub const TOKEN_FREE_THR: u32 = 64;
    /// `MT_MAX_NON_AQL_PKT`: frames without an airtime estimate one station may have
    /// in flight (firmware-queues.md §2.1).
    pub const MAX_NON_AQL_PKT: u32 = 16;

    /// mt7915 family: 2048-entry ring, 8192 tokens.
    pub const MT7915: Mt76Params = Mt76Params {
        ring_entries: 2048,
        ring_free_thr: 32,
        tokens: 8192,
        report_interval: Nanos::from_ms(1),
    };
    /// mt7996 family: 2048-entry ring, 16384 tokens.
    pub const MT7996: Mt76Params = Mt76Params {
        tokens: 16384,
        ..Mt76Params::MT7915
    };

    /// Frames one worker run may write into the ring before it is stopped
    /// (`queued + MT_TXQ_FREE_THR >= ndesc`, `mt76_txq_stopped`): 2016.
    pub fn ring_writable(&self) -> u32 {
        self.ring_entries.saturating_sub(self.ring_free_thr)
    }

    /// Frames the firmware may hold before the rings are blocked: 8128 / 16320.
    pub fn usable_tokens(&self) -> u32 {
        self.tokens.saturating_sub(Self::TOKEN_FREE_THR)
    }
}

/// What limits how much the driver/firmware holds per station or AC.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueLimit {
    /// Only the driver's own depth.
    None,
    /// Airtime Queue Limits (Linux 5.5+), per station and AC.
    Aql {
        /// The per-AC limits, the radio threshold and the switches (§6.2).
        params: AqlParams,
        /// How a packet's airtime is estimated: the era's formula (§6.5).
        estimator: AqlEstimator,
    },
    /// Byte-based dynamic queue limit (BQL-style DQL) per AC, for the bytes-vs-airtime
    /// comparison of seed 003.
    Dql,
}

/// Every knob of a node's transmit stack.
#[derive(Clone, Debug, PartialEq)]
pub struct StackConfig {
    /// The preset it was built from (or the scenario's name for it), shown in results.
    pub name: String,
    /// The qdisc on the netdev, one instance per AC.
    pub qdisc: QdiscKind,
    /// mac80211 intermediate TXQs with fq + CoDel (4.8+ for TXQ drivers).
    pub mac80211_txqs: bool,
    /// Flows of mac80211's fq, shared by every TXQ of the radio (4096, §3.1).
    pub fq_flows: u32,
    /// fq's DRR quantum in bytes (300, §3.2).
    pub fq_quantum_bytes: u32,
    /// Packets fq holds over all TXQs before its overload drops (8192, §3.2).
    pub fq_limit_packets: u32,
    /// 0 = automatic: 16 MiB with VHT, 4 MiB without (reference §3.2).
    pub fq_memory_limit_bytes: u64,
    /// What fq drops when it is over its packet or memory limit (§3.4).
    pub fq_overload: OverloadPolicy,
    /// External code run in place of txop's fq and CoDel (the kernel's own, built by
    /// the front end; `None` in every preset).
    pub fq_code: Option<ExternalFqCode>,
    /// CoDel of the TXQs (mac80211: 20 ms / 100 ms, ECN, §2.1): the target sojourn.
    pub codel_target: Nanos,
    /// CoDel's interval: how long the sojourn must stay above target before a drop.
    pub codel_interval: Nanos,
    /// CoDel marks ECN-capable packets CE instead of dropping them (on in mac80211).
    pub codel_ecn: bool,
    /// Per-station CoDel parameters for slow stations (≈4.10 → 6.15, §2.2).
    pub per_station_codel: bool,
    /// How a packet's DSCP becomes its user priority (§4.2).
    pub dscp_mapping: DscpMapping,
    /// Which airtime scheduler generation picks the next TXQ (§5).
    pub scheduler: SchedulerKind,
    /// `airtime_flags` (3 = TX|RX charged; 0 = plain round robin, §5.1).
    pub airtime_flags: u8,
    /// OpenWrt's `AIRTIME_QUANTUM_SHIFT` (0 in mainline, §12).
    pub quantum_shift: u8,
    /// How 6.0+'s `may_transmit` uses the per-AC AQL check: as written, or flipped
    /// (a kernel patch to try, §5.4).
    pub may_transmit_aql_check: MayTransmitAqlCheck,
    /// External code run in place of the scheduler generation's Rust (the kernel's
    /// 6.12 scheduler, built by the front end; `None` in every preset).
    pub scheduler_code: Option<ExternalSchedulerCode>,
    /// External code computing AQL's airtime estimate in place of txop's (the
    /// kernel's airtime.c, built by the front end; `None` in every preset).
    pub airtime_code: Option<ExternalAirtimeCode>,
    /// What bounds the packets below the TXQs: AQL, DQL or the driver's depth alone.
    pub queue_limit: QueueLimit,
    /// The driver (and firmware) below mac80211.
    pub driver: DriverKind,
    /// Driver (legacy ath9k) or firmware queue depth in packets; see [`DriverKind`].
    pub driver_queue_packets: u32,
    /// The firmware stage under mac80211 ([`FirmwareStage`]); with
    /// [`DriverKind::Firmware`] only.
    pub firmware: FirmwareStage,
    /// Built PPDUs the hardware queue holds per AC (ath9k 2). 0: the PPDU is built when
    /// the MAC wins access, from what the driver/firmware holds at that moment (the
    /// firmware model, and the `simple` stack).
    pub hw_queue_ppdus: u32,
    /// Subframes per A-MPDU the driver builds (ath9k 32, ath10k 64).
    pub max_ampdu_subframes: u16,
    /// The rate slots and tries per slot the driver's hardware offers rate control
    /// (ath9k: 4 and 10; the ath10k-like firmware's stand-in rate control gets the
    /// same).
    pub rate_caps: HwRateCaps,
    /// The minstrel_ht design of the stack's kernel, run by stations whose rate control
    /// is `minstrel_ht` (rate-control.md §1: ≤ 5.10 or ≥ 5.11).
    pub minstrel_era: MinstrelEra,
    /// mac80211's A-MSDU at enqueue (§16): off in every preset, as none of their
    /// drivers (ath9k, the ath10k-like firmware) sets `IEEE80211_HW_TX_AMSDU`.
    pub amsdu: AmsduConfig,
}

impl StackConfig {
    /// What [`Fq::new`](crate::mac80211::fq::Fq::new) builds besides its limits: the
    /// overload policy, or the external code in its place.
    pub fn fq_setup(&self) -> FqSetup {
        FqSetup {
            policy: self.fq_overload,
            code: self.fq_code,
        }
    }

    /// The TXQ CoDel parameters (mtu guard 0, as mac80211).
    pub fn codel_params(&self) -> CodelParams {
        CodelParams::new(self.codel_target, self.codel_interval, 0, self.codel_ecn)
    }
}

/// Preset names with a one-line description, in order.
pub const PRESETS: &[(&str, &str)] = &[
    (
        "simple",
        "no qdisc, no TXQs: per-station×TID driver FIFOs (1000 packets per AC) served round robin, PPDUs built at transmit time; the MAC validation setup",
    ),
    (
        "linux-4.8-bloated",
        "pfifo_fast qdisc (1000 packets per AC) over ath9k's own per-TID queues (123 packets per AC), no mac80211 TXQs",
    ),
    (
        "fq_codel-qdisc",
        "the same ath9k driver queues with the fq_codel qdisc instead of pfifo_fast",
    ),
    (
        "linux-4.9",
        "mac80211 TXQs (fq, 4096 flows, CoDel 20/100 ms per flow), no qdisc, ath9k with 2 aggregates in hardware, round robin",
    ),
    (
        "linux-4.11-ath9k",
        "linux-4.9 plus ath9k's in-driver airtime DRR (300 µs quantum) and per-station CoDel parameters",
    ),
    (
        "linux-5.5",
        "mac80211 airtime DRR (quantum = weight 256 µs), AQL 5/12/24 ms (no aggregation in the estimate), ath10k-like firmware queue",
    ),
    (
        "linux-5.14",
        "virtual-time airtime scheduler, AQL with the rate-dependent aggregation estimate",
    ),
    (
        "linux-6.0",
        "DRR again with AQL-aware deficits, 100 ms active window, per-AC AQL limit, fq overload drops up to half (max 32)",
    ),
    (
        "linux-6.16",
        "linux-6.0 with the per-station CoDel parameters reverted (every TXQ 20/100 ms, ECN)",
    ),
    (
        "mt76",
        "6.12 mt76 (mt7915-like; mt76_chip = \"mt7996\" for 16384 tokens): the driver pulls rounds from mac80211 into a 2048-entry ring under 8192 tokens, AQL and airtime fairness on (airtime_flags = 0: MediaTek's feed, fairness off), airtime reported in polled batches",
    ),
    (
        "ath11k",
        "6.12 ath11k: mac80211's generic push drains every TXQ into the firmware on every wake, no AQL, no airtime reported; a frame that finds the firmware full is dropped",
    ),
    (
        "ath11k-aql",
        "ath11k with the 2026 AQL series as summarised (unverified): AQL 5/12/24 ms and the per-AC limit gate the push, scheduling also on completion",
    ),
];

/// The kernel a preset of issue 30 models and the sources its constants come from,
/// for `txop stacks` (firmware-queues.md §0, §4).
struct Provenance {
    kernel: &'static str,
    sources: &'static str,
}

/// [`Provenance`] of the presets that carry it (the firmware-stage presets).
fn provenance(name: &str) -> Option<Provenance> {
    Some(match name {
        "mt76" => Provenance {
            kernel: "6.12.117 (Debian linux-source-6.12); mt76 rules of 6.12 (firmware-queues.md §2.2 rule M9)",
            sources: "drivers/net/wireless/mediatek/mt76/{tx.c,mt76.h,mt7915/,mt7996/}, net/mac80211/{tx.c,sta_info.c,util.c}; docs/reference/firmware-queues.md §1, §2, §4",
        },
        "ath11k" => Provenance {
            kernel: "6.12.117 (Debian linux-source-6.12)",
            sources: "net/mac80211/util.c ieee80211_handle_wake_tx_queue, drivers/net/wireless/ath/ath11k/{mac.c,dp_tx.c,dp.h,hw.h}; docs/reference/firmware-queues.md §1.5, §3, §4",
        },
        "ath11k-aql" => Provenance {
            kernel: "6.12.117 with the 2026 ath11k AQL series (v3, 9 patches; as summarised, unverified)",
            sources: "docs/reference/firmware-queues.md §3.3 (from mac80211-tx-path.md §15.7's secondary summary), §4",
        },
        _ => return None,
    })
}

/// The frames the `ath11k` presets' firmware holds: `TARGET_NUM_MSDU_DESC` of the
/// IPQ8074 family (firmware-queues.md §3.1), whose meaning on the TCL path is
/// unverified (firmware-queues.md §3.2 rule K3).
pub const ATH11K_MSDU_DESC: u32 = 2500;

/// The `simple` stack: no qdisc and no mac80211 TXQs; the driver's per-(station, TID)
/// FIFOs hold up to 1000 packets per AC and are served round robin, each PPDU built
/// when the MAC wins access, aggregates of up to 64 subframes. What the MAC is
/// validated with.
pub fn simple() -> StackConfig {
    StackConfig {
        qdisc: QdiscKind::NoQueue,
        driver_queue_packets: 1000,
        hw_queue_ppdus: 0,
        max_ampdu_subframes: 64,
        minstrel_era: MinstrelEra::Linux6,
        ..preset("linux-4.8-bloated").expect("built-in preset")
    }
    .renamed("simple")
}

impl StackConfig {
    fn renamed(mut self, name: &str) -> StackConfig {
        self.name = name.to_string();
        self
    }
}

/// The preset called `name`.
pub fn preset(name: &str) -> Option<StackConfig> {
    if name == "simple" {
        return Some(simple());
    }
    let base = StackConfig {
        name: name.to_string(),
        qdisc: QdiscKind::PfifoFast {
            limit_packets: 1000,
        },
        mac80211_txqs: false,
        fq_flows: 4096,
        fq_quantum_bytes: 300,
        fq_limit_packets: 8192,
        fq_memory_limit_bytes: 0,
        fq_overload: OverloadPolicy::OneFromFattest,
        fq_code: None,
        scheduler_code: None,
        airtime_code: None,
        codel_target: Nanos::from_ms(20),
        codel_interval: Nanos::from_ms(100),
        codel_ecn: true,
        per_station_codel: false,
        dscp_mapping: DscpMapping::Legacy,
        scheduler: SchedulerKind::RoundRobin,
        airtime_flags: 3,
        quantum_shift: 0,
        may_transmit_aql_check: MayTransmitAqlCheck::AsWritten,
        queue_limit: QueueLimit::None,
        driver: DriverKind::Ath9k,
        driver_queue_packets: 123,
        firmware: FirmwareStage::Ath10kLike,
        hw_queue_ppdus: 2,
        max_ampdu_subframes: 32,
        rate_caps: HwRateCaps::ATH9K,
        minstrel_era: MinstrelEra::Linux5_10,
        amsdu: AmsduConfig::OFF,
    };
    let itxq = StackConfig {
        qdisc: QdiscKind::NoQueue,
        mac80211_txqs: true,
        ..base.clone()
    };
    let firmware = StackConfig {
        driver: DriverKind::Firmware,
        driver_queue_packets: 1424,
        hw_queue_ppdus: 0,
        max_ampdu_subframes: 64,
        ..itxq.clone()
    };
    let aql = |estimator| QueueLimit::Aql {
        params: AqlParams::default(),
        estimator,
    };
    let cfg = match name {
        "linux-4.8-bloated" => base,
        "fq_codel-qdisc" => StackConfig {
            qdisc: QdiscKind::FqCodel,
            ..base
        },
        "linux-4.9" => itxq,
        "linux-4.11-ath9k" => StackConfig {
            scheduler: SchedulerKind::Ath9kDrr,
            per_station_codel: true,
            ..itxq
        },
        "linux-5.5" => StackConfig {
            scheduler: SchedulerKind::Drr,
            per_station_codel: true,
            queue_limit: aql(AqlEstimator::NoAggregation),
            ..firmware
        },
        "linux-5.14" => StackConfig {
            minstrel_era: MinstrelEra::Linux6,
            scheduler: SchedulerKind::VirtualTime,
            per_station_codel: true,
            fq_overload: OverloadPolicy::HalfFromFattest,
            queue_limit: aql(AqlEstimator::AggShift),
            ..firmware
        },
        "linux-6.0" => StackConfig {
            minstrel_era: MinstrelEra::Linux6,
            scheduler: SchedulerKind::DrrAql,
            per_station_codel: true,
            fq_overload: OverloadPolicy::HalfFromFattest,
            queue_limit: QueueLimit::Aql {
                params: AqlParams {
                    per_ac_limit: true,
                    ..AqlParams::default()
                },
                estimator: AqlEstimator::AggShift,
            },
            ..firmware
        },
        "linux-6.16" => {
            let mut c = preset("linux-6.0")?;
            c.per_station_codel = false;
            c.dscp_mapping = DscpMapping::Rfc8325;
            c
        }
        // 6.12.117 is linux-6.0's design (DRR with AQL-aware deficits, per-AC AQL
        // limit, per-station CoDel until 6.16); what differs is the firmware stage
        // (firmware-queues.md §4).
        "mt76" => {
            let mt76 = Mt76Params::MT7915;
            StackConfig {
                firmware: FirmwareStage::Mt76(mt76),
                driver_queue_packets: mt76.usable_tokens(),
                ..preset("linux-6.0")?
            }
        }
        // Neither AQL nor airtime fairness (firmware-queues.md §1.6 row off/off):
        // mac80211's list is a plain round robin (tail insertion, no deficits), no
        // airtime reported (firmware-queues.md §3.2 rule K5). The firmware's depth
        // is not in the driver (rule K3): the model takes `TARGET_NUM_MSDU_DESC`,
        // 2500 (IPQ8074 family, firmware-queues.md §3.1), unverified.
        "ath11k" => StackConfig {
            firmware: FirmwareStage::GenericPush,
            scheduler: SchedulerKind::RoundRobin,
            queue_limit: QueueLimit::None,
            driver_queue_packets: ATH11K_MSDU_DESC,
            ..preset("linux-6.0")?
        },
        // The series' design as summarised (firmware-queues.md §3.3, unverified):
        // AQL gates A2/A3 with mac80211's defaults on the same push, which the
        // model also runs on every completion (patch 6). No airtime is reported
        // (`register_airtime` stays uncalled, firmware-queues.md §1.4 rule T4) and
        // the fairness flag is taken as unset (tail insertion, airtime_flags 0): the
        // effective deficit 256 − pending rotates the stations
        // (firmware-queues.md §1.6 row on/off).
        "ath11k-aql" => StackConfig {
            scheduler: SchedulerKind::DrrAql,
            airtime_flags: 0,
            queue_limit: preset("linux-6.0")?.queue_limit,
            ..preset("ath11k")?
        },
        _ => return None,
    };
    Some(StackConfig {
        name: name.to_string(),
        ..cfg
    })
}

/// One line per knob, for `txop stacks`.
pub fn describe(c: &StackConfig) -> Vec<(String, String)> {
    let qdisc = match c.qdisc {
        QdiscKind::NoQueue => "noqueue".to_string(),
        QdiscKind::PfifoFast { limit_packets } => format!("pfifo_fast, {limit_packets} packets"),
        QdiscKind::FqCodel => "fq_codel (1024 flows, 10240 packets, 5/100 ms)".to_string(),
        QdiscKind::Fifo { limit_packets } => format!("fifo, {limit_packets} packets"),
    };
    let txqs = if c.mac80211_txqs {
        format!(
            "fq {} flows, quantum {} B, limit {} packets, {:?}; CoDel {}/{} ms{}{}",
            c.fq_flows,
            c.fq_quantum_bytes,
            c.fq_limit_packets,
            c.fq_overload,
            c.codel_target.as_ms_f64(),
            c.codel_interval.as_ms_f64(),
            if c.codel_ecn { ", ECN" } else { "" },
            if c.per_station_codel {
                "; slow stations 50/300 ms"
            } else {
                ""
            }
        )
    } else {
        "none (driver queues fed by the qdisc)".to_string()
    };
    let limit = match c.queue_limit {
        QueueLimit::None => "none".to_string(),
        QueueLimit::Aql { params, estimator } => format!(
            "AQL {}/{} µs per station, {} µs total{}, estimator {:?}",
            params.limit_low_us[2],
            params.limit_high_us[2],
            params.threshold_us,
            if params.per_ac_limit {
                ", per-AC limit"
            } else {
                ""
            },
            estimator
        ),
        QueueLimit::Dql => "DQL (bytes, per AC)".to_string(),
    };
    let hw = if c.hw_queue_ppdus == 0 {
        "PPDUs built at transmit time".to_string()
    } else {
        format!("{} A-MPDUs in hardware", c.hw_queue_ppdus)
    };
    let driver = match c.driver {
        DriverKind::Ath9k => format!(
            "ath9k: {hw}, ≤ {} subframes{}",
            c.max_ampdu_subframes,
            if c.mac80211_txqs {
                String::new()
            } else {
                format!(
                    ", {} packets per AC in driver queues",
                    c.driver_queue_packets
                )
            }
        ),
        DriverKind::Firmware => match c.firmware {
            FirmwareStage::Ath10kLike => format!(
                "firmware queue of {} MSDUs, {hw}, ≤ {} subframes",
                c.driver_queue_packets, c.max_ampdu_subframes
            ),
            FirmwareStage::Mt76(m) => format!(
                "mt76: the driver pulls rounds from mac80211 (mt76_txq_schedule_list) into a {}-entry ring (stopped {} short), ≤ {} of {} tokens in firmware, airtime polled every {} µs; {hw}, ≤ {} subframes",
                m.ring_entries,
                m.ring_free_thr,
                m.usable_tokens(),
                m.tokens,
                m.report_interval.as_ns() / 1000,
                c.max_ampdu_subframes
            ),
            FirmwareStage::GenericPush => format!(
                "generic push (ieee80211_handle_wake_tx_queue): every TXQ drained into a firmware of {} MSDUs, dropped when full, no airtime reported; {hw}, ≤ {} subframes",
                c.driver_queue_packets, c.max_ampdu_subframes
            ),
        },
    };
    let scheduler = if c.mac80211_txqs {
        let check = if c.may_transmit_aql_check == MayTransmitAqlCheck::Flipped {
            ", may_transmit's AQL check flipped"
        } else {
            ""
        };
        format!(
            "{:?} (airtime_flags {}{check})",
            c.scheduler, c.airtime_flags
        )
    } else {
        "the driver's round robin over its TIDs".to_string()
    };
    let mut lines = vec![
        ("qdisc".into(), qdisc),
        ("mac80211 TXQs".into(), txqs),
        ("scheduler".into(), scheduler),
        ("queue limit".into(), limit),
        ("driver".into(), driver),
        ("DSCP → UP".into(), format!("{:?}", c.dscp_mapping)),
        (
            "rate slots".into(),
            format!(
                "{} stages, ≤ {} tries each",
                c.rate_caps.max_rates, c.rate_caps.max_rate_tries
            ),
        ),
        (
            "minstrel_ht".into(),
            match c.minstrel_era {
                MinstrelEra::Linux5_10 => "≤ 5.10: EWMA, look-around sampling",
                MinstrelEra::Linux6 => "≥ 5.11: noise filter, a probe per 20 ms",
            }
            .to_string(),
        ),
    ];
    if let Some(p) = provenance(&c.name) {
        lines.push(("kernel".into(), p.kernel.to_string()));
        lines.push(("sources".into(), p.sources.to_string()));
    }
    if c.amsdu.enabled {
        let a = c.amsdu;
        let limit = |v: u16| {
            if v == 0 {
                "none".to_string()
            } else {
                v.to_string()
            }
        };
        lines.push((
            "A-MSDU".into(),
            format!(
                "at enqueue; peer max {} B, ≤ {} subframes, ≤ {} fragments",
                if a.max_len_bytes == 0 {
                    "3839 (HT) / 3895 (VHT, HE)".to_string()
                } else {
                    a.max_len_bytes.to_string()
                },
                limit(a.max_subframes),
                limit(a.max_frags)
            ),
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_preset_resolves() {
        for (name, _) in PRESETS {
            let c = preset(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(c.name, *name);
            assert!(!describe(&c).is_empty());
        }
        assert!(preset("linux-9.9").is_none());
    }

    #[test]
    fn eras_differ_where_the_kernel_changed() {
        let p = |n| preset(n).unwrap();
        assert!(!p("linux-4.8-bloated").mac80211_txqs);
        assert!(p("linux-4.9").mac80211_txqs);
        assert_eq!(p("linux-4.9").scheduler, SchedulerKind::RoundRobin);
        assert_eq!(p("linux-4.11-ath9k").scheduler, SchedulerKind::Ath9kDrr);
        assert!(matches!(p("linux-4.9").queue_limit, QueueLimit::None));
        assert!(matches!(p("linux-5.5").queue_limit, QueueLimit::Aql { .. }));
        assert_eq!(p("linux-5.14").scheduler, SchedulerKind::VirtualTime);
        assert_eq!(p("linux-6.0").scheduler, SchedulerKind::DrrAql);
        assert!(p("linux-6.0").per_station_codel);
        assert!(!p("linux-6.16").per_station_codel);
    }

    /// The firmware-stage presets carry firmware-queues.md §4's numbers: mt76's
    /// ring, free threshold and tokens (firmware-queues.md §2.1: 2048, 32, 8192 /
    /// 16384, blocked 64 short), AQL and fairness on (firmware-queues.md §2.3 rule
    /// F6); ath11k without AQL or fairness (firmware-queues.md §3.1) on the generic
    /// push; ath11k-aql the same push under mac80211's default AQL.
    #[test]
    fn firmware_presets_follow_the_reference_table() {
        let p = |n| preset(n).unwrap();
        let mt76 = p("mt76");
        assert_eq!(mt76.driver, DriverKind::Firmware);
        let FirmwareStage::Mt76(m) = mt76.firmware else {
            panic!("mt76 stage: {:?}", mt76.firmware);
        };
        assert_eq!(
            (m.ring_entries, m.ring_free_thr, m.tokens),
            (2048, 32, 8192)
        );
        assert_eq!((m.ring_writable(), m.usable_tokens()), (2016, 8128));
        assert_eq!(Mt76Params::MT7996.usable_tokens(), 16320);
        assert_eq!(mt76.driver_queue_packets, 8128);
        assert_eq!(mt76.airtime_flags, 3);
        assert_eq!(mt76.scheduler, SchedulerKind::DrrAql);
        let QueueLimit::Aql { params, .. } = mt76.queue_limit else {
            panic!("mt76 without AQL");
        };
        assert_eq!(
            (
                params.limit_low_us[2],
                params.limit_high_us[2],
                params.threshold_us
            ),
            (5000, 12000, 24000)
        );
        assert!(params.per_ac_limit);
        let ath11k = p("ath11k");
        assert_eq!(ath11k.firmware, FirmwareStage::GenericPush);
        assert!(matches!(ath11k.queue_limit, QueueLimit::None));
        assert_eq!(ath11k.scheduler, SchedulerKind::RoundRobin);
        assert_eq!(ath11k.driver_queue_packets, 2500);
        let aql = p("ath11k-aql");
        assert_eq!(aql.firmware, FirmwareStage::GenericPush);
        assert_eq!(aql.queue_limit, mt76.queue_limit);
        assert_eq!(aql.airtime_flags, 0, "fairness flag taken as unset");
        for n in ["mt76", "ath11k", "ath11k-aql"] {
            assert!(!p(n).firmware.asks_may_transmit(), "{n}");
            let lines = describe(&p(n));
            assert!(
                lines
                    .iter()
                    .any(|(k, v)| k == "kernel" && v.contains("6.12")),
                "{n}: {lines:?}"
            );
            assert!(lines.iter().any(|(k, v)| k == "sources" && v.contains('§')));
        }
        assert!(p("linux-6.0").firmware.asks_may_transmit());
        assert!(provenance("linux-6.0").is_none());
    }
}
