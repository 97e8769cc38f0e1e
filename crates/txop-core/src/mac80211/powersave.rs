//! Power save (reference §9): the AP's buffers for dozing stations, the beacon clock
//! with its TIM and DTIM, and a station's dynamic (null-data) or static (PS-Poll)
//! power save.
//!
//! The units here are state machines without timers of their own: the cell asks them
//! for deadlines and tells them what happened on the air.

use crate::mac::edca::Ac;
use crate::packet::{DropReason, Dropped, Packet, StationId};
use crate::Nanos;
use std::collections::VecDeque;

/// `STA_MAX_TX_BUFFER`: frames buffered per station per AC; when full the oldest is
/// dropped (`ieee80211_tx_h_unicast_ps_buf`, §9.1).
pub const STA_MAX_TX_BUFFER: usize = 64;
/// `TOTAL_MAX_TX_BUFFER`: frames buffered for all stations (and multicast) together.
pub const TOTAL_MAX_TX_BUFFER: usize = 512;
/// A time unit (TU) is 1024 µs (§9.3).
pub const TU: Nanos = Nanos::from_us(1024);
/// hostapd's `beacon_int` default: 100 TU = 102.4 ms.
pub const DEFAULT_BEACON_INTERVAL_TU: u16 = 100;
/// hostapd's `dtim_period` default.
pub const DEFAULT_DTIM_PERIOD: u8 = 2;
/// mac80211's dynamic PS timeout when none is forced (`dynamic_ps_forced_timeout` −1 →
/// 100 ms, §9.2).
pub const DYNAMIC_PS_TIMEOUT: Nanos = Nanos::from_ms(100);
/// A beacon's PSDU: 36 bytes of header and fixed fields, SSID, rates, DS, TIM, country,
/// ERP, HT capabilities and operation, WMM parameters, RSN and the FCS. An assumption
/// (hostapd 802.11n AP with WPA2, no vendor elements); the seeds do not say.
pub const BEACON_BYTES: u32 = 200;
/// A (non-QoS) null-data frame: 24-byte header + FCS (`ieee80211_nullfunc_get`).
pub const NULL_DATA_BYTES: u32 = 28;
/// A PS-Poll: 16 bytes + FCS.
pub const PS_POLL_BYTES: u32 = 20;

/// The AP's target beacon transmission times: every `interval` from t = 0 (TSF 0), the
/// `k`-th beacon (k ≥ 1) at `k × interval`; every `dtim_period`-th one is a DTIM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BeaconClock {
    /// Beacon interval.
    pub interval: Nanos,
    /// Every this many beacons is a DTIM.
    pub dtim_period: u8,
}

impl BeaconClock {
    /// A clock of `interval_tu` time units (1024 µs) and DTIM period `dtim_period`.
    pub fn new(interval_tu: u16, dtim_period: u8) -> BeaconClock {
        BeaconClock {
            interval: TU * interval_tu as u64,
            dtim_period: dtim_period.max(1),
        }
    }

    /// The `k`-th TBTT.
    pub fn tbtt(&self, k: u64) -> Nanos {
        self.interval * k
    }

    /// The first beacon number whose TBTT is strictly after `t`.
    pub fn next_after(&self, t: Nanos) -> u64 {
        t.as_ns() / self.interval.as_ns() + 1
    }

    /// Whether beacon `k` is a DTIM (its DTIM count is 0).
    pub fn is_dtim(&self, k: u64) -> bool {
        k.is_multiple_of(self.dtim_period as u64)
    }

    /// Beacon `k`'s DTIM count (802.11-2016 9.4.2.6): how many beacons come before
    /// the next DTIM, 0 on a DTIM, counting down from `dtim_period` − 1 (mac80211's
    /// `__ieee80211_beacon_add_tim` decrements `dtim_count` per beacon and wraps it to
    /// `dtim_period` − 1).
    pub fn dtim_count(&self, k: u64) -> u8 {
        let p = self.dtim_period as u64;
        ((p - k % p) % p) as u8
    }

    /// The beacon interval in TU, as the beacon's field carries it.
    pub fn interval_tu(&self) -> u16 {
        (self.interval.as_ns() / TU.as_ns()) as u16
    }
}

/// The AP's `ps_tx_buf`: unicast frames that arrived for dozing stations, per station
/// and AC. Multicast (`bc_buf`, held to the DTIM) is not modelled: the cell carries
/// unicast only.
#[derive(Clone, Debug, Default)]
pub struct PsBuffers {
    bufs: Vec<[VecDeque<Packet>; 4]>,
    total: usize,
}

impl PsBuffers {
    /// Buffers for the stations of a cell of `stations` (1 to `stations`).
    pub fn new(stations: usize) -> PsBuffers {
        PsBuffers {
            bufs: (0..stations).map(|_| Default::default()).collect(),
            total: 0,
        }
    }

    /// Buffer `packet` of AC `ac` for `sta`. As mac80211: if the total is at its limit,
    /// `purge_old_ps_buffers` first drops the oldest frame of every station's lowest
    /// non-empty AC; then, if this station's AC holds 64 frames, its oldest is dropped.
    pub fn push(&mut self, sta: StationId, ac: Ac, packet: Packet, drops: &mut Vec<Dropped>) {
        if self.total >= TOTAL_MAX_TX_BUFFER {
            for b in &mut self.bufs {
                for q in b.iter_mut().rev() {
                    if let Some(old) = q.pop_front() {
                        drops.push(Dropped {
                            packet: old,
                            reason: DropReason::PsBuffer,
                        });
                        self.total -= 1;
                        break;
                    }
                }
            }
        }
        let q = &mut self.bufs[sta.index()][ac.index()];
        if q.len() >= STA_MAX_TX_BUFFER {
            if let Some(old) = q.pop_front() {
                drops.push(Dropped {
                    packet: old,
                    reason: DropReason::PsBuffer,
                });
                self.total -= 1;
            }
        }
        q.push_back(packet);
        self.total += 1;
    }

    /// Frames buffered for `sta`.
    pub fn buffered(&self, sta: StationId) -> usize {
        self.bufs[sta.index()].iter().map(|q| q.len()).sum()
    }

    /// Frames buffered for all stations (debugfs `total_ps_buffered`).
    pub fn total(&self) -> usize {
        self.total
    }

    /// The station woke (PM=0): everything, VO first, oldest first within an AC
    /// (`ieee80211_sta_ps_deliver_wakeup` splices `ps_tx_buf[ac]` for ac = VO…BK).
    pub fn take_all(&mut self, sta: StationId, out: &mut Vec<Packet>) {
        for q in self.bufs[sta.index()].iter_mut() {
            self.total -= q.len();
            out.extend(q.drain(..));
        }
    }

    /// A PS-Poll: one frame, the oldest of the highest AC that has one, and whether more
    /// remain (its More Data bit).
    pub fn take_one(&mut self, sta: StationId) -> Option<PolledFrame> {
        let packet = self.bufs[sta.index()]
            .iter_mut()
            .find_map(|q| q.pop_front())?;
        self.total -= 1;
        Some(PolledFrame {
            packet,
            more_data: self.buffered(sta) > 0,
        })
    }
}

/// The frame a PS-Poll releases from the power-save buffer ([`PsBuffers::take_one`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolledFrame {
    /// The released frame.
    pub packet: Packet,
    /// Frames remain buffered for the station (the frame's More Data bit, §9.1).
    pub more_data: bool,
}

/// A station's power-save settings (mac80211 `mlme.c`, §9.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PowerSaveConfig {
    /// Idle time before dozing (`dynamic_ps_timeout`, 100 ms).
    pub dynamic_timeout: Nanos,
    /// Fetch buffered frames with PS-Polls, one per poll while More Data is set, instead
    /// of leaving power save with a null-data PM=0. mac80211 does this when the dynamic
    /// timeout is 0 (static power save); there a station also sends with PM=1 without
    /// leaving power save, whereas here sending wakes it as in dynamic power save (a
    /// simplification: the model's idle timer needs a positive timeout).
    pub ps_poll: bool,
    /// Wake for every n-th beacon. ath9k wakes for every beacon (its sleep duration is
    /// 100 TU rounded up to the beacon interval); a station that listens to DTIMs only
    /// uses the DTIM period (`max_sleep_period`).
    pub wake_every_beacons: u16,
}

impl Default for PowerSaveConfig {
    /// Dynamic power save with the 100 ms timeout, waking for every beacon.
    fn default() -> Self {
        PowerSaveConfig {
            dynamic_timeout: DYNAMIC_PS_TIMEOUT,
            ps_poll: false,
            wake_every_beacons: 1,
        }
    }
}

impl PowerSaveConfig {
    /// The one-line error naming the bad `power_save` key, if any.
    pub fn validate(&self) -> Result<(), String> {
        if self.wake_every_beacons == 0 {
            return Err("power_save.wake_every_beacons: must be at least 1".into());
        }
        if self.dynamic_timeout < Nanos::from_ms(1) {
            return Err("power_save.dynamic_timeout: must be at least 1 ms".into());
        }
        Ok(())
    }
}

/// Where a power-saving station is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsState {
    /// Radio on; the AP is (or is about to be) told PM=0.
    Awake,
    /// Sent a null-data PM=1 and waits for it to complete.
    EnteringDoze,
    /// Radio off between beacons.
    Dozing,
    /// Radio on for a beacon.
    Listening,
    /// Static power save: sent a PS-Poll, radio on until the frame arrives.
    Polling,
}

/// What the station must do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsAction {
    /// Send a null-data frame with this power-management bit.
    SendNullData {
        /// PM=1: going to doze; PM=0: awake.
        pm: bool,
    },
    /// Send a PS-Poll for one buffered frame (static power save).
    SendPsPoll,
    /// Turn the radio off (it neither sends nor receives).
    Doze,
}

/// Counters of one station's power save.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PsStats {
    /// Time the radio slept.
    pub doze_ns: u64,
    /// Times the radio went off (every [`PsAction::Doze`]): when the AP acknowledged
    /// its PM=1, and again each time it went back to sleep after waking for a beacon
    /// (its TIM bit clear, or the beacon lost) or, with PS-Poll, after its last polled
    /// frame. Each is one of the sleeps `doze_ns` sums: `doze_ns / dozes` is the mean
    /// sleep.
    pub dozes: u64,
    /// Beacons the station woke for and received.
    pub beacons_heard: u64,
    /// Beacons whose TIM showed frames for the station.
    pub tim_wakeups: u64,
    /// Null-data frames sent.
    pub null_frames: u64,
    /// PS-Polls sent.
    pub ps_polls: u64,
    /// Frames the AP buffered for the station, and those it dropped from its buffer.
    pub ap_buffered: u64,
    /// Frames the AP dropped from its buffer for the station.
    pub ap_buffer_drops: u64,
}

/// A station's dynamic or static power save (`ieee80211_dynamic_ps_*`,
/// `ieee80211_rx_mgmt_beacon`'s TIM handling).
#[derive(Clone, Debug)]
pub struct StaPowerSave {
    cfg: PowerSaveConfig,
    state: PsState,
    /// Last data frame sent or received: the dynamic timeout counts from here.
    last_activity: Nanos,
    /// A scan has taken over the radio: no timeout.
    suspended: bool,
}

impl StaPowerSave {
    /// A station awake at `now`, with its dynamic timeout counting from then.
    pub fn new(cfg: PowerSaveConfig, now: Nanos) -> StaPowerSave {
        StaPowerSave {
            cfg,
            state: PsState::Awake,
            last_activity: now,
            suspended: false,
        }
    }

    /// The settings.
    pub fn config(&self) -> &PowerSaveConfig {
        &self.cfg
    }

    /// Where the station is.
    pub fn state(&self) -> PsState {
        self.state
    }

    /// The radio is on (it may send and receive).
    pub fn radio_on(&self) -> bool {
        self.state != PsState::Dozing
    }

    /// A data frame was sent or received: the dynamic timeout starts again. (The
    /// deadline moves later only, so the caller may keep an earlier wake-up and let
    /// [`StaPowerSave::timeout`] find it is not due yet.)
    pub fn activity(&mut self, now: Nanos) {
        self.last_activity = self.last_activity.max(now);
    }

    /// When the dynamic timeout expires, while awake.
    pub fn deadline(&self) -> Option<Nanos> {
        (self.state == PsState::Awake && !self.suspended)
            .then(|| self.last_activity + self.cfg.dynamic_timeout)
    }

    /// The dynamic timeout may have expired at `now`. `idle`: nothing is queued for
    /// transmission (`ieee80211_dynamic_ps_enable_work` re-arms otherwise). Returns the
    /// PM=1 null-data frame to send.
    pub fn timeout(&mut self, now: Nanos, idle: bool) -> Option<PsAction> {
        let due = self.deadline()?;
        if now < due {
            return None;
        }
        if !idle {
            self.last_activity = now;
            return None;
        }
        self.state = PsState::EnteringDoze;
        Some(PsAction::SendNullData { pm: true })
    }

    /// A null-data frame completed. An acknowledged PM=1 puts the radio to sleep
    /// (`IEEE80211_STA_NULLFUNC_ACKED`); an unacknowledged one keeps it awake and
    /// re-arms the timeout.
    pub fn null_done(&mut self, now: Nanos, pm: bool, acked: bool) -> Option<PsAction> {
        if !pm || self.state != PsState::EnteringDoze {
            return None;
        }
        if acked {
            self.state = PsState::Dozing;
            Some(PsAction::Doze)
        } else {
            self.state = PsState::Awake;
            self.last_activity = now;
            None
        }
    }

    /// Something to send while asleep: wake at once. Data frames then carry PM=0, which
    /// ends power save at the AP (`ieee80211_tx_h_dynamic_ps`). Returns whether the
    /// radio was off.
    pub fn tx_wake(&mut self, now: Nanos) -> bool {
        self.last_activity = self.last_activity.max(now);
        match self.state {
            PsState::Dozing => {
                self.state = PsState::Awake;
                true
            }
            PsState::Listening | PsState::Polling => {
                self.state = PsState::Awake;
                false
            }
            PsState::Awake | PsState::EnteringDoze => false,
        }
    }

    /// Whether a dozing station wakes for beacon `k`.
    pub fn wakes_for(&self, k: u64) -> bool {
        self.state == PsState::Dozing && k.is_multiple_of(self.cfg.wake_every_beacons as u64)
    }

    /// The radio turns on for a beacon.
    pub fn listen(&mut self) {
        if self.state == PsState::Dozing {
            self.state = PsState::Listening;
        }
    }

    /// A beacon was received; `tim`: its TIM has the station's bit. Dynamic power save
    /// leaves PS with a null-data PM=0 (also when awake: the AP still thinks it dozes);
    /// with PS-Poll the station polls; without buffered frames a listening station goes
    /// back to sleep.
    pub fn beacon(&mut self, now: Nanos, tim: bool) -> Option<PsAction> {
        match (self.state, tim) {
            (PsState::Listening, false) => {
                self.state = PsState::Dozing;
                Some(PsAction::Doze)
            }
            (PsState::Listening, true) if self.cfg.ps_poll => {
                self.state = PsState::Polling;
                Some(PsAction::SendPsPoll)
            }
            (PsState::Listening | PsState::Awake, true) if !self.cfg.ps_poll => {
                self.state = PsState::Awake;
                self.last_activity = now;
                Some(PsAction::SendNullData { pm: false })
            }
            // A poll whose frame never came: poll again, or sleep if nothing is left.
            (PsState::Polling, true) => Some(PsAction::SendPsPoll),
            (PsState::Polling, false) => {
                self.state = PsState::Dozing;
                Some(PsAction::Doze)
            }
            _ => None,
        }
    }

    /// The beacon a listening station waited for was lost: back to sleep.
    pub fn beacon_missed(&mut self) -> Option<PsAction> {
        (self.state == PsState::Listening).then(|| {
            self.state = PsState::Dozing;
            PsAction::Doze
        })
    }

    /// PS-Poll: the polled frame arrived; `more`: More Data was set.
    pub fn polled_frame(&mut self, more: bool) -> Option<PsAction> {
        if self.state != PsState::Polling {
            return None;
        }
        if more {
            Some(PsAction::SendPsPoll)
        } else {
            self.state = PsState::Dozing;
            Some(PsAction::Doze)
        }
    }

    /// A scan takes over the radio (`ieee80211_offchannel_ps_enable` disables PS): the
    /// station is awake and its timeout stopped until [`StaPowerSave::resume`].
    pub fn suspend(&mut self) {
        self.state = PsState::Awake;
        self.suspended = true;
    }

    /// The scan is over: the dynamic timeout runs again from `now`.
    pub fn resume(&mut self, now: Nanos) {
        self.state = PsState::Awake;
        self.suspended = false;
        self.last_activity = now;
    }

    /// A scan holds the radio.
    pub fn suspended(&self) -> bool {
        self.suspended
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::NodeId;

    fn pkt(id: u64) -> Packet {
        Packet::new(id, NodeId::AP, NodeId(1), 100)
    }

    #[test]
    fn beacon_clock_is_100_tu_with_dtim_2() {
        let c = BeaconClock::new(DEFAULT_BEACON_INTERVAL_TU, DEFAULT_DTIM_PERIOD);
        assert_eq!(c.interval, Nanos::from_us(102_400));
        assert_eq!(c.tbtt(3), Nanos::from_us(307_200));
        assert_eq!(c.next_after(Nanos::ZERO), 1);
        assert_eq!(c.next_after(Nanos::from_us(102_400)), 2);
        assert_eq!(c.next_after(Nanos::from_us(102_399)), 1);
        assert!(c.is_dtim(2) && !c.is_dtim(3) && c.is_dtim(4));
        assert_eq!(c.interval_tu(), 100);
    }

    #[test]
    fn dtim_count_counts_down_to_each_dtim() {
        let c = BeaconClock::new(50, 3);
        assert_eq!(c.interval_tu(), 50);
        let counts: Vec<u8> = (0..7).map(|k| c.dtim_count(k)).collect();
        assert_eq!(counts, [0, 2, 1, 0, 2, 1, 0]);
        assert!((0..30).all(|k| (c.dtim_count(k) == 0) == c.is_dtim(k)));
        assert!((0..5).all(|k| BeaconClock::new(100, 1).dtim_count(k) == 0));
    }

    #[test]
    fn per_ac_limit_drops_the_oldest() {
        let mut b = PsBuffers::new(2);
        let mut drops = Vec::new();
        for i in 0..(STA_MAX_TX_BUFFER as u64 + 3) {
            b.push(StationId(1), Ac::Be, pkt(i), &mut drops);
        }
        assert_eq!(b.buffered(StationId(1)), STA_MAX_TX_BUFFER);
        assert_eq!(b.total(), STA_MAX_TX_BUFFER);
        let ids: Vec<u64> = drops.iter().map(|d| d.packet.id).collect();
        assert_eq!(ids, vec![0, 1, 2]);
        assert!(drops.iter().all(|d| d.reason == DropReason::PsBuffer));
        let mut out = Vec::new();
        b.take_all(StationId(1), &mut out);
        assert_eq!(out.first().map(|p| p.id), Some(3));
        assert_eq!(b.total(), 0);
    }

    /// At 512 frames `purge_old_ps_buffers` takes one frame from every station's
    /// lowest-priority non-empty AC before the new frame is buffered.
    #[test]
    fn total_limit_purges_one_frame_per_station() {
        let n = 9;
        let mut b = PsBuffers::new(n);
        let mut drops = Vec::new();
        let mut id = 0;
        // 8 stations × 64 = 512 frames: 8 × (60 VI + 4 BK).
        for s in StationId::all(8) {
            for _ in 0..60 {
                b.push(s, Ac::Vi, pkt(id), &mut drops);
                id += 1;
            }
            for _ in 0..4 {
                b.push(s, Ac::Bk, pkt(id), &mut drops);
                id += 1;
            }
        }
        assert!(drops.is_empty());
        assert_eq!(b.total(), TOTAL_MAX_TX_BUFFER);
        b.push(StationId(9), Ac::Vo, pkt(id), &mut drops);
        assert_eq!(drops.len(), 8, "one per station that has frames");
        // Each was the first BK frame of its station (ids 60, 124, ...).
        for (s, d) in drops.iter().enumerate() {
            assert_eq!(d.packet.id, s as u64 * 64 + 60);
        }
        assert_eq!(b.total(), TOTAL_MAX_TX_BUFFER - 8 + 1);
    }

    #[test]
    fn release_order_is_vo_first_and_ps_poll_takes_one() {
        let mut b = PsBuffers::new(1);
        let mut drops = Vec::new();
        let sta = StationId(1);
        b.push(sta, Ac::Bk, pkt(1), &mut drops);
        b.push(sta, Ac::Vo, pkt(2), &mut drops);
        b.push(sta, Ac::Be, pkt(3), &mut drops);
        let polled = b.take_one(sta).map(|f| (f.packet.id, f.more_data));
        assert_eq!(polled, Some((2, true)));
        let mut out = Vec::new();
        b.take_all(sta, &mut out);
        assert_eq!(out.iter().map(|p| p.id).collect::<Vec<_>>(), vec![3, 1]);
        assert_eq!(b.take_one(sta), None);
    }

    /// §9.2: 100 ms without traffic → PM=1; acknowledged → asleep; a beacon with the
    /// TIM bit → PM=0 and awake; without it → back to sleep.
    #[test]
    fn dynamic_power_save_cycle() {
        let mut ps = StaPowerSave::new(PowerSaveConfig::default(), Nanos::ZERO);
        ps.activity(Nanos::from_ms(30));
        assert_eq!(ps.deadline(), Some(Nanos::from_ms(130)));
        assert_eq!(ps.timeout(Nanos::from_ms(100), true), None, "not due");
        assert_eq!(
            ps.timeout(Nanos::from_ms(130), false),
            None,
            "busy: re-armed"
        );
        assert_eq!(ps.deadline(), Some(Nanos::from_ms(230)));
        assert_eq!(
            ps.timeout(Nanos::from_ms(230), true),
            Some(PsAction::SendNullData { pm: true })
        );
        assert_eq!(ps.state(), PsState::EnteringDoze);
        assert_eq!(
            ps.null_done(Nanos::from_ms(231), true, true),
            Some(PsAction::Doze)
        );
        assert!(!ps.radio_on());
        assert!(ps.wakes_for(3));
        ps.listen();
        assert_eq!(ps.beacon(Nanos::from_ms(307), false), Some(PsAction::Doze));
        ps.listen();
        assert_eq!(
            ps.beacon(Nanos::from_ms(410), true),
            Some(PsAction::SendNullData { pm: false })
        );
        assert_eq!(ps.state(), PsState::Awake);
        assert_eq!(ps.deadline(), Some(Nanos::from_ms(510)));
    }

    #[test]
    fn unacknowledged_pm1_keeps_the_station_awake() {
        let mut ps = StaPowerSave::new(PowerSaveConfig::default(), Nanos::ZERO);
        ps.timeout(Nanos::from_ms(100), true);
        assert_eq!(ps.null_done(Nanos::from_ms(101), true, false), None);
        assert_eq!(ps.state(), PsState::Awake);
        assert_eq!(ps.deadline(), Some(Nanos::from_ms(201)));
    }

    #[test]
    fn ps_poll_polls_until_no_more_data() {
        let cfg = PowerSaveConfig {
            ps_poll: true,
            ..Default::default()
        };
        let mut ps = StaPowerSave::new(cfg, Nanos::ZERO);
        assert_eq!(
            ps.timeout(Nanos::from_ms(100), true),
            Some(PsAction::SendNullData { pm: true })
        );
        ps.null_done(Nanos::from_ms(100), true, true);
        ps.listen();
        assert_eq!(
            ps.beacon(Nanos::from_ms(200), true),
            Some(PsAction::SendPsPoll)
        );
        assert_eq!(ps.polled_frame(true), Some(PsAction::SendPsPoll));
        assert_eq!(ps.polled_frame(false), Some(PsAction::Doze));
        assert!(!ps.radio_on());
    }

    #[test]
    fn dtim_listener_skips_other_beacons() {
        let cfg = PowerSaveConfig {
            wake_every_beacons: 2,
            ..Default::default()
        };
        let mut ps = StaPowerSave::new(cfg, Nanos::ZERO);
        ps.timeout(Nanos::from_ms(100), true);
        ps.null_done(Nanos::from_ms(100), true, true);
        assert!(!ps.wakes_for(1) && ps.wakes_for(2));
    }

    #[test]
    fn sending_wakes_a_dozing_station() {
        let mut ps = StaPowerSave::new(PowerSaveConfig::default(), Nanos::ZERO);
        ps.timeout(Nanos::from_ms(100), true);
        ps.null_done(Nanos::from_ms(100), true, true);
        assert!(ps.tx_wake(Nanos::from_ms(150)));
        assert_eq!(ps.state(), PsState::Awake);
        assert_eq!(ps.deadline(), Some(Nanos::from_ms(250)));
    }
}
