//! The crate's unit tests: parsing, overrides, inheritance and resolution together, by
//! the errors and configurations a scenario gives.

use super::*;
use crate::overrides::table_keys;
use crate::parse::parse;
use txop_core::cell::{StationConfig, StationPowerSave, StationScan};
use txop_core::mac80211::powersave::PowerSaveConfig;
use txop_core::mac80211::rate_control::RateControlKind;
use txop_core::mac80211::scan::{ScanBands, ScanConfig, ScanPolicy};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::fading::Fading;
use txop_core::phy::link_channel::StationChannel;
use txop_core::phy::path_loss::{snr_at_distance, LogDistance};
use txop_core::phy::{Band, ChannelWidth, GuardInterval, TxVector};
use txop_core::{Nanos, StationId};
use txop_sim::tcp::CongestionControl;
use txop_sim::traffic::{Flow, Host};
use txop_sim::{BusConfig, Completion, DataMode, SimConfig};

fn err(text: &str, sets: &[(&str, &str)]) -> String {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match parse(text, &sets).and_then(|s| s.resolve().map(|_| ())) {
        Ok(()) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn defaults_resolve() {
    let s = parse("", &[]).unwrap();
    let cfg = s.resolve().unwrap();
    assert_eq!(cfg.cell.stations.len(), 1);
    assert_eq!(cfg.flows.len(), 1);
}

#[test]
fn overrides_set_nested_keys_and_types() {
    let sets = vec![
        ("stations.count".to_string(), "20".to_string()),
        ("phy.standard".to_string(), "ac".to_string()),
        ("phy.width_mhz".to_string(), "80".to_string()),
        ("traffic.direction".to_string(), "both".to_string()),
    ];
    let s = parse("[stations]\ncount = 2\n", &sets).unwrap();
    let cfg = s.resolve().unwrap();
    assert_eq!(cfg.cell.stations.len(), 20);
    assert_eq!(cfg.flows.len(), 40);
}

#[test]
fn unknown_key_names_path_and_suggests() {
    let e = err("[stations]\ncout = 3\n", &[]);
    assert_eq!(e, "stations.cout: unknown key (did you mean `count`?)");
    let e = err("", &[("phy.standrd", "n")]);
    assert!(e.contains("did you mean `standard`"), "{e}");
}

#[test]
fn wrong_type_names_key() {
    let e = err("[stations]\ncount = \"many\"\n", &[]);
    assert!(e.starts_with("stations.count: invalid type"), "{e}");
}

#[test]
fn impossible_values_name_the_key() {
    assert!(err("[stations]\nmcs = 16\n", &[]).starts_with("stations.mcs:"));
    let e = err(
        "[phy]\nstandard = \"ac\"\nwidth_mhz = 20\n[stations]\nmcs = 9\n",
        &[],
    );
    assert!(e.starts_with("stations.mcs:") && e.contains("MCS 9"), "{e}");
    let e = err("[phy]\nstandard = \"ac\"\nband = \"2.4\"\n", &[]);
    assert!(e.starts_with("phy.band:"), "{e}");
    assert!(err("[stations]\nloss = 1.5\n", &[]).starts_with("stations.loss:"));
    assert!(err("duration_s = -1\n", &[]).starts_with("duration_s:"));
    assert!(err("[phy]\nstandard = \"a\"\n[stations]\nmcs = 3\n", &[]).starts_with("stations.mcs:"));
    let e = err(
        "[[stations.list]]\nmcs = 3\n[[stations.list]]\nmcs = 20\n",
        &[],
    );
    assert!(e.starts_with("stations.list[1].mcs:"), "{e}");
}

#[test]
fn station_list_expands_counts_and_inherits() {
    let text = "[stations]\nsnr_db = 40\n[[stations.list]]\ncount = 29\nmcs = 7\n\
                    [[stations.list]]\nmcs = 0\n";
    let cfg = parse(text, &[]).unwrap().resolve().unwrap();
    assert_eq!(cfg.cell.stations.len(), 30);
    assert_eq!(
        cfg.cell.stations[29].tx,
        TxVector::Ht {
            mcs: 0,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long
        }
    );
    assert_eq!(cfg.cell.stations[0].error, ErrorModel::Snr { snr_db: 40.0 });
}

#[test]
fn snr_without_rate_picks_a_rate() {
    let cfg = parse("[stations]\nsnr_db = 5\n", &[])
        .unwrap()
        .resolve()
        .unwrap();
    // HT MCS0 needs 4 dB for 10 % PER on 1000 B; MCS1 needs 7 dB.
    assert_eq!(
        cfg.cell.stations[0].tx,
        TxVector::Ht {
            mcs: 0,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long
        }
    );
}

#[test]
fn explicit_flows_resolve_and_replace_the_bulk_traffic() {
    let text = "[stations]\ncount = 2\n\
            [[flows]]\nkind = \"ping\"\nfrom = \"sta1\"\nto = \"server\"\ninterval_ms = 1000\n\
            [[flows]]\nkind = \"tcp\"\nfrom = \"server\"\nto = \"sta2\"\nstart_s = 5\ncc = \"newreno\"\n\
            [[flows]]\nkind = \"cbr\"\nfrom = \"ap\"\nto = \"sta1\"\nrate_mbps = 2\n";
    let cfg = parse(text, &[]).unwrap().resolve().unwrap();
    assert_eq!(cfg.flows.len(), 3);
    match &cfg.flows[0] {
        Flow::Ping(p) => {
            assert_eq!((p.from, p.to), (Host::Station(1), Host::Server));
            assert_eq!(p.interval, Nanos::from_ms(1000));
        }
        f => panic!("{f:?}"),
    }
    match &cfg.flows[1] {
        Flow::Tcp(t) => {
            assert_eq!(t.start, Nanos::from_secs(5));
            assert_eq!(t.cfg.cc, CongestionControl::NewReno);
            assert_eq!(t.receiver, Host::Station(2));
        }
        f => panic!("{f:?}"),
    }
    assert!(matches!(&cfg.flows[2], Flow::Cbr(c) if c.rate_bps == 2_000_000));
}

#[test]
fn bbr_is_a_choice_of_cc() {
    let text = "[stations]\ncount = 1\n[traffic]\ntest = \"tcp_ndown\"\n";
    let set = [("traffic.cc".to_string(), "bbr".to_string())];
    let cfg = parse(text, &set).unwrap().resolve().unwrap();
    let tcp: Vec<_> = cfg
        .flows
        .iter()
        .filter_map(|f| match f {
            Flow::Tcp(t) => Some(t.cfg.cc),
            _ => None,
        })
        .collect();
    assert_eq!(tcp, vec![CongestionControl::Bbr; 4]);
    let text = "[stations]\ncount = 1\n[[flows]]\nkind = \"tcp\"\nfrom = \"server\"\n\
            to = \"sta1\"\ncc = \"bbr\"\n";
    let cfg = parse(text, &[]).unwrap().resolve().unwrap();
    assert!(matches!(&cfg.flows[0], Flow::Tcp(t) if t.cfg.cc == CongestionControl::Bbr));
}

#[test]
fn explicit_flow_errors_name_the_entry_and_key() {
    let flow = |body: &str| format!("[stations]\ncount = 2\n[[flows]]\n{body}\n");
    let e = err(
        &flow("kind = \"ping\"\nfrom = \"sta3\"\nto = \"server\""),
        &[],
    );
    assert_eq!(e, "flows[0].from: no station 3 (the cell has 2)");
    let e = err(
        &flow("kind = \"ping\"\nfrom = \"sta1\"\nto = \"sta2\""),
        &[],
    );
    assert!(e.starts_with("flows[0].to: must be across the air"), "{e}");
    let e = err(
        &flow("kind = \"ping\"\nfrom = \"sta1\"\nto = \"server\"\nrate_mbps = 3"),
        &[],
    );
    assert_eq!(e, "flows[0].rate_mbps: does not apply to a ping flow");
    let e = err(
        &flow("kind = \"tcp\"\nfrom = \"server\"\nto = \"sta1\"\nstart_s = 5\nstop_s = 2"),
        &[],
    );
    assert_eq!(e, "flows[0].stop_s: must be after start_s");
    let e = err(
        &flow("kind = \"quic\"\nfrom = \"server\"\nto = \"sta1\""),
        &[],
    );
    assert!(e.starts_with("flows[0].kind"), "{e}");
}
fn resolved(text: &str) -> SimConfig {
    parse(text, &[]).unwrap().resolve().unwrap()
}

#[test]
fn scan_power_save_bus_and_beacon_keys_resolve() {
    let cfg = resolved(
        "[mac]\nbeacon_interval_tu = 50\ndtim_period = 3\nbeacons = true\n\
             [stations]\nscan = { policy = \"legacy\", bands = 5, pause_s = 2 }\n\
             power_save = {}\nbus = \"sdio-generic\"\n",
    );
    let c = &cfg.cell;
    assert_eq!(
        (c.beacon_interval_tu, c.dtim_period, c.beacons),
        (50, 3, true)
    );
    // The scan table's defaults are the model's ath9k-class ones, from 1 s.
    let scan = ScanConfig::periodic(
        ScanPolicy::Legacy,
        ScanBands::Ghz5,
        Nanos::from_secs(1),
        Nanos::from_secs(2),
    );
    assert_eq!(
        c.station_scans,
        vec![StationScan {
            station: StationId(1),
            scan
        }]
    );
    assert_eq!(
        c.station_power_save,
        vec![StationPowerSave {
            station: StationId(1),
            power_save: PowerSaveConfig::default()
        }]
    );
    assert_eq!(cfg.host_bus, vec![Some(BusConfig::sdio_generic())]);
    // Without any of them: nobody scans, dozes or has a bus; hostapd's beacons.
    let cfg = resolved("");
    assert!(cfg.cell.station_scans.is_empty() && cfg.cell.station_power_save.is_empty());
    assert!(cfg.host_bus.iter().all(|b| b.is_none()));
    assert_eq!(
        (cfg.cell.beacon_interval_tu, cfg.cell.dtim_period),
        (100, 2)
    );
}

#[test]
fn station_machinery_is_inherited_and_overridden_per_entry() {
    let cfg = resolved(
            "[stations]\nscan = { policy = \"bounded\", low_priority = true }\n\
             [[stations.list]]\ncount = 2\n\
             [[stations.list]]\nscan = { policy = \"legacy\", repeat = false, channel_switch_ms = 2.5 }\n\
             power_save = { dynamic_timeout_ms = 50, ps_poll = true, wake_every_beacons = 2 }\n\
             bus = { preset = \"sdio-vendor\", clock_hz = 50000000, completion = \"polled\", poll_jiffy_ms = 1 }\n",
        );
    let scans = &cfg.cell.station_scans;
    assert_eq!(
        scans.iter().map(|s| s.station).collect::<Vec<_>>(),
        [StationId(1), StationId(2), StationId(3)]
    );
    assert!(scans[0].scan.low_priority && scans[1].scan.policy == ScanPolicy::Bounded);
    let third = &scans[2].scan;
    assert_eq!(third.policy, ScanPolicy::Legacy);
    assert!(
        !third.low_priority,
        "an entry's table replaces the inherited one"
    );
    assert_eq!(third.pause, None);
    assert_eq!(third.channel_switch, Nanos::from_us(2500));
    assert_eq!(
        cfg.cell.station_power_save,
        vec![StationPowerSave {
            station: StationId(3),
            power_save: PowerSaveConfig {
                dynamic_timeout: Nanos::from_ms(50),
                ps_poll: true,
                wake_every_beacons: 2
            }
        }]
    );
    let bus = cfg.host_bus[2].expect("station 3 has a bus");
    assert_eq!(bus.clock_hz, 50_000_000);
    // Polled with the given tick and Linux's 2-tick idle sleep; still DMA.
    assert_eq!(
        bus.completion,
        Completion::Polled {
            jiffy: Nanos::from_ms(1),
            idle_period_jiffies: 2
        }
    );
    assert_eq!(bus.data, DataMode::Dma);
    assert_eq!(bus.block_gap_ns, BusConfig::sdio_vendor().block_gap_ns);
    assert!(cfg.host_bus[0].is_none() && cfg.host_bus[1].is_none());
}

#[test]
fn station_machinery_errors_name_the_key() {
    let e = err("[stations]\nscan = { policy = \"fast\" }\n", &[]);
    assert_eq!(
        e,
        "stations.scan.policy: unknown value `fast`; expected one of legacy, bounded"
    );
    let e = err(
        "[[stations.list]]\n[[stations.list]]\nscan = { bands = 6 }\n",
        &[],
    );
    assert!(
        e.starts_with("stations.list[1].scan.bands: unknown value `6`"),
        "{e}"
    );
    let e = err("[stations]\nscan = { pause_s = 0 }\n", &[]);
    assert!(e.starts_with("stations.scan.pause_s:"), "{e}");
    let e = err(
        "[stations]\nscan = { policy = \"legacy\", low_priority = true }\n",
        &[],
    );
    assert!(e.starts_with("stations.scan.low_priority:"), "{e}");
    let e = err("[stations]\nscan = { listen_interval = 0 }\n", &[]);
    assert!(e.starts_with("stations.scan.listen_interval:"), "{e}");
    let e = err("[stations]\nscan = { chanel_switch_ms = 1 }\n", &[]);
    assert_eq!(
        e,
        "stations.scan.chanel_switch_ms: unknown key (did you mean `channel_switch_ms`?)"
    );
    let e = err("[stations]\npower_save = { wake_every_beacons = 0 }\n", &[]);
    assert!(
        e.starts_with("stations.power_save.wake_every_beacons:"),
        "{e}"
    );
    let e = err(
        "[stations]\npower_save = { dynamic_timeout_ms = 0.5 }\n",
        &[],
    );
    assert!(
        e.starts_with("stations.power_save.dynamic_timeout_ms:"),
        "{e}"
    );
    let e = err("[stations]\nbus = \"sdio-fast\"\n", &[]);
    assert_eq!(
        e,
        "stations.bus: unknown bus `sdio-fast`; expected one of sdio-vendor, sdio-generic"
    );
    let e = err(
        "[stations]\nbus = { preset = \"pcie\", clock_hz = 1 }\n",
        &[],
    );
    assert!(
        e.starts_with("stations.bus.preset: unknown bus `pcie`"),
        "{e}"
    );
    let e = err(
        "[stations]\nbus = { preset = \"sdio-vendor\", clock_mhz = 50 }\n",
        &[],
    );
    assert_eq!(
        e,
        "stations.bus.clock_mhz: unknown key (did you mean `clock_hz`?)"
    );
    let e = err(
        "[stations]\nbus = { preset = \"sdio-vendor\", width_bits = 3 }\n",
        &[],
    );
    assert!(
        e.starts_with("stations.bus: ") && e.contains("width_bits"),
        "{e}"
    );
    let e = err(
        "[stations]\nbus = { preset = \"sdio-vendor\", poll_jiffy_ms = 5 }\n",
        &[],
    );
    assert!(
        e.starts_with("stations.bus.poll_jiffy_ms: applies to"),
        "{e}"
    );
    let e = err(
        "[stations]\nbus = { preset = \"sdio-vendor\", data = \"mmio\" }\n",
        &[],
    );
    assert!(
        e.starts_with("stations.bus.data: unknown value `mmio`"),
        "{e}"
    );
    let e = err("[stations]\nbus = 4\n", &[]);
    assert_eq!(
        e,
        "stations.bus: unknown bus `4`; expected one of sdio-vendor, sdio-generic"
    );
    assert!(err("[mac]\ndtim_period = 0\n", &[]).starts_with("mac.dtim_period:"));
    assert!(err("[mac]\nbeacon_interval_tu = 0\n", &[]).starts_with("mac.beacon_interval_tu:"));
    // --set reaches inside the tables.
    let e = err(
        "[stations]\nscan = {}\n",
        &[("stations.scan.policy", "sometimes")],
    );
    assert!(e.starts_with("stations.scan.policy:"), "{e}");
}

/// What `txop show` prints parses back to the same configuration.
#[test]
fn station_machinery_round_trips_through_toml() {
    let text = "[stations]\nscan = { policy = \"legacy\" }\nbus = \"sdio-vendor\"\n\
                    [[stations.list]]\n[[stations.list]]\npower_save = { ps_poll = true }\n\
                    bus = { preset = \"sdio-generic\", device_rx_buffers = 8 }\n";
    let s = parse(text, &[]).unwrap();
    let shown = toml::to_string_pretty(&s).unwrap();
    assert!(shown.contains("bus = \"sdio-vendor\""), "{shown}");
    let again = parse(&shown, &[]).unwrap();
    assert_eq!(
        format!("{:?}", s.resolve().unwrap()),
        format!("{:?}", again.resolve().unwrap())
    );
    assert_eq!(
        again.resolve().unwrap().host_bus[1]
            .unwrap()
            .device_rx_buffers,
        8
    );
}

/// The log-distance SNR against a hand calculation: 5 GHz (5.2 GHz centre), 20 MHz,
/// 20 dBm, n = 3.5, 10 m: 20 − (46.77 + 35) − (−174 + 73.01 + 7) = 32.22 dB; and
/// 2.4 GHz, 40 MHz, 30 m: 20 − (40.18 + 51.70) − (−174 + 76.02 + 7) = 19.10 dB.
#[test]
fn distance_gives_the_log_distance_snr() {
    let five = snr_at_distance(20.0, 3.5, Band::Ghz5, ChannelWidth::Mhz20, 10.0);
    assert!((five - 32.22).abs() < 0.01, "{five}");
    let two = snr_at_distance(20.0, 3.5, Band::Ghz2_4, ChannelWidth::Mhz40, 30.0);
    assert!((two - 19.10).abs() < 0.01, "{two}");
    // Nearer is never worse; the best rate follows the SNR.
    let cfg = parse(
        "[stations]\n[[stations.list]]\ndistance_m = 2\n[[stations.list]]\ndistance_m = 40\n",
        &[],
    )
    .unwrap()
    .resolve()
    .unwrap();
    let mcs = |i: usize| match cfg.cell.stations[i].tx {
        TxVector::Ht { mcs, .. } => mcs,
        t => panic!("{t:?}"),
    };
    assert!(mcs(0) > mcs(1), "{} vs {}", mcs(0), mcs(1));
    assert!(matches!(cfg.cell.stations[1].error, ErrorModel::Snr { .. }));
    let e = err("[stations]\ndistance_m = 10\nsnr_db = 20\n", &[]);
    assert_eq!(
        e,
        "stations.distance_m: give distance_m, snr_db or loss, only one"
    );
    let e = err("[stations]\ndistance_m = -1\n", &[]);
    assert!(
        e.starts_with("stations.distance_m: must be more than 0"),
        "{e}"
    );
    let e = err(
        "[phy]\npath_loss_exponent = 9\n[stations]\ndistance_m = 5\n",
        &[],
    );
    assert!(e.starts_with("phy.path_loss_exponent"), "{e}");
}

/// A scenario resolved with `files` (name, contents) written to a directory of
/// their own, which relative `snr_trace` paths are read from.
fn with_files(text: &str, files: &[(&str, &str)]) -> Result<SimConfig, String> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("txop-scenario-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, contents) in files {
        std::fs::write(dir.join(name), contents).unwrap();
    }
    let mut s = parse(text, &[]).map_err(|e| e.to_string())?;
    s.base_dir = Some(dir.clone());
    let r = s.resolve().map_err(|e| {
        // Messages name the file as the scenario's directory joined with the name.
        e.to_string().replace(&format!("{}/", dir.display()), "")
    });
    std::fs::remove_dir_all(&dir).unwrap();
    r
}

fn channel(cfg: &SimConfig, i: usize) -> &StationChannel {
    cfg.cell.stations[i].channel.as_ref().expect("a channel")
}

/// A still station at `position_m = [d, 0]`, or with a fading of "none", is the
/// `distance_m = d` station of before: no channel, the same SNR in its error model
/// and the same rate. The AP may stand elsewhere.
#[test]
fn a_still_position_is_a_distance() {
    let by_distance = resolved("[stations]\ndistance_m = 12.5\n");
    for text in [
        "[stations]\nposition_m = [12.5, 0]\n",
        "[stations]\nposition_m = [0, -12.5]\nfading = \"none\"\n",
        "[phy]\nap_position_m = [3, 4]\n[stations]\nposition_m = [15.5, 4]\n",
        "[stations]\ndistance_m = 12.5\nvelocity_mps = [0, 0]\n",
        "[stations]\nwaypoints = [[0, 12.5, 0], [5, 12.5, 0]]\n",
    ] {
        let cfg = resolved(text);
        assert_eq!(cfg.cell.stations, by_distance.cell.stations, "{text}");
    }
    let s = &by_distance.cell.stations[0];
    assert_eq!(s.channel, None);
    assert_eq!(s.rate_control, RateControlKind::Fixed);
    let snr = snr_at_distance(20.0, 3.5, Band::Ghz5, ChannelWidth::Mhz20, 12.5);
    assert_eq!(s.error, ErrorModel::Snr { snr_db: snr });
}

/// Movement, fading, traces and per-direction keys give each station a channel:
/// its SNR over time is the path loss's, the trace's, or the direction's own; the
/// error model holds the downlink's mean at 0 s, which the rate is chosen for.
#[test]
fn channel_keys_resolve() {
    let text = "[stations]\nfading = \"rayleigh\"\n\
             [[stations.list]]\nposition_m = [5, 0]\nvelocity_mps = [1, 0]\n\
             [[stations.list]]\ncount = 2\nsnr_trace = \"walk.csv\"\n\
             snr_trace_interpolation = \"step\"\nfading = \"none\"\n\
             [[stations.list]]\nsnr_db = 30\ncoherence_ms = 5\n\
             uplink = { snr_db = 10, fading = \"rician\", fading_k_db = 6 }\n\
             [[stations.list]]\nwaypoints = [[0, 1, 0], [10, 11, 0]]\nfading = \"none\"\n";
    let trace = "time_s,station,snr_db\n0,2,30\n1,2,10\n0,3,22\n";
    let cfg = with_files(text, &[("walk.csv", trace)]).unwrap();
    let at = Nanos::from_secs_f64;
    let budget = LogDistance {
        tx_power_dbm: 20.0,
        exponent: 3.5,
        band: Band::Ghz5,
        width: ChannelWidth::Mhz20,
    };
    // Station 1 walks away at 1 m/s from 5 m, fading with the band's default
    // coherence time (0.423·c/5.2 GHz at 1 m/s = 24.387 ms).
    let c = channel(&cfg, 0);
    assert_eq!(c.down.mean_snr_db(at(5.0)), budget.snr_db(10.0));
    assert_eq!(c.up.mean_snr_db(at(5.0)), budget.snr_db(10.0));
    assert_eq!(
        c.down.fading,
        Fading::Rayleigh {
            coherence: Nanos(24_386_963)
        }
    );
    assert_eq!(c.down.seed, 1);
    // Both directions of a link fade together (reciprocity); links independently.
    assert_eq!(c.down.link_key, c.up.link_key);
    assert_ne!(c.down.link_key, channel(&cfg, 1).down.link_key);
    assert_eq!(
        cfg.cell.stations[0].error,
        ErrorModel::Snr {
            snr_db: budget.snr_db(5.0)
        }
    );
    // Stations 2 and 3 replay their own rows of the trace, stepwise.
    let c = channel(&cfg, 1);
    assert_eq!(c.down.snr_db(at(0.99)), 30.0);
    assert_eq!(c.up.snr_db(at(1.0)), 10.0);
    assert!(c.down.fading == Fading::None);
    // One point: a constant SNR both ways, so no channel.
    assert_eq!(cfg.cell.stations[2].channel, None);
    assert_eq!(cfg.cell.stations[2].error, ErrorModel::Snr { snr_db: 22.0 });
    // Station 4: 30 dB down with the inherited Rayleigh at 5 ms; its uplink 10 dB
    // with its own Rician fading at the default coherence.
    let c = channel(&cfg, 3);
    assert_eq!(c.down.mean_snr_db(Nanos::ZERO), 30.0);
    assert_eq!(
        c.down.fading,
        Fading::Rayleigh {
            coherence: Nanos::from_ms(5)
        }
    );
    assert_eq!(c.up.mean_snr_db(Nanos::ZERO), 10.0);
    assert_eq!(
        c.up.fading,
        Fading::Rician {
            k_db: 6.0,
            coherence: Nanos(24_386_963)
        }
    );
    // Station 5 follows its waypoints: 6 m at 5 s, 11 m after 10 s.
    let c = channel(&cfg, 4);
    assert_eq!(c.down.snr_db(at(5.0)), budget.snr_db(6.0));
    assert_eq!(c.down.snr_db(at(60.0)), budget.snr_db(11.0));
    // The rate is chosen for the mean SNR at 0 s: 1 m is better than 11 m.
    assert!(
        cfg.cell.stations[4].error
            == ErrorModel::Snr {
                snr_db: budget.snr_db(1.0)
            }
    );
}

/// `rate_control` per station and inherited; `--set stations.rate_control=…` is one
/// switch for every station that does not choose its own.
#[test]
fn rate_control_is_per_station_and_one_switch() {
    let text = "[stations]\n[[stations.list]]\ncount = 3\nmcs = 7\n\
                    [[stations.list]]\nrate_control = \"ideal\"\nsnr_db = 20\n";
    let cfg = parse(text, &[]).unwrap().resolve().unwrap();
    let kinds: Vec<RateControlKind> = cfg.cell.stations.iter().map(|s| s.rate_control).collect();
    use RateControlKind::*;
    assert_eq!(kinds, [Fixed, Fixed, Fixed, Ideal]);
    let sets = [(
        "stations.rate_control".to_string(),
        "minstrel_ht".to_string(),
    )];
    let cfg = parse(text, &sets).unwrap().resolve().unwrap();
    let kinds: Vec<RateControlKind> = cfg.cell.stations.iter().map(|s| s.rate_control).collect();
    assert_eq!(
        kinds,
        [MinstrelHt(None), MinstrelHt(None), MinstrelHt(None), Ideal]
    );
    let sets = [(
        "stations.rate_control".to_string(),
        "minstrel_ht-5.10".to_string(),
    )];
    let cfg = parse("", &sets).unwrap().resolve().unwrap();
    assert_eq!(
        cfg.cell.stations[0].rate_control,
        RateControlKind::from_name("minstrel_ht-5.10").unwrap()
    );
    // The rate control changes nothing else.
    let fixed = parse("", &[]).unwrap().resolve().unwrap();
    assert_eq!(
        StationConfig {
            rate_control: Fixed,
            ..cfg.cell.stations[0].clone()
        },
        fixed.cell.stations[0]
    );
}

/// Each bad channel or rate-control key is one line naming it (and for a trace the
/// file, line and column).
#[test]
fn channel_errors_name_the_key() {
    let cases: &[(&str, &str)] = &[
        (
            "[stations]\nfading = \"nakagami\"\nsnr_db = 20\n",
            "stations.fading: unknown value `nakagami`; expected one of none, rayleigh, rician",
        ),
        (
            "[stations]\nfading = \"rayleigh\"\ncoherence_ms = -5\nsnr_db = 20\n",
            "stations.coherence_ms: must be 0.001 to 3600000 ms",
        ),
        (
            "[stations]\nfading = \"rician\"\nsnr_db = 20\n",
            "stations.fading_k_db: rician fading needs its K factor (e.g. fading_k_db = 6)",
        ),
        (
            "[stations]\nfading = \"rician\"\nfading_k_db = 99\nsnr_db = 20\n",
            "stations.fading_k_db: must be -50 to 50 dB",
        ),
        (
            "[stations]\nfading = \"rayleigh\"\nfading_k_db = 3\nsnr_db = 20\n",
            "stations.fading_k_db: applies with fading = \"rician\" only",
        ),
        (
            "[stations]\ncoherence_ms = 10\nsnr_db = 20\n",
            "stations.coherence_ms: applies with fading = \"rayleigh\" or \"rician\" only",
        ),
        (
            "[stations]\nfading = \"rayleigh\"\n",
            "stations.fading: fades an SNR: give snr_db, distance_m, position_m, \
                 waypoints or snr_trace (not loss)",
        ),
        (
            "[stations]\nfading = \"rayleigh\"\nloss = 0.1\n",
            "stations.fading: fades an SNR: give snr_db, distance_m, position_m, \
                 waypoints or snr_trace (not loss)",
        ),
        (
            "[stations]\nvelocity_mps = [1, 0]\nsnr_db = 20\n",
            "stations.velocity_mps: needs a starting point: give position_m (or distance_m)",
        ),
        (
            "[stations]\nposition_m = [1, 0]\nvelocity_mps = [100, 100]\n",
            "stations.velocity_mps: the speed must be at most 100 m/s (360 km/h)",
        ),
        (
            "[stations]\nposition_m = [3, 4]\nsnr_db = 20\n",
            "stations.position_m: snr_db and position_m both given; give one of snr_db, \
                 distance_m, position_m, waypoints, snr_trace or loss",
        ),
        (
            "[stations]\nposition_m = [3, 4]\nwaypoints = [[0, 1, 1]]\n",
            "stations.waypoints: position_m and waypoints both given; give one of snr_db, \
                 distance_m, position_m, waypoints, snr_trace or loss",
        ),
        (
            "[stations]\nposition_m = [20000, 0]\n",
            "stations.position_m: coordinates must be −10000 to 10000 m",
        ),
        (
            "[phy]\nap_position_m = [0, nan]\n[stations]\nposition_m = [1, 0]\n",
            "phy.ap_position_m: coordinates must be −10000 to 10000 m",
        ),
        (
            "[stations]\nwaypoints = [[0, 1, 1], [2, 5, 1], [2, 9, 1]]\n",
            "stations.waypoints: waypoint 2: at 2 s, not after waypoint 1 at 2 s; \
                 times must increase",
        ),
        (
            "[stations]\nwaypoints = [[-1, 1, 1]]\n",
            "stations.waypoints: waypoint 0: the time must be 0 to 1e6 s",
        ),
        (
            "[stations]\nwaypoints = []\n",
            "stations.waypoints: at least one waypoint is needed",
        ),
        (
            "[stations]\nsnr_db = 20\nsnr_trace_interpolation = \"step\"\n",
            "stations.snr_trace_interpolation: applies with snr_trace only",
        ),
        (
            "[stations]\nsnr_db = 20\ndownlink = { snr_db = 10, snr_trace = \"t.csv\" }\n",
            "stations.downlink.snr_trace: snr_db and snr_trace both given; give one",
        ),
        (
            "[stations]\ndownlink = { snr_db = 10 }\n",
            "stations.downlink: gives the downlink an SNR but the uplink has none: give \
                 uplink.snr_db or the station's snr_db, distance_m, position_m, waypoints or \
                 snr_trace",
        ),
        (
            "[stations]\nloss = 0.1\nuplink = { snr_db = 10 }\n",
            "stations.uplink.snr_db: the station has a fixed loss (loss) both ways; give \
                 it an SNR instead",
        ),
        (
            "[stations]\nsnr_db = 20\nuplink = { fading = \"rician\" }\n",
            "stations.uplink.fading_k_db: rician fading needs its K factor (e.g. \
                 fading_k_db = 6)",
        ),
        (
            "[stations]\nrate_control = \"minstrel\"\n",
            "stations.rate_control: unknown value `minstrel`; expected one of fixed, \
                 ideal, minstrel_ht, minstrel_ht-5.10, minstrel_ht-6, minstrel_ht-kernel",
        ),
        (
            "[stations]\n[[stations.list]]\n[[stations.list]]\nrate_control = \"x\"\n",
            "stations.list[1].rate_control: unknown value `x`; expected one of fixed, \
                 ideal, minstrel_ht, minstrel_ht-5.10, minstrel_ht-6, minstrel_ht-kernel",
        ),
        (
            "[stations]\ndownlink = { snr = 3 }\n",
            "stations.downlink.snr: unknown key (did you mean `snr_db`?)",
        ),
        (
            "[stations]\nposition_m = [1, 2, 3]\n",
            "stations.position_m: invalid length 3, expected fewer elements in array",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(&err(text, &[]), want, "{text}");
    }
}

/// A trace's errors: a file that is not there, a malformed line (file, line and
/// column), a station without points; a list entry's key is named.
#[test]
fn trace_errors_name_the_file_line_and_column() {
    let two = "[stations]\ncount = 2\nsnr_trace = \"t.csv\"\n";
    assert_eq!(
        with_files(two, &[("t.csv", "0,1,20\n0,2,abc\n")]).unwrap_err(),
        "stations.snr_trace: t.csv:2:5: snr_db: expected a number, got \"abc\""
    );
    assert_eq!(
        with_files(two, &[("t.csv", "0,1,20\n1,1,20\n")]).unwrap_err(),
        "stations.snr_trace: t.csv has no points for station 2"
    );
    assert_eq!(
        with_files(two, &[("t.csv", "1,1,20\n0,1,20\n")]).unwrap_err(),
        "stations.snr_trace: t.csv:2:1: time_s: 0 s is before station 1's previous \
             point at 1 s; times must not go backwards"
    );
    let e = with_files(two, &[]).unwrap_err();
    assert!(
        e.starts_with("stations.snr_trace: t.csv: cannot read: "),
        "{e}"
    );
    let list = "[stations]\nsnr_db = 20\n[[stations.list]]\n[[stations.list]]\n\
                    downlink = { snr_trace = \"d.csv\", snr_trace_interpolation = \"cubic\" }\n";
    assert_eq!(
        with_files(list, &[("d.csv", "0,2,20\n")]).unwrap_err(),
        "stations.list[1].downlink.snr_trace_interpolation: unknown value `cubic`; \
             expected one of linear, step"
    );
    let ok = list.replace("cubic", "step");
    let cfg = with_files(&ok, &[("d.csv", "0,2,20\n5,2,10\n")]).unwrap();
    let c = channel(&cfg, 1);
    assert_eq!(c.down.snr_db(Nanos::from_secs(4)), 20.0);
    assert_eq!(c.up.snr_db(Nanos::from_secs(4)), 20.0);
    assert_eq!(cfg.cell.stations[0].channel, None);
}

/// `txop show` adds each station's resolved channel when the scenario has channel
/// keys, in runs of stations that read the same; nothing for the others.
#[test]
fn show_summarises_resolved_channels() {
    let summary = |text: &str| parse(text, &[]).unwrap().resolve_with_summary().unwrap().1;
    assert_eq!(summary(""), None);
    assert_eq!(summary("[stations]\ndistance_m = 10\nmcs = 3\n"), None);
    // The built-ins that use channel or rate-control keys show them; the others
    // show nothing.
    let uses_keys = [
        "atf-30-stations-minstrel",
        "rate-walk-away",
        "rate-step-fade",
        "hidden-stations",
        "hidden-stations-rts",
        "walk-hidden",
    ];
    for (name, text) in builtin::SCENARIOS {
        if parse(text, &[]).unwrap().has_bsss() {
            // Several BSSs: `resolve_bsss_with_summary` (tests/bss.rs).
            continue;
        }
        assert_eq!(summary(text).is_some(), uses_keys.contains(name), "{name}");
    }
    let s = summary(
        "[stations]\n[[stations.list]]\ncount = 2\nposition_m = [10, 0]\nvelocity_mps = [1, 0]\n\
             fading = \"rician\"\nfading_k_db = 6\ncoherence_ms = 20\n\
             [[stations.list]]\nsnr_db = 25\nuplink = { snr_db = 15 }\nrate_control = \"ideal\"\n",
    )
    .unwrap();
    assert_eq!(
        s,
        "# Resolved channels and rate control (for reading; ignored as input):\n\
             # stations 1–2: from (10, 0) m at (1, 0) m/s, AP at (0, 0) m; both ways \
             log-distance SNR 32.2 dB at 0 s, rician fading K 6 dB, coherence 20 ms; \
             rate control fixed (HT20 MCS7 LGI)\n\
             # station 3: downlink SNR 25 dB, no fading; uplink SNR 15 dB, no fading; \
             rate control ideal\n"
    );
}

/// Every key that becomes an event rate is bounded, so that a short run cannot
/// mean billions of events: the error names the key and the range.
#[test]
fn event_rates_are_bounded_and_errors_name_the_key() {
    let cbr = "[traffic]\nkind = \"cbr\"\n";
    for (text, sets, want) in [
        (
            cbr,
            vec![("traffic.rate_mbps", "1e300")],
            "traffic.rate_mbps: must be above 0 and at most 10000 Mbit/s",
        ),
        (
            cbr,
            vec![("traffic.rate_mbps", "nan")],
            "traffic.rate_mbps: must be above 0 and at most 10000 Mbit/s",
        ),
        (
            cbr,
            vec![
                ("traffic.rate_mbps", "801"),
                ("traffic.packet_bytes", "100"),
            ],
            "traffic.rate_mbps: must be above 0 and at most 800 Mbit/s with 100-byte \
              packets (one per µs at most)",
        ),
        (
            "",
            vec![("traffic.probe_interval_ms", "1e-9")],
            "traffic.probe_interval_ms: must be 0 (none) or 0.1 ms to 3600000 ms (1 hour)",
        ),
        (
            "",
            vec![("traffic.probe_interval_ms", "-5")],
            "traffic.probe_interval_ms: must be 0 (none) or 0.1 ms to 3600000 ms (1 hour)",
        ),
        (
            "",
            vec![("traffic.depth", "4000000000")],
            "traffic.depth: must be 0 (automatic) to 10000 packets",
        ),
        (
            "",
            vec![("wired.rate_mbps", "1e300")],
            "wired.rate_mbps: must be 0.01 to 100000 Mbit/s",
        ),
        (
            "",
            vec![("wired.rate_mbps", "1e-9")],
            "wired.rate_mbps: must be 0.01 to 100000 Mbit/s",
        ),
        (
            "[[flows]]\nkind = \"cbr\"\nfrom = \"server\"\nto = \"sta1\"\nrate_mbps = 1e300\n",
            vec![],
            "flows[0].rate_mbps: must be above 0 and at most 10000 Mbit/s",
        ),
        (
            "[[flows]]\nkind = \"cbr\"\nfrom = \"server\"\nto = \"sta1\"\n",
            vec![],
            "flows[0].rate_mbps: a cbr flow needs its rate",
        ),
        (
            "[[flows]]\nkind = \"ping\"\nfrom = \"sta1\"\nto = \"server\"\ninterval_ms = 1e-9\n",
            vec![],
            "flows[0].interval_ms: must be 0.1 ms to 3600000 ms (1 hour)",
        ),
    ] {
        let sets: Vec<(&str, &str)> = sets;
        assert_eq!(err(text, &sets), want, "{text} {sets:?}");
    }
    // The limits themselves are allowed.
    let ok = |text: &str| parse(text, &[]).unwrap().resolve().unwrap();
    ok("[traffic]\nkind = \"cbr\"\nrate_mbps = 10000\nprobe_interval_ms = 0.1\n");
    ok("[traffic]\ndepth = 10000\n[wired]\nrate_mbps = 100000\n");
    ok("[traffic]\nkind = \"cbr\"\npacket_bytes = 100\nrate_mbps = 800\n");
}

/// Thousands of flows, each within its key's range, are bounded together: at most
/// 10⁷ packets per simulated second, the error naming the key that offers most.
#[test]
fn offered_packets_are_bounded_in_all() {
    let e = err(
        "[stations]\ncount = 2000\n[traffic]\nkind = \"cbr\"\ndirection = \"both\"\n\
             rate_mbps = 8000\nprobe_interval_ms = 1\n",
        &[],
    );
    assert_eq!(
        e,
        "traffic.rate_mbps: the flows would offer 2.671e9 packets per simulated second in \
             all; at most 1e7 (lower the rate, lengthen the interval or use fewer flows)"
    );
    let e = err(
        "[stations]\ncount = 2000\n[traffic]\ndirection = \"both\"\nprobe_interval_ms = 0.1\n",
        &[],
    );
    assert!(
        e.starts_with("traffic.probe_interval_ms: the flows would offer 4.000e7"),
        "{e}"
    );
    let mut pings = String::from("[stations]\ncount = 20\n");
    for i in 0..1000 {
        let ms = if i == 7 { 0.1 } else { 0.2 };
        pings.push_str(&format!(
            "[[flows]]\nkind = \"ping\"\nfrom = \"sta{}\"\nto = \"server\"\ninterval_ms = {ms}\n",
            i % 20 + 1
        ));
    }
    let e = err(&pings, &[]);
    assert!(
        e.starts_with("flows[7].interval_ms: the flows would offer 1.001e7"),
        "{e}"
    );
    // 2000 stations at 10 Mbit/s each way are fine (3.3 million packets/s).
    parse(
        "[stations]\ncount = 2000\n[traffic]\nkind = \"cbr\"\ndirection = \"both\"\n",
        &[],
    )
    .unwrap()
    .resolve()
    .unwrap();
}

#[test]
fn name_duration_and_station_count_are_bounded() {
    let long = "n".repeat(30_000);
    let e = err("", &[("name", &long)]);
    assert_eq!(e, "name: 30000 characters; at most 200");
    let e = err("name = \"a\\nb\"\n", &[]);
    assert_eq!(e, "name: must be one line without control characters");
    parse(&format!("name = \"{}\"\n", "é".repeat(200)), &[])
        .unwrap()
        .resolve()
        .unwrap();
    assert_eq!(
        err("duration_s = 1.5e6\n", &[]),
        "duration_s: must be 0.001 s to 1e6 s"
    );
    assert_eq!(
        err("duration_s = 1e-12\n", &[]),
        "duration_s: must be 0.001 s to 1e6 s"
    );
    assert_eq!(
        err("[stations]\ncount = 2001\n", &[]),
        "stations.count: must be 1 to 2000"
    );
    let e = err(
        "[[stations.list]]\ncount = 65535\n[[stations.list]]\ncount = 65535\n",
        &[],
    );
    assert!(
        e.starts_with("stations.list[0].count: the list comes to more than 2000"),
        "{e}"
    );
}

/// What docs/scenarios.md allows for the scheduler's knobs, and nothing more.
#[test]
fn quantum_shift_and_airtime_flags_take_the_documented_values() {
    for shift in ["17", "64", "255"] {
        assert_eq!(
            err("", &[("stack_options.quantum_shift", shift)]),
            "stack_options.quantum_shift: must be 0 to 16"
        );
    }
    for flags in 4..=255u8 {
        let e = err("", &[("stack_options.airtime_flags", &flags.to_string())]);
        assert!(
            e.starts_with("stack_options.airtime_flags: must be 0 to 3"),
            "{e}"
        );
    }
    for (k, v) in [
        ("stack_options.quantum_shift", "16"),
        ("stack_options.airtime_flags", "3"),
        ("stack_options.airtime_flags", "0"),
    ] {
        parse("", &[(k.into(), v.into())])
            .unwrap()
            .resolve()
            .unwrap();
    }
}

#[test]
fn may_transmit_aql_check_takes_two_readings() {
    use txop_core::mac80211::scheduler::MayTransmitAqlCheck;
    let e = err(
        "",
        &[("stack_options.may_transmit_aql_check", "\"reversed\"")],
    );
    assert!(
        e.starts_with("stack_options.may_transmit_aql_check: unknown value `reversed`"),
        "{e}"
    );
    for (v, want) in [
        ("\"as_written\"", MayTransmitAqlCheck::AsWritten),
        ("\"flipped\"", MayTransmitAqlCheck::Flipped),
    ] {
        let cfg = parse(
            "",
            &[("stack_options.may_transmit_aql_check".into(), v.into())],
        )
        .unwrap()
        .resolve()
        .unwrap();
        assert_eq!(cfg.cell.stack.may_transmit_aql_check, want);
    }
}

#[test]
fn flent_options_name_their_own_key() {
    let test = |k: &str, v: &str| {
        err(
            "[stations]\ncount = 2\n[traffic]\ntest = \"tcp_ndown\"\n",
            &[(k, v)],
        )
    };
    assert_eq!(
        test("traffic.streams", "0"),
        "traffic.streams: must be 1 to 1000"
    );
    assert_eq!(
        test("traffic.streams", "1001"),
        "traffic.streams: must be 1 to 1000"
    );
    assert_eq!(
        test("traffic.station", "3"),
        "traffic.station: no station 3 in this cell (1 to 2)"
    );
    assert!(test("traffic.test", "tcp_down").starts_with("traffic.test: unknown flent test"));
}

/// A list where a table belongs (`--set traffic=[]`) is refused, naming the key,
/// for every table of the scenario.
#[test]
fn a_list_is_not_a_table() {
    let list = "[[stations.list]]\n[[flows]]\nkind = \"ping\"\nfrom = \"sta1\"\nto = \"server\"\n\
                    [[bss]]\n[[bss.stations.list]]\n[[bss.flows]]\nkind = \"ping\"\n";
    for key in table_keys() {
        // `a[].b[]` → set `a[0].b` to a list of one number, and the error is at
        // `a[0].b[0]`; `a[].b` → set `a[0].b` to an empty list.
        let (path, shown, value) = match key.strip_suffix("[]") {
            Some(list_key) => {
                let p = list_key.replace("[]", "[0]");
                (p.clone(), format!("{p}[0]"), "[1]")
            }
            None => {
                let p = key.replace("[]", "[0]");
                (p.clone(), p, "[]")
            }
        };
        let e = err(list, &[(&path, value)]);
        assert!(
            e.starts_with(&format!("{shown}: expected a table")),
            "{key}: {e}"
        );
    }
    assert_eq!(
        err("[traffic]\n", &[("traffic", "[\"cbr\"]")]),
        "traffic: expected a table (`{ … }` or a [section]), not a list"
    );
    // Tables are fine, empty or not; so are the lists that are lists.
    parse(
        "[traffic.web]\nobjects_bytes = [1000, 2000]\n",
        &[("stations.list".into(), "[{mcs=3},{mcs=5}]".into())],
    )
    .unwrap()
    .resolve()
    .unwrap();
    parse("", &[("traffic".into(), "{}".into())])
        .unwrap()
        .resolve()
        .unwrap();
}

/// [`TABLE_KEYS`] is every table a scenario has: a scenario with every optional
/// table given, written back, has tables at exactly those keys.
#[test]
fn table_keys_are_complete() {
    let edca = ["vo", "vi", "be", "bk"]
        .iter()
        .flat_map(|ac| ["ap", "sta"].map(|who| format!("[mac.edca_{who}.{ac}]\naifsn = 2\n")))
        .collect::<String>();
    let machinery = "scan = {}\npower_save = {}\nbus = { preset = \"sdio-generic\", \
                         clock_hz = 1000000 }\ndownlink = {}\nuplink = {}\ntcp = {}\n";
    let bss_edca = edca.replace("[mac.", "[bss.mac.");
    let text = format!(
        "{edca}[stations]\n{machinery}[[stations.list]]\n{machinery}[traffic.web]\n\
             [server.tcp]\n[space]\n[[flows]]\nkind = \"ping\"\nfrom = \"sta1\"\nto = \"server\"\n\
             [[bss]]\n[bss.stack_options]\n{bss_edca}[bss.stations]\n{machinery}\
             [[bss.stations.list]]\n{machinery}[bss.traffic.web]\n[bss.wired]\n\
             [[bss.flows]]\nkind = \"ping\"\n"
    );
    let scenario = parse(&text, &[]).unwrap();
    let value = toml::Value::try_from(&scenario).unwrap();
    fn tables(v: &toml::Value, path: &str, out: &mut Vec<String>) {
        let join = |k: &str| {
            if path.is_empty() {
                k.to_string()
            } else {
                format!("{path}.{k}")
            }
        };
        match v {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    if v.is_table() {
                        out.push(join(k));
                    }
                    tables(v, &join(k), out);
                }
            }
            toml::Value::Array(items) if items.iter().any(|i| i.is_table()) => {
                out.push(format!("{path}[]"));
                for i in items {
                    if let toml::Value::Table(_) = i {
                        tables(i, &format!("{path}[]"), out);
                    }
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    tables(&value, "", &mut found);
    found.sort();
    found.dedup();
    let mut want: Vec<String> = table_keys().collect();
    want.sort();
    assert_eq!(found, want);
}

/// Every host receives with its stack preset's kernel's window; a station's `tcp`
/// and `[server] tcp` change theirs; bad values are refused naming their key.
#[test]
fn tcp_receive_keys_resolve_per_host_and_name_their_key() {
    use txop_sim::tcp::{LinuxReceive, WindowShare};
    use txop_sim::HostWindow;
    let text = "stack = \"linux-4.8-bloated\"\n[stations]\n\
                [[stations.list]]\n[[stations.list]]\ntcp = { kernel = \"6.12\", read_rate_mbps = 8 }\n\
                [server]\ntcp = { rmem_bytes = [4096, 87380, 4194304], adv_win_scale = 2 }\n";
    let cfg = parse(text, &[]).unwrap().resolve().unwrap();
    let h = &cfg.tcp_hosts;
    assert_eq!(h.ap, Some(HostWindow::Linux(LinuxReceive::linux_4_9())));
    assert_eq!(
        h.stations[0],
        Some(HostWindow::Linux(LinuxReceive::linux_4_9()))
    );
    let want = LinuxReceive {
        read_rate_bytes_per_s: Some(1_000_000),
        ..LinuxReceive::linux_6_12()
    };
    assert_eq!(h.stations[1], Some(HostWindow::Linux(want)));
    let Some(HostWindow::Linux(server)) = h.server else {
        panic!("server: {:?}", h.server)
    };
    assert_eq!(server.rmem.max_bytes, 4_194_304);
    assert_eq!(server.share, WindowShare::AdvWinScale(2));
    let six = parse("[stations]\ncount = 1\n", &[])
        .unwrap()
        .resolve()
        .unwrap();
    assert_eq!(
        six.tcp_hosts.server,
        Some(HostWindow::Linux(LinuxReceive::linux_6_12()))
    );

    let bad = |k: &str, v: &str| err("[stations]\ncount = 1\n", &[(k, v)]);
    assert_eq!(
        bad("stations.tcp", "{ kernel = \"3.2\" }"),
        "stations.tcp.kernel: unknown value `3.2`; expected one of 4.9, 5.4, 6.12"
    );
    assert_eq!(
        bad("stations.tcp", "{ rmem_bytes = [4096, 131072, 65536] }"),
        "stations.tcp.rmem_bytes: must be [min, default, max] with min ≤ default ≤ max"
    );
    assert_eq!(
        bad("stations.tcp", "{ adv_win_scale = 1, scaling_ratio = 128 }"),
        "stations.tcp.scaling_ratio: give adv_win_scale (before 6.6) or scaling_ratio (6.6 on), not both"
    );
    assert_eq!(
        bad("server.tcp", "{ read_rate_mbps = 0 }"),
        "server.tcp.read_rate_mbps: must be above 0 and at most 100000 Mbit/s"
    );
    assert_eq!(
        bad(
            "stations.tcp",
            "{ fixed_window_bytes = 65536, kernel = \"4.9\" }"
        ),
        "stations.tcp.fixed_window_bytes: a fixed window takes none of the other tcp keys"
    );
    assert_eq!(
        bad("stations.tcp", "{ scaling_ratio = 0 }"),
        "stations.tcp.scaling_ratio: must be 1 to 255"
    );
}

/// A bloated AP's queue grows over seconds, as measured: behind the ath10k firmware
/// FIFO at 6.5 Mbit/s (E3), with 4.9 receivers, the ping 1–5 s into the four
/// downloads is within 1.5× of the real one of the bufferbloat project's run
/// (`dtaht/blog-cerowrt`, `content/flent/2016-04-12-flent-fqmac-ath10k-dql`,
/// normal-base: 388 ms), and so is the ping 9–11 s in (1672 ms), four times higher:
/// the queue fills over seconds, not at once.
#[test]
fn bloated_ap_queue_grows_over_seconds_as_measured() {
    let text = builtin::get("e3-ath10k-6mbit").unwrap();
    let cfg = parse(text, &[]).unwrap().resolve().unwrap();
    let r = txop_sim::Simulation::new(cfg).unwrap().run();
    let ping = r.flows.iter().find(|f| f.kind == "ping").unwrap();
    // The loaders start after flent's 5 s of pings alone.
    let median = |a: f64, b: f64| {
        let mut v: Vec<f64> = ping
            .rtt_samples
            .iter()
            .filter(|s| (a..b).contains(&(s.0 - 5.0)))
            .map(|s| s.1)
            .collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (early, ten) = (median(1.0, 5.0), median(9.0, 11.0));
    for (got, real) in [(early, 388.0), (ten, 1672.0)] {
        assert!(
            (real / 1.5..=real * 1.5).contains(&got),
            "ping {got:.0} ms against the real {real} ms"
        );
    }
    assert!(ten > 3.0 * early, "{early:.0} ms then {ten:.0} ms");
}

/// Station groups: an entry is its own group (`list[N]`), entries that give the same
/// `group` make one (in order of first appearance, `--set` and inheritance from
/// `[stations]` as for any station key), and a bad name is an error naming the key.
#[test]
fn station_groups_follow_the_list_and_the_group_key() {
    let groups = |text: &str, sets: &[(&str, &str)]| -> Vec<(String, Vec<u16>)> {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        parse(text, &sets)
            .unwrap()
            .station_groups()
            .unwrap()
            .into_iter()
            .map(|g| (g.name, g.stations))
            .collect()
    };
    let g = |name: &str, s: &[u16]| (name.to_string(), s.to_vec());
    assert_eq!(
        groups("[stations]\ncount = 3\n", &[]),
        [g("stations", &[1, 2, 3])]
    );
    let list = "[[stations.list]]\ncount = 2\n[[stations.list]]\nmcs = 0\n\
                [[stations.list]]\ncount = 2\nmcs = 3\n";
    assert_eq!(
        groups(list, &[]),
        [
            g("list[0]", &[1, 2]),
            g("list[1]", &[3]),
            g("list[2]", &[4, 5])
        ]
    );
    // Entries 0 and 2 share a name; entry 1 keeps its own.
    assert_eq!(
        groups(
            list,
            &[
                ("stations.list[0].group", "far"),
                ("stations.list[2].group", "far")
            ]
        ),
        [g("far", &[1, 2, 4, 5]), g("list[1]", &[3])]
    );
    // Given on [stations], every entry inherits it: one group.
    assert_eq!(
        groups(list, &[("stations.group", "all")]),
        [g("all", &[1, 2, 3, 4, 5])]
    );
    assert_eq!(
        err(list, &[("stations.list[1].group", "\"\"")]),
        "stations.list[1].group: must be a name of 1 to 24 characters"
    );
    assert_eq!(
        err("[stations]\ngroup = \"abcdefghijklmnopqrstuvwxyz\"\n", &[]),
        "stations.group: must be a name of 1 to 24 characters"
    );
}

/// `standard = "ax"` resolves HE stations from the `he_*` keys (defaults GI 0.8, 2x
/// HE-LTF, SU, PE 0; HE-MCS 11 when no MCS is given), and every HE key error names
/// its key in one line.
#[test]
fn he_keys() {
    use txop_core::phy::{HeFormat, HeGuardInterval, HeLtf, NominalPacketPadding};
    let tx = |text: &str| parse(text, &[]).unwrap().resolve().unwrap().cell.stations[0].tx;
    let he = |mcs, nss, width, gi, ltf, format, pe| TxVector::He {
        mcs,
        nss,
        width,
        gi,
        ltf,
        format,
        pe,
    };
    assert_eq!(
        tx("[phy]\nstandard = \"ax\"\nwidth_mhz = 80\n[stations]\nmcs = 7\nnss = 2\n"),
        he(
            7,
            2,
            ChannelWidth::Mhz80,
            HeGuardInterval::Us0_8,
            HeLtf::X2,
            HeFormat::Su,
            NominalPacketPadding::Us0
        )
    );
    assert_eq!(
        tx("[phy]\nstandard = \"ax\"\nwidth_mhz = 160\nhe_gi_us = 3.2\nhe_pe_us = 16\n"),
        he(
            11,
            1,
            ChannelWidth::Mhz160,
            HeGuardInterval::Us3_2,
            HeLtf::X4,
            HeFormat::Su,
            NominalPacketPadding::Us16
        )
    );
    assert_eq!(
        tx("[phy]\nstandard = \"ax\"\nhe_format = \"er-su\"\nhe_ltf = \"1x\"\n"),
        he(
            2,
            1,
            ChannelWidth::Mhz20,
            HeGuardInterval::Us0_8,
            HeLtf::X1,
            HeFormat::ErSu,
            NominalPacketPadding::Us0
        )
    );
    // An HE cell aggregates, as HT and VHT cells do.
    let cfg = parse("[phy]\nstandard = \"ax\"\n", &[])
        .unwrap()
        .resolve()
        .unwrap();
    assert!(cfg.cell.aggregation);
    let ax = "[phy]\nstandard = \"ax\"\n";
    for (extra, key, words) in [
        ("he_gi_us = 0.4\n", "phy.he_gi_us:", "0.4 µs"),
        ("he_pe_us = 4\n", "phy.he_pe_us:", "4 µs"),
        ("he_gi_us = 1.6\nhe_ltf = \"1x\"\n", "phy.he_ltf:", "1x"),
        ("he_ltf = \"4x\"\n", "phy.he_ltf:", "DCM"),
        (
            "width_mhz = 40\nhe_format = \"er-su\"\n",
            "phy.he_format:",
            "20 MHz",
        ),
        (
            "band = \"2.4\"\nwidth_mhz = 80\n",
            "phy.width_mhz:",
            "2.4 GHz",
        ),
        ("[stations]\nmcs = 12\n", "stations.mcs:", "HE-MCS 12"),
        (
            "[stations]\nnss = 5\n",
            "stations.mcs:",
            "5 spatial streams",
        ),
        (
            "[stations]\nrate_control = \"minstrel_ht\"\n",
            "stations.rate_control:",
            "no HE rates",
        ),
    ] {
        let e = err(&format!("{ax}{extra}"), &[]);
        assert!(
            e.starts_with(key) && e.contains(words) && !e.contains('\n'),
            "{e}"
        );
    }
    let e = err("[phy]\nstandard = \"ac\"\nhe_gi_us = 0.8\n", &[]);
    assert!(e.starts_with("phy.he_gi_us: applies to 802.11ax"), "{e}");
    let e = err("[phy]\nstandard = \"ac\"\nwidth_mhz = 160\n", &[]);
    assert!(e.starts_with("phy.width_mhz:"), "{e}");
}
