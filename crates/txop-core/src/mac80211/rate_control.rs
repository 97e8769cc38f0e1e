//! Which rate control picks a station's rates, and what the hardware offers it.
//!
//! mac80211 runs one rate control per station (`rate_control_ops`): minstrel_ht on
//! every modelled driver that leaves rate control to the host (rate-control.md §1).
//! `fixed` keeps one configured rate (txop before rate control; what the Bianchi
//! validation uses) and `ideal` is an SNR oracle, an upper bound as ns-3's
//! `IdealWifiManager`.

/// The rate control of a station's links.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RateControlKind {
    /// The configured rate for every PPDU.
    #[default]
    Fixed,
    /// The best rate for the link's SNR at the moment the PPDU is built.
    Ideal,
    /// minstrel_ht; `None` runs the era of the station's stack.
    MinstrelHt(Option<MinstrelEra>),
}

impl RateControlKind {
    /// Every kind, by the name a scenario gives it.
    pub const NAMES: [(&'static str, RateControlKind); 5] = [
        ("fixed", RateControlKind::Fixed),
        ("ideal", RateControlKind::Ideal),
        ("minstrel_ht", RateControlKind::MinstrelHt(None)),
        (
            "minstrel_ht-5.10",
            RateControlKind::MinstrelHt(Some(MinstrelEra::Linux5_10)),
        ),
        (
            "minstrel_ht-6",
            RateControlKind::MinstrelHt(Some(MinstrelEra::Linux6)),
        ),
    ];

    /// The kind called `name`, or `None`.
    pub fn from_name(name: &str) -> Option<RateControlKind> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, k)| k)
    }

    /// The name a scenario gives this kind.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("fixed", |&(n, _)| n)
    }
}

/// The two designs of minstrel_ht Linux has run (rate-control.md §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinstrelEra {
    /// Up to 5.10: EWMA statistics and look-around sampling of about 10 % of frames.
    Linux5_10,
    /// 5.11 and later (6.x): the noise filter, and at most one probe per 20 ms from the
    /// INC/JUMP/SLOW lists.
    Linux6,
}

/// What the hardware offers rate control (`struct ieee80211_hw`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HwRateCaps {
    /// Stages of a retry chain the hardware executes (`hw->max_rates`; ath9k 4).
    pub max_rates: u8,
    /// Tries of all stages together (`hw->max_rate_tries`; ath9k 10, mac80211's
    /// default 7 when a driver sets none).
    pub max_rate_tries: u8,
}

impl HwRateCaps {
    /// ath9k (`ath9k_set_hw_capab`): 4 rate slots, 10 tries.
    pub const ATH9K: HwRateCaps = HwRateCaps {
        max_rates: 4,
        max_rate_tries: 10,
    };
}
