//! The state of a firmware stage under mac80211 (issue 30;
//! firmware-queues.md §1.5, §2, §3): what the mt76 driver counts between its TXQ scheduler and the firmware
//! (the band's DMA ring within one worker run), and the airtime an mt76 firmware
//! reports in polled batches. Frames themselves stay in [`super::DriverQueues`]: a
//! frame handed to the firmware is held there, and so holds its token, until its
//! completion; the stage only decides when frames go in and when airtime comes back.
//! The wiring into the transmit path is `txpath/stage.rs`.

use crate::mac::edca::Ac;
use crate::mac80211::txq::{LinkId, Tid};
use crate::Nanos;

/// The TID mt76 reports an AC's airtime under (`*_mac_sta_poll`: tid 0, 1, 4, 6 for
/// BE, BK, VI, VO; firmware-queues.md §2.3 rule F4).
pub(crate) fn mt76_report_tid(ac: Ac) -> Tid {
    match ac {
        Ac::Be => Tid(0),
        Ac::Bk => Tid(1),
        Ac::Vi => Tid(4),
        Ac::Vo => Tid(6),
    }
}

/// One station's airtime for one AC: what an exchange accrues, and what a poll reports
/// (`register_airtime(sta, tid, tx_us, rx_us)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StationAirtime {
    /// The station.
    pub(crate) link: LinkId,
    /// The AC whose WTBL counters increased.
    pub(crate) ac: Ac,
    /// TX airtime (of the exchange, or since the last poll), µs.
    pub(crate) tx_us: u64,
    /// RX airtime, µs.
    pub(crate) rx_us: u64,
}

/// The stations' airtime counters as an mt76 firmware keeps them (the WTBL's per-AC
/// cumulative TX and RX airtime) and the driver's polls of them: airtime accrues per
/// exchange and reaches mac80211 only at a poll, which the TX-free events trigger
/// (firmware-queues.md §2.3 rules F3–F5). The model polls at the first exchange at
/// least `interval` after the last poll, reporting every station and AC that
/// accrued airtime since.
#[derive(Clone, Debug, Default)]
pub(crate) struct AirtimeBatch {
    /// Per link and AC: TX and RX airtime accrued since the last poll, µs.
    accrued: Vec<[(u64, u64); 4]>,
    /// When the last poll ran.
    last_poll: Nanos,
    /// All airtime accrued (TX + RX, µs), for conservation checks.
    pub(crate) accrued_total_us: u64,
    /// All airtime reported at polls (TX + RX, µs).
    pub(crate) reported_total_us: u64,
    /// The longest time accrued airtime waited for its poll.
    pub(crate) max_delay: Nanos,
    /// When the oldest airtime not yet reported accrued.
    oldest: Option<Nanos>,
}

impl AirtimeBatch {
    /// An exchange's airtime accrues to its station's counters of its AC; if
    /// `interval` has passed since the last poll, the poll runs now and its reports
    /// go to `report` (in link order, then AC order VO, VI, BE, BK).
    pub(crate) fn accrue(
        &mut self,
        now: Nanos,
        interval: Nanos,
        exchange: StationAirtime,
        report: &mut impl FnMut(StationAirtime),
    ) {
        let link = exchange.link;
        if self.accrued.len() <= link.index() {
            self.accrued.resize(link.index() + 1, [(0, 0); 4]);
        }
        let a = &mut self.accrued[link.index()][exchange.ac.index()];
        a.0 += exchange.tx_us;
        a.1 += exchange.rx_us;
        self.accrued_total_us += exchange.tx_us + exchange.rx_us;
        self.oldest.get_or_insert(now);
        if now.saturating_sub(self.last_poll) >= interval {
            self.poll(now, report);
        }
    }

    /// Report and clear every counter that increased (`*_mac_sta_poll`).
    fn poll(&mut self, now: Nanos, report: &mut impl FnMut(StationAirtime)) {
        self.last_poll = now;
        if let Some(t) = self.oldest.take() {
            self.max_delay = self.max_delay.max(now.saturating_sub(t));
        }
        for (i, acs) in self.accrued.iter_mut().enumerate() {
            for ac in Ac::ALL {
                let (tx_us, rx_us) = std::mem::take(&mut acs[ac.index()]);
                if tx_us + rx_us == 0 {
                    continue;
                }
                self.reported_total_us += tx_us + rx_us;
                report(StationAirtime {
                    link: LinkId(i as u16),
                    ac,
                    tx_us,
                    rx_us,
                });
            }
        }
    }

    /// Airtime accrued and not yet reported, µs.
    #[cfg(test)]
    pub(crate) fn unreported_us(&self) -> u64 {
        self.accrued_total_us - self.reported_total_us
    }
}

/// The band's TX data ring as one mt76 worker run fills it: the model's DMA reads a
/// written frame at once, so what bounds a run is the ring's room, `ndesc − 32`
/// entries (`mt76_txq_stopped`, firmware-queues.md §2.2 rule M6), and what the next
/// run finds is an empty ring.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RingRun {
    /// Entries written in this worker run.
    pub(crate) written: u32,
    /// The most entries one run wrote.
    pub(crate) peak_written: u32,
}

impl RingRun {
    /// A worker run starts with the ring drained.
    pub(crate) fn start(&mut self) {
        self.written = 0;
    }

    /// The ring is stopped: `written` has reached `writable`.
    pub(crate) fn stopped(&self, writable: u32) -> bool {
        self.written >= writable
    }

    /// One frame written.
    pub(crate) fn write(&mut self) {
        self.written += 1;
        self.peak_written = self.peak_written.max(self.written);
    }
}

/// What a firmware stage keeps between calls.
#[derive(Clone, Debug, Default)]
pub(crate) struct FirmwareState {
    /// mt76's ring within the current worker run.
    pub(crate) ring: RingRun,
    /// mt76's polled airtime counters.
    pub(crate) airtime: AirtimeBatch,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every microsecond accrued is reported exactly once, at a poll no earlier than
    /// the interval after the previous one; between polls nothing is reported.
    #[test]
    fn polls_report_what_accrued() {
        let mut b = AirtimeBatch::default();
        let interval = Nanos::from_ms(1);
        let mut reports = Vec::new();
        let mut accrued = 0u64;
        // Exchanges every 300 µs to two stations, alternating ACs.
        for i in 0..100u64 {
            let now = Nanos::from_us(300 * (i + 1));
            let link = LinkId((i % 2) as u16);
            let ac = if i % 3 == 0 { Ac::Vi } else { Ac::Be };
            let (tx_us, rx_us) = (100 + i, i % 5);
            accrued += tx_us + rx_us;
            let before = reports.len();
            let exchange = StationAirtime {
                link,
                ac,
                tx_us,
                rx_us,
            };
            b.accrue(now, interval, exchange, &mut |r| reports.push((now, r)));
            if reports.len() > before {
                assert!(now.as_ns() >= 1_000_000, "a poll before the first interval");
            }
        }
        let reported: u64 = reports.iter().map(|(_, r)| r.tx_us + r.rx_us).sum();
        assert_eq!(reported + b.unreported_us(), accrued);
        assert_eq!(b.accrued_total_us, accrued);
        // Polls at least 1 ms apart: at 300 µs per exchange, every 4th exchange.
        let mut polls: Vec<Nanos> = reports.iter().map(|(t, _)| *t).collect();
        polls.dedup();
        for w in polls.windows(2) {
            assert!(w[1].saturating_sub(w[0]) >= interval);
        }
        assert_eq!(polls.len(), 25, "{polls:?}");
        // Airtime waited at most the interval plus one exchange spacing.
        assert!(b.max_delay <= Nanos::from_us(1_200), "{:?}", b.max_delay);
    }

    /// A zero interval polls at every exchange: each report is that exchange's own.
    #[test]
    fn zero_interval_reports_each_exchange() {
        let mut b = AirtimeBatch::default();
        let mut got = Vec::new();
        let exchange = StationAirtime {
            link: LinkId(3),
            ac: Ac::Vo,
            tx_us: 40,
            rx_us: 0,
        };
        b.accrue(Nanos::from_us(5), Nanos::ZERO, exchange, &mut |r| {
            got.push(r)
        });
        assert_eq!(got, vec![exchange]);
        assert_eq!(b.unreported_us(), 0);
        assert_eq!(mt76_report_tid(Ac::Vo), Tid(6));
    }

    #[test]
    fn ring_stops_at_its_room() {
        let mut r = RingRun::default();
        r.start();
        let writable = 2048 - 32;
        let mut n = 0;
        while !r.stopped(writable) {
            r.write();
            n += 1;
        }
        assert_eq!(n, 2016);
        r.start();
        assert!(!r.stopped(writable));
        assert_eq!(r.peak_written, 2016);
    }
}
