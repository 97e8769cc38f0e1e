//! The receive window as Linux builds it: the receive buffer (`sk_rcvbuf`, from
//! `net.ipv4.tcp_rmem`), the share of it offered as window (`tcp_win_from_space`),
//! the window chosen at the handshake (`tcp_select_initial_window`,
//! `tcp_init_buffer_space`), its growth while segments arrive (`tcp_grow_window`),
//! the buffer's auto-tuning once per receiver RTT (`tcp_rcv_space_adjust`, with the
//! RTT of `tcp_rcv_rtt_measure` and `tcp_rcv_rtt_measure_ts`), and the window each ACK
//! advertises (`__tcp_select_window`, `tcp_select_window`), all in
//! `net/ipv4/tcp_input.c` and `net/ipv4/tcp_output.c` (read in 6.12's source; the
//! older eras' differences are named where they apply).
//!
//! Three eras of defaults ([`LinuxReceive::linux_4_9`], [`LinuxReceive::linux_5_4`],
//! [`LinuxReceive::linux_6_12`]) differ in `tcp_rmem[1]`, in how the window is
//! counted against the buffer, in the initial window and in the auto-tuning rule:
//!
//! | | 4.9 | 5.4 (4.20 – 6.5) | 6.12 (≥ 6.6) |
//! |---|---|---|---|
//! | `tcp_rmem` | 4096 87380 6291456 | 4096 131072 6291456 | 4096 131072 6291456 |
//! | window of the buffer | `tcp_adv_win_scale` 1: ½ | `tcp_adv_win_scale` 1: ½ | `scaling_ratio` 128/256: ½ |
//! | buffer at the handshake | `tcp_fixup_rcvbuf`: 4 × 2 × 20 segments' truesize | `tcp_rmem[1]` | `tcp_rmem[1]` |
//! | initial window | 20 segments (`tcp_default_init_rwnd`) | ½ buffer, ~64 KB | ½ buffer, ~64 KB |
//! | auto-tuning | ×1.5 or ×2 steps | proportional to the growth | proportional to the growth |
//!
//! (`a337531b942b`, "tcp: up initial rmem to 128KB and SYN rwin to around 64KB",
//! 4.20, removed `tcp_fixup_rcvbuf` and the 20-segment cap and raised `tcp_rmem[1]`;
//! a later 4.x, "tcp: smoother receiver autotuning", made the growth proportional —
//! the 4.9 preset keeps 4.9's steps; 6.6 replaced `tcp_adv_win_scale` by the
//! per-socket `scaling_ratio` (`ip-sysctl`: "Obsolete since linux-6.6").
//! `tcp_rmem[2]` is "between 87380B and 6MB, depending on RAM size" in 4.x's
//! `ip-sysctl`, 6 MiB on any machine of a few GB: the presets take 6 MiB.)
//!
//! Simplifications: the driver's skb `truesize` is not modelled — the window is
//! counted against the buffer at the era's fixed ratio (½, which 6.x's
//! `tcp_measure_rcv_mss` would re-measure per driver) and `tcp_grow_window` always
//! finds the segment's overhead acceptable (`incr = 2·advmss`, true when `truesize`
//! is under 4 × the payload); no memory pressure (`tcp_mem`), no receive-queue
//! pruning, no window shrinking (`tcp_shrink_window` 0, its default). Timestamps are
//! on (Linux's default), at 1 ms (`TCP_TS_HZ`).

use txop_core::Nanos;

/// `net.ipv4.tcp_rmem`: the receive buffer's minimum, initial and auto-tuning maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpRmem {
    /// `tcp_rmem[0]` (not used by the model: it matters under memory pressure only).
    pub min_bytes: u32,
    /// `tcp_rmem[1]`: `sk_rcvbuf` of a new socket.
    pub default_bytes: u32,
    /// `tcp_rmem[2]`: the most auto-tuning grows `sk_rcvbuf` to; also sets the window
    /// scale.
    pub max_bytes: u32,
}

/// How much of the receive buffer is offered as window (`tcp_win_from_space`): the
/// rest is the kernel's overhead per byte (`sk_buff`s, their `truesize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowShare {
    /// `net.ipv4.tcp_adv_win_scale` (3.4 – 6.5, default 1): window = space −
    /// space / 2^n for n > 0, space / 2^−n for n ≤ 0.
    AdvWinScale(i8),
    /// 6.6's `scaling_ratio`: window = space × ratio / 256
    /// (`TCP_DEFAULT_SCALING_RATIO` 128, which the kernel re-measures from the
    /// driver's `skb->truesize`).
    ScalingRatio(u8),
}

/// How `tcp_rcv_space_adjust` grows the buffer when more was read in an RTT than in
/// the RTT before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AutotuneRule {
    /// 4.9 (until "tcp: smoother receiver autotuning"): `rcvwin = 2·copied +
    /// 16·advmss`, × 1.5 if `copied` grew by a quarter, × 2 if by a half; the window
    /// clamp becomes `rcvwin` itself.
    Stepped,
    /// From "tcp: smoother receiver autotuning" (late 4.x) on: `rcvwin = 2·copied +
    /// 16·advmss`, plus twice `rcvwin × growth / previous`.
    Proportional,
}

/// One receiving host's TCP receive settings (its kernel's defaults and sysctls),
/// and how fast its application reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinuxReceive {
    pub rmem: TcpRmem,
    /// `net.core.rmem_max` (212992 by default): the window scale is chosen for the
    /// larger of it and `tcp_rmem[2]`.
    pub rmem_max_bytes: u32,
    pub share: WindowShare,
    /// `tcp_fixup_rcvbuf` (up to 4.19): the buffer starts at 4 × 2 × 20 full
    /// segments' `truesize` (when `moderate_rcvbuf`) and the initial window is capped
    /// at 20 segments (`tcp_default_init_rwnd`).
    pub fixup_rcvbuf: bool,
    pub autotune: AutotuneRule,
    /// `net.ipv4.tcp_moderate_rcvbuf` (default on): auto-tuning.
    pub moderate_rcvbuf: bool,
    /// 6.12's `tcp_rcv_space_adjust` counts only what was read beyond what is still
    /// queued (`copied -= inq`); older sources count every byte read.
    pub copied_excludes_queued: bool,
    /// The application reads at most this many bytes per second (a slow reader);
    /// `None`: it reads each byte as soon as it is in order (netperf).
    pub read_rate_bytes_per_s: Option<u64>,
}

impl LinuxReceive {
    /// Linux 4.9's defaults (the 4.x presets' hosts; the ath9k/ath10k measurements of
    /// 2016–2017 ran 4.4–4.9 kernels).
    pub const fn linux_4_9() -> LinuxReceive {
        LinuxReceive {
            rmem: TcpRmem {
                min_bytes: 4096,
                default_bytes: 87380,
                max_bytes: 6 << 20,
            },
            rmem_max_bytes: 212_992,
            share: WindowShare::AdvWinScale(1),
            fixup_rcvbuf: true,
            autotune: AutotuneRule::Stepped,
            moderate_rcvbuf: true,
            copied_excludes_queued: false,
            read_rate_bytes_per_s: None,
        }
    }

    /// The defaults from 4.20 to 6.5 (`tcp_rmem[1]` 131072, `tcp_adv_win_scale` 1).
    pub const fn linux_5_4() -> LinuxReceive {
        LinuxReceive {
            rmem: TcpRmem {
                min_bytes: 4096,
                default_bytes: 131_072,
                max_bytes: 6 << 20,
            },
            share: WindowShare::AdvWinScale(1),
            fixup_rcvbuf: false,
            autotune: AutotuneRule::Proportional,
            ..LinuxReceive::linux_4_9()
        }
    }

    /// 6.12's defaults (`scaling_ratio` in place of `tcp_adv_win_scale`).
    pub const fn linux_6_12() -> LinuxReceive {
        LinuxReceive {
            share: WindowShare::ScalingRatio(TCP_DEFAULT_SCALING_RATIO),
            copied_excludes_queued: true,
            ..LinuxReceive::linux_5_4()
        }
    }

    /// `tcp_win_from_space`: the window `space_bytes` of buffer holds.
    #[inline]
    pub fn win_from_space(&self, space_bytes: u64) -> u64 {
        match self.share {
            WindowShare::AdvWinScale(n) if n <= 0 => space_bytes >> (-n as u32).min(63),
            WindowShare::AdvWinScale(n) => space_bytes - (space_bytes >> n as u32),
            WindowShare::ScalingRatio(r) => (space_bytes * r as u64) >> TCP_RMEM_TO_WIN_SCALE,
        }
    }

    /// The buffer auto-tuning asks for a window of `rcvwin_bytes`: 6.6's
    /// `tcp_space_from_win` with `scaling_ratio`; before it, `rcvwin / advmss` times
    /// one segment's memory (`SKB_TRUESIZE(advmss + MAX_TCP_HEADER)`, raised by
    /// 128 B until half of it holds a segment).
    fn space_for_win(&self, rcvwin_bytes: u64, advmss: u32) -> u64 {
        match self.share {
            WindowShare::ScalingRatio(r) => {
                (rcvwin_bytes << TCP_RMEM_TO_WIN_SCALE) / (r.max(1) as u64)
            }
            WindowShare::AdvWinScale(_) => {
                let mut rcvmem = skb_truesize(advmss);
                while self.win_from_space(rcvmem) < advmss as u64 {
                    rcvmem += 128;
                }
                rcvwin_bytes / advmss as u64 * rcvmem
            }
        }
    }
}

/// `TCP_RMEM_TO_WIN_SCALE`: `scaling_ratio` is in 1/256ths.
const TCP_RMEM_TO_WIN_SCALE: u32 = 8;

/// `TCP_DEFAULT_SCALING_RATIO`: half the buffer is window until a segment is measured.
pub const TCP_DEFAULT_SCALING_RATIO: u8 = 1 << (TCP_RMEM_TO_WIN_SCALE - 1);

/// `TCP_MAX_WSCALE` (RFC 7323 §2.3).
const TCP_MAX_WSCALE: u8 = 14;

/// `tcp_default_init_rwnd` up to 4.19: 2 × `TCP_INIT_CWND` segments.
const TCP_DEFAULT_INIT_RWND_SEGMENTS: u64 = 20;

/// `SKB_TRUESIZE(advmss + MAX_TCP_HEADER)` on x86-64: the payload, `MAX_TCP_HEADER`
/// (128 + `MAX_HEADER` 176 with WLAN and tunnels configured = 304), and the
/// cache-aligned `struct sk_buff` (256) and `skb_shared_info` (320).
fn skb_truesize(advmss: u32) -> u64 {
    advmss as u64 + 304 + 256 + 320
}

/// Round `v` up to a multiple of `1 << shift` (`ALIGN`).
#[inline]
fn align_up(v: u64, shift: u8) -> u64 {
    let m = (1u64 << shift) - 1;
    (v + m) & !m
}

/// What the handshake fixed: the SYN's window and the scale of every later one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InitialWindow {
    /// `rcv_wnd` after `tcp_select_initial_window`: the window the SYN (or SYN-ACK)
    /// offers, at most 65535 on the wire.
    pub rcv_wnd_bytes: u64,
    /// `rcv_wscale`: `ilog2(max(tcp_rmem[2], rmem_max)) − 15`, 0–14.
    pub wscale: u8,
}

/// The receive-window state of one Linux receiver (`struct tcp_sock`'s `rcv_wnd`,
/// `rcv_ssthresh`, `window_clamp`, `rcvq_space`, `rcv_rtt_est` and the socket's
/// `sk_rcvbuf`).
#[derive(Clone, Debug)]
pub struct LinuxRcvWindow {
    cfg: LinuxReceive,
    /// `tp->advmss`: the MSS option's value (payload + the 12 timestamp bytes).
    advmss: u32,
    /// `icsk_ack.rcv_mss`: the payload of a full segment.
    rcv_mss: u32,
    wscale: u8,
    /// `sk_rcvbuf`, and the window it holds (`tcp_full_space`).
    rcvbuf: u64,
    full_space: u64,
    window_clamp: u64,
    rcv_ssthresh: u64,
    /// The window last advertised, unscaled (`rcv_wnd`).
    rcv_wnd: u64,
    /// Bytes the application has read (`copied_seq`).
    copied_seq: u64,
    /// When the application last read (a slow reader's clock).
    read_at: Nanos,
    /// `rcvq_space`: bytes read in the last measurement, where it started.
    rcvq_space: u64,
    rcvq_seq: u64,
    rcvq_time: Nanos,
    /// `rcv_rtt_est.rtt_us` (× 8, µs) and the window-based measurement's mark.
    rtt_us_x8: u64,
    /// `rtt_us_x8 >> 3` in ns (0 before a sample): `tcp_rcv_space_adjust`'s period.
    // perf: kept beside the estimate so that the check on every read is a compare.
    rtt_period_ns: u64,
    rtt_seq: u64,
    /// When the window-based measurement started (`rcv_rtt_est.time`; zero: none
    /// yet, as in the kernel).
    rtt_time: Nanos,
    /// `rcv_rtt_last_tsecr` (zero at first, as in the kernel: a segment echoing
    /// nothing gives no sample).
    last_tsecr: Nanos,
}

impl LinuxRcvWindow {
    /// The state after the handshake of a connection whose sender's segments carry
    /// `mss_bytes` of payload (`tcp_select_initial_window`, then
    /// `tcp_init_buffer_space`).
    pub fn new(cfg: LinuxReceive, mss_bytes: u32) -> LinuxRcvWindow {
        let advmss = mss_bytes + 12;
        let mut rcvbuf = cfg.rmem.default_bytes as u64;
        // The handshake's window comes from tcp_rmem[1]; the 4.x buffer is raised
        // after it, when the connection is established (tcp_init_buffer_space).
        let init = initial_window(&cfg, mss_bytes, rcvbuf);
        if cfg.fixup_rcvbuf {
            // tcp_fixup_rcvbuf.
            let mut rcvmem = 2 * skb_truesize(advmss) * TCP_DEFAULT_INIT_RWND_SEGMENTS;
            if cfg.moderate_rcvbuf {
                rcvmem <<= 2;
            }
            if rcvbuf < rcvmem {
                rcvbuf = rcvmem.min(cfg.rmem.max_bytes as u64);
            }
        }
        let full_space = cfg.win_from_space(rcvbuf);
        let mut window_clamp = (u16::MAX as u64) << init.wscale;
        // tcp_init_buffer_space, with tcp_app_win 31.
        if window_clamp >= full_space {
            window_clamp = full_space;
            if full_space > 4 * advmss as u64 {
                window_clamp = (full_space - (full_space >> 31)).max(4 * advmss as u64);
            }
        }
        if window_clamp > 2 * advmss as u64 && window_clamp + advmss as u64 > full_space {
            window_clamp = (2 * advmss as u64).max(full_space.saturating_sub(advmss as u64));
        }
        let rcv_ssthresh = init.rcv_wnd_bytes.min(window_clamp);
        let rcvq_space = if cfg.fixup_rcvbuf {
            init.rcv_wnd_bytes
        } else {
            // 4.19's "tcp: start receiver buffer autotuning sooner".
            rcv_ssthresh
                .min(init.rcv_wnd_bytes)
                .min(super::TCP_INIT_CWND as u64 * advmss as u64)
        };
        LinuxRcvWindow {
            cfg,
            advmss,
            rcv_mss: mss_bytes,
            wscale: init.wscale,
            rcvbuf,
            full_space,
            window_clamp,
            rcv_ssthresh,
            rcv_wnd: init.rcv_wnd_bytes,
            copied_seq: 0,
            read_at: Nanos::ZERO,
            rcvq_space,
            rcvq_seq: 0,
            rcvq_time: Nanos::ZERO,
            rtt_us_x8: 0,
            rtt_period_ns: 0,
            rtt_seq: 0,
            rtt_time: Nanos::ZERO,
            last_tsecr: Nanos::ZERO,
        }
    }

    /// The window scale chosen at the handshake.
    pub fn wscale(&self) -> u8 {
        self.wscale
    }

    /// `sk_rcvbuf`.
    pub fn rcvbuf_bytes(&self) -> u64 {
        self.rcvbuf
    }

    /// `window_clamp`.
    pub fn window_clamp_bytes(&self) -> u64 {
        self.window_clamp
    }

    /// `rcv_ssthresh`.
    pub fn rcv_ssthresh_bytes(&self) -> u64 {
        self.rcv_ssthresh
    }

    /// The receiver's RTT estimate (`rcv_rtt_est.rtt_us`), once it has one.
    pub fn rcv_rtt(&self) -> Option<Nanos> {
        (self.rtt_us_x8 > 0).then(|| Nanos::from_us(self.rtt_us_x8 >> 3))
    }

    /// `tcp_rcv_rtt_update`: a new sample of `sample_us`; `win_dep` samples (the
    /// window-based ones) only ever lower the estimate, timestamp ones move it by ⅛.
    fn rtt_update(&mut self, sample_us: u64, win_dep: bool) {
        let m = sample_us << 3;
        let old = self.rtt_us_x8;
        if old == 0 || m < old {
            self.rtt_us_x8 = m;
        } else if !win_dep {
            self.rtt_us_x8 = old - (old >> 3) + sample_us;
        }
        self.rtt_period_ns = (self.rtt_us_x8 >> 3) * 1000;
    }

    /// A data segment of `len` bytes with TSecr `ts_ecr` arrived in order at `now`,
    /// `rcv_nxt` now being `rcv_nxt` (`tcp_rcv_rtt_measure_ts` before the segment is
    /// queued; `tcp_rcv_rtt_measure` and `tcp_grow_window` in
    /// `tcp_event_data_recv`). `held_bytes`: in-order bytes not yet read plus
    /// out-of-order bytes held.
    #[inline]
    pub fn on_data(&mut self, now: Nanos, len: u32, ts_ecr: Nanos, rcv_nxt: u64, held_bytes: u64) {
        // tcp_rcv_rtt_measure_ts: the timestamp clock ticks in ms (TCP_TS_HZ).
        if self.last_tsecr != ts_ecr {
            self.last_tsecr = ts_ecr;
            if len >= self.rcv_mss {
                let delta_ms = (now.as_ns() / 1_000_000).saturating_sub(ts_ecr.as_ns() / 1_000_000);
                if delta_ms > 0 {
                    self.rtt_update(delta_ms * 1000, false);
                }
            }
        }
        // tcp_rcv_rtt_measure: the time to receive one window's worth.
        if rcv_nxt >= self.rtt_seq {
            if self.rtt_time != Nanos::ZERO {
                let us = (now.saturating_sub(self.rtt_time).as_ns() / 1000).max(1);
                self.rtt_update(us, true);
            }
            self.rtt_seq = rcv_nxt + self.rcv_wnd;
            self.rtt_time = now;
        }
        // tcp_grow_window (segments of 128 bytes or more).
        // perf: once rcv_ssthresh has reached the clamp (most segments) there is no
        // room whatever the free space, so that is not computed.
        if len >= 128 && self.rcv_ssthresh < self.window_clamp {
            let room = self
                .window_clamp
                .min(self.free_space(held_bytes))
                .saturating_sub(self.rcv_ssthresh);
            if room > 0 {
                let incr = (2 * self.advmss as u64).max(2 * len as u64);
                self.rcv_ssthresh += room.min(incr);
            }
        }
    }

    /// `tcp_space`: the window the free part of the buffer holds. Each byte held
    /// takes as much buffer as the window counts for it (`tcp_win_from_space`'s
    /// share), so the free window is the buffer's window less the bytes held.
    #[inline]
    fn free_space(&self, held_bytes: u64) -> u64 {
        self.full_space.saturating_sub(held_bytes)
    }

    /// Nothing was left to read until `now`: a slow reader's time starts again (it
    /// banks no reading while idle).
    pub fn reader_idle_until(&mut self, now: Nanos) {
        self.read_at = now;
    }

    /// The application reads at `now` what it can of the in-order bytes up to
    /// `rcv_nxt`, then `tcp_rcv_space_adjust` runs (it runs on every read). Returns
    /// the bytes read.
    #[inline]
    pub fn read(&mut self, now: Nanos, rcv_nxt: u64) -> u64 {
        if self.cfg.read_rate_bytes_per_s.is_none() {
            // perf: the common reader, which takes everything at once.
            let n = rcv_nxt - self.copied_seq;
            if n > 0 {
                self.copied_seq = rcv_nxt;
                self.read_at = now;
                self.rcv_space_adjust(now, rcv_nxt);
            }
            return n;
        }
        let can = match self.cfg.read_rate_bytes_per_s {
            None => u64::MAX,
            Some(rate) => {
                let dt = now.saturating_sub(self.read_at).as_ns() as u128;
                (dt * rate as u128 / 1_000_000_000).min(u64::MAX as u128) as u64
            }
        };
        let n = rcv_nxt.saturating_sub(self.copied_seq).min(can);
        if n == 0 {
            return 0;
        }
        self.copied_seq += n;
        self.read_at = match self.cfg.read_rate_bytes_per_s {
            // Keep the fraction of a byte's time the read did not use.
            Some(rate) if self.copied_seq < rcv_nxt => {
                self.read_at + Nanos((n as u128 * 1_000_000_000 / rate as u128) as u64)
            }
            _ => now,
        };
        self.rcv_space_adjust(now, rcv_nxt);
        n
    }

    /// `tcp_rcv_space_adjust`: at most once per receiver RTT, grow the buffer (and the
    /// window clamp with it) for twice what was read in that RTT, plus the growth.
    #[inline]
    fn rcv_space_adjust(&mut self, now: Nanos, rcv_nxt: u64) {
        // ⌊Δ / 1 µs⌋ < rtt_us ⇔ Δ < rtt_us × 1000 ns.
        if self.rtt_period_ns == 0
            || now.saturating_sub(self.rcvq_time).as_ns() < self.rtt_period_ns
        {
            return;
        }
        self.grow_rcvbuf(now, rcv_nxt);
    }

    /// The rest of `tcp_rcv_space_adjust`, once an RTT has passed.
    fn grow_rcvbuf(&mut self, now: Nanos, rcv_nxt: u64) {
        let mut copied = self.copied_seq - self.rcvq_seq;
        if self.cfg.copied_excludes_queued {
            copied = copied.saturating_sub(rcv_nxt - self.copied_seq);
        }
        if copied > self.rcvq_space {
            if self.cfg.moderate_rcvbuf {
                let advmss = self.advmss as u64;
                let space = self.rcvq_space.max(1);
                let mut rcvwin = 2 * copied + 16 * advmss;
                match self.cfg.autotune {
                    AutotuneRule::Stepped => {
                        if copied >= space + (space >> 2) {
                            if copied >= space + (space >> 1) {
                                rcvwin <<= 1;
                            } else {
                                rcvwin += rcvwin >> 1;
                            }
                        }
                    }
                    AutotuneRule::Proportional => {
                        let grow = rcvwin * (copied - space) / space;
                        rcvwin += grow << 1;
                    }
                }
                let rcvbuf = self
                    .cfg
                    .space_for_win(rcvwin, self.advmss)
                    .min(self.cfg.rmem.max_bytes as u64);
                if rcvbuf > self.rcvbuf {
                    self.rcvbuf = rcvbuf;
                    self.full_space = self.cfg.win_from_space(rcvbuf);
                    // The clamp follows: the window asked for with the steps (4.9's
                    // `tp->window_clamp = rcvwin`), the buffer's window after it.
                    self.window_clamp = match self.cfg.autotune {
                        AutotuneRule::Stepped => rcvwin,
                        AutotuneRule::Proportional => self.full_space,
                    };
                }
            }
            self.rcvq_space = copied;
        }
        self.rcvq_seq = self.copied_seq;
        self.rcvq_time = now;
    }

    /// Bytes the application has read.
    pub fn copied_seq(&self) -> u64 {
        self.copied_seq
    }

    /// The window an ACK sent now advertises, in bytes as the sender reads it (the
    /// field shifted back by the scale), and the new `rcv_wnd`
    /// (`tcp_select_window` over `__tcp_select_window`, shrinking not allowed).
    /// `cur_win_bytes`: what the last advertisement still allows beyond `rcv_nxt`
    /// (`tcp_receive_window`).
    #[inline]
    pub fn select_window(&mut self, cur_win_bytes: u64, held_bytes: u64) -> u64 {
        let mut new_win = self.raw_select_window(held_bytes);
        if new_win < cur_win_bytes {
            // Never shrink the offered window.
            new_win = align_up(cur_win_bytes, self.wscale);
        }
        self.rcv_wnd = new_win;
        let on_wire = new_win.min((u16::MAX as u64) << self.wscale) >> self.wscale;
        on_wire << self.wscale
    }

    /// `__tcp_select_window` (the branch of `tcp_shrink_window` = 0).
    #[inline]
    fn raw_select_window(&self, held_bytes: u64) -> u64 {
        let allowed = self.full_space;
        let mut free = self.free_space(held_bytes);
        let full = self.window_clamp.min(allowed);
        let mut mss = self.rcv_mss as u64;
        if mss > full {
            mss = full;
            if mss == 0 {
                return 0;
            }
        }
        if free < full >> 1 {
            free &= !((1u64 << self.wscale) - 1);
            if free < allowed >> 4 || free < mss {
                return 0;
            }
        }
        free = free.min(self.rcv_ssthresh);
        align_up(free, self.wscale)
    }

    /// `rcv_wnd`: the window last advertised.
    pub fn rcv_wnd_bytes(&self) -> u64 {
        self.rcv_wnd
    }

    /// `__tcp_cleanup_rbuf`'s window-update test after a read: the window that could
    /// be advertised now is at least twice what the last advertisement still allows
    /// (and that is at most half the clamp).
    pub fn window_update_due(&self, cur_win_bytes: u64, held_bytes: u64) -> bool {
        if 2 * cur_win_bytes > self.window_clamp {
            return false;
        }
        let w = self.raw_select_window(held_bytes);
        w > 0 && w >= 2 * cur_win_bytes
    }

    /// The application reads at a limited rate.
    pub fn slow_reader(&self) -> bool {
        self.cfg.read_rate_bytes_per_s.is_some()
    }

    /// When a slow reader will next have read `bytes` more (`None`: it reads at once).
    pub fn read_due(&self, bytes: u64) -> Option<Nanos> {
        let rate = self.cfg.read_rate_bytes_per_s?;
        let ns = (bytes as u128 * 1_000_000_000).div_ceil(rate.max(1) as u128);
        Some(self.read_at + Nanos(ns.min(u64::MAX as u128) as u64))
    }

    /// The segment payload this receiver expects (`rcv_mss`).
    pub fn rcv_mss(&self) -> u32 {
        self.rcv_mss
    }
}

/// `tcp_select_initial_window` for a buffer of `rcvbuf_bytes` (its window,
/// `tcp_full_space`) and segments of `mss_bytes` (the MSS less the timestamp option):
/// the window rounded down to whole segments (capped at 20 of them up to 4.19), and
/// the scale for the largest buffer the socket may grow to.
pub fn initial_window(cfg: &LinuxReceive, mss_bytes: u32, rcvbuf_bytes: u64) -> InitialWindow {
    let mss = mss_bytes as u64;
    let window_clamp = (u16::MAX as u64) << TCP_MAX_WSCALE;
    let mut space = cfg.win_from_space(rcvbuf_bytes).min(window_clamp);
    if space > mss {
        space = space / mss * mss;
    }
    let mut rcv_wnd = space;
    let big = space
        .max(cfg.rmem.max_bytes as u64)
        .max(cfg.rmem_max_bytes as u64)
        .min(window_clamp)
        .max(1);
    let wscale = (big.ilog2() as i64 - 15).clamp(0, TCP_MAX_WSCALE as i64) as u8;
    if cfg.fixup_rcvbuf && mss > 1u64 << wscale {
        let segments = if mss > 1460 {
            (1460 * TCP_DEFAULT_INIT_RWND_SEGMENTS / mss).max(2)
        } else {
            TCP_DEFAULT_INIT_RWND_SEGMENTS
        };
        rcv_wnd = rcv_wnd.min(segments * mss);
    }
    InitialWindow {
        rcv_wnd_bytes: rcv_wnd,
        wscale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    /// 6.12 at the handshake, by hand from `tcp_select_initial_window` and
    /// `tcp_init_buffer_space`: the buffer is `tcp_rmem[1]` = 131072, half of it window
    /// (65536), rounded down to whole segments 45 × 1448 = 65160; the scale for
    /// `tcp_rmem[2]` = 6 MiB = 2^22.58 is 22 − 15 = 7; the clamp 65536 less one advmss
    /// (1460, `tcp_app_win`'s reserve) = 64076, which also caps `rcv_ssthresh`; the
    /// first measurement's base is min(64076, 65160, 10 × 1460) = 14600.
    #[test]
    fn linux_6_12_initial_window_by_hand() {
        let w = LinuxRcvWindow::new(LinuxReceive::linux_6_12(), MSS);
        assert_eq!(w.wscale(), 7);
        assert_eq!(w.rcvbuf_bytes(), 131_072);
        assert_eq!(w.rcv_wnd_bytes(), 65_160);
        assert_eq!(w.window_clamp_bytes(), 64_076);
        assert_eq!(w.rcv_ssthresh_bytes(), 64_076);
        assert_eq!(w.rcvq_space, 14_600);
        let i = initial_window(&LinuxReceive::linux_6_12(), MSS, 131_072);
        assert_eq!((i.rcv_wnd_bytes, i.wscale), (65_160, 7));
    }

    /// 4.9: the SYN offers `tcp_default_init_rwnd` = 20 segments = 28960 (of the
    /// 43690 that 87380 holds), then `tcp_fixup_rcvbuf` raises the buffer to
    /// 4 × 2 × 20 × SKB_TRUESIZE(1460 + 304) = 4 × 2 × 20 × 2340 = 374400, whose
    /// window 187200 less 1460 is the clamp.
    #[test]
    fn linux_4_9_initial_window_by_hand() {
        let w = LinuxRcvWindow::new(LinuxReceive::linux_4_9(), MSS);
        assert_eq!(w.wscale(), 7);
        assert_eq!(w.rcv_wnd_bytes(), 28_960);
        assert_eq!(w.rcvbuf_bytes(), 374_400);
        assert_eq!(w.window_clamp_bytes(), 185_740);
        assert_eq!(w.rcv_ssthresh_bytes(), 28_960);
        assert_eq!(w.rcvq_space, 28_960);
        // tcp_grow_window: each in-order full segment raises rcv_ssthresh by
        // max(2 × advmss, 2 × len) = 2920 while there is room under the clamp.
        let mut w = w;
        w.on_data(ms(1), MSS, Nanos::ZERO, MSS as u64, 0);
        assert_eq!(w.rcv_ssthresh_bytes(), 28_960 + 2_920);
        for i in 2..=60u64 {
            w.on_data(ms(1), MSS, Nanos::ZERO, i * MSS as u64, 0);
        }
        assert_eq!(w.rcv_ssthresh_bytes(), 185_740, "stops at the clamp");
    }

    /// The window each ACK offers: min(free space, rcv_ssthresh) rounded up to the
    /// scale's unit (128 B), never less than what the last one still allows; held
    /// bytes take twice their size of buffer (`tcp_space`), and a window under 1/16 of
    /// the buffer's is offered as zero.
    #[test]
    fn advertised_window_by_hand() {
        let mut w = LinuxRcvWindow::new(LinuxReceive::linux_6_12(), MSS);
        // 64076 → 501 × 128 = 64128.
        assert_eq!(w.select_window(0, 0), 64_128);
        // The last offer still allows 64120 beyond rcv_nxt: kept (rounded up).
        assert_eq!(w.select_window(64_120, 0), 64_128);
        // 40000 bytes unread: free = (131072 − 80000) / 2 = 25536 < 64076 / 2:
        // rounded down to 128 → 25472, below rcv_ssthresh.
        assert_eq!(w.select_window(0, 40_000), 25_472);
        // 62000 unread: free = 3536 < 65536 / 16 = 4096 → zero window.
        assert_eq!(w.select_window(0, 62_000), 0);
    }

    /// `tcp_rcv_space_adjust` after one receiver RTT (50 ms, from the echoed
    /// timestamp) in which 20 segments (28960 B) were read, against 14600 before:
    /// rcvwin = 2 × 28960 + 16 × 1460 = 81280, plus twice ⌊81280 × 14360 / 14600⌋ =
    /// 79943 → 241166; the 6.12 buffer is 241166 × 256 / 128 = 482332, the clamp half
    /// of it. In 4.9's steps, 57920 read against 28960 (≥ 1.5 ×) doubles rcvwin
    /// (2 × 57920 + 23360 = 139200 → 278400), sizes the buffer as 278400 / 1460 =
    /// 190 segments of 2980 B (2340 raised by 128 until half of it holds 1460) and
    /// clamps the window at 278400.
    #[test]
    fn autotuning_growth_per_rtt_by_hand() {
        let mut w = LinuxRcvWindow::new(LinuxReceive::linux_6_12(), MSS);
        for i in 1..=20u64 {
            w.on_data(ms(100), MSS, ms(50), i * MSS as u64, 0);
        }
        assert_eq!(w.rcv_rtt(), Some(ms(50)));
        assert_eq!(w.read(ms(100), 20 * MSS as u64), 28_960);
        assert_eq!(w.rcvbuf_bytes(), 482_332);
        assert_eq!(w.window_clamp_bytes(), 241_166);
        assert_eq!(w.rcvq_space, 28_960);
        // Within the next RTT nothing moves, however much is read.
        w.on_data(ms(110), MSS, ms(50), 30 * MSS as u64, 0);
        w.read(ms(110), 30 * MSS as u64);
        assert_eq!(w.rcvbuf_bytes(), 482_332);

        let mut w = LinuxRcvWindow::new(LinuxReceive::linux_4_9(), MSS);
        for i in 1..=40u64 {
            w.on_data(ms(100), MSS, ms(50), i * MSS as u64, 0);
        }
        w.read(ms(100), 40 * MSS as u64);
        assert_eq!(w.rcvbuf_bytes(), 190 * 2_980);
        assert_eq!(w.window_clamp_bytes(), 278_400);
    }

    /// A slow reader reads `rate × time`, banks nothing while idle, and its read that
    /// opens the window at least twofold is reported for a window update.
    #[test]
    fn slow_reader_reads_at_its_rate() {
        let cfg = LinuxReceive {
            read_rate_bytes_per_s: Some(1_000_000),
            ..LinuxReceive::linux_6_12()
        };
        let mut w = LinuxRcvWindow::new(cfg, MSS);
        w.reader_idle_until(ms(10));
        assert_eq!(w.read(ms(10), 60_000), 0);
        assert_eq!(w.read(ms(20), 60_000), 10_000);
        assert_eq!(w.read_due(MSS as u64), Some(ms(20) + Nanos::from_us(1448)));
        assert_eq!(w.read(ms(50), 60_000), 30_000);
        // 20000 left unread: free = (131072 − 40000) / 2 = 45536, offered up to
        // rcv_ssthresh; twice a remaining window of 10000 → update due.
        assert!(w.window_update_due(10_000, 20_000));
        assert!(!w.window_update_due(40_000, 20_000));
    }
}
