//! Legacy stations in HT/VHT cells, as scenarios give them: `rate_mbps` per station,
//! `mac.protection`, and the errors for what cannot be.

mod support;
use support::*;

use txop::scenario::parse;
use txop_core::cell::CellConfig;
use txop_core::mac::protection::Protection;
use txop_core::phy::{ChannelWidth, DsssPreamble, GuardInterval, TxVector};

fn sets(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn cell(text: &str, overrides: &[(&str, &str)]) -> CellConfig {
    let s = parse(text, &sets(overrides)).expect("parses");
    s.resolve().expect("resolves").cell
}

fn err(text: &str, overrides: &[(&str, &str)]) -> String {
    match parse(text, &sets(overrides)).and_then(|s| s.resolve().map(|_| ())) {
        Ok(()) => panic!("expected an error for {text:?} {overrides:?}"),
        Err(e) => e.to_string(),
    }
}

fn rates(c: &CellConfig) -> Vec<TxVector> {
    c.stations.iter().map(|s| s.tx).collect()
}

const HT7: TxVector = TxVector::Ht {
    mcs: 7,
    width: ChannelWidth::Mhz20,
    gi: GuardInterval::Long,
};

fn dsss(rate_kbps: u32, preamble: DsssPreamble) -> TxVector {
    TxVector::Dsss {
        rate_kbps,
        preamble,
    }
}

/// The command: the default scenario in 2.4 GHz with its slow station replaced
/// by an 802.11b one at 2 Mbit/s.
#[test]
fn an_802_11b_station_joins_the_default_cell() {
    let text = txop::builtin::get("default").unwrap();
    let c = cell(
        text,
        &[("phy.band", "2.4"), ("stations.list[1]", "{rate_mbps=2}")],
    );
    assert_eq!(
        rates(&c),
        [HT7, HT7, HT7, dsss(2000, DsssPreamble::Long)],
        "the entry's own rate replaces the inherited mcs"
    );
    assert!(c.non_erp_present());
    assert_eq!(c.protection, Protection::CtsToSelf);
    for (value, p) in [
        ("off", Protection::Off),
        ("rts-cts", Protection::RtsCts),
        ("cts-to-self", Protection::CtsToSelf),
    ] {
        let c = cell(
            text,
            &[
                ("phy.band", "2.4"),
                ("stations.list[1]", "{rate_mbps=2}"),
                ("mac.protection", value),
            ],
        );
        assert_eq!(c.protection, p);
    }
    // And it runs.
    let o = txop(&[
        "run",
        "default",
        "--set",
        "phy.band=2.4",
        "--set",
        "stations.list[1]={rate_mbps=2}",
        "--set",
        "duration_s=0.5",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("DSSS 2 Mbit/s long"), "{}", stdout(&o));
}

#[test]
fn legacy_rates_in_ht_and_vht_cells() {
    // 802.11a/g (OFDM) stations among HT ones, either band; among VHT ones in 5 GHz.
    for band in ["2.4", "5"] {
        let c = cell(
            "[[stations.list]]\nmcs = 7\n[[stations.list]]\nrate_mbps = 54\n",
            &[("phy.band", band)],
        );
        assert_eq!(rates(&c), [HT7, TxVector::Ofdm { rate_mbps: 54 }]);
        assert!(!c.non_erp_present(), "OFDM stations need no ERP protection");
    }
    let c = cell(
        "[phy]\nstandard = \"ac\"\n[stations]\nmcs = 8\n\
         [[stations.list]]\n[[stations.list]]\nrate_mbps = 6\n",
        &[],
    );
    assert_eq!(rates(&c)[1], TxVector::Ofdm { rate_mbps: 6 });
    // 802.11b stations in 2.4 GHz 802.11g and n cells, with the BSS's DSSS preamble
    // (1 Mbit/s has only the long one).
    let c = cell(
        "[phy]\nstandard = \"g\"\nband = \"2.4\"\npreamble = \"short\"\n\
         [[stations.list]]\nrate_mbps = 54\n[[stations.list]]\nrate_mbps = 5.5\n",
        &[],
    );
    assert_eq!(
        rates(&c),
        [
            TxVector::Ofdm { rate_mbps: 54 },
            dsss(5500, DsssPreamble::Short)
        ]
    );
    assert!(c.non_erp_present());
    let c = cell(
        "[phy]\nband = \"2.4\"\n[stations]\nmcs = 7\n\
         [[stations.list]]\ncount = 2\n[[stations.list]]\nrate_mbps = 1\n",
        &[],
    );
    assert_eq!(rates(&c), [HT7, HT7, dsss(1000, DsssPreamble::Long)]);
    // An 802.11b cell is unchanged.
    let c = cell("[phy]\nstandard = \"b\"\nband = \"2.4\"\n", &[]);
    assert_eq!(rates(&c), [dsss(11000, DsssPreamble::Long)]);
    assert!(!c.non_erp_present());
}

#[test]
fn impossible_legacy_rates_name_the_key() {
    let two = "[[stations.list]]\nmcs = 7\n[[stations.list]]\n";
    assert_eq!(
        err(&format!("{two}rate_mbps = 2\n"), &[]),
        "stations.list[1].rate_mbps: 2 Mbit/s is an 802.11b (DSSS) rate: \
         802.11b, g and n carry it in 2.4 GHz only"
    );
    assert_eq!(
        err(&format!("{two}rate_mbps = 7\n"), &[]),
        "stations.list[1].rate_mbps: OFDM rate 7 Mbit/s is not one of 6, 9, 12, 18, 24, 36, 48, 54"
    );
    assert_eq!(
        err(&format!("{two}rate_mbps = 6\nmcs = 3\n"), &[]),
        "stations.list[1].rate_mbps: give mcs (an HT/VHT station) or rate_mbps (a legacy \
         one), not both"
    );
    assert_eq!(
        err("[stations]\nmcs = 7\nrate_mbps = 6\n", &[]),
        "stations.rate_mbps: give mcs (an HT/VHT station) or rate_mbps (a legacy one), not both"
    );
    assert_eq!(
        err(
            "[phy]\nstandard = \"ac\"\n[[stations.list]]\nrate_mbps = 6\nnss = 2\n",
            &[]
        ),
        "stations.list[0].nss: nss goes with mcs; a legacy (rate_mbps) station has one stream"
    );
    assert_eq!(
        err("[phy]\npreamble = \"short\"\n", &[]),
        "phy.preamble: the DSSS preamble applies to DSSS rates: 802.11b, or 802.11g/n in 2.4 GHz"
    );
    assert_eq!(
        err(
            "[phy]\nband = \"2.4\"\npreamble = \"short\"\n[stations]\nrate_mbps = 1\n",
            &[]
        ),
        "stations.rate_mbps: DSSS short preamble is not allowed at 1 Mbit/s"
    );
    assert!(err("", &[("mac.protection", "sometimes")]).starts_with("mac.protection: "));
    // Through the command line: one line, exit 2.
    assert_user_error(
        &["run", "default", "--set", "stations.list[1]={rate_mbps=2}"],
        &["stations.list[1].rate_mbps", "2.4 GHz only"],
    );
}

/// The built-in `atf-30-stations`: the ath9k airtime-fairness commit's test. Without
/// airtime fairness (4.9) the 1 Mbit/s station takes most of the airtime; with it
/// (4.11) every station gets a thirtieth and the total rises several-fold (the commit:
/// ×8.3). Protection costs the HT stations throughput, RTS/CTS more than CTS-to-self.
#[test]
fn atf_30_stations_reproduces_the_commit() {
    let text = txop::builtin::get("atf-30-stations").expect("built in");
    let run = |stack: &str, protection: &str| {
        let s = parse(
            text,
            &sets(&[
                ("stack", stack),
                ("mac.protection", protection),
                ("duration_s", "5"),
            ]),
        )
        .expect("parses");
        let cfg = s.resolve().expect("resolves");
        assert_eq!(cfg.cell.stations.len(), 30);
        assert!(cfg.cell.non_erp_present());
        txop_sim::Simulation::new(cfg).expect("valid").run()
    };
    let before = run("linux-4.9", "cts-to-self");
    let after = run("linux-4.11-ath9k", "cts-to-self");
    let gain = after.total_throughput_bps / before.total_throughput_bps;
    assert!(
        before.stations[29].airtime_share > 0.8,
        "slow station's airtime before: {}",
        before.stations[29].airtime_share
    );
    assert!(gain > 4.0, "gain ×{gain:.1}");
    assert!(
        after.airtime_jain_index > 0.95,
        "{}",
        after.airtime_jain_index
    );
    let off = run("linux-4.11-ath9k", "off").total_throughput_bps;
    let rts = run("linux-4.11-ath9k", "rts-cts").total_throughput_bps;
    let cts = after.total_throughput_bps;
    assert!(rts < cts && cts < off, "rts {rts} cts {cts} off {off}");
}
