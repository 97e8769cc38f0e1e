//! The host bus between a station's host CPU and its WLAN chip (experiment E5, seed 004):
//! an SDIO-like bus carrying packets both ways, the host's single CPU that drives it,
//! and the queues on either side. Sans-I/O, like the rest of the core.
//!
//! ```text
//!  host stack ─(CPU: per-packet work)─ host→device queue ─ CMD53 write ─┐
//!                                                                       chip ─ air
//!  host stack ─(CPU: per-packet work)─ CMD53 read ─ status read ─ card interrupt ┘
//! ```
//!
//! **Transfers.** The bus carries one transaction at a time (an SDIO host has one
//! command outstanding). Each costs the CPU `cpu_per_transfer_ns` to set up and
//! complete the request, then holds the bus for `transfer_overhead_ns` (command,
//! response, turnaround and the host controller's request path) and for the data phase.
//! Packets move in whole CMD53 blocks (ath6kl pads every mailbox transfer to the block
//! size, `CALC_TXRX_PADDED_LEN`); each block costs its bits at `clock_hz × width_bits`
//! plus `block_gap_ns` (CRC token, the card's read access time or write busy, and the
//! controller's per-block service). Before it can read a packet the host reads the
//! card's interrupt status and RX lookahead registers (`status_read_bytes`, ath6kl's
//! `ath6kl_irq_proc_registers`), in byte mode.
//!
//! **Completion: interrupt or polled.** With [`Completion::Interrupt`] the card's
//! interrupt and DMA completions reach the CPU at once; each card interrupt is serviced
//! by one status read and one packet read (the interrupt stays asserted while the card
//! holds more, so the next packet is the next interrupt). With [`Completion::Polled`]
//! nothing interrupts: Linux's `sdio_irq_thread` (`drivers/mmc/core/sdio_irq.c`, for
//! hosts without `MMC_CAP_SDIO_IRQ`) wakes on the timer tick, reads CCCR_INTx with a
//! CMD52 and, if the card's interrupt is pending, runs its handler, which reads every
//! packet the status read announced. A packet waiting in the chip, or (with DMA) a
//! finished transfer, is noticed only at the next poll. The thread's sleep adapts as
//! the kernel's does: halved after a poll that found work, one jiffy longer after one
//! that did not, at most `idle_period_jiffies` (`msecs_to_jiffies(10)`); and
//! `schedule_timeout(n)` wakes on the n-th timer tick from now (n = 0: the next one).
//!
//! **DMA or PIO.** With DMA the controller moves the data; the CPU only pays the
//! per-transfer set-up and, with interrupts, one completion interrupt. With PIO the CPU
//! moves every word through the controller's FIFO and, while the card is not ready,
//! waits on it (the S3C24xx SDI raises an interrupt per FIFO fill): the CPU is busy for
//! the whole data phase, which lasts as long as the slower of the wire and the copy
//! (`copy_ps_per_byte`).
//!
//! **One CPU.** The host's own work — the network stack and the application, charged
//! per packet sent or received (`host_cpu_per_packet_ns` + `host_cpu_ps_per_byte`) —
//! runs on the same CPU as the bus driver. Driver work (request set-up, PIO data
//! phases, interrupt handlers, poll wake-ups, context switches) preempts host work, as
//! interrupts and the SCHED_FIFO `ksdioirqd` thread do; driver work runs in order.
//!
//! **Context switches** are those of the host process doing the host's work — what
//! ttcp's `getrusage` (voluntary + involuntary) reports for the receiver, the seed's
//! `ctx_sw` column. The host's work is "runnable" while it has per-packet work pending
//! on the CPU, else it sleeps. One switch is counted:
//! - when a service of the card (an interrupt, or a poll that found the card's
//!   interrupt pending) hands a received packet to a sleeping host: the reader blocked
//!   in `read()` wakes (voluntary);
//! - when the polling thread wakes while the host is runnable: the SCHED_FIFO
//!   `ksdioirqd` preempts it (involuntary), whether or not the poll finds work.
//!
//! An interrupt that finds the host runnable runs in interrupt context and switches
//! nothing; an idle poll while the host sleeps switches no host process either. Each
//! counted switch costs the CPU `cpu_per_switch_ns`. On the *sending* side this counts
//! more than ttcp sees, since a Linux writer sleeps on its full send buffer while the
//! kernel sends and wakes only when a third of it frees (`sk_stream_write_space`): the
//! model has no socket buffer, so compare receivers.
//!
//! **Bounded queues**: the host's backlog of packets waiting for the CPU
//! (`host_backlog_packets`, like `netdev_max_backlog`), the host→device queue
//! (`host_tx_queue_packets`, the netdev queue) and the chip's receive buffers
//! (`device_rx_buffers`). A packet that finds its queue full is dropped
//! ([`DropReason::QueueFull`]).
//!
//! Not modelled: the chip's transmit credits (HTC flow control; the chip's transmit
//! queue is the cell's station queue), bus errors and retries, bus clock gating and
//! card sleep, the card's own CPU time, and scheduling latency from other processes.

use crate::packet::{DropReason, Packet};
use crate::Nanos;
use std::collections::VecDeque;

/// How the host learns that the card needs attention or that a transfer finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completion {
    /// The card's interrupt (DAT1 in 4-bit mode) and the controller's DMA completion
    /// interrupt reach the CPU at once.
    Interrupt,
    /// No interrupts: Linux's `sdio_irq_thread` polls CCCR_INTx on the timer tick.
    Polled {
        /// The timer tick, `1 / HZ`.
        jiffy: Nanos,
        /// The longest sleep between polls, in ticks (`msecs_to_jiffies(10)`).
        idle_period_jiffies: u32,
    },
}

/// Who moves the data of a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataMode {
    /// The controller's DMA engine: the CPU is free during the data phase.
    Dma,
    /// Programmed I/O: the CPU copies every word through the controller's FIFO and is
    /// busy for the whole data phase.
    Pio {
        /// The CPU's own copy cost (picoseconds per byte); the data phase lasts at
        /// least this long.
        copy_ps_per_byte: u64,
    },
}

/// One station's host bus: the bus, the host CPU's costs and the queues.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BusConfig {
    /// Bus clock (SDIO: up to 25 MHz at default speed, 50 MHz at high speed).
    pub clock_hz: u64,
    /// Data lines: 1 or 4 (SDIO), 8.
    pub width_bits: u8,
    /// CMD53 block size; data transfers are padded to whole blocks (0: byte mode).
    pub block_bytes: u32,
    /// Per block beyond its bits: CRC token, the card's access time or busy, the
    /// controller's per-block service.
    pub block_gap_ns: u64,
    /// Per transfer on the bus: command, response, turnaround, and the host
    /// controller's request path until the data phase starts.
    pub transfer_overhead_ns: u64,
    /// Bytes of interrupt status and RX lookahead read before a packet can be read.
    pub status_read_bytes: u32,
    /// Bytes the bus protocol adds to each packet (mailbox/HTC, WMI and 802.3/LLC
    /// headers for an AR6k).
    pub frame_overhead_bytes: u32,
    /// How the host learns of the card's interrupt and of finished transfers: at once
    /// by interrupt, or at the polling thread's next tick.
    pub completion: Completion,
    /// Who moves a transfer's data: the controller's DMA (CPU free) or the CPU (PIO,
    /// busy for the whole data phase).
    pub data: DataMode,
    /// CPU per transfer: set up the request and complete it.
    pub cpu_per_transfer_ns: u64,
    /// CPU per interrupt: entry, exit and the handler's own work.
    pub cpu_per_interrupt_ns: u64,
    /// CPU per poll: waking the polling thread and claiming the host.
    pub cpu_per_poll_ns: u64,
    /// CPU per context switch to the woken reader (and back).
    pub cpu_per_switch_ns: u64,
    /// The host's own CPU work per packet sent or received: network stack, driver
    /// layers above the bus, the application.
    pub host_cpu_per_packet_ns: u64,
    /// The host's own CPU work per byte (copies and checksums), picoseconds.
    pub host_cpu_ps_per_byte: u64,
    /// Packets waiting for the host CPU (both directions).
    pub host_backlog_packets: usize,
    /// Packets the host has processed, waiting for the bus to the device.
    pub host_tx_queue_packets: usize,
    /// Packets from the air waiting in the chip to be read by the host.
    pub device_rx_buffers: usize,
}

/// The Openmoko Neo FreeRunner (GTA02) of seed 004: an S3C2442 (ARM920T at 400 MHz,
/// HZ = 200) with an Atheros AR6001 802.11b/g module on a 4-bit SDIO bus. What the two
/// host stacks share:
///
/// - 4 data lines ("GTA02 currently uses SDIO with the 4 bit bus", openmoko-kernel,
///   2 Sep 2008) at 25 MHz, the SDIO default-speed maximum (PCLK 50 MHz / 2): a
///   128-byte block is 10.24 µs of bits.
/// - 128-byte blocks: the AR6k driver sets that block size ("Block Size Set: 128").
/// - 60 µs per request (command and response, the card's turnaround, the controller
///   driver's request path on a 400 MHz ARM9).
/// - 20 bytes of status (`ath6kl_irq_proc_registers`); 30 bytes of framing per packet:
///   HTC header 6, WMI data header 2, 802.3 header 14, LLC/SNAP 8.
/// - CPU: 30 µs per request, 15 µs per interrupt, 30 µs per poll wake-up, 80 µs per
///   context switch (the ARM920T's virtually tagged caches and TLB are flushed when the
///   address space changes).
/// - The host's own work, 580 µs per packet plus 40 ns per byte: TCP/IP, the AR6k
///   driver's HTC and WMI layers and the application's copy (two copies with
///   checksums at ~50 MB/s) on a 400 MHz ARM9 with 16 KB caches. Seed 004 gives no CPU
///   figures: this one is fixed so that the generic stack, whose CPU the model finds
///   saturated, sends at the seed's 722 KB/s.
/// - Queues: 1000 packets of backlog (`netdev_max_backlog`), 100 to the device (the
///   netdev queue), 16 receive buffers in the chip.
fn gta02_base(completion: Completion, data: DataMode, block_gap_ns: u64) -> BusConfig {
    BusConfig {
        clock_hz: 25_000_000,
        width_bits: 4,
        block_bytes: 128,
        block_gap_ns,
        transfer_overhead_ns: 60_000,
        status_read_bytes: 20,
        frame_overhead_bytes: 30,
        completion,
        data,
        cpu_per_transfer_ns: 30_000,
        cpu_per_interrupt_ns: 15_000,
        cpu_per_poll_ns: 30_000,
        cpu_per_switch_ns: 80_000,
        host_cpu_per_packet_ns: 580_000,
        host_cpu_ps_per_byte: 40_000,
        host_backlog_packets: 1000,
        host_tx_queue_packets: 100,
        device_rx_buffers: 16,
    }
}

impl BusConfig {
    /// Seed 004's vendor stack: the Atheros SDIO stack over Samuel Ortiz's S3C24xx
    /// SDIO host driver, "which has both" SDIO interrupts and DMA. Its data moves at
    /// 117 µs per 128-byte block (≈1.1 MB/s: 107 µs per block beyond the bits, the
    /// DMA hand-off and the card's turnaround for every block). The seed gives no bus
    /// timing; this is the figure with which this stack, whose bus the model finds
    /// saturated, receives at the seed's 745 KB/s and sends at its 805 KB/s (a received
    /// packet costs one more transfer, its status read: that is the difference).
    pub fn sdio_vendor() -> BusConfig {
        gta02_base(Completion::Interrupt, DataMode::Dma, 107_000)
    }

    /// Seed 004's generic stack: the Linux SDIO core over the S3C MCI driver, which
    /// "uses neither SDIO interrupts nor DMA". `sdio_irq_thread` polls with HZ = 200
    /// (the S3C24xx's fixed timer rate): a 5 ms tick, 10 ms = 2 ticks when idle. The
    /// CPU moves every word through the SDI's FIFO, taking an interrupt per FIFO fill:
    /// 600 ns per byte (≈1.7 MB/s), which paces the data phase; beyond it the card adds
    /// 5 µs per block. The seed gives no PIO rate either: with this one the bus stays
    /// unsaturated and the polls keep pace with the tick, as the seed's context-switch
    /// counts show they did (about one per tick).
    pub fn sdio_generic() -> BusConfig {
        gta02_base(
            Completion::Polled {
                jiffy: Nanos::from_ms(5),
                idle_period_jiffies: 2,
            },
            DataMode::Pio {
                copy_ps_per_byte: 600_000,
            },
            5_000,
        )
    }

    /// The built-in presets by name: `sdio-vendor`, `sdio-generic`.
    pub fn preset(name: &str) -> Option<BusConfig> {
        match name {
            "sdio-vendor" => Some(BusConfig::sdio_vendor()),
            "sdio-generic" => Some(BusConfig::sdio_generic()),
            _ => None,
        }
    }

    /// The names [`BusConfig::preset`] knows.
    pub const PRESETS: [&'static str; 2] = ["sdio-vendor", "sdio-generic"];

    /// Reject impossible parameters, saying which.
    pub fn validate(&self) -> Result<(), String> {
        if self.clock_hz == 0 {
            return Err("bus clock_hz must be above 0".into());
        }
        if !matches!(self.width_bits, 1 | 4 | 8) {
            return Err(format!(
                "bus width_bits must be 1, 4 or 8, not {}",
                self.width_bits
            ));
        }
        if let Completion::Polled {
            jiffy,
            idle_period_jiffies,
        } = self.completion
        {
            if jiffy == Nanos::ZERO || idle_period_jiffies == 0 {
                return Err("bus polling needs a jiffy and an idle period above 0".into());
            }
        }
        for (name, v) in [
            ("host_backlog_packets", self.host_backlog_packets),
            ("host_tx_queue_packets", self.host_tx_queue_packets),
            ("device_rx_buffers", self.device_rx_buffers),
        ] {
            if v == 0 {
                return Err(format!("bus {name} must be at least 1"));
            }
        }
        Ok(())
    }

    /// Duration of a data phase of `bytes`, padded to whole blocks when `blocks` (and
    /// a block size is set), else one byte-mode transfer: the bits at the bus rate
    /// plus one gap per block. Also returns the bytes on the wire.
    pub fn data_phase(&self, bytes: u32, blocks: bool) -> (Nanos, u32) {
        let (n_blocks, wire_bytes) = if blocks && self.block_bytes > 0 {
            let n = bytes.div_ceil(self.block_bytes).max(1);
            (n as u64, n * self.block_bytes)
        } else {
            (1, bytes)
        };
        let bits = wire_bytes as u128 * 8 * 1_000_000_000;
        let rate = self.clock_hz as u128 * self.width_bits as u128;
        let ns = bits.div_ceil(rate) as u64 + n_blocks * self.block_gap_ns;
        (Nanos(ns), wire_bytes)
    }
}

/// What the bus hands back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusOutput {
    /// A packet from the host reached the chip: it enters the air's queues now.
    ToDevice {
        /// When its write transfer ended.
        at: Nanos,
        /// The packet as the host handed it in.
        packet: Packet,
    },
    /// A packet from the chip reached the host's application.
    ToHost {
        /// When the host's per-packet work on it ended.
        at: Nanos,
        /// The packet as the chip handed it in.
        packet: Packet,
    },
    /// A packet found its queue full (the host's backlog, the host→device queue or the
    /// chip's receive buffers) and was dropped.
    Dropped {
        /// When it was dropped.
        at: Nanos,
        /// The dropped packet.
        packet: Packet,
        /// Why: always [`DropReason::QueueFull`].
        reason: DropReason,
    },
}

/// Counters of one host bus.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BusStats {
    /// Packets written to the chip ([`BusOutput::ToDevice`]).
    pub packets_to_device: u64,
    /// Packets handed to the host's application ([`BusOutput::ToHost`]).
    pub packets_to_host: u64,
    /// Transfers host → device (packet writes).
    pub transfers_to_device: u64,
    /// Transfers device → host (packet reads, status reads, CCCR_INTx polls).
    pub transfers_to_host: u64,
    /// Bytes on the wire host → device (headers and block padding included).
    pub bytes_to_device: u64,
    /// Bytes on the wire device → host (packet and status reads, headers and block
    /// padding included).
    pub bytes_to_host: u64,
    /// Interrupts taken: card interrupts and DMA completions.
    pub interrupts: u64,
    /// Wake-ups of the polling thread (polled completion only).
    pub polls: u64,
    /// Of those, the polls that found the card's interrupt pending.
    pub polls_with_work: u64,
    /// Wake-ups of the receiving process (see the module documentation).
    pub context_switches: u64,
    /// CPU time of the bus driver (set-up, PIO, interrupts, polls, switches), ns.
    pub cpu_driver_ns: u64,
    /// CPU time of the host's own per-packet work, ns.
    pub cpu_host_ns: u64,
    /// Time the bus was in a command or data phase, ns.
    pub bus_busy_ns: u64,
    /// Packets dropped because the host's backlog for the CPU was full
    /// (`host_backlog_packets`).
    pub dropped_host_backlog: u64,
    /// Packets dropped because the host→device queue was full (`host_tx_queue_packets`).
    pub dropped_host_tx_queue: u64,
    /// Packets from the air dropped because the chip's receive buffers were full
    /// (`device_rx_buffers`).
    pub dropped_device_rx: u64,
}

impl BusStats {
    /// All CPU time, driver and host.
    pub fn cpu_busy_ns(&self) -> u64 {
        self.cpu_driver_ns + self.cpu_host_ns
    }
}

/// The host's single CPU: driver work in order, preempting host work, which runs in
/// the gaps.
#[derive(Clone, Debug, Default)]
struct HostCpu {
    /// End of the driver work scheduled so far (one contiguous run, as it is always
    /// appended at `max(now, driver_until)`).
    driver_until: Nanos,
    /// Host work waiting or running, oldest first: the packet and which way it goes.
    jobs: VecDeque<(Packet, Dir)>,
    /// When the front job finishes, if one runs.
    front_done: Option<Nanos>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    /// Host → device: once processed it queues for the bus.
    Send,
    /// Device → host: once processed it reaches the application.
    Receive,
}

impl HostCpu {
    /// Schedule `d` of driver work requested at `now`: returns when it ends. A host job
    /// running across its start is pushed back by `d`.
    fn driver(&mut self, now: Nanos, d: Nanos, stats: &mut BusStats) -> Nanos {
        let start = now.max(self.driver_until);
        let end = start + d;
        self.driver_until = end;
        stats.cpu_driver_ns += d.as_ns();
        if let Some(done) = self.front_done {
            if start < done {
                self.front_done = Some(done + d);
            }
        }
        end
    }

    /// Start the front job at `now`, taking `work`, after any driver work in progress.
    fn start_front(&mut self, now: Nanos, work: Nanos) {
        self.front_done = Some(now.max(self.driver_until) + work);
    }
}

/// One bus transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Xfer {
    /// CMD52 read of CCCR_INTx: is the card's interrupt pending? (No data phase.)
    PollIntx,
    /// CMD53 byte-mode read of the interrupt status and RX lookahead registers.
    Status,
    /// CMD53 block read of one packet from the chip.
    Read(Packet),
    /// CMD53 block write of one packet to the chip.
    Write(Packet),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// The CPU sets the request up.
    Issue,
    /// Command, response and turnaround on the bus.
    Command,
    Data,
    /// DMA done, polled mode: the driver sleeps until the next timer tick to look.
    AwaitTick,
    /// DMA done and noticed: the completion interrupt's handler, or the polling
    /// thread's wake-up, runs (CPU).
    Completion,
}

/// What the (sequential) bus driver is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Activity {
    Idle,
    /// A card interrupt's handler starts (CPU), then reads the status.
    IrqEntry {
        until: Nanos,
    },
    /// The polling thread wakes (CPU), then sends its CMD52.
    PollWake {
        until: Nanos,
    },
    Transfer {
        xfer: Xfer,
        phase: Phase,
        until: Nanos,
    },
}

/// A service of the card's interrupt in progress.
#[derive(Clone, Copy, Debug, Default)]
struct Service {
    by_poll: bool,
    /// A switch was already counted for this service (the poll preempted the host,
    /// or the first packet woke it).
    switched: bool,
    /// Packets the status read announced and not yet read.
    to_read: usize,
    delivered: u32,
}

/// The host bus of one station: feed it packets from the host
/// ([`HostBus::handle_host_packet`]) and from the air ([`HostBus::handle_device_packet`]),
/// run it at its deadlines ([`HostBus::handle_timeout`]) and collect what comes out
/// ([`HostBus::poll_output`]).
#[derive(Clone, Debug)]
pub struct HostBus {
    cfg: BusConfig,
    cpu: HostCpu,
    activity: Activity,
    service: Option<Service>,
    to_device: VecDeque<Packet>,
    device_rx: VecDeque<Packet>,
    /// Interrupt mode: serve the card before the next write (alternates with writes).
    prefer_card: bool,
    /// Polled mode: the current sleep in ticks and the next wake-up.
    poll_period_jiffies: u32,
    next_poll: Nanos,
    /// The current poll preempted the host process (its switch is counted).
    poll_preempted: bool,
    outputs: VecDeque<BusOutput>,
    stats: BusStats,
}

impl HostBus {
    /// An idle bus with empty queues, built from `cfg`; the error names the offending
    /// field of a bad configuration. With polled completion the thread first wakes
    /// after its longest sleep.
    pub fn new(cfg: BusConfig) -> Result<HostBus, String> {
        cfg.validate()?;
        let (period, next_poll) = match cfg.completion {
            Completion::Interrupt => (0, Nanos::MAX),
            Completion::Polled {
                jiffy,
                idle_period_jiffies,
            } => (idle_period_jiffies, jiffy * idle_period_jiffies as u64),
        };
        Ok(HostBus {
            cfg,
            cpu: HostCpu::default(),
            activity: Activity::Idle,
            service: None,
            to_device: VecDeque::new(),
            device_rx: VecDeque::new(),
            prefer_card: true,
            poll_period_jiffies: period,
            next_poll,
            poll_preempted: false,
            outputs: VecDeque::new(),
            stats: BusStats::default(),
        })
    }

    /// The configuration the bus was built from.
    pub fn config(&self) -> &BusConfig {
        &self.cfg
    }

    /// The counters, busy times as charged so far: a bus phase is charged whole when
    /// it starts and driver work whole when it is queued, so these include work that
    /// lies ahead. For a run's figures use [`HostBus::stats_until`].
    pub fn stats(&self) -> &BusStats {
        &self.stats
    }

    /// The counters of a run that ends at `end` (every deadline up to `end` handled),
    /// with the busy times of the bus and the CPU counted inside the run only:
    /// - the bus phase in progress (command or data) counts up to `end`, not to its
    ///   end;
    /// - driver work queued past `end` does not count: all of it lies in the one
    ///   stretch from `end` to `driver_until` (driver work is appended at
    ///   `max(now, driver_until)` with `now ≤ end`, so a stretch that reaches past `end`
    ///   is busy from `end` on);
    /// - the host job in progress counts its part done by `end` (host work is charged
    ///   when a job ends): it runs whenever the driver does not, so of its work, what
    ///   is left is the time from `max(end, driver_until)` to its end.
    ///
    /// Busy periods of the bus do not overlap, nor do the CPU's (host work runs in the
    /// driver's gaps), so each busy time is at most `end`: the fractions of a run made
    /// from them are at most 1.
    pub fn stats_until(&self, end: Nanos) -> BusStats {
        let mut s = self.stats;
        if let Activity::Transfer {
            phase: Phase::Command | Phase::Data,
            until,
            ..
        } = self.activity
        {
            s.bus_busy_ns -= until.saturating_sub(end).as_ns();
        }
        s.cpu_driver_ns -= self.cpu.driver_until.saturating_sub(end).as_ns();
        if let (Some(done), Some((packet, _))) = (self.cpu.front_done, self.cpu.jobs.front()) {
            if done > end {
                let work = self.host_work(packet);
                let left = done
                    .saturating_sub(end.max(self.cpu.driver_until))
                    .min(work);
                s.cpu_host_ns += (work - left).as_ns();
            }
        }
        s
    }

    /// Packets inside: waiting for the CPU, for the bus, in the chip, or in transfer.
    pub fn packets(&self) -> usize {
        let moving = match self.activity {
            Activity::Transfer {
                xfer: Xfer::Read(_) | Xfer::Write(_),
                ..
            } => 1,
            _ => 0,
        };
        self.cpu.jobs.len() + self.to_device.len() + self.device_rx.len() + moving
    }

    /// The host hands a packet to its WLAN driver (uplink).
    pub fn handle_host_packet(&mut self, now: Nanos, packet: Packet) {
        self.advance(now);
        self.push_host_job(now, packet, Dir::Send);
        self.advance(now);
    }

    /// The chip received a packet from the air for the host (downlink).
    pub fn handle_device_packet(&mut self, now: Nanos, packet: Packet) {
        self.advance(now);
        if self.device_rx.len() >= self.cfg.device_rx_buffers {
            self.stats.dropped_device_rx += 1;
            self.drop_packet(now, packet);
        } else {
            self.device_rx.push_back(packet);
            if self.activity == Activity::Idle {
                self.next_activity(now);
            }
        }
        self.advance(now);
    }

    /// Run everything due at or before `now` (bus phases, CPU work, polls), in time
    /// order. A call with nothing due does nothing.
    pub fn handle_timeout(&mut self, now: Nanos) {
        self.advance(now);
    }

    /// The next time the bus needs [`HostBus::handle_timeout`].
    pub fn poll_timeout(&self) -> Option<Nanos> {
        let activity = match self.activity {
            Activity::IrqEntry { until } | Activity::PollWake { until } => Some(until),
            Activity::Transfer { until, .. } => Some(until),
            // The poll thread sleeps only while the driver is idle; a poll due while
            // it is busy runs when it is done.
            Activity::Idle => (self.next_poll != Nanos::MAX).then_some(self.next_poll),
        };
        match (activity, self.cpu.front_done) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next packet that left the bus (to the chip, to the host, or dropped), in the
    /// order the bus produced them; `None` once drained.
    pub fn poll_output(&mut self) -> Option<BusOutput> {
        self.outputs.pop_front()
    }

    fn drop_packet(&mut self, at: Nanos, packet: Packet) {
        self.outputs.push_back(BusOutput::Dropped {
            at,
            packet,
            reason: DropReason::QueueFull,
        });
    }

    fn host_work(&self, packet: &Packet) -> Nanos {
        Nanos(
            self.cfg.host_cpu_per_packet_ns
                + packet.len_bytes as u64 * self.cfg.host_cpu_ps_per_byte / 1000,
        )
    }

    fn push_host_job(&mut self, now: Nanos, packet: Packet, dir: Dir) {
        if self.cpu.jobs.len() >= self.cfg.host_backlog_packets {
            self.stats.dropped_host_backlog += 1;
            self.drop_packet(now, packet);
            return;
        }
        self.cpu.jobs.push_back((packet, dir));
        if self.cpu.front_done.is_none() {
            let work = self.host_work(&packet);
            self.cpu.start_front(now, work);
        }
    }

    /// Run everything due at or before `now`, in time order.
    fn advance(&mut self, now: Nanos) {
        loop {
            let host = self.cpu.front_done.filter(|&t| t <= now);
            let driver = self.driver_due(now);
            match (host, driver) {
                (Some(h), Some(d)) if h <= d => self.finish_host_job(h),
                (Some(h), None) => self.finish_host_job(h),
                (_, Some(d)) => self.step_driver(d),
                (None, None) => break,
            }
        }
    }

    /// When the driver's current step ends, if by `now`.
    fn driver_due(&self, now: Nanos) -> Option<Nanos> {
        let t = match self.activity {
            Activity::Idle => {
                if self.next_poll <= now {
                    self.next_poll
                } else {
                    return None;
                }
            }
            Activity::IrqEntry { until }
            | Activity::PollWake { until }
            | Activity::Transfer { until, .. } => until,
        };
        (t <= now).then_some(t)
    }

    fn finish_host_job(&mut self, at: Nanos) {
        let Some((packet, dir)) = self.cpu.jobs.pop_front() else {
            self.cpu.front_done = None;
            return;
        };
        self.stats.cpu_host_ns += self.host_work(&packet).as_ns();
        self.cpu.front_done = None;
        if let Some(&(next, _)) = self.cpu.jobs.front() {
            let work = self.host_work(&next);
            self.cpu.start_front(at, work);
        }
        match dir {
            Dir::Receive => {
                self.stats.packets_to_host += 1;
                self.outputs.push_back(BusOutput::ToHost { at, packet });
            }
            Dir::Send => {
                if self.to_device.len() >= self.cfg.host_tx_queue_packets {
                    self.stats.dropped_host_tx_queue += 1;
                    self.drop_packet(at, packet);
                } else {
                    self.to_device.push_back(packet);
                    if self.activity == Activity::Idle {
                        self.next_activity(at);
                    }
                }
            }
        }
    }

    /// The driver's current step ended at `at`: take the next one.
    fn step_driver(&mut self, at: Nanos) {
        match self.activity {
            Activity::Idle => self.next_activity(at),
            Activity::IrqEntry { .. } => {
                self.service = Some(Service::default());
                self.start_transfer(at, Xfer::Status);
            }
            Activity::PollWake { .. } => self.start_transfer(at, Xfer::PollIntx),
            Activity::Transfer { xfer, phase, .. } => self.next_phase(at, xfer, phase),
        }
    }

    fn start_transfer(&mut self, at: Nanos, xfer: Xfer) {
        let until = self
            .cpu
            .driver(at, Nanos(self.cfg.cpu_per_transfer_ns), &mut self.stats);
        self.activity = Activity::Transfer {
            xfer,
            phase: Phase::Issue,
            until,
        };
    }

    /// Bytes a transfer carries in its data phase, and whether in blocks.
    fn payload(&self, xfer: Xfer) -> (u32, bool) {
        match xfer {
            Xfer::PollIntx => (0, false),
            Xfer::Status => (self.cfg.status_read_bytes, false),
            Xfer::Read(p) | Xfer::Write(p) => (p.len_bytes + self.cfg.frame_overhead_bytes, true),
        }
    }

    fn next_phase(&mut self, at: Nanos, xfer: Xfer, phase: Phase) {
        let (bytes, blocks) = self.payload(xfer);
        let (phase, until) = match phase {
            Phase::Issue => {
                let o = Nanos(self.cfg.transfer_overhead_ns);
                self.stats.bus_busy_ns += o.as_ns();
                (Phase::Command, at + o)
            }
            Phase::Command if bytes > 0 => {
                let (wire, wire_bytes) = self.cfg.data_phase(bytes, blocks);
                if matches!(xfer, Xfer::Write(_)) {
                    self.stats.bytes_to_device += wire_bytes as u64;
                } else {
                    self.stats.bytes_to_host += wire_bytes as u64;
                }
                let until = match self.cfg.data {
                    DataMode::Dma => at + wire,
                    DataMode::Pio { copy_ps_per_byte } => {
                        let copy = Nanos(wire_bytes as u64 * copy_ps_per_byte / 1000);
                        let d = wire.max(copy);
                        self.cpu.driver(at, d, &mut self.stats)
                    }
                };
                self.stats.bus_busy_ns += (until - at).as_ns();
                (Phase::Data, until)
            }
            Phase::Data if self.cfg.data == DataMode::Dma => match self.cfg.completion {
                Completion::Interrupt => {
                    self.stats.interrupts += 1;
                    let irq = Nanos(self.cfg.cpu_per_interrupt_ns);
                    (Phase::Completion, self.cpu.driver(at, irq, &mut self.stats))
                }
                Completion::Polled { jiffy, .. } => {
                    let tick = at.as_ns() / jiffy.as_ns();
                    (Phase::AwaitTick, jiffy * (tick + 1))
                }
            },
            Phase::AwaitTick => {
                // The waiting thread wakes on the tick and finds the transfer done.
                self.stats.polls += 1;
                self.stats.polls_with_work += 1;
                let wake = Nanos(self.cfg.cpu_per_poll_ns);
                (
                    Phase::Completion,
                    self.cpu.driver(at, wake, &mut self.stats),
                )
            }
            // Command without data, PIO data, or the completion handled: done.
            _ => {
                self.transfer_done(at, xfer);
                return;
            }
        };
        self.activity = Activity::Transfer { xfer, phase, until };
    }

    fn transfer_done(&mut self, at: Nanos, xfer: Xfer) {
        match xfer {
            Xfer::Write(_) => self.stats.transfers_to_device += 1,
            _ => self.stats.transfers_to_host += 1,
        }
        match xfer {
            Xfer::PollIntx => {
                if self.device_rx.is_empty() {
                    self.reschedule_poll(at, false);
                    self.next_activity(at);
                } else {
                    self.stats.polls_with_work += 1;
                    self.service = Some(Service {
                        by_poll: true,
                        switched: self.poll_preempted,
                        ..Service::default()
                    });
                    self.start_transfer(at, Xfer::Status);
                }
            }
            Xfer::Status => {
                let pending = self.device_rx.len();
                let s = self.service.get_or_insert_with(Service::default);
                // An interrupt serves one packet; a poll every packet announced now.
                s.to_read = if s.by_poll { pending } else { pending.min(1) };
                self.read_next(at);
            }
            Xfer::Read(p) => {
                let sleeping = self.cpu.front_done.is_none();
                let s = self.service.get_or_insert_with(Service::default);
                s.delivered += 1;
                if sleeping && !s.switched {
                    s.switched = true;
                    self.switch(at);
                }
                self.push_host_job(at, p, Dir::Receive);
                self.read_next(at);
            }
            Xfer::Write(p) => {
                self.stats.packets_to_device += 1;
                self.outputs
                    .push_back(BusOutput::ToDevice { at, packet: p });
                self.prefer_card = true;
                self.next_activity(at);
            }
        }
    }

    /// Read the next announced packet, or finish the service.
    fn read_next(&mut self, at: Nanos) {
        let s = self.service.get_or_insert_with(Service::default);
        if s.to_read > 0 {
            if let Some(p) = self.device_rx.pop_front() {
                s.to_read -= 1;
                self.start_transfer(at, Xfer::Read(p));
                return;
            }
        }
        self.service_done(at);
    }

    /// Count a context switch of the host process and charge its CPU.
    fn switch(&mut self, at: Nanos) {
        self.stats.context_switches += 1;
        let switch = Nanos(self.cfg.cpu_per_switch_ns);
        self.cpu.driver(at, switch, &mut self.stats);
    }

    fn service_done(&mut self, at: Nanos) {
        let by_poll = self.service.take().is_some_and(|s| s.by_poll);
        if by_poll {
            self.reschedule_poll(at, true);
        }
        self.prefer_card = false;
        self.next_activity(at);
    }

    /// `sdio_irq_thread`'s adaptive sleep after a poll that did (or did not) find work,
    /// and its wake-up on the timer tick.
    fn reschedule_poll(&mut self, at: Nanos, found_work: bool) {
        let Completion::Polled {
            jiffy,
            idle_period_jiffies,
        } = self.cfg.completion
        else {
            return;
        };
        self.poll_period_jiffies = if found_work {
            self.poll_period_jiffies / 2
        } else {
            (self.poll_period_jiffies + 1).min(idle_period_jiffies)
        };
        let tick = at.as_ns() / jiffy.as_ns();
        self.next_poll = jiffy * (tick + self.poll_period_jiffies.max(1) as u64);
    }

    /// The driver is free at `at`: poll if due, serve the card, or write.
    fn next_activity(&mut self, at: Nanos) {
        self.activity = Activity::Idle;
        match self.cfg.completion {
            Completion::Polled { .. } => {
                if self.next_poll <= at {
                    self.stats.polls += 1;
                    // The SCHED_FIFO thread preempts a runnable host process.
                    self.poll_preempted = self.cpu.front_done.is_some();
                    if self.poll_preempted {
                        self.switch(at);
                    }
                    let until =
                        self.cpu
                            .driver(at, Nanos(self.cfg.cpu_per_poll_ns), &mut self.stats);
                    self.activity = Activity::PollWake { until };
                } else if let Some(p) = self.to_device.pop_front() {
                    self.start_transfer(at, Xfer::Write(p));
                }
            }
            Completion::Interrupt => {
                let card = !self.device_rx.is_empty();
                let write = !self.to_device.is_empty();
                if card && (self.prefer_card || !write) {
                    self.stats.interrupts += 1;
                    let until =
                        self.cpu
                            .driver(at, Nanos(self.cfg.cpu_per_interrupt_ns), &mut self.stats);
                    self.activity = Activity::IrqEntry { until };
                } else if let Some(p) = self.to_device.pop_front() {
                    self.start_transfer(at, Xfer::Write(p));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::NodeId;

    fn packet(id: u64, len: u32) -> Packet {
        Packet::new(id, NodeId(1), NodeId::AP, len)
    }

    /// A bus with round numbers: 4 bits × 25 MHz = 100 Mbit/s (80 ns per byte),
    /// 100-byte blocks with 2 µs gaps, 10 µs per transfer, CPU costs 1 µs per transfer,
    /// 2 µs per interrupt, 3 µs per poll, 4 µs per switch; host work 50 µs + 10 ns/B.
    fn round(completion: Completion, data: DataMode) -> BusConfig {
        BusConfig {
            clock_hz: 25_000_000,
            width_bits: 4,
            block_bytes: 100,
            block_gap_ns: 2_000,
            transfer_overhead_ns: 10_000,
            status_read_bytes: 20,
            frame_overhead_bytes: 0,
            completion,
            data,
            cpu_per_transfer_ns: 1_000,
            cpu_per_interrupt_ns: 2_000,
            cpu_per_poll_ns: 3_000,
            cpu_per_switch_ns: 4_000,
            host_cpu_per_packet_ns: 50_000,
            host_cpu_ps_per_byte: 10_000,
            host_backlog_packets: 10,
            host_tx_queue_packets: 10,
            device_rx_buffers: 4,
        }
    }

    const POLLED: Completion = Completion::Polled {
        jiffy: Nanos::from_ms(5),
        idle_period_jiffies: 2,
    };

    /// Run until nothing is left to do (or `until`), collecting outputs.
    fn run(bus: &mut HostBus, until: Nanos) -> Vec<BusOutput> {
        let mut out = Vec::new();
        while let Some(t) = bus.poll_timeout() {
            if t > until {
                break;
            }
            bus.handle_timeout(t);
            out.extend(std::iter::from_fn(|| bus.poll_output()));
        }
        out
    }

    /// A transfer that outlasts the run (a 1 Hz bus: 1536 bytes take an hour) counts
    /// only its part inside it; so does driver work queued past the end, and a host
    /// job in progress counts what it did. The busy fractions stay at most 1.
    #[test]
    fn busy_time_is_counted_inside_the_run_only() {
        let end = Nanos::from_secs(1);
        // DMA, interrupts: host work, then 1 µs of set-up, then the bus from there on.
        let mut slow = round(Completion::Interrupt, DataMode::Dma);
        slow.clock_hz = 1;
        let mut bus = HostBus::new(slow).unwrap();
        bus.handle_host_packet(Nanos::ZERO, packet(1, 250));
        run(&mut bus, end);
        let host = 52_500;
        assert!(bus.stats().bus_busy_ns > 100 * end.as_ns(), "charged whole");
        let s = bus.stats_until(end);
        assert_eq!(s.bus_busy_ns, end.as_ns() - host - 1_000);
        assert_eq!((s.cpu_host_ns, s.cpu_driver_ns), (host, 1_000));

        // PIO: the data phase holds the CPU too, so both are busy to the end (the CPU
        // idles only during the 10 µs command).
        let pio = DataMode::Pio {
            copy_ps_per_byte: 0,
        };
        let mut slow = round(Completion::Interrupt, pio);
        slow.clock_hz = 1;
        let mut bus = HostBus::new(slow).unwrap();
        bus.handle_host_packet(Nanos::ZERO, packet(1, 250));
        run(&mut bus, end);
        let s = bus.stats_until(end);
        assert_eq!(s.bus_busy_ns, end.as_ns() - host - 1_000);
        assert_eq!(s.cpu_busy_ns(), end.as_ns() - 10_000);
        assert_eq!(s.cpu_driver_ns, end.as_ns() - host - 10_000);

        // A host job cut by the end: 25 µs of its 52.5 µs done.
        let mut bus = HostBus::new(round(Completion::Interrupt, DataMode::Dma)).unwrap();
        bus.handle_host_packet(Nanos::ZERO, packet(1, 250));
        let end = Nanos::from_us(25);
        run(&mut bus, end);
        let s = bus.stats_until(end);
        assert_eq!(
            (s.cpu_host_ns, s.cpu_driver_ns, s.bus_busy_ns),
            (25_000, 0, 0)
        );
        // Once everything has finished, nothing is clipped.
        run(&mut bus, Nanos::from_secs(1));
        assert_eq!(bus.stats_until(Nanos::from_secs(1)), *bus.stats());
    }

    #[test]
    fn data_phase_counts_blocks_bits_and_gaps() {
        let c = round(Completion::Interrupt, DataMode::Dma);
        // 250 bytes → 3 blocks of 100: 300 × 80 ns + 3 × 2 µs.
        assert_eq!(c.data_phase(250, true), (Nanos(24_000 + 6_000), 300));
        // Byte mode: 20 bytes, one gap.
        assert_eq!(c.data_phase(20, false), (Nanos(1_600 + 2_000), 20));
        // The GTA02: a 1500-byte packet + 30 framing = 12 blocks of 128 bytes at
        // 100 Mbit/s (122.88 µs) + 12 gaps of 107 µs with the vendor's DMA.
        let g = BusConfig::sdio_vendor();
        assert_eq!(
            g.data_phase(1530, true),
            (Nanos(122_880 + 12 * 107_000), 1536)
        );
    }

    /// Uplink, interrupts + DMA: host work, then set-up, command, data, completion
    /// interrupt — each part exactly once, in sequence.
    #[test]
    fn dma_write_is_the_sum_of_its_parts() {
        let mut bus = HostBus::new(round(Completion::Interrupt, DataMode::Dma)).unwrap();
        bus.handle_host_packet(Nanos::ZERO, packet(1, 250));
        let out = run(&mut bus, Nanos::from_secs(1));
        let host = 50_000 + 2_500;
        let expect = host + 1_000 + 10_000 + 30_000 + 2_000;
        assert_eq!(
            out,
            vec![BusOutput::ToDevice {
                at: Nanos(expect),
                packet: packet(1, 250)
            }]
        );
        let s = bus.stats();
        assert_eq!(s.transfers_to_device, 1);
        assert_eq!(s.bytes_to_device, 300);
        assert_eq!(s.interrupts, 1, "the DMA completion");
        assert_eq!(s.context_switches, 0, "nothing was received");
        assert_eq!(s.cpu_host_ns, host);
        assert_eq!(s.cpu_driver_ns, 1_000 + 2_000);
        assert_eq!(s.bus_busy_ns, 40_000);
    }

    /// Downlink, interrupts: interrupt entry, status read, packet read (each with its
    /// completion interrupt), the reader's switch, then host work.
    #[test]
    fn interrupt_read_is_the_sum_of_its_parts() {
        let mut bus = HostBus::new(round(Completion::Interrupt, DataMode::Dma)).unwrap();
        bus.handle_device_packet(Nanos::ZERO, packet(1, 250));
        let out = run(&mut bus, Nanos::from_secs(1));
        let status = 1_000 + 10_000 + 3_600 + 2_000;
        let read = 1_000 + 10_000 + 30_000 + 2_000;
        // The switch (4 µs) preempts the host work that started when the read ended.
        let expect = 2_000 + status + read + 4_000 + 52_500;
        assert_eq!(out.len(), 1);
        assert_eq!(
            out[0],
            BusOutput::ToHost {
                at: Nanos(expect),
                packet: packet(1, 250)
            }
        );
        let s = bus.stats();
        assert_eq!(s.interrupts, 3, "card interrupt + two DMA completions");
        assert_eq!(s.context_switches, 1);
        assert_eq!(s.transfers_to_host, 2);
    }

    /// PIO holds the CPU for the data phase: host work that was running is pushed back
    /// by exactly that long.
    #[test]
    fn pio_preempts_host_work() {
        let pio = DataMode::Pio {
            copy_ps_per_byte: 0,
        };
        let mut bus = HostBus::new(round(Completion::Interrupt, pio)).unwrap();
        bus.handle_host_packet(Nanos::ZERO, packet(1, 250));
        bus.handle_host_packet(Nanos::ZERO, packet(2, 250));
        let out = run(&mut bus, Nanos::from_secs(1));
        let host = 52_500;
        // Packet 1: host work, set-up, command, data (PIO: CPU busy), no interrupt.
        let w1 = host + 1_000 + 10_000 + 30_000;
        // Packet 2's host work starts when packet 1's ends and is preempted by packet
        // 1's set-up (1 µs) and PIO data phase (30 µs).
        let h2 = host + host + 1_000 + 30_000;
        assert_eq!(h2, 136_000);
        let w2 = h2 + 1_000 + 10_000 + 30_000;
        let at: Vec<u64> = out
            .iter()
            .map(|o| match o {
                BusOutput::ToDevice { at, .. } => at.as_ns(),
                o => panic!("{o:?}"),
            })
            .collect();
        assert_eq!(at, vec![w1, w2]);
        assert_eq!(bus.stats().interrupts, 0, "PIO completes synchronously");
        assert_eq!(bus.stats().cpu_driver_ns, 2 * (1_000 + 30_000));
        // A slow copy paces the data phase instead of the wire.
        let slow = DataMode::Pio {
            copy_ps_per_byte: 1_000_000,
        };
        let mut bus = HostBus::new(round(Completion::Interrupt, slow)).unwrap();
        bus.handle_host_packet(Nanos::ZERO, packet(1, 250));
        let out = run(&mut bus, Nanos::from_secs(1));
        let BusOutput::ToDevice { at, .. } = out[0] else {
            panic!()
        };
        assert_eq!(at.as_ns(), host + 1_000 + 10_000 + 300_000);
    }

    /// Polled: a packet waiting in the chip is read at the next poll, on the timer
    /// tick: idle polls every 2 ticks (10 ms); after a poll with work the period halves
    /// (the next poll on the next tick), then grows back one tick per idle poll.
    #[test]
    fn polled_reads_wait_for_the_tick() {
        let pio = DataMode::Pio {
            copy_ps_per_byte: 0,
        };
        let mut bus = HostBus::new(round(POLLED, pio)).unwrap();
        // Idle polls at 10 and 20 ms.
        run(&mut bus, Nanos::from_ms(21));
        assert_eq!(bus.stats().polls, 2);
        assert_eq!(bus.stats().polls_with_work, 0);
        // A packet at 23 ms waits for the poll at 30 ms, which reads it at once.
        bus.handle_device_packet(Nanos::from_ms(23), packet(1, 250));
        let out = run(&mut bus, Nanos::from_ms(31));
        let poll = 3_000 + 1_000 + 10_000; // wake-up, CMD52 set-up and command
        let status = 1_000 + 10_000 + 3_600;
        let read = 1_000 + 10_000 + 30_000;
        let expect = 30_000_000 + poll + status + read + 4_000 + 52_500;
        assert_eq!(
            out,
            vec![BusOutput::ToHost {
                at: Nanos(expect),
                packet: packet(1, 250)
            }]
        );
        let s = *bus.stats();
        assert_eq!((s.polls, s.polls_with_work), (3, 1));
        assert_eq!(s.transfers_to_host, 3 + 2, "3 CMD52s, a status, a read");
        assert_eq!(s.context_switches, 1);
        // Work found: period 2 → 1, so the next poll is on the next tick...
        assert_eq!(bus.poll_timeout(), Some(Nanos::from_ms(35)));
        // ...which finds nothing: 2 ticks again.
        run(&mut bus, Nanos::from_ms(36));
        assert_eq!(bus.poll_timeout(), Some(Nanos::from_ms(45)));
        assert_eq!(bus.stats().polls, 4);
    }

    /// Polled + DMA: a finished data phase is noticed on the next timer tick.
    #[test]
    fn polled_dma_completion_waits_for_the_tick() {
        let mut bus = HostBus::new(round(POLLED, DataMode::Dma)).unwrap();
        bus.handle_host_packet(Nanos::ZERO, packet(1, 250));
        let out = run(&mut bus, Nanos::from_ms(6));
        // Written by 93.5 µs, noticed at the 5 ms tick (+ 3 µs wake-up).
        assert_eq!(
            out,
            vec![BusOutput::ToDevice {
                at: Nanos::from_ms(5) + Nanos(3_000),
                packet: packet(1, 250)
            }]
        );
        // A read: the poll at 10 ms, the status read's end noticed at 15 ms, the
        // packet's at 20 ms.
        bus.handle_device_packet(Nanos::from_ms(7), packet(2, 250));
        let out = run(&mut bus, Nanos::from_ms(21));
        assert_eq!(
            out,
            vec![BusOutput::ToHost {
                at: Nanos::from_ms(20) + Nanos(3_000 + 4_000 + 52_500),
                packet: packet(2, 250)
            }]
        );
    }

    /// One wake-up per packet with interrupts; one per poll when polled, however many
    /// packets the poll finds.
    #[test]
    fn polling_batches_wakeups() {
        let pio = DataMode::Pio {
            copy_ps_per_byte: 0,
        };
        for (completion, switches) in [(Completion::Interrupt, 4), (POLLED, 1)] {
            let mut bus = HostBus::new(round(completion, pio)).unwrap();
            for i in 0..4 {
                bus.handle_device_packet(Nanos::from_us(100 * i), packet(i, 250));
            }
            let out = run(&mut bus, Nanos::from_ms(50));
            assert_eq!(out.len(), 4);
            assert!(out.iter().all(|o| matches!(o, BusOutput::ToHost { .. })));
            assert_eq!(bus.stats().context_switches, switches, "{completion:?}");
            assert_eq!(bus.stats().packets_to_host, 4);
        }
    }

    /// A poll that wakes while the host works preempts it (a switch, even if the poll
    /// finds nothing); an interrupt does not, and a packet handed to a busy host wakes
    /// nobody.
    #[test]
    fn switches_count_wakeups_and_preemptions() {
        let pio = DataMode::Pio {
            copy_ps_per_byte: 0,
        };
        let mut c = round(POLLED, pio);
        c.host_cpu_per_packet_ns = 20_000_000;
        c.host_cpu_ps_per_byte = 0;
        // The host works from 5 to 25 ms (+ what the polls take from it): the polls at
        // 10 and 20 ms preempt it, the one at 30 ms finds it asleep.
        let mut bus = HostBus::new(c).unwrap();
        bus.handle_host_packet(Nanos::from_ms(5), packet(1, 250));
        run(&mut bus, Nanos::from_ms(31));
        let s = *bus.stats();
        assert_eq!((s.polls, s.polls_with_work), (3, 0));
        assert_eq!(s.context_switches, 2);
        assert_eq!(
            s.cpu_driver_ns,
            3 * (3_000 + 1_000) + 2 * 4_000 + 1_000 + 30_000
        );
        // Interrupts: a packet for a busy host wakes nobody.
        c.completion = Completion::Interrupt;
        let mut bus = HostBus::new(c).unwrap();
        bus.handle_host_packet(Nanos::ZERO, packet(1, 250));
        bus.handle_device_packet(Nanos::from_ms(1), packet(2, 250));
        run(&mut bus, Nanos::from_ms(2));
        assert_eq!(bus.stats().packets_to_device, 0, "still in host work");
        assert_eq!(bus.stats().context_switches, 0);
    }

    /// Every queue is bounded: the chip's receive buffers and the host's backlog drop
    /// what does not fit.
    #[test]
    fn queues_are_bounded() {
        let mut bus = HostBus::new(round(POLLED, DataMode::Dma)).unwrap();
        for i in 0..6 {
            bus.handle_device_packet(Nanos::ZERO, packet(i, 250));
        }
        let drops: Vec<BusOutput> = std::iter::from_fn(|| bus.poll_output()).collect();
        assert_eq!(drops.len(), 2);
        assert!(drops.iter().all(|o| matches!(
            o,
            BusOutput::Dropped {
                reason: DropReason::QueueFull,
                ..
            }
        )));
        assert_eq!(bus.stats().dropped_device_rx, 2);
        assert_eq!(bus.packets(), 4);
        for i in 0..12 {
            bus.handle_host_packet(Nanos::ZERO, packet(100 + i, 250));
        }
        assert_eq!(bus.stats().dropped_host_backlog, 2);
        assert_eq!(bus.packets(), 4 + 10);
    }

    #[test]
    fn presets_are_valid_and_named() {
        for name in BusConfig::PRESETS {
            let c = BusConfig::preset(name).unwrap();
            c.validate().unwrap();
        }
        assert!(BusConfig::preset("usb").is_none());
        let mut c = BusConfig::sdio_generic();
        c.width_bits = 3;
        assert!(c.validate().unwrap_err().contains("width_bits"));
    }
}
