//! Rates: the SNR at a distance, the channel width, and each station's transmit vector.

use crate::error::ScenarioError;
use crate::inherit::Link;
use crate::schema::Scenario;
use txop_core::phy::channel::best_rate_for_snr;
use txop_core::phy::path_loss::snr_at_distance;
use txop_core::phy::timing::PhyTiming;
use txop_core::phy::{
    ChannelWidth, DsssPreamble, HeFormat, HeGuardInterval, HeLtf, NominalPacketPadding, Standard,
    TxVector,
};

/// The HE settings of `[phy]` every HE station of the BSS uses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HeSettings {
    gi: HeGuardInterval,
    ltf: HeLtf,
    format: HeFormat,
    pe: NominalPacketPadding,
}

impl HeSettings {
    /// HE-MCS `mcs` with `nss` streams in `width`.
    fn vector(self, mcs: u8, nss: u8, width: ChannelWidth) -> TxVector {
        TxVector::He {
            mcs,
            nss,
            width,
            gi: self.gi,
            ltf: self.ltf,
            format: self.format,
            pe: self.pe,
        }
    }
}

impl Scenario {
    /// The SNR (dB) at `distance_m` from the AP: transmit power minus a log-distance
    /// path loss (free space to 1 m at the band's centre frequency, then
    /// `10·n·log10(d)`), over thermal noise in the channel width with a 7 dB noise
    /// figure. Not a fading model: one mean SNR per station.
    pub(crate) fn snr_at(
        &self,
        key: &str,
        distance_m: f64,
        width: ChannelWidth,
    ) -> Result<f64, ScenarioError> {
        if !(distance_m.is_finite() && distance_m > 0.0 && distance_m <= 10_000.0) {
            return Err(ScenarioError::new(
                key,
                "must be more than 0 and at most 10000 m",
            ));
        }
        let budget = self.path_loss(width)?;
        Ok(snr_at_distance(
            budget.tx_power_dbm,
            budget.exponent,
            budget.band,
            budget.width,
            distance_m,
        ))
    }

    pub(crate) fn width(&self) -> Result<ChannelWidth, ScenarioError> {
        match self.phy.width_mhz {
            20 => Ok(ChannelWidth::Mhz20),
            40 => Ok(ChannelWidth::Mhz40),
            80 => Ok(ChannelWidth::Mhz80),
            160 => Ok(ChannelWidth::Mhz160),
            w => Err(ScenarioError::new(
                "phy.width_mhz",
                format!("{w} MHz is not supported (20, 40, 80 or 160)"),
            )),
        }
    }

    /// The `he_*` keys of `[phy]`, checked: only in an 802.11ax BSS; GI 0.8, 1.6 or
    /// 3.2 µs; an HE-LTF the standard pairs with that GI; PE 0, 8 or 16 µs; ER SU only
    /// at 20 MHz. Defaults: GI 0.8, 2x HE-LTF, SU, PE 0 (`phy/he.rs` says why).
    pub(crate) fn he_settings(&self, width: ChannelWidth) -> Result<HeSettings, ScenarioError> {
        let p = &self.phy;
        if p.standard != Standard::Ax {
            let given = [
                ("he_gi_us", p.he_gi_us.is_some()),
                ("he_ltf", p.he_ltf.is_some()),
                ("he_pe_us", p.he_pe_us.is_some()),
                ("he_format", p.he_format.is_some()),
            ];
            if let Some((key, _)) = given.iter().find(|(_, g)| *g) {
                return Err(ScenarioError::new(
                    format!("phy.{key}"),
                    "applies to 802.11ax (phy.standard = \"ax\") only",
                ));
            }
        }
        let gi = match p.he_gi_us {
            None => HeGuardInterval::Us0_8,
            Some(0.8) => HeGuardInterval::Us0_8,
            Some(1.6) => HeGuardInterval::Us1_6,
            Some(3.2) => HeGuardInterval::Us3_2,
            Some(g) => {
                return Err(ScenarioError::new(
                    "phy.he_gi_us",
                    format!("{g} µs is not an HE guard interval (0.8, 1.6 or 3.2)"),
                ))
            }
        };
        let ltf = p.he_ltf.unwrap_or(match gi {
            HeGuardInterval::Us3_2 => HeLtf::X4,
            _ => HeLtf::X2,
        });
        let pe = match p.he_pe_us.unwrap_or(0) {
            0 => NominalPacketPadding::Us0,
            8 => NominalPacketPadding::Us8,
            16 => NominalPacketPadding::Us16,
            v => {
                return Err(ScenarioError::new(
                    "phy.he_pe_us",
                    format!("{v} µs is not a nominal packet padding (0, 8 or 16)"),
                ))
            }
        };
        let format = p.he_format.unwrap_or(HeFormat::Su);
        let he = HeSettings {
            gi,
            ltf,
            format,
            pe,
        };
        // The lowest rate of the BSS's format and width names a pairing error at its
        // key (a station's own MCS and streams are checked with the station).
        if let Err(e) = he.vector(0, 1, width).validate() {
            let key = if format == HeFormat::ErSu {
                "phy.he_format"
            } else {
                "phy.he_ltf"
            };
            return Err(ScenarioError::new(key, e));
        }
        Ok(he)
    }

    /// The rates a station may use in this BSS, lowest first (for SNR-based choice).
    pub(crate) fn candidate_rates(&self, width: ChannelWidth, nss: u8) -> Vec<TxVector> {
        let gi = self.phy.guard_interval;
        match self.phy.standard {
            Standard::B => [1000, 2000, 5500, 11000]
                .map(|r| TxVector::Dsss {
                    rate_kbps: r,
                    preamble: if r == 1000 {
                        DsssPreamble::Long
                    } else {
                        self.phy.preamble
                    },
                })
                .to_vec(),
            Standard::A | Standard::G => [6, 9, 12, 18, 24, 36, 48, 54]
                .map(|r| TxVector::Ofdm { rate_mbps: r })
                .to_vec(),
            Standard::N => (0..8u8)
                .map(|m| TxVector::Ht {
                    mcs: m + 8 * (nss.saturating_sub(1)),
                    width,
                    gi,
                })
                .collect(),
            Standard::Ac => (0..10u8)
                .map(|mcs| TxVector::Vht {
                    mcs,
                    nss,
                    width,
                    gi,
                })
                .filter(|t| t.validate().is_ok())
                .collect(),
            Standard::Ax => match self.he_settings(width) {
                Ok(he) => (0..=txop_core::phy::he::HE_MAX_MCS)
                    .map(|mcs| he.vector(mcs, nss, width))
                    .filter(|t| t.validate().is_ok())
                    .collect(),
                // Checked with the PHY before any station is resolved.
                Err(_) => Vec::new(),
            },
        }
    }

    /// The rate fixed for one direction of a station's link (`dir`: `downlink` or
    /// `uplink`), if its table gives `mcs` or `rate_mbps`: resolved as the station's own
    /// rate is, with the station's streams and the BSS's width and guard interval.
    pub(crate) fn fixed_direction_rate(
        &self,
        key: &str,
        dir: &str,
        l: &Link,
        width: ChannelWidth,
    ) -> Result<Option<TxVector>, ScenarioError> {
        let spec = if dir == "downlink" {
            l.downlink.as_ref()
        } else {
            l.uplink.as_ref()
        };
        let Some(spec) = spec.filter(|d| d.mcs.is_some() || d.rate_mbps.is_some()) else {
            return Ok(None);
        };
        let mut own = l.clone();
        own.keys.mcs = spec.mcs;
        own.keys.rate_mbps = spec.rate_mbps;
        let dkey = format!("{}.{dir}", l.owner(key, dir));
        self.tx_vector(&dkey, &own, width).map(Some)
    }

    pub(crate) fn tx_vector(
        &self,
        key: &str,
        l: &Link,
        width: ChannelWidth,
    ) -> Result<TxVector, ScenarioError> {
        let gi = self.phy.guard_interval;
        let std = self.phy.standard;
        let nss = l.nss.unwrap_or(1);
        let legacy = matches!(std, Standard::A | Standard::B | Standard::G);
        if legacy && l.mcs.is_some() {
            return Err(ScenarioError::new(
                format!("{key}.mcs"),
                "802.11a/b/g stations take rate_mbps, not an MCS",
            ));
        }
        if l.mcs.is_some() && l.rate_mbps.is_some() {
            return Err(ScenarioError::new(
                format!("{key}.rate_mbps"),
                "give mcs (an HT/VHT station) or rate_mbps (a legacy one), not both",
            ));
        }
        if l.nss.is_some() && !matches!(std, Standard::Ac | Standard::Ax) {
            return Err(ScenarioError::new(
                format!("{key}.nss"),
                "nss applies to 802.11ac and ax only (HT MCS 8–15 are two streams)",
            ));
        }
        if l.nss.is_some() && l.rate_mbps.is_some() {
            return Err(ScenarioError::new(
                format!("{key}.nss"),
                "nss goes with mcs; a legacy (rate_mbps) station has one stream",
            ));
        }
        let dsss_bss = std == Standard::B || PhyTiming::non_erp_applies(std, self.phy.band);
        if !dsss_bss && self.phy.preamble == DsssPreamble::Short {
            return Err(ScenarioError::new(
                "phy.preamble",
                "the DSSS preamble applies to DSSS rates: 802.11b, or 802.11g/n in 2.4 GHz",
            ));
        }
        let explicit = match (std, l.rate_mbps) {
            (_, Some(r)) => Some(self.legacy_vector(key, r)?),
            (Standard::N, None) => l.mcs.map(|mcs| TxVector::Ht { mcs, width, gi }),
            (Standard::Ac, None) => l.mcs.map(|mcs| TxVector::Vht {
                mcs,
                nss,
                width,
                gi,
            }),
            (Standard::Ax, None) => match l.mcs {
                Some(mcs) => Some(self.he_settings(width)?.vector(mcs, nss, width)),
                None => None,
            },
            (Standard::A | Standard::B | Standard::G, None) => None,
        };
        let field = if legacy || l.rate_mbps.is_some() {
            "rate_mbps"
        } else {
            "mcs"
        };
        let tx = match (explicit, l.snr_db) {
            (Some(t), _) => t,
            (None, Some(snr)) => best_rate_for_snr(&self.candidate_rates(width, nss), snr),
            (None, None) => match std {
                Standard::B => TxVector::Dsss {
                    rate_kbps: 11_000,
                    preamble: self.phy.preamble,
                },
                Standard::A | Standard::G => TxVector::Ofdm { rate_mbps: 54 },
                Standard::N => TxVector::Ht { mcs: 7, width, gi },
                Standard::Ac => TxVector::Vht {
                    mcs: 9.min(if width == ChannelWidth::Mhz20 { 8 } else { 9 }),
                    nss,
                    width,
                    gi,
                },
                // The fastest rate of the format: HE-MCS 11, or 2 in an ER SU PPDU.
                Standard::Ax => {
                    let he = self.he_settings(width)?;
                    let mcs = match he.format {
                        HeFormat::Su => txop_core::phy::he::HE_MAX_MCS,
                        HeFormat::ErSu => 2,
                    };
                    he.vector(mcs, nss, width)
                }
            },
        };
        tx.validate()
            .map_err(|e| ScenarioError::new(format!("{key}.{field}"), e))?;
        Ok(tx)
    }

    /// A station's legacy `rate_mbps`: DSSS/HR-DSSS (with `phy.preamble`) in an 802.11b
    /// BSS and, at 1, 2, 5.5 and 11 Mbit/s, in a 2.4 GHz 802.11g/n BSS (an 802.11b
    /// station: the cell turns ERP protection and the long slot on); OFDM otherwise (an
    /// 802.11a/g station, in an 802.11n/ac BSS too). The vector is validated by the
    /// caller.
    pub(crate) fn legacy_vector(
        &self,
        key: &str,
        rate_mbps: f64,
    ) -> Result<TxVector, ScenarioError> {
        let std = self.phy.standard;
        let dsss = TxVector::Dsss {
            rate_kbps: (rate_mbps * 1000.0).round() as u32,
            preamble: self.phy.preamble,
        };
        if std == Standard::B {
            return Ok(dsss);
        }
        if [1.0, 2.0, 5.5, 11.0].contains(&rate_mbps) {
            if !PhyTiming::non_erp_applies(std, self.phy.band) {
                return Err(ScenarioError::new(
                    format!("{key}.rate_mbps"),
                    format!(
                        "{rate_mbps} Mbit/s is an 802.11b (DSSS) rate: 802.11b, g and n \
                         carry it in 2.4 GHz only"
                    ),
                ));
            }
            return Ok(dsss);
        }
        Ok(TxVector::Ofdm {
            rate_mbps: if rate_mbps.fract() == 0.0 {
                rate_mbps as u32
            } else {
                0
            },
        })
    }
}
