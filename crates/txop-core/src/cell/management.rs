//! Beacons, background scanning and power save (reference §7, §9): the frames they put
//! on the air and the radios they take off it.
//!
//! Off unless configured ([`CellConfig::beacons`](super::CellConfig::beacons),
//! [`CellConfig::station_scans`](super::CellConfig::station_scans),
//! [`CellConfig::station_power_save`](super::CellConfig::station_power_save)); then
//! the cell's management timer runs beside the MAC's. A station whose radio is off the
//! operating channel or asleep is *away*: it does not contend, and what is sent to it is
//! lost (the sender retries, then drops). The AP holds the frames of a station it
//! believes dozes: new ones in a power-save buffer (64 per AC, 512 in all), those
//! already queued paused in its TXQs and driver, and releases them on PM=0 or a PS-Poll.
//!
//! Management sits above the MAC engine ([`Air`]): the engine tells it what happened
//! through the [`Management`] trait, and it acts on the engine through the `&mut Air`
//! handed with each call (queueing the MAC's own frames, taking radios off the channel
//! or bringing them back, pausing and releasing the AP's queues).

use super::{Cell, CellConfig};
use crate::air::timer::Timer;
use crate::air::{Air, Management, PendingBeacon};
use crate::capture::{captured_beacon, CapturedFrame};
use crate::mac::edca::Ac;
use crate::mac::frame::{CtlFrame, DataFrame, Frame};
use crate::mac80211::powersave::{
    BeaconClock, PsAction, PsBuffers, PsState, StaPowerSave, DEFAULT_BEACON_INTERVAL_TU,
    DEFAULT_DTIM_PERIOD,
};
use crate::mac80211::scan::{ScanAction, ScanStats, Scanner};
use crate::packet::{NodeId, Packet, StationId};
use crate::Nanos;

/// Beacons, the AP's power-save state and the stations' scanners and power save
/// (`Cell::mgmt` is `None` when none of them is configured).
#[derive(Clone, Debug)]
pub(crate) struct Mgmt {
    pub(crate) clock: BeaconClock,
    /// The next beacon whose TBTT is still ahead.
    pub(crate) next_beacon: u64,
    /// Per station ([`StationId::index`]): the AP believes it dozes.
    pub(crate) ap_dozing: Vec<bool>,
    /// Per station: the AP serves its PS-Polls (its frames flow although it dozes).
    pub(crate) ap_service: Vec<bool>,
    pub(crate) buffers: PsBuffers,
    pub(crate) stas: Vec<StaMgmt>,
    pub(crate) scratch: Vec<Packet>,
}

/// One station's scanner and power save.
#[derive(Clone, Debug, Default)]
pub(crate) struct StaMgmt {
    pub(crate) scan: Option<Scanner>,
    pub(crate) ps: Option<StaPowerSave>,
    /// The scanner waits for the station's next null-data frame to complete.
    pub(crate) scan_waits_null: bool,
    /// The power-save radio is off since then.
    pub(crate) doze_since: Option<Nanos>,
}

impl StaMgmt {
    /// The radio can neither send nor receive on the operating channel.
    pub(crate) fn away(&self) -> bool {
        self.scan.as_ref().is_some_and(|s| !s.on_channel())
            || self.ps.as_ref().is_some_and(|p| !p.radio_on())
    }
}

impl Mgmt {
    /// The management state of a cell built from `cfg`: no beacon sent yet, every
    /// station awake as far as the AP knows, scanners and power save at their start.
    pub(crate) fn new(cfg: &CellConfig) -> Box<Mgmt> {
        let n = cfg.stations.len();
        let clock = BeaconClock::new(cfg.beacon_interval_tu, cfg.dtim_period);
        let mut stas = vec![StaMgmt::default(); n];
        for s in &cfg.station_scans {
            stas[s.station.index()].scan = Some(Scanner::new(s.scan.clone(), clock.interval));
        }
        for s in &cfg.station_power_save {
            stas[s.station.index()].ps = Some(StaPowerSave::new(s.power_save, Nanos::ZERO));
        }
        Box::new(Mgmt {
            clock,
            next_beacon: clock.next_after(Nanos::ZERO),
            ap_dozing: vec![false; n],
            ap_service: vec![false; n],
            buffers: PsBuffers::new(n),
            stas,
            scratch: Vec::new(),
        })
    }

    /// The earliest of the next TBTT, the scanners' steps and the power-save timeouts.
    pub(crate) fn next_deadline(&self) -> Nanos {
        let mut t = self.clock.tbtt(self.next_beacon);
        for sm in &self.stas {
            let scan = sm.scan.as_ref().and_then(|s| s.poll_timeout());
            let ps = sm.ps.as_ref().and_then(|p| p.deadline());
            for d in [scan, ps].into_iter().flatten() {
                t = t.min(d);
            }
        }
        t
    }
}

impl Cell {
    /// Scan counters of station `sta`, or `None` if it does not scan.
    pub fn scan_stats(&self, sta: StationId) -> Option<ScanStats> {
        let m = self.mgmt.as_ref()?;
        let s = m.stas.get(sta.index())?.scan.as_ref()?;
        Some(*s.stats())
    }
}

/// What the engine tells a cell's management, if it has one; nothing happens in a
/// cell without beacons, scanning or power save.
impl Management for Option<Box<Mgmt>> {
    fn frame_heard_by_ap(&mut self, air: &mut Air, t: Nanos, sta: StationId, f: Frame) {
        let Some(m) = self else {
            return;
        };
        match f {
            Frame::Data(DataFrame::NullData { pm: true }) => m.ap_doze(air, sta, t),
            Frame::Data(DataFrame::NullData { pm: false }) => m.ap_wake(air, sta, t),
            Frame::Ctl(CtlFrame::PsPoll) => m.ap_ps_poll(air, sta, t),
            Frame::Mgmt(_) => {}
        }
    }

    fn beacon_ended(
        &mut self,
        air: &mut Air,
        t: Nanos,
        heard: &mut dyn FnMut(&mut Air, StationId) -> bool,
    ) {
        if let Some(m) = self {
            m.stations_hear_beacon(air, t, heard);
        }
    }

    fn beacon_collided(&mut self, air: &mut Air, t: Nanos) {
        if let Some(m) = self {
            for sta in StationId::all(air.stations()) {
                m.station_beacon(air, t, sta, false, false);
            }
        }
    }

    fn frame_done(&mut self, air: &mut Air, t: Nanos, sta: StationId, f: Frame, acked: bool) {
        if let Some(m) = self {
            m.frame_done(air, t, sta, f, acked);
        }
    }

    fn data_received(&mut self, air: &mut Air, t: Nanos, tx: NodeId, rx: NodeId) {
        if let Some(m) = self {
            m.data_received(air, t, tx, rx);
        }
    }

    fn exchange_ended(&mut self, air: &mut Air, t: Nanos) {
        if let Some(m) = self {
            m.departures_due(air, t);
        }
    }

    fn refresh(&mut self, air: &mut Air) {
        if let Some(m) = self {
            m.refresh_timer(air);
        }
    }

    fn captured_beacon(&self, k: u64) -> CapturedFrame {
        // Only a cell with management sends beacons; without, hostapd's defaults.
        let Some(m) = self else {
            let clock = BeaconClock::new(DEFAULT_BEACON_INTERVAL_TU, DEFAULT_DTIM_PERIOD);
            return captured_beacon(k, &clock, 0);
        };
        // The TIM: the stations the AP buffers for, up to AID 63.
        let mut tim = 0u64;
        for sta in StationId::all(m.stas.len()).take(63) {
            if m.buffers.buffered(sta) > 0 {
                tim |= 1 << sta.0;
            }
        }
        captured_beacon(k, &m.clock, tim)
    }
}

impl Mgmt {
    /// Management's deadline is the earliest of its own ([`Mgmt::next_deadline`]).
    pub(crate) fn refresh_timer(&self, air: &mut Air) {
        air.timers
            .set(Timer::Management, Some(self.next_deadline()));
    }

    /// Station `sta`'s null-data frame or PS-Poll completed (acknowledged, or given up).
    pub(crate) fn frame_done(
        &mut self,
        air: &mut Air,
        t: Nanos,
        sta: StationId,
        f: Frame,
        acked: bool,
    ) {
        let Frame::Data(DataFrame::NullData { pm }) = f else {
            return;
        };
        let nulls_left = air.nodes[sta.node().index()]
            .frames
            .iter()
            .any(|f| matches!(f, Frame::Data(DataFrame::NullData { .. })));
        let sm = &mut self.stas[sta.index()];
        let ps_action = sm.ps.as_mut().and_then(|ps| ps.null_done(t, pm, acked));
        // mac80211 flushes before it tunes away, so the scanner waits until every
        // null-data frame queued so far has left.
        let scan_goes_on = sm.scan_waits_null && !nulls_left;
        if scan_goes_on {
            sm.scan_waits_null = false;
            if let Some(sc) = sm.scan.as_mut() {
                sc.null_done(t);
            }
        }
        self.apply_ps_action(air, sta, ps_action, t);
        if scan_goes_on {
            self.run_scanner(air, sta, t);
        }
        self.sync_station(air, sta, t);
    }

    /// Management deadlines at `t`: a TBTT, scanner steps, power-save timeouts.
    pub(crate) fn handle(&mut self, air: &mut Air, t: Nanos) {
        let n_sta = air.stations();
        let mut new_beacon = None;
        if self.clock.tbtt(self.next_beacon) <= t {
            let k = self.next_beacon;
            self.next_beacon += 1;
            // A beacon still waiting for the medium is superseded by the new one.
            air.beacon = Some(PendingBeacon {
                k,
                tbtt: self.clock.tbtt(k),
            });
            new_beacon = Some(k);
        }
        if let Some(k) = new_beacon {
            for sta in StationId::all(n_sta) {
                let listens = self.stas[sta.index()].ps.as_mut().is_some_and(|ps| {
                    let w = ps.wakes_for(k);
                    if w {
                        ps.listen();
                    }
                    w
                });
                if listens {
                    self.sync_station(air, sta, t);
                }
            }
            air.contention_changed();
        }
        for sta in StationId::all(n_sta) {
            let sm = &self.stas[sta.index()];
            let scan_due = sm
                .scan
                .as_ref()
                .and_then(|sc| sc.poll_timeout())
                .is_some_and(|d| d <= t);
            let ps_due = sm
                .ps
                .as_ref()
                .and_then(|p| p.deadline())
                .is_some_and(|d| d <= t);
            if scan_due {
                self.run_scanner(air, sta, t);
            }
            if ps_due {
                self.ps_timeout(air, sta, t);
            }
        }
        self.refresh_timer(air);
    }

    /// Run station `sta`'s scanner at `t` and carry out what it asks.
    pub(crate) fn run_scanner(&mut self, air: &mut Air, sta: StationId, t: Nanos) {
        let tx_pending = air.nodes[sta.node().index()].path.netdev_backlog_packets() > 0;
        let sm = &mut self.stas[sta.index()];
        let Some(sc) = sm.scan.as_mut() else {
            return;
        };
        let was = sc.scanning();
        sc.handle_timeout(t, tx_pending);
        let mut actions = Vec::new();
        while let Some(a) = sc.poll_action() {
            actions.push(a);
        }
        let is = sc.scanning();
        if let Some(ps) = sm.ps.as_mut() {
            if !was && is {
                // `ieee80211_offchannel_ps_enable`: the scan takes the radio.
                ps.suspend();
            } else if was && !is {
                ps.resume(t);
            }
        }
        // Back on the channel first, so frames queued now contend at once.
        self.sync_station(air, sta, t);
        for a in actions {
            if let ScanAction::SendNullData { pm, wait } = a {
                if wait {
                    self.stas[sta.index()].scan_waits_null = true;
                }
                if !air.queue_frame(sta, Frame::Data(DataFrame::NullData { pm }), t) && wait {
                    // Cannot happen with the bounded queue; do not stall the scan.
                    if let Some(sc) = self.stas[sta.index()].scan.as_mut() {
                        sc.null_done(t);
                    }
                }
            }
        }
        self.sync_station(air, sta, t);
    }

    /// Station `sta`'s dynamic power-save timeout may have expired.
    pub(crate) fn ps_timeout(&mut self, air: &mut Air, sta: StationId, t: Nanos) {
        let node = &air.nodes[sta.node().index()];
        let idle = node.path.packets_inside() == 0
            && node.frames.is_empty()
            && !air.on_air(sta.node().index());
        let action = self.stas[sta.index()]
            .ps
            .as_mut()
            .and_then(|ps| ps.timeout(t, idle));
        self.apply_ps_action(air, sta, action, t);
    }

    pub(crate) fn apply_ps_action(
        &mut self,
        air: &mut Air,
        sta: StationId,
        action: Option<PsAction>,
        t: Nanos,
    ) {
        match action {
            Some(PsAction::SendNullData { pm }) => {
                air.queue_frame(sta, Frame::Data(DataFrame::NullData { pm }), t);
            }
            Some(PsAction::SendPsPoll) => {
                air.queue_frame(sta, Frame::Ctl(CtlFrame::PsPoll), t);
            }
            Some(PsAction::Doze) | None => {}
        }
        self.sync_station(air, sta, t);
    }

    /// Bring station `sta`'s node in line with its scanner and power save: account doze
    /// time, copy the scan counters, and take the radio off or back on the channel.
    pub(crate) fn sync_station(&mut self, air: &mut Air, sta: StationId, t: Nanos) {
        let sm = &mut self.stas[sta.index()];
        let ps_off = sm.ps.as_ref().is_some_and(|p| !p.radio_on());
        match (ps_off, sm.doze_since) {
            (true, None) => {
                sm.doze_since = Some(t);
                air.stats[sta.node().index()].ps.dozes += 1;
            }
            (false, Some(since)) => {
                air.stats[sta.node().index()].ps.doze_ns += (t - since).as_ns();
                sm.doze_since = None;
            }
            _ => {}
        }
        if let Some(sc) = sm.scan.as_ref() {
            air.stats[sta.node().index()].scan = *sc.stats();
        }
        let away = sm.away();
        let n = sta.node().index();
        air.nodes[n].leaving = false;
        if away && !air.nodes[n].away {
            if air.medium.holds_exchange(n) {
                // mac80211 stops the queues and flushes the driver before it tunes away
                // (`ieee80211_offchannel_stop_vifs`, then `drv_flush` in
                // `ieee80211_scan_state_set_channel`; `ieee80211_offchannel_ps_enable`
                // the same for a doze): the exchange on the air ends first.
                air.nodes[n].leaving = true;
            } else {
                air.radio_gone(n, t);
            }
        } else if !away && air.nodes[n].away {
            air.radio_back(n, t);
        }
    }

    /// An exchange ended at `t`: a station whose radio waited for it to leave leaves
    /// now (`sync_station`).
    pub(crate) fn departures_due(&mut self, air: &mut Air, t: Nanos) {
        for sta in StationId::all(air.stations()) {
            if air.nodes[sta.node().index()].leaving {
                self.sync_station(air, sta, t);
            }
        }
    }

    /// The AP's TIM bit for station `sta`: it dozes (as far as the AP knows) and frames
    /// wait for it, in the power-save buffer or in its TXQs and driver queues.
    pub(crate) fn tim_bit(&self, air: &Air, sta: StationId) -> bool {
        self.ap_dozing[sta.index()]
            && (self.buffers.buffered(sta) > 0
                || air.nodes[0].path.link_backlog_packets(sta.ap_link()) > 0)
    }

    /// A beacon ended at `t`: each station that listens for beacons (power save or a
    /// scan) and whose radio is on heard it if `heard` says so (asked in station order,
    /// so the draws keep their order on both media), and acts on it with its TIM bit.
    pub(crate) fn stations_hear_beacon(
        &mut self,
        air: &mut Air,
        t: Nanos,
        heard: &mut dyn FnMut(&mut Air, StationId) -> bool,
    ) {
        for sta in StationId::all(air.stations()) {
            let sm = &self.stas[sta.index()];
            let listening = sm.ps.is_some() || sm.scan.is_some();
            if !listening || air.nodes[sta.node().index()].away {
                continue;
            }
            let h = heard(air, sta);
            let tim = self.tim_bit(air, sta);
            self.station_beacon(air, t, sta, h, tim);
        }
    }

    /// Station `sta` heard (or missed) a beacon with (or without) its TIM bit.
    pub(crate) fn station_beacon(
        &mut self,
        air: &mut Air,
        t: Nanos,
        sta: StationId,
        heard: bool,
        tim: bool,
    ) {
        let sm = &mut self.stas[sta.index()];
        if heard {
            air.stats[sta.node().index()].ps.beacons_heard += 1;
            if tim {
                air.stats[sta.node().index()].ps.tim_wakeups += 1;
            }
        }
        let scanning = sm.scan.as_ref().is_some_and(|sc| sc.scanning());
        let action = match sm.ps.as_mut() {
            Some(ps) if !scanning => {
                if heard {
                    ps.beacon(t, tim)
                } else {
                    ps.beacon_missed()
                }
            }
            _ => {
                // No power save running (none, or suspended by the scan): answer a TIM
                // with PM=0 if the scan is configured to (see `ScanConfig::answer_tim`).
                let answer = sm.scan.as_ref().is_some_and(|sc| sc.config().answer_tim);
                (heard && tim && answer).then_some(PsAction::SendNullData { pm: false })
            }
        };
        self.apply_ps_action(air, sta, action, t);
    }

    /// A packet enters the cell at node `src` for the `station` end of its link, where
    /// power save may hold it: at the AP for a dozing station, into the power-save
    /// buffer (returns true); at a sleeping station, which wakes to send it.
    pub(crate) fn takes_packet(
        &mut self,
        air: &mut Air,
        now: Nanos,
        src: usize,
        station: StationId,
        packet: Packet,
    ) -> bool {
        if src == 0 {
            if !self.ap_dozing[station.index()] {
                return false;
            }
            let ac = air.nodes[0].path.classify_ac(&packet);
            let drops = &mut air.nodes[0].path.drops;
            let before = drops.len();
            self.buffers.push(station, ac, packet, drops);
            let dropped = (drops.len() - before) as u64;
            let st = &mut air.stats[station.node().index()].ps;
            st.ap_buffered += 1;
            st.ap_buffer_drops += dropped;
            air.drain_path(0, now);
            return true;
        }
        if let Some(ps) = self.stas[station.index()].ps.as_mut() {
            ps.tx_wake(now);
            self.sync_station(air, station, now);
            self.refresh_timer(air);
        }
        false
    }

    /// Data from node `tx` reached node `rx`: uplink data carries PM=0 and ends power
    /// save at the AP (`ieee80211_rx_h_sta_process`); downlink data keeps a power-saving
    /// station awake, and answers its PS-Poll.
    pub(crate) fn data_received(&mut self, air: &mut Air, t: Nanos, tx: NodeId, rx: NodeId) {
        let Some(sta) = rx.as_station() else {
            // Uplink: from a station to the AP.
            if let Some(sender) = tx.as_station() {
                if self.ap_dozing[sender.index()] {
                    self.ap_wake(air, sender, t);
                }
            }
            return;
        };
        let link = sta.ap_link();
        let backlog = air.nodes[0].path.link_backlog_packets(link);
        let more = self.buffers.buffered(sta) > 0 || backlog > 0;
        let Some(ps) = self.stas[sta.index()].ps.as_mut() else {
            return;
        };
        ps.activity(t);
        if ps.state() != PsState::Polling {
            return;
        }
        let action = ps.polled_frame(more);
        if !more && self.ap_service[sta.index()] {
            // The poll sequence is over: the AP holds the station's frames again.
            self.ap_service[sta.index()] = false;
            if self.ap_dozing[sta.index()] {
                air.nodes[0].path.pause_link(t, link);
            }
        }
        self.apply_ps_action(air, sta, action, t);
        self.refresh_timer(air);
    }

    /// The AP received PM=1 from station `sta`: buffer from now on (`sta_ps_start`).
    pub(crate) fn ap_doze(&mut self, air: &mut Air, sta: StationId, t: Nanos) {
        if self.ap_dozing[sta.index()] {
            return;
        }
        self.ap_dozing[sta.index()] = true;
        self.ap_service[sta.index()] = false;
        air.nodes[0].path.pause_link(t, sta.ap_link());
    }

    /// The AP learned that station `sta` is awake (PM=0): release everything
    /// (`ieee80211_sta_ps_deliver_wakeup`).
    pub(crate) fn ap_wake(&mut self, air: &mut Air, sta: StationId, t: Nanos) {
        if !self.ap_dozing[sta.index()] {
            return;
        }
        self.ap_dozing[sta.index()] = false;
        self.ap_service[sta.index()] = false;
        let mut buf = std::mem::take(&mut self.scratch);
        self.buffers.take_all(sta, &mut buf);
        let link = sta.ap_link();
        let had = Ac::ALL.map(|ac| air.nodes[0].has_frame(ac));
        air.nodes[0].path.resume_link(t, link);
        for p in buf.drain(..) {
            air.nodes[0].path.enqueue(t, link, p);
        }
        self.scratch = buf;
        air.drain_path(0, t);
        air.wake_new_frames(0, had, t);
    }

    /// A PS-Poll from station `sta`: one buffered frame goes out (with the frames held in
    /// its TXQs and driver, which the model releases for the whole poll sequence rather
    /// than one per poll).
    pub(crate) fn ap_ps_poll(&mut self, air: &mut Air, sta: StationId, t: Nanos) {
        if !self.ap_dozing[sta.index()] {
            return;
        }
        let link = sta.ap_link();
        let one = self.buffers.take_one(sta).map(|f| f.packet);
        let resume = !self.ap_service[sta.index()];
        self.ap_service[sta.index()] = true;
        let had = Ac::ALL.map(|ac| air.nodes[0].has_frame(ac));
        if resume {
            air.nodes[0].path.resume_link(t, link);
        }
        if let Some(p) = one {
            air.nodes[0].path.enqueue(t, link, p);
        }
        air.drain_path(0, t);
        air.wake_new_frames(0, had, t);
        if one.is_none() && air.nodes[0].path.link_backlog_packets(link) == 0 {
            // Nothing to send after all: the station goes back to sleep.
            self.data_received_nothing(air, sta, t);
        }
    }

    /// A PS-Poll found nothing: end the poll sequence.
    pub(crate) fn data_received_nothing(&mut self, air: &mut Air, sta: StationId, t: Nanos) {
        self.ap_service[sta.index()] = false;
        if self.ap_dozing[sta.index()] {
            air.nodes[0].path.pause_link(t, sta.ap_link());
        }
        let action = self.stas[sta.index()]
            .ps
            .as_mut()
            .and_then(|ps| ps.polled_frame(false));
        self.apply_ps_action(air, sta, action, t);
    }
}
