//! The 6.x airtime scheduler from outside the core: the kernel's own
//! `ieee80211_next_txq`, `__ieee80211_schedule_txq` (behind `ieee80211_schedule_txq`
//! and `ieee80211_return_txq`), `ieee80211_txq_may_transmit`,
//! `ieee80211_txq_schedule_start` (`net/mac80211/tx.c`) and
//! `ieee80211_sta_register_airtime` (`sta_info.c`), built at run time by the front end
//! (`crates/txop-kernel`, scenario key `kernel.units = ["scheduler"]`; issue 28, "bring
//! your patch") and run in place of [`SchedulerKind::DrrAql`]'s Rust (`drr.rs`; reference
//! §5.4). The core only drives it through [`ExternalScheduler`], as a generation.
//!
//! The kernel's scheduler reads AQL's state from the station's `struct airtime_info`
//! (`aql_tx_pending` in the effective deficit, the AQL checks in `next_txq` and
//! `may_transmit`); here AQL is kept elsewhere (txop's [`crate::mac80211::aql::Aql`], or
//! the kernel's `aql` unit in a radio of its own), so each call that reads it is given
//! what that AQL says, through the closures every generation gets: each station's
//! pending airtime on the AC and whether `ieee80211_txq_airtime_check` passes for it
//! ([`ExternalScheduler::set_aql_view`]), and the per-AC check's answer for the list's
//! length ([`ExternalScheduler::set_ac_over`]).
//!
//! What the [`Book`] keeps still holds: `listed` (from the kernel's lists) and the
//! reported airtime; the deficits and rounds are the kernel's own, not the Book's.

use super::{Book, Generation, SchedulerKind, SchedulerParams};
use crate::mac::edca::Ac;
use crate::mac80211::rate_control::CodeOrigin;
use crate::mac80211::txq::{LinkId, Tid, TxqKey};
use crate::Nanos;

/// Scheduler code loaded by the front end: makes one radio's scheduler.
pub trait SchedulerCode: Send + Sync + std::panic::RefUnwindSafe {
    /// Where the code came from (`unit` is `scheduler`).
    fn origin(&self) -> &CodeOrigin;
    /// A radio with `params`' `airtime_flags` and `n_stations` stations
    /// (`ieee80211_alloc_hw_nm`, `sta_info_alloc`), on a driver that sets
    /// `NL80211_EXT_FEATURE_AIRTIME_FAIRNESS` and `NL80211_EXT_FEATURE_AQL`.
    fn scheduler(&'static self, params: &SchedulerParams) -> Box<dyn ExternalScheduler>;
}

/// A handle on loaded [`SchedulerCode`]: `Copy`, as the code lives as long as the
/// process. Two handles are equal when their code has the same origin.
#[derive(Clone, Copy)]
pub struct ExternalSchedulerCode(pub &'static dyn SchedulerCode);

impl PartialEq for ExternalSchedulerCode {
    fn eq(&self, other: &Self) -> bool {
        self.0.origin() == other.0.origin()
    }
}

impl Eq for ExternalSchedulerCode {}

impl std::fmt::Debug for ExternalSchedulerCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ExternalSchedulerCode")
            .field(self.0.origin())
            .finish()
    }
}

/// One radio's external scheduler. A TXQ is a station's (`sta` `Some`) or the vif's
/// (`None`), with a TID 0–7; times are the run's.
pub trait ExternalScheduler: Send + std::fmt::Debug {
    /// `sta_info_alloc`'s airtime part: the next station (weight and deficit 256).
    fn add_station(&mut self);
    /// The AC a TXQ is filed under (the caller's, as txop files it).
    fn set_txq_ac(&mut self, sta: Option<LinkId>, tid: Tid, ac: Ac);
    /// `__ieee80211_schedule_txq(txq, force)` with `force` "the TXQ has data"
    /// (`ieee80211_schedule_txq` forces; `ieee80211_return_txq` of a TXQ with data).
    fn schedule(&mut self, now: Nanos, sta: Option<LinkId>, tid: Tid, has_data: bool);
    /// Whether the TXQ is on its AC's active list.
    fn listed(&self, sta: Option<LinkId>, tid: Tid) -> bool;
    /// `ieee80211_txq_schedule_start(hw, ac)`.
    fn schedule_start(&mut self, now: Nanos, ac: Ac);
    /// `ieee80211_next_txq(hw, ac)`: the TXQ, or `None`.
    fn next_txq(&mut self, now: Nanos, ac: Ac) -> Option<TxqKey>;
    /// `ieee80211_txq_may_transmit(hw, txq)`.
    fn may_transmit(&mut self, now: Nanos, sta: Option<LinkId>, tid: Tid) -> bool;
    /// `ieee80211_sta_register_airtime(sta, tid, tx, rx)` with a TID of `ac`.
    fn register_airtime(&mut self, now: Nanos, sta: LinkId, ac: Ac, tx_us: u32, rx_us: u32);
    /// The TXQ leaves its active list (`sta_ps_start`'s `list_del_init`).
    fn unschedule(&mut self, sta: Option<LinkId>, tid: Tid);
    /// `sta->airtime_weight` (`sta_apply_parameters`; 0 is ignored).
    fn set_weight(&mut self, sta: LinkId, weight: u16);
    /// The AQL state the scheduler's functions read on `ac`, per station from the
    /// first: the pending airtime and whether `ieee80211_txq_airtime_check` passes.
    fn set_aql_view(&mut self, ac: Ac, pending_us: &[i32], eligible: &[u8]);
    /// The per-AC check's answer on `ac`: over the AC's limit or not.
    fn set_ac_over(&mut self, ac: Ac, over: bool);
    /// TXQs on `ac`'s active list.
    fn active_count(&self, ac: Ac) -> usize;
    /// An independent copy in the same state (a cell is `Clone`).
    fn clone_box(&self) -> Box<dyn ExternalScheduler>;
}

impl Clone for Box<dyn ExternalScheduler> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// Whether external 6.x scheduler code can stand for a scheduler with `params`: the
/// kernel's is 6.12's DRR with AQL-aware deficits as written, with the mainline
/// quantum; or what differs, for a one-line refusal.
pub fn external_supports(params: &SchedulerParams) -> Result<(), String> {
    if params.kind != SchedulerKind::DrrAql {
        return Err(format!(
            "the kernel's scheduler is 6.12's DRR with AQL (drr_aql); this stack runs `{}`",
            params.kind.name()
        ));
    }
    if params.quantum_shift != 0 {
        return Err(format!(
            "the kernel's scheduler has mainline's quantum (the weight); this stack shifts \
             it by {} (OpenWrt)",
            params.quantum_shift
        ));
    }
    if params.may_transmit_aql_check != super::MayTransmitAqlCheck::AsWritten {
        return Err(
            "the kernel's scheduler runs may_transmit's per-AC check as written; this \
             stack flips it (patch the tree instead)"
                .to_string(),
        );
    }
    Ok(())
}

/// The external generation: the loaded code's radio, and which TXQs it has been told
/// the AC of.
#[derive(Clone, Debug)]
pub(super) struct External {
    code: Box<dyn ExternalScheduler>,
    /// Stations the code has.
    stations: usize,
    /// Per TXQ (by [`TxqKey::index`]): its AC has been set.
    filed: Vec<bool>,
    /// Scratch for [`ExternalScheduler::set_aql_view`].
    pending_us: Vec<i32>,
    eligible: Vec<u8>,
}

impl External {
    /// A radio of `code` with `n_stations` stations.
    pub(super) fn new(
        code: ExternalSchedulerCode,
        params: &SchedulerParams,
        n_stations: usize,
    ) -> External {
        let mut e = External {
            code: code.0.scheduler(params),
            stations: 0,
            filed: Vec::new(),
            pending_us: Vec::new(),
            eligible: Vec::new(),
        };
        e.ensure_station(n_stations);
        e
    }

    /// The code has stations `0..n`.
    fn ensure_station(&mut self, n: usize) {
        while self.stations < n {
            self.code.add_station();
            self.stations += 1;
        }
    }

    /// The code knows `txq`'s station and AC.
    fn file(&mut self, txq: TxqKey, ac: Ac) {
        let i = txq.index();
        if self.filed.get(i).copied().unwrap_or(false) {
            return;
        }
        if let Some(sta) = txq.sta {
            self.ensure_station(sta.index() + 1);
        }
        self.code.set_txq_ac(txq.sta, txq.tid, ac);
        if self.filed.len() <= i {
            self.filed.resize(i + 1, false);
        }
        self.filed[i] = true;
    }

    /// Every station's AQL state on `ac` as the closures give it. Eligibility is per
    /// station: `ieee80211_txq_airtime_check` reads only the station's counters.
    fn view_aql(
        &mut self,
        ac: Ac,
        aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) {
        self.pending_us.clear();
        self.eligible.clear();
        for sta in LinkId::all(self.stations) {
            let pending = i32::try_from(aql_pending_us(sta)).unwrap_or(i32::MAX);
            self.pending_us.push(pending);
            self.eligible
                .push(u8::from(aql_eligible(TxqKey::station(sta, Tid(0)))));
        }
        self.code.set_aql_view(ac, &self.pending_us, &self.eligible);
    }

    /// The per-AC check's answer for the list as it is.
    fn view_ac(&mut self, ac: Ac, ac_over_limit: &dyn Fn(usize) -> bool) {
        let over = ac_over_limit(self.code.active_count(ac));
        self.code.set_ac_over(ac, over);
    }
}

impl Generation for External {
    fn schedule_txq(&mut self, book: &mut Book, now: Nanos, txq: TxqKey, ac: Ac, _: bool) {
        self.file(txq, ac);
        self.code.schedule(now, txq.sta, txq.tid, true);
        book.state_mut(txq).listed = true;
    }

    fn schedule_start(&mut self, book: &Book, ac: Ac, ac_over_limit: &dyn Fn(usize) -> bool) {
        self.view_ac(ac, ac_over_limit);
        self.code.schedule_start(book.last_now, ac);
    }

    fn next_txq(
        &mut self,
        book: &mut Book,
        ac: Ac,
        aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) -> Option<TxqKey> {
        self.view_aql(ac, aql_eligible, aql_pending_us);
        let txq = self.code.next_txq(book.last_now, ac)?;
        if let Some(st) = book.txqs.get_mut(&txq) {
            st.listed = false;
        }
        Some(txq)
    }

    fn return_txq(
        &mut self,
        book: &mut Book,
        now: Nanos,
        txq: TxqKey,
        ac: Ac,
        has_data: bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) {
        self.file(txq, ac);
        if txq.sta.is_some() {
            // `ieee80211_txq_keep_active` reads this station's effective deficit.
            let mut eligible = |_| true;
            self.view_aql(ac, &mut eligible, aql_pending_us);
        }
        self.code.schedule(now, txq.sta, txq.tid, has_data);
        book.state_mut(txq).listed = self.code.listed(txq.sta, txq.tid);
    }

    fn unschedule_txq(&mut self, book: &mut Book, _now: Nanos, txq: TxqKey, ac: Ac) {
        self.file(txq, ac);
        self.code.unschedule(txq.sta, txq.tid);
        book.state_mut(txq).listed = false;
    }

    fn may_transmit(
        &mut self,
        book: &mut Book,
        txq: TxqKey,
        ac: Ac,
        aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
        ac_over_limit: &dyn Fn(usize) -> bool,
    ) -> bool {
        self.file(txq, ac);
        self.view_aql(ac, aql_eligible, aql_pending_us);
        self.view_ac(ac, ac_over_limit);
        let allowed = self.code.may_transmit(book.last_now, txq.sta, txq.tid);
        book.state_mut(txq).listed = self.code.listed(txq.sta, txq.tid);
        allowed
    }

    fn charge(&mut self, book: &mut Book, now: Nanos, txq: TxqKey, ac: Ac, charged_us: u32) {
        // The vif's airtime is not charged in 6.x (no station to charge it to).
        let Some(sta) = txq.sta else {
            return;
        };
        self.file(txq, ac);
        // The kernel adds what `airtime_flags` charges of tx and rx; given the sum as
        // tx (or as rx when only rx is charged) it charges the same.
        let (tx, rx) = if book.params.airtime_flags & super::AIRTIME_USE_TX != 0 {
            (charged_us, 0)
        } else {
            (0, charged_us)
        };
        self.code.register_airtime(now, sta, ac, tx, rx);
    }

    fn weight_changed(&mut self, book: &mut Book, sta: LinkId, ac: Ac) {
        self.ensure_station(sta.index() + 1);
        self.code
            .set_weight(sta, book.stas[sta.index()][ac.index()].weight);
    }

    fn active_txq_count(&self, ac: Ac) -> usize {
        self.code.active_count(ac)
    }
}
