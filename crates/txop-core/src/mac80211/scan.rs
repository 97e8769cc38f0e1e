//! mac80211 software scanning while associated (`net/mac80211/scan.c`, `offchannel.c`;
//! reference §7), as a sans-I/O state machine for one station.
//!
//! The scanner walks the states DECISION → SET_CHANNEL → (SEND_PROBE) → DECISION …,
//! with SUSPEND (back on the operating channel for 200 ms) → RESUME between off-channel
//! excursions, and ABORT for low-priority scans with traffic pending (§7.2). Two
//! decision rules (§7.3, §7.4):
//!
//! - [`ScanPolicy::Legacy`] (before Linux 3.9): off channel until the listen interval
//!   (`listen_interval` × beacon interval) or the PM QoS network latency (2000 s by
//!   default) would be exceeded, or TX is pending; passive dwell HZ/8 = 125 ms. The AP
//!   is told with a null-data frame PM=1 when the scan starts and PM=0 when it ends,
//!   but not on every excursion ("Leave PS in off-channel state … will put that back
//!   on-channel at the end of scanning", 3.4 `scan.c`).
//! - [`ScanPolicy::Bounded`] (commit 3f892b61a8cf, 3.9, and the ≥5.x null-data frames):
//!   at most HZ/8 = 125 ms off channel per excursion, passive dwell HZ/9 = 111 ms,
//!   suspend (or abort, for a low-priority request) when TX is pending; PM=1 before
//!   every excursion and PM=0 after every return (§7.4: the per-excursion frames came
//!   with ≥5.x; their exact version is unknown).
//!
//! Times are the reference's milliseconds at HZ=1000. The caller (the cell) carries out
//! the [`ScanAction`]s — sending null-data frames, taking the radio off and back onto
//! the operating channel — and reports when a null-data frame has completed
//! ([`Scanner::null_done`]): like `ieee80211_offchannel_stop_vifs` + `drv_flush`, the
//! scanner waits for a PM=1 frame to leave before it tunes away.

use crate::Nanos;
use std::collections::VecDeque;

/// `IEEE80211_PROBE_DELAY` = HZ/33: wait on an active channel before the probe request.
pub const PROBE_DELAY: Nanos = Nanos::from_ms(30);
/// `IEEE80211_CHANNEL_TIME` = HZ/33: listen for probe responses after the probe.
pub const CHANNEL_TIME: Nanos = Nanos::from_ms(30);
/// `IEEE80211_PASSIVE_CHANNEL_TIME` before the 2013 patch: HZ/8.
pub const PASSIVE_CHANNEL_TIME_LEGACY: Nanos = Nanos::from_ms(125);
/// `IEEE80211_PASSIVE_CHANNEL_TIME` after the 2013 patch: HZ/9 (111 jiffies at HZ=1000).
pub const PASSIVE_CHANNEL_TIME_BOUNDED: Nanos = Nanos::from_ms(111);
/// The post-2013 off-channel bound per excursion: `leave_oper_channel_time + HZ/8`.
pub const OFF_CHANNEL_BOUND: Nanos = Nanos::from_ms(125);
/// SUSPEND stays on the operating channel for HZ/5 before RESUME.
pub const SUSPEND_STAY: Nanos = Nanos::from_ms(200);
/// RESUME waits HZ/10 when the driver has no `flush` operation (0 with `flush`).
pub const RESUME_WAIT_WITHOUT_FLUSH: Nanos = Nanos::from_ms(100);
/// `PM_QOS_NETWORK_LATENCY` default: 2000 s, so the legacy latency test never fires.
pub const PM_QOS_NETWORK_LATENCY_DEFAULT: Nanos = Nanos::from_secs(2000);
/// ath9k's `hw->channel_change_time` (5000 µs): the radio is deaf while it retunes.
pub const ATH9K_CHANNEL_SWITCH: Nanos = Nanos::from_ms(5);
/// ath9k's `max_listen_interval` (§7.3): 10 beacon intervals.
pub const ATH9K_LISTEN_INTERVAL: u16 = 10;

/// Which DECISION rule the station's kernel has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanPolicy {
    /// Before the 2013 patch (e.g. 3.4, §7.3).
    Legacy,
    /// After it (§7.4), with the ≥5.x per-excursion null-data frames.
    Bounded,
}

impl ScanPolicy {
    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            ScanPolicy::Legacy => "legacy",
            ScanPolicy::Bounded => "bounded",
        }
    }

    /// The dwell on a passive (no-IR/DFS) channel.
    pub fn passive_channel_time(self) -> Nanos {
        match self {
            ScanPolicy::Legacy => PASSIVE_CHANNEL_TIME_LEGACY,
            ScanPolicy::Bounded => PASSIVE_CHANNEL_TIME_BOUNDED,
        }
    }

    /// Whether the AP is told about every excursion (PM=1 before, PM=0 after), or only
    /// about the scan as a whole.
    pub fn null_data_per_excursion(self) -> bool {
        self == ScanPolicy::Bounded
    }
}

/// One channel to scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanChannel {
    /// IEEE channel number.
    pub number: u16,
    /// No-IR/radar channel: listen for beacons only (passive dwell), no probe request.
    pub passive: bool,
}

/// The bands a scan covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanBands {
    /// 2.4 GHz only.
    Ghz2_4,
    /// 5 GHz only.
    Ghz5,
    /// 2.4 GHz, then 5 GHz.
    Both,
}

/// 2.4 GHz: channels 1–13 (ETSI/world), all active.
pub fn channels_2ghz() -> Vec<ScanChannel> {
    (1..=13)
        .map(|number| ScanChannel {
            number,
            passive: false,
        })
        .collect()
}

/// 5 GHz, 24 channels as in E1 (a US-like regulatory domain): 36–48 and 149–165
/// active; the DFS channels 52–64 and 100–140 passive.
pub fn channels_5ghz() -> Vec<ScanChannel> {
    let unii1 = [36u16, 40, 44, 48];
    let dfs = [
        52u16, 56, 60, 64, 100, 104, 108, 112, 116, 120, 124, 128, 132, 136, 140,
    ];
    let unii3 = [149u16, 153, 157, 161, 165];
    let active = |number| ScanChannel {
        number,
        passive: false,
    };
    unii1
        .into_iter()
        .map(active)
        .chain(dfs.into_iter().map(|number| ScanChannel {
            number,
            passive: true,
        }))
        .chain(unii3.into_iter().map(active))
        .collect()
}

impl ScanBands {
    /// The channel list, 2.4 GHz first (the order of `wiphy->bands`).
    pub fn channels(self) -> Vec<ScanChannel> {
        match self {
            ScanBands::Ghz2_4 => channels_2ghz(),
            ScanBands::Ghz5 => channels_5ghz(),
            ScanBands::Both => {
                let mut c = channels_2ghz();
                c.extend(channels_5ghz());
                c
            }
        }
    }

    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            ScanBands::Ghz2_4 => "2.4",
            ScanBands::Ghz5 => "5",
            ScanBands::Both => "both",
        }
    }
}

/// A station's background scanning: what its kernel does and how often user space asks
/// (`while true; do iw dev wlan0 scan; sleep 3; done` in seed 000).
#[derive(Clone, Debug, PartialEq)]
pub struct ScanConfig {
    /// Which kernel's rules decide when to leave and return.
    pub policy: ScanPolicy,
    /// The bands scanned.
    pub bands: ScanBands,
    /// When the first scan is requested.
    pub start: Nanos,
    /// Pause between the end of one scan and the next request; `None`: scan once.
    pub pause: Option<Nanos>,
    /// Time the radio is deaf while it retunes (ath9k: 5 ms).
    pub channel_switch: Nanos,
    /// `hw.conf.listen_interval` in beacon intervals (legacy rule; ath9k 10).
    pub listen_interval: u16,
    /// `PM_QOS_NETWORK_LATENCY` (legacy rule; 2000 s).
    pub network_latency: Nanos,
    /// `NL80211_SCAN_FLAG_LOW_PRIORITY`: abort instead of suspending when TX is pending
    /// (bounded rule only; the 3.4 code had no abort path).
    pub low_priority: bool,
    /// The driver has a `flush` operation (ath9k does): RESUME does not wait HZ/10.
    pub driver_flush: bool,
    /// While on the operating channel during a scan, answer a beacon whose TIM shows
    /// buffered frames with a null-data PM=0 (mac80211's beacon handler does this when
    /// dynamic power save is configured, the kernel default CONFIG_CFG80211_DEFAULT_PS).
    /// With the legacy rule this is how the AP learns the station is back during the
    /// on-channel stays; without it, frames wait for the station's next data frame or
    /// the end of the scan.
    pub answer_tim: bool,
}

impl ScanConfig {
    /// A periodic scan of `bands` with ath9k-class defaults: 5 ms channel switch,
    /// listen interval 10, PM QoS 2000 s, a driver with `flush`, normal priority.
    pub fn periodic(policy: ScanPolicy, bands: ScanBands, start: Nanos, pause: Nanos) -> Self {
        ScanConfig {
            policy,
            bands,
            start,
            pause: Some(pause),
            channel_switch: ATH9K_CHANNEL_SWITCH,
            listen_interval: ATH9K_LISTEN_INTERVAL,
            network_latency: PM_QOS_NETWORK_LATENCY_DEFAULT,
            low_priority: false,
            driver_flush: true,
            answer_tim: true,
        }
    }

    /// The one-line error naming the bad `scan` key, if any.
    pub fn validate(&self) -> Result<(), String> {
        if self.listen_interval == 0 {
            return Err("scan.listen_interval: must be at least 1".into());
        }
        if self.pause == Some(Nanos::ZERO) {
            return Err("scan.pause: must be positive (back-to-back scans never end)".into());
        }
        if self.channel_switch > Nanos::from_ms(100) {
            return Err("scan.channel_switch: at most 100 ms".into());
        }
        Ok(())
    }
}

/// What the station must do for the scanner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanAction {
    /// Send a null-data frame with this PM bit; report its completion with
    /// [`Scanner::null_done`] when `wait` (the scanner does not go on before).
    SendNullData {
        /// PM=1: leaving; PM=0: back.
        pm: bool,
        /// Report the frame's completion before the scanner goes on.
        wait: bool,
    },
    /// The radio leaves the operating channel: it neither sends nor receives there.
    LeaveChannel,
    /// The radio is back on the operating channel.
    ReturnChannel,
}

/// Counters of one station's scans.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ScanStats {
    /// Scans requested and started.
    pub scans_started: u32,
    /// Scans that went through every channel.
    pub scans_completed: u32,
    /// Low-priority scans given up because of pending TX.
    pub scans_aborted: u32,
    /// Total time of finished scans: from the request until back on channel at the end.
    pub scan_time_ns: u64,
    /// Duration of the last finished scan.
    pub last_scan_ns: u64,
    /// Time the radio spent away from the operating channel (switching included).
    pub off_channel_ns: u64,
    /// Off-channel excursions.
    pub excursions: u32,
    /// Longest single excursion.
    pub max_excursion_ns: u64,
    /// Channels visited (probed or listened to).
    pub channels_scanned: u32,
}

impl ScanStats {
    /// Scans that ended (completed or aborted).
    pub fn scans_finished(&self) -> u32 {
        self.scans_completed + self.scans_aborted
    }

    /// Mean duration of a finished scan.
    pub fn mean_scan_time(&self) -> Option<Nanos> {
        let n = self.scans_finished() as u64;
        (n > 0).then(|| Nanos(self.scan_time_ns / n))
    }
}

/// The scan states of `scan.c` (§7.1) plus the two points where the model waits for
/// the radio: after retuning back, and at the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanState {
    /// `SCAN_DECISION`: go to the next channel, return to the operating channel, or
    /// finish.
    Decision,
    /// `SCAN_SET_CHANNEL`: retune to the next channel.
    SetChannel,
    /// `SCAN_SEND_PROBE`: send the probe request on an active channel.
    SendProbe,
    /// `SCAN_SUSPEND`: go back to the operating channel for a while.
    Suspend,
    /// `SCAN_RESUME`: leave the operating channel again.
    Resume,
    /// `SCAN_ABORT`: a low-priority scan gives up for pending TX.
    Abort,
    /// Retuned to the operating channel on SUSPEND; the 200 ms stay starts.
    SuspendReturned,
    /// Retuned to the operating channel at the end of the scan.
    Finished,
}

/// What happens once a waited-for null-data frame has completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AfterNull {
    /// Scan start: run DECISION.
    Start,
    /// RESUME: go on to SET_CHANNEL (after HZ/10 without `flush`).
    Resume,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No scan running; the next one is requested at `next` (if any).
    Idle { next: Option<Nanos> },
    /// A step of the state machine is due.
    Step { at: Nanos, state: ScanState },
    /// Waiting for a null-data frame to complete.
    AwaitNull(AfterNull),
}

/// One station's software scanner.
#[derive(Clone, Debug)]
pub struct Scanner {
    cfg: ScanConfig,
    channels: Vec<ScanChannel>,
    beacon_interval: Nanos,
    phase: Phase,
    channel_idx: usize,
    /// `leave_oper_channel_time`.
    leave_time: Nanos,
    /// The radio is off the operating channel since this time.
    off_since: Option<Nanos>,
    scan_started: Nanos,
    aborted: bool,
    actions: VecDeque<ScanAction>,
    stats: ScanStats,
}

impl Scanner {
    /// A scanner for a BSS with `beacon_interval` (the legacy listen-interval bound).
    pub fn new(cfg: ScanConfig, beacon_interval: Nanos) -> Scanner {
        let channels = cfg.bands.channels();
        Scanner {
            phase: Phase::Idle {
                next: Some(cfg.start),
            },
            cfg,
            channels,
            beacon_interval,
            channel_idx: 0,
            leave_time: Nanos::ZERO,
            off_since: None,
            scan_started: Nanos::ZERO,
            aborted: false,
            actions: VecDeque::new(),
            stats: ScanStats::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &ScanConfig {
        &self.cfg
    }

    /// The counters so far.
    pub fn stats(&self) -> &ScanStats {
        &self.stats
    }

    /// A scan is in progress (requested and not yet back on channel at its end).
    pub fn scanning(&self) -> bool {
        !matches!(self.phase, Phase::Idle { .. })
    }

    /// The radio is on the operating channel.
    pub fn on_channel(&self) -> bool {
        self.off_since.is_none()
    }

    /// When [`Scanner::handle_timeout`] must run next (`None` while waiting for a
    /// null-data frame, or when no scan is left).
    pub fn poll_timeout(&self) -> Option<Nanos> {
        match self.phase {
            Phase::Idle { next } => next,
            Phase::Step { at, .. } => Some(at),
            Phase::AwaitNull(_) => None,
        }
    }

    /// The next action for the station.
    pub fn poll_action(&mut self) -> Option<ScanAction> {
        self.actions.pop_front()
    }

    /// The channel-time estimate DECISION uses (switching excluded, a source TODO).
    fn channel_time(&self, ch: ScanChannel) -> Nanos {
        if ch.passive {
            self.cfg.policy.passive_channel_time()
        } else {
            PROBE_DELAY + CHANNEL_TIME
        }
    }

    /// Run every step due at or before `now`. `tx_pending`: the station's netdev queues
    /// hold packets (`!qdisc_all_tx_empty`), read by DECISION.
    pub fn handle_timeout(&mut self, now: Nanos, tx_pending: bool) {
        loop {
            match self.phase {
                Phase::Idle { next: Some(at) } if at <= now => self.start_scan(now),
                Phase::Step { at, state } if at <= now => self.step(at, state, tx_pending),
                _ => return,
            }
        }
    }

    /// The null-data frame the scanner waited for has completed (acknowledged or given
    /// up; mac80211 goes on either way).
    pub fn null_done(&mut self, now: Nanos) {
        let Phase::AwaitNull(after) = self.phase else {
            return;
        };
        match after {
            AfterNull::Start => {
                self.leave_time = now;
                self.phase = Phase::Step {
                    at: now,
                    state: ScanState::Decision,
                };
            }
            AfterNull::Resume => self.resume_flushed(now),
        }
    }

    /// `ieee80211_start_sw_scan`: PM=1 so the AP buffers (both policies, §7.2), flush,
    /// then DECISION at once.
    fn start_scan(&mut self, now: Nanos) {
        self.stats.scans_started += 1;
        self.scan_started = now;
        self.channel_idx = 0;
        self.aborted = false;
        self.actions.push_back(ScanAction::SendNullData {
            pm: true,
            wait: true,
        });
        self.phase = Phase::AwaitNull(AfterNull::Start);
    }

    fn step(&mut self, now: Nanos, state: ScanState, tx_pending: bool) {
        match state {
            ScanState::Decision => self.decision(now, tx_pending),
            ScanState::SetChannel => self.set_channel(now),
            ScanState::SendProbe => {
                // The probe request goes out on the scanned channel, not on the BSS's.
                self.phase = Phase::Step {
                    at: now + CHANNEL_TIME,
                    state: ScanState::Decision,
                };
            }
            ScanState::Suspend => {
                let back = self.retune_back(now);
                self.phase = Phase::Step {
                    at: back,
                    state: ScanState::SuspendReturned,
                };
            }
            ScanState::SuspendReturned => {
                self.returned(now);
                if self.cfg.policy.null_data_per_excursion() {
                    // `ieee80211_offchannel_return`: tell the AP we are back.
                    self.actions.push_back(ScanAction::SendNullData {
                        pm: false,
                        wait: false,
                    });
                }
                self.phase = Phase::Step {
                    at: now + SUSPEND_STAY,
                    state: ScanState::Resume,
                };
            }
            ScanState::Resume => {
                if self.cfg.policy.null_data_per_excursion() {
                    self.actions.push_back(ScanAction::SendNullData {
                        pm: true,
                        wait: true,
                    });
                    self.phase = Phase::AwaitNull(AfterNull::Resume);
                } else {
                    // 3.4: "PS already is in off-channel mode".
                    self.resume_flushed(now);
                }
            }
            ScanState::Abort => {
                self.aborted = true;
                self.finish(now);
            }
            ScanState::Finished => {
                self.returned(now);
                // `ieee80211_offchannel_return(local, true)` at completion: PM=0.
                self.actions.push_back(ScanAction::SendNullData {
                    pm: false,
                    wait: false,
                });
                let dur = (now - self.scan_started).as_ns();
                self.stats.scan_time_ns += dur;
                self.stats.last_scan_ns = dur;
                if self.aborted {
                    self.stats.scans_aborted += 1;
                } else {
                    self.stats.scans_completed += 1;
                }
                self.phase = Phase::Idle {
                    next: self.cfg.pause.map(|p| now + p),
                };
            }
        }
    }

    /// DECISION (§7.3 legacy, §7.4 bounded); the station is always associated here.
    fn decision(&mut self, now: Nanos, tx_pending: bool) {
        let Some(&next) = self.channels.get(self.channel_idx) else {
            self.finish(now);
            return;
        };
        let next_end = now + self.channel_time(next);
        let state = match self.cfg.policy {
            ScanPolicy::Legacy => {
                let bad_latency = next_end > self.leave_time + self.cfg.network_latency;
                let listen_exceeded = next_end
                    > self.leave_time + self.beacon_interval * self.cfg.listen_interval as u64;
                if tx_pending || bad_latency || listen_exceeded {
                    ScanState::Suspend
                } else {
                    ScanState::SetChannel
                }
            }
            ScanPolicy::Bounded => {
                let bad_latency = next_end > self.leave_time + OFF_CHANNEL_BOUND;
                if tx_pending {
                    if self.cfg.low_priority {
                        ScanState::Abort
                    } else {
                        ScanState::Suspend
                    }
                } else if bad_latency {
                    ScanState::Suspend
                } else {
                    ScanState::SetChannel
                }
            }
        };
        self.step(now, state, tx_pending);
    }

    /// SET_CHANNEL: tune to the next channel (deaf for the switch time) and dwell.
    fn set_channel(&mut self, now: Nanos) {
        let ch = self.channels[self.channel_idx];
        self.channel_idx += 1;
        self.stats.channels_scanned += 1;
        if self.off_since.is_none() {
            self.off_since = Some(now);
            self.stats.excursions += 1;
            self.actions.push_back(ScanAction::LeaveChannel);
        }
        let tuned = now + self.cfg.channel_switch;
        self.phase = if ch.passive {
            Phase::Step {
                at: tuned + self.cfg.policy.passive_channel_time(),
                state: ScanState::Decision,
            }
        } else {
            Phase::Step {
                at: tuned + PROBE_DELAY,
                state: ScanState::SendProbe,
            }
        };
    }

    /// RESUME after its flush: `leave_oper_channel_time = now`, then SET_CHANNEL
    /// directly (after HZ/10 if the driver cannot flush).
    fn resume_flushed(&mut self, now: Nanos) {
        self.leave_time = now;
        let wait = if self.cfg.driver_flush {
            Nanos::ZERO
        } else {
            RESUME_WAIT_WITHOUT_FLUSH
        };
        self.phase = Phase::Step {
            at: now + wait,
            state: ScanState::SetChannel,
        };
    }

    /// All channels done (or aborted): retune to the operating channel and complete.
    fn finish(&mut self, now: Nanos) {
        let back = self.retune_back(now);
        self.phase = Phase::Step {
            at: back,
            state: ScanState::Finished,
        };
    }

    /// When the radio is back on the operating channel if it starts retuning at `now`.
    fn retune_back(&self, now: Nanos) -> Nanos {
        if self.off_since.is_some() {
            now + self.cfg.channel_switch
        } else {
            now
        }
    }

    /// The radio is back on the operating channel at `now`.
    fn returned(&mut self, now: Nanos) {
        if let Some(since) = self.off_since.take() {
            let d = (now - since).as_ns();
            self.stats.off_channel_ns += d;
            self.stats.max_excursion_ns = self.stats.max_excursion_ns.max(d);
            self.actions.push_back(ScanAction::ReturnChannel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 TU.
    const BI: Nanos = Nanos::from_us(102_400);

    /// Drive a scanner with an instantly acknowledged null-data frame; record every
    /// action with its time.
    fn run(
        sc: &mut Scanner,
        until: Nanos,
        tx_pending: &dyn Fn(Nanos) -> bool,
    ) -> Vec<(Nanos, ScanAction)> {
        let mut log = Vec::new();
        let mut now = Nanos::ZERO;
        loop {
            sc.handle_timeout(now, tx_pending(now));
            let mut waited = false;
            while let Some(a) = sc.poll_action() {
                log.push((now, a));
                if let ScanAction::SendNullData { wait: true, .. } = a {
                    waited = true;
                }
            }
            if waited {
                sc.null_done(now);
                continue;
            }
            match sc.poll_timeout() {
                Some(t) if t <= until => now = t,
                _ => return log,
            }
        }
    }

    fn once(policy: ScanPolicy, bands: ScanBands) -> Scanner {
        let mut cfg = ScanConfig::periodic(policy, bands, Nanos::ZERO, Nanos::from_secs(3));
        cfg.pause = None;
        Scanner::new(cfg, BI)
    }

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    fn excursions(log: &[(Nanos, ScanAction)]) -> Vec<(Nanos, Nanos)> {
        let mut out = Vec::new();
        let mut left = None;
        for &(t, a) in log {
            match a {
                ScanAction::LeaveChannel => left = Some(t),
                ScanAction::ReturnChannel => out.push((left.take().unwrap(), t)),
                _ => {}
            }
        }
        out
    }

    #[test]
    fn channel_lists_match_e1() {
        let c2 = channels_2ghz();
        assert_eq!(c2.len(), 13);
        assert!(c2.iter().all(|c| !c.passive));
        let c5 = channels_5ghz();
        assert_eq!(c5.len(), 24);
        let passive: Vec<u16> = c5.iter().filter(|c| c.passive).map(|c| c.number).collect();
        assert_eq!(passive.len(), 15);
        assert!(passive
            .iter()
            .all(|&n| (52..=64).contains(&n) || (100..=140).contains(&n)));
        assert_eq!(ScanBands::Both.channels().len(), 37);
    }

    #[test]
    fn constants_are_the_references_at_hz_1000() {
        assert_eq!(PROBE_DELAY + CHANNEL_TIME, ms(60));
        assert_eq!(ScanPolicy::Legacy.passive_channel_time(), ms(125));
        assert_eq!(ScanPolicy::Bounded.passive_channel_time(), ms(111));
        assert_eq!(OFF_CHANNEL_BOUND, ms(125));
        assert_eq!(SUSPEND_STAY, ms(200));
        assert_eq!(RESUME_WAIT_WITHOUT_FLUSH, ms(100));
    }

    /// §7.5: two active channels per excursion (0 + 60 ≤ 125, 65 + 60 = 125 is not
    /// after 125, 130 + 60 > 125), 200 ms back, PM=1 before and PM=0 after each.
    #[test]
    fn bounded_timeline_matches_section_7_5() {
        let mut sc = once(ScanPolicy::Bounded, ScanBands::Ghz2_4);
        let log = run(&mut sc, Nanos::from_secs(60), &|_| false);
        use ScanAction::*;
        assert_eq!(
            &log[..6],
            &[
                (
                    ms(0),
                    SendNullData {
                        pm: true,
                        wait: true
                    }
                ),
                (ms(0), LeaveChannel),
                (ms(135), ReturnChannel),
                (
                    ms(135),
                    SendNullData {
                        pm: false,
                        wait: false
                    }
                ),
                (
                    ms(335),
                    SendNullData {
                        pm: true,
                        wait: true
                    }
                ),
                (ms(335), LeaveChannel),
            ]
        );
        let ex = excursions(&log);
        // 13 active channels: six pairs and one alone.
        assert_eq!(ex.len(), 7);
        for &(a, b) in &ex[..6] {
            assert_eq!(b - a, ms(135), "switch + 2 × 60 ms + switch + switch back");
        }
        assert_eq!(ex[6].1 - ex[6].0, ms(70));
        let st = sc.stats();
        assert_eq!(st.channels_scanned, 13);
        assert_eq!(st.scans_completed, 1);
        assert_eq!(st.excursions, 7);
        // Done: back on channel after the last excursion, PM=0 sent.
        assert_eq!(st.last_scan_ns, ex[6].1.as_ns());
        assert_eq!(
            log.last().unwrap().1,
            SendNullData {
                pm: false,
                wait: false
            }
        );
        assert!(sc.on_channel() && !sc.scanning());
    }

    /// A passive channel (111 ms) fills an excursion by itself.
    #[test]
    fn bounded_passive_channels_go_one_per_excursion() {
        let mut sc = once(ScanPolicy::Bounded, ScanBands::Ghz5);
        let log = run(&mut sc, Nanos::from_secs(60), &|_| false);
        let ex = excursions(&log);
        let lens: Vec<u64> = ex
            .iter()
            .map(|&(a, b)| (b - a).as_ns() / 1_000_000)
            .collect();
        // 36+40, 44+48, then 15 DFS channels alone (5 + 111 + 5 = 121 ms), then
        // 149+153, 157+161, 165.
        let mut expect = vec![135, 135];
        expect.extend([121; 15]);
        expect.extend([135, 135, 70]);
        assert_eq!(lens, expect);
        for (a, b) in ex {
            // The bound excludes switching: at most 125 ms + three switches.
            assert!(b - a <= OFF_CHANNEL_BOUND + ms(15));
        }
    }

    /// §7.3: an idle legacy station stays away until the listen interval (10 × 102.4 ms)
    /// would be exceeded; no null-data frames between the first and the last.
    #[test]
    fn legacy_stays_off_channel_up_to_the_listen_interval() {
        let mut sc = once(ScanPolicy::Legacy, ScanBands::Both);
        let log = run(&mut sc, Nanos::from_secs(60), &|_| false);
        let ex = excursions(&log);
        // First excursion: 13 × 65 ms at 2.4 GHz, then 36 (ends 910) and 40 (ends 975):
        // 975 + 60 > 1024 → SUSPEND, back at 980.
        assert_eq!(ex[0], (ms(0), ms(980)));
        for &(a, b) in &ex {
            assert!(b - a <= BI * 10 + ms(10), "excursion {:?}", b - a);
        }
        let nulls: Vec<bool> = log
            .iter()
            .filter_map(|&(_, a)| match a {
                ScanAction::SendNullData { pm, .. } => Some(pm),
                _ => None,
            })
            .collect();
        assert_eq!(
            nulls,
            vec![true, false],
            "PM=1 at the start, PM=0 at the end only"
        );
        assert_eq!(sc.stats().channels_scanned, 37);
    }

    /// The seed: "scanning time increase from 5 seconds up to 10 seconds" for both
    /// bands while associated.
    #[test]
    fn bounded_scan_takes_about_twice_as_long() {
        let mut legacy = once(ScanPolicy::Legacy, ScanBands::Both);
        run(&mut legacy, Nanos::from_secs(60), &|_| false);
        let mut bounded = once(ScanPolicy::Bounded, ScanBands::Both);
        run(&mut bounded, Nanos::from_secs(60), &|_| false);
        let l = legacy.stats().last_scan_ns as f64 / 1e9;
        let b = bounded.stats().last_scan_ns as f64 / 1e9;
        assert!((3.0..6.0).contains(&l), "legacy {l:.2} s");
        assert!((7.0..11.0).contains(&b), "bounded {b:.2} s");
        assert!((1.7..3.0).contains(&(b / l)), "ratio {:.2}", b / l);
    }

    /// Pending TX suspends after every channel under both rules; a low-priority request
    /// aborts instead under the bounded rule.
    #[test]
    fn pending_tx_suspends_or_aborts() {
        for policy in [ScanPolicy::Legacy, ScanPolicy::Bounded] {
            let mut sc = once(policy, ScanBands::Ghz2_4);
            let log = run(&mut sc, Nanos::from_secs(60), &|t| t > Nanos::ZERO);
            let ex = excursions(&log);
            // DECISION at t=0 sees nothing pending; afterwards one channel per excursion.
            assert_eq!(ex.len(), 13, "{policy:?}");
            assert!(ex.iter().all(|&(a, b)| b - a == ms(70)));
            assert_eq!(sc.stats().scans_completed, 1);
        }
        let mut cfg = ScanConfig::periodic(
            ScanPolicy::Bounded,
            ScanBands::Both,
            Nanos::ZERO,
            Nanos::from_secs(3),
        );
        cfg.low_priority = true;
        cfg.pause = None;
        let mut sc = Scanner::new(cfg, BI);
        let log = run(&mut sc, Nanos::from_secs(60), &|t| t > Nanos::ZERO);
        assert_eq!(excursions(&log).len(), 1);
        let st = sc.stats();
        assert_eq!((st.scans_aborted, st.scans_completed), (1, 0));
        assert_eq!(st.channels_scanned, 1);
    }

    /// Without `flush`, RESUME waits HZ/10 after setting the leave time, which leaves
    /// room for one channel per excursion.
    #[test]
    fn resume_without_flush_waits_a_tenth_of_a_second() {
        let mut cfg = ScanConfig::periodic(
            ScanPolicy::Bounded,
            ScanBands::Ghz2_4,
            Nanos::ZERO,
            Nanos::from_secs(3),
        );
        cfg.driver_flush = false;
        cfg.pause = None;
        let mut sc = Scanner::new(cfg, BI);
        let log = run(&mut sc, Nanos::from_secs(60), &|_| false);
        let ex = excursions(&log);
        // First excursion: leave at 0, A and B. Then RESUME at 335 (PM=1), leave at 435.
        assert_eq!(ex[0], (ms(0), ms(135)));
        assert_eq!(ex[1].0, ms(435));
        assert_eq!(ex[1].1 - ex[1].0, ms(70));
    }

    /// `while true; iw scan; sleep 3`: the next scan is requested 3 s after one ends.
    #[test]
    fn periodic_scans_pause_between() {
        let cfg = ScanConfig::periodic(
            ScanPolicy::Bounded,
            ScanBands::Ghz2_4,
            ms(500),
            Nanos::from_secs(3),
        );
        let mut sc = Scanner::new(cfg, BI);
        let log = run(&mut sc, Nanos::from_secs(20), &|_| false);
        let starts: Vec<Nanos> = log
            .iter()
            .filter(|(_, a)| {
                *a == ScanAction::SendNullData {
                    pm: true,
                    wait: true,
                }
            })
            .map(|&(t, _)| t)
            .collect();
        let st = *sc.stats();
        assert!(st.scans_completed >= 3);
        let one = Nanos(st.last_scan_ns);
        for k in 0..3 {
            let start = ms(500) + (one + Nanos::from_secs(3)) * k;
            assert!(starts.contains(&start), "scan {k} at {start}: {starts:?}");
        }
        assert_eq!(
            st.mean_scan_time(),
            Some(one),
            "identical idle scans take equal time"
        );
    }
}
