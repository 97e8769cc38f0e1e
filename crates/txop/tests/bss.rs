//! `[[bss]]` in scenario files (issue 15): several BSSs, each resolved as a single-BSS
//! scenario laid over the top level's tables, their cells' spaces placing every node on
//! their channel. Parsing and inheritance, every error naming its key, channel
//! separation, the seeds, `txop show`'s summary, and the built-in neighbourhoods: their
//! placements and first nodes checked against positions computed here from the
//! headers' geometry, and two of them run through `txop_sim::Neighbourhood`.

mod support;

use support::guard::check_conservation;
use txop::scenario::{channel_groups, parse, ResolvedBss};
use txop_core::phy::mobility::Position;
use txop_core::phy::space::{Placement, RadioMap, SpaceConfig};
use txop_core::phy::{Band, ChannelWidth, TxVector};
use txop_results::Results;
use txop_sim::traffic::{Flow, Host};
use txop_sim::{bss_seed, Neighbourhood};

fn sets(sets: &[(&str, &str)]) -> Vec<(String, String)> {
    sets.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The BSSs `text` (with `overrides`) resolves to.
fn bsss(text: &str, overrides: &[(&str, &str)]) -> Vec<ResolvedBss> {
    let s = parse(text, &sets(overrides)).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(s.has_bsss());
    s.resolve_bsss().unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The error `text` (with `overrides`) gives, parsed or resolved, as the user sees it
/// after the file name.
fn error(text: &str, overrides: &[(&str, &str)]) -> String {
    match parse(text, &sets(overrides)).and_then(|s| s.resolve_bsss().map(|_| ())) {
        Ok(()) => panic!("expected an error:\n{text}\n{overrides:?}"),
        Err(e) => e.to_string(),
    }
}

fn builtin(name: &str) -> &'static str {
    txop::builtin::get(name).unwrap_or_else(|| panic!("{name} is built in"))
}

fn space(b: &ResolvedBss) -> &SpaceConfig {
    b.cfg.cell.space.as_ref().expect("every BSS is in space")
}

fn placement(b: &ResolvedBss) -> Vec<(f64, f64)> {
    match &space(b).placement {
        Placement::Positions { positions, .. } => {
            positions.iter().map(|p| (p.x_m, p.y_m)).collect()
        }
        other => panic!("not positions: {other:?}"),
    }
}

/// Node positions: each AP of `aps` followed by `n` stations on a ring of `r` m around
/// it, station k (1-based) at angle 2π(k−1)/n.
fn rings(aps: &[(f64, f64)], n: usize, r: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for &(x, y) in aps {
        out.push((x, y));
        for k in 0..n {
            let a = std::f64::consts::TAU * k as f64 / n as f64;
            out.push((x + r * a.cos(), y + r * a.sin()));
        }
    }
    out
}

fn assert_close(got: &[(f64, f64)], want: &[(f64, f64)]) {
    assert_eq!(got.len(), want.len(), "{got:?}\n{want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g.0 - w.0).abs() < 1e-9 && (g.1 - w.1).abs() < 1e-9,
            "{got:?}\n{want:?}"
        );
    }
}

/// The received power at `d` m, 5 GHz, 20 dBm, exponent 3.5, computed here: free space
/// to 1 m at 5.2 GHz, then 35·log10(d).
fn rx_5ghz_dbm(d: f64) -> f64 {
    let loss_1m = 20.0 * (4.0 * std::f64::consts::PI * 5.2e9 / 299_792_458.0).log10();
    20.0 - (loss_1m + 35.0 * d.max(1.0).log10())
}

/// Run every channel's BSSs together to their end: each BSS's results, in order.
fn run(bsss: &[ResolvedBss]) -> Vec<Results> {
    let mut out: Vec<Option<Results>> = vec![None; bsss.len()];
    for group in channel_groups(bsss) {
        let cfgs = group.iter().map(|&b| bsss[b].bss_config()).collect();
        let results = Neighbourhood::new(cfgs)
            .expect("valid BSSs")
            .try_run()
            .unwrap_or_else(|stuck| panic!("stuck: {stuck}"));
        for (b, r) in group.into_iter().zip(results) {
            out[b] = Some(r);
        }
    }
    out.into_iter().map(|r| r.expect("every BSS ran")).collect()
}

/// Two BSSs of two stations each on a 5 m ring, the second's AP 20 m away.
const TWO: &str = "
seed = 7
[space]
layout = \"ring\"
[stations]
count = 2
distance_m = 5
[traffic]
kind = \"cbr\"
direction = \"both\"
rate_mbps = 2
[[bss]]
name = \"a\"
ap_position_m = [0, 0]
[[bss]]
name = \"b\"
ap_position_m = [20, 0]
";

#[test]
fn a_lone_bss_resolves_as_the_single_cell() {
    let single = parse(
        "seed = 9\n[phy]\nap_position_m = [3, 4]\n[space]\n[stations]\ncount = 3\ndistance_m = 8\n\
         [traffic]\ntest = \"rrul\"\n",
        &[],
    )
    .unwrap()
    .resolve()
    .unwrap();
    let lone = bsss(
        "seed = 9\n[stations]\ncount = 3\ndistance_m = 8\n[[bss]]\nname = \"x\"\n\
         ap_position_m = [3, 4]\n[bss.traffic]\ntest = \"rrul\"\n",
        &[],
    );
    assert_eq!(lone.len(), 1);
    assert_eq!(lone[0].name, "x");
    assert_eq!(lone[0].channel, 36);
    // Everything alike, the seed (bss_seed(seed, 0) is the seed) and the space too.
    assert_eq!(format!("{:?}", lone[0].cfg), format!("{single:?}"));
}

#[test]
fn a_bss_inherits_what_it_does_not_give() {
    let text = "
[mac]
retry_limit = 5
[space]
[stations]
count = 2
distance_m = 5
[traffic]
test = \"tcp_1down\"
[[bss]]
name = \"plain\"
ap_position_m = [0, 0]
[[bss]]
name = \"own\"
ap_position_m = [10, 0]
stack = \"linux-4.9\"
[bss.mac]
rts_threshold_bytes = 0
[bss.stations]
count = 3
[bss.traffic]
test = \"tcp_1up\"
length_s = 2
[bss.wired]
delay_ms = 20
";
    let b = bsss(text, &[]);
    let tcp = |r: &ResolvedBss| -> Vec<(Host, Host)> {
        r.cfg
            .flows
            .iter()
            .filter_map(|f| match f {
                Flow::Tcp(t) => Some((t.sender, t.receiver)),
                _ => None,
            })
            .collect()
    };
    // The plain BSS: the top level's traffic, stations, MAC, stack and wired link.
    assert_eq!(tcp(&b[0]), vec![(Host::Server, Host::Station(1))]);
    assert_eq!(b[0].cfg.cell.stations.len(), 2);
    assert_eq!(b[0].cfg.cell.retry_limit, 5);
    assert_eq!(b[0].cfg.cell.rts_threshold_bytes, None);
    assert_eq!(b[0].cfg.cell.stack.name, "linux-6.16");
    assert_eq!(b[0].cfg.wired.delay.as_ns(), 1_000_000);
    // flent's 5 + 60 + 5 s.
    assert_eq!(b[0].cfg.duration.as_ns(), 70_000_000_000);
    // The other: its own keys over the inherited ones, key by key.
    assert_eq!(tcp(&b[1]), vec![(Host::Station(1), Host::Server)]);
    assert_eq!(b[1].cfg.cell.stations.len(), 3);
    assert_eq!(b[1].cfg.cell.retry_limit, 5);
    assert_eq!(b[1].cfg.cell.rts_threshold_bytes, Some(0));
    assert_eq!(b[1].cfg.cell.stack.name, "linux-4.9");
    assert_eq!(b[1].cfg.wired.delay.as_ns(), 20_000_000);
    assert_eq!(b[1].cfg.duration.as_ns(), 12_000_000_000);
    // Its stations at distance_m = 5 from its own AP, along +x.
    assert_eq!(space(&b[1]).first_node, 3);
    assert_close(
        &placement(&b[1])[3..],
        &[(10.0, 0.0), (15.0, 0.0), (15.0, 0.0), (15.0, 0.0)],
    );
}

#[test]
fn an_alternative_replaces_the_inherited_keys_it_cannot_go_with() {
    let text = "
[space]
[stations]
count = 4
distance_m = 5
[[flows]]
kind = \"ping\"
from = \"sta1\"
to = \"server\"
[[bss]]
name = \"list\"
ap_position_m = [0, 0]
[[bss.stations.list]]
position_m = [0, 7]
[[bss]]
name = \"placed\"
ap_position_m = [20, 0]
[bss.stations]
position_m = [20, 3]
count = 1
[[bss]]
name = \"flent\"
ap_position_m = [0, 20]
[bss.traffic]
test = \"ping\"
";
    let b = bsss(text, &[]);
    // A list replaces the inherited count; a position the inherited distance.
    assert_eq!(b[0].cfg.cell.stations.len(), 1);
    assert_eq!(placement(&b[0])[1], (0.0, 7.0));
    assert_eq!(b[1].cfg.cell.stations.len(), 1);
    assert_eq!(placement(&b[1])[3], (20.0, 3.0));
    // The inherited [[flows]] run where no flent test replaces them.
    assert_eq!(b[0].cfg.flows.len(), 1);
    assert!(
        matches!(&b[2].cfg.flows[..], [Flow::Ping(_), Flow::Ping(_)]),
        "{:?}",
        b[2].cfg.flows
    );
}

#[test]
fn every_cell_places_every_node_of_its_channel() {
    let b = bsss(TWO, &[]);
    let all = rings(&[(0.0, 0.0), (20.0, 0.0)], 2, 5.0);
    for (k, first) in [(0, 0), (1, 3)] {
        assert_close(&placement(&b[k]), &all);
        assert_eq!(space(&b[k]).first_node, first);
        space(&b[k]).validate(3).unwrap();
    }
    // On different channels each cell places its own nodes alone.
    let apart = bsss(TWO, &[("bss[1].channel", "40")]);
    assert_eq!((apart[0].channel, apart[1].channel), (36, 40));
    assert_close(&placement(&apart[0]), &all[..3]);
    assert_close(&placement(&apart[1]), &all[3..]);
    assert_eq!(space(&apart[1]).first_node, 0);
    assert_eq!(channel_groups(&apart), vec![vec![0], vec![1]]);
    assert_eq!(channel_groups(&b), vec![vec![0, 1]]);
    // A third BSS back on channel 36 joins the first.
    let three = bsss(
        &format!("{TWO}[[bss]]\nname = \"c\"\nap_position_m = [0, 20]\nchannel = 36\n"),
        &[("bss[1].channel", "40")],
    );
    assert_eq!(channel_groups(&three), vec![vec![0, 2], vec![1]]);
    let mut want = all[..3].to_vec();
    want.extend(rings(&[(0.0, 20.0)], 2, 5.0));
    assert_close(&placement(&three[2]), &want);
    assert_eq!(space(&three[2]).first_node, 3);
}

#[test]
fn each_bss_has_its_own_seed_the_first_the_runs() {
    let b = bsss(TWO, &[]);
    assert_eq!(b[0].cfg.seed, 7);
    assert_eq!(b[1].cfg.seed, bss_seed(7, 1));
    assert_ne!(b[1].cfg.seed, 7);
    let b = bsss(TWO, &[("seed", "8")]);
    assert_eq!((b[0].cfg.seed, b[1].cfg.seed), (8, bss_seed(8, 1)));
}

/// A scenario, its overrides, and the start of the error they give.
type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);

#[test]
fn errors_name_their_key() {
    let cases: &[Case<'_>] = &[
        (
            TWO,
            &[("bss[1].name", "\"a\"")],
            "bss[1].name: `a` is bss[0]'s name too",
        ),
        (
            TWO,
            &[("bss[1].name", "\"a b\"")],
            "bss[1].name: must be 1 to 32 letters",
        ),
        (
            "[[bss]]\nap_position_m = [0, 0]\n",
            &[],
            "bss[0].name: required",
        ),
        (
            "[[bss]]\nname = \"a\"\n",
            &[],
            "bss[0].ap_position_m: required: where this BSS's AP stands",
        ),
        (
            TWO,
            &[("bss[1].ap_position_m", "[1e6, 0]")],
            "bss[1].ap_position_m: coordinates must be",
        ),
        (
            TWO,
            &[("phy.ap_position_m", "[1, 0]")],
            "phy.ap_position_m: cannot be combined with [[bss]]",
        ),
        (
            TWO,
            &[(
                "space.path_loss_db",
                "[[0, 50, 50], [50, 0, 50], [50, 50, 0]]",
            )],
            "space.path_loss_db: cannot be combined with [[bss]]",
        ),
        (
            TWO,
            &[("bss[1].stations", "{ count = 2, distance_m = 60 }")],
            "bss[1].stations: station 1 is out of range of its AP (",
        ),
        (
            TWO,
            &[("bss[0].stations", "{ cont = 3 }")],
            "bss[0].stations.cont: unknown key (did you mean `count`?)",
        ),
        (
            TWO,
            &[("bss[0].stations", "{ count = 0 }")],
            "bss[0].stations.count: must be",
        ),
        (
            TWO,
            &[("bss[1].mac", "{ retry_limit = \"x\" }")],
            "bss[1].mac.retry_limit: invalid type",
        ),
        (
            TWO,
            &[("bss[1].stack", "\"linux-9\"")],
            "bss[1].stack: unknown",
        ),
        (TWO, &[("bss[0].colour", "3")], "bss[0].colour: unknown key"),
        (
            TWO,
            &[("bss[1].channel", "38")],
            "bss[1].channel: 38 is not a 5 GHz channel",
        ),
        (
            TWO,
            &[("bss[1].channel", "40"), ("phy.width_mhz", "40")],
            "bss[1].channel: channel 40 (5170–5210 MHz) overlaps bss[0]'s channel 36",
        ),
        // Inherited: the top level's key, and the BSS that inherits it.
        (
            TWO,
            &[("traffic.rate_mbps", "0")],
            "traffic.rate_mbps: must be above 0",
        ),
        (
            TWO,
            &[
                ("bss[1].stations", "{ count = 1 }"),
                ("traffic", "{ test = \"ping\", station = 2 }"),
            ],
            "traffic.station: no station 2 in this cell (1 to 1) (in bss[1], `b`)",
        ),
        (
            TWO,
            &[("phy.width_mhz", "30")],
            "phy.width_mhz: 30 MHz is not supported",
        ),
    ];
    for (text, overrides, want) in cases {
        let e = error(text, overrides);
        assert!(
            e.starts_with(want),
            "{overrides:?}:\n  got  {e}\n  want {want}…"
        );
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn a_flow_names_its_own_hosts_or_another_bsss() {
    let flow = |from: &str, to: &str| {
        format!("{TWO}[[bss.flows]]\nkind = \"ping\"\nfrom = \"{from}\"\nto = \"{to}\"\n")
    };
    // Its own hosts, bare or under its own name.
    let b = bsss(&flow("b.sta2", "server"), &[]);
    let Flow::Ping(p) = &b[1].cfg.flows[0] else {
        panic!("{:?}", b[1].cfg.flows)
    };
    assert_eq!((p.from, p.to), (Host::Station(2), Host::Server));
    assert!(b[1].cfg.remote_ends.is_empty());
    assert!(
        matches!(b[0].cfg.flows[0], Flow::Cbr(_)),
        "a keeps [traffic]"
    );
    // Another BSS's station or AP: the far end is the server here, and who it is
    // rides along.
    for (from, to, far_is_from, host) in [
        ("sta1", "a.sta2", false, Host::Station(2)),
        ("a.sta1", "b.sta2", true, Host::Station(1)),
    ] {
        let b = bsss(&flow(from, to), &[]);
        let Flow::Ping(p) = &b[1].cfg.flows[0] else {
            panic!("{:?}", b[1].cfg.flows)
        };
        let own = if far_is_from { p.to } else { p.from };
        let far = if far_is_from { p.from } else { p.to };
        assert_eq!(
            (far, own.node().0 > 0),
            (Host::Server, true),
            "{from} → {to}"
        );
        let name = format!("a.{}", host.name());
        assert_eq!(
            b[1].cfg.remote_ends,
            [txop_sim::RemoteEnd {
                flow: 0,
                bss: 0,
                host,
                name
            }]
        );
        // The BSS as resolved keeps the names as written.
        assert_eq!(b[1].scenario.flows[0].from, from.trim_start_matches("b."));
        assert!(b[0].cfg.remote_ends.is_empty());
    }
    for (from, to, want) in [
        (
            "sta1",
            "a.server",
            "bss[1].flows[0].to: `a.server`: every BSS's wired link ends at one junction, \
             where the server stands; name it `server`",
        ),
        (
            "sta1",
            "a.ap",
            "bss[1].flows[0].to: `a.ap`: an AP's own host sends only over its air, not its \
             wired link; end the flow at one of `a`'s stations",
        ),
        (
            "c.sta1",
            "server",
            "bss[1].flows[0].from: no BSS called `c` (the BSSs are `a`, `b`)",
        ),
        (
            "sta1",
            "a.sta3",
            "bss[1].flows[0].to: in BSS `a`: no station 3 (the cell has 2)",
        ),
        (
            "server",
            "a.sta1",
            "bss[1].flows[0].from: `server`: a flow to another BSS runs from or to a station \
             of this one (`b`), across both BSSs' air and wired links",
        ),
        (
            "a.sta1",
            "a.sta2",
            "bss[1].flows[0].to: both ends are in other BSSs: a flow is listed in the BSS of \
             one of its ends (`b`)",
        ),
    ] {
        assert_eq!(error(&flow(from, to), &[]), want, "{from} → {to}");
    }
    assert!(error(&flow("sta3", "server"), &[]).starts_with("bss[1].flows[0].from: no station 3"));
    let cbr = format!(
        "{TWO}[[bss.flows]]\nkind = \"cbr\"\nfrom = \"sta1\"\nto = \"a.sta1\"\nrate_mbps = 1\n"
    );
    assert_eq!(
        error(&cbr, &[]),
        "bss[1].flows[0].to: a cbr flow runs between one BSS's AP and a station; between BSSs \
         use tcp, ping or udp_ping"
    );
    // Inherited flows name the top level's key and the BSS: fine in `a`, whose station
    // it is, refused in `b`, where neither end is a station of its own.
    let top = format!("{TWO}[[flows]]\nkind = \"ping\"\nfrom = \"a.sta1\"\nto = \"server\"\n");
    assert_eq!(
        error(&top, &[]),
        "flows[0].to: `server`: a flow to another BSS runs from or to a station of this one \
         (`b`), across both BSSs' air and wired links (in bss[1], `b`)"
    );
}

#[test]
fn resolve_refuses_a_scenario_of_several_bsss_in_one_line() {
    let s = parse(TWO, &[]).unwrap();
    for e in [
        s.resolve().unwrap_err().to_string(),
        s.resolve_with_summary().unwrap_err().to_string(),
    ] {
        assert_eq!(
            e,
            "bss: this scenario lists several BSSs; only `txop run` and `txop show` take it"
        );
    }
    assert!(!parse("", &[]).unwrap().has_bsss());
    assert!(parse("", &[]).unwrap().resolve_bsss().is_err());
}

#[test]
fn show_says_who_is_hidden_from_whom_across_bsss() {
    // a's station 50 m from b's: each hidden from the other, both in range of both APs.
    let text = "
[space]
[[bss]]
name = \"a\"
ap_position_m = [0, 0]
[bss.stations]
position_m = [-20, 0]
[[bss]]
name = \"b\"
ap_position_m = [10, 0]
[bss.stations]
position_m = [30, 0]
";
    let (_, summary) = parse(text, &[])
        .unwrap()
        .resolve_bsss_with_summary()
        .unwrap();
    let noise = -174.0 + 10.0 * 20e6f64.log10() + 7.0;
    let rx20 = rx_5ghz_dbm(20.0);
    // Either station 50 m from the other, 30 m from the other BSS's AP.
    assert!(rx_5ghz_dbm(50.0) < -82.0 && rx_5ghz_dbm(30.0) > -82.0);
    for line in [
        "# Resolved BSSs (for reading; ignored as input):".to_string(),
        "# bss a: channel 36, stack linux-6.16, seed 1, 1 station".to_string(),
        format!("# bss b: channel 36, stack linux-6.16, seed {}, 1 station", bss_seed(1, 1)),
        "# AP at (0, 0) m; hears every node on channel 36".to_string(),
        format!(
            "# station 1 at (-20, 0) m: AP {rx20:.1} dBm (SNR {:.1} dB); hidden from: bss b station 1",
            rx20 - noise
        ),
        format!(
            "# station 1 at (30, 0) m: AP {rx20:.1} dBm (SNR {:.1} dB); hidden from: bss a station 1",
            rx20 - noise
        ),
    ] {
        assert!(summary.lines().any(|l| l == line), "missing {line:?} in:\n{summary}");
    }
}

#[test]
fn neighbours_in_and_out_of_range_place_two_rings() {
    for (name, apart) in [
        ("neighbours-in-range", 20.0),
        ("neighbours-out-of-range", 200.0),
    ] {
        let b = bsss(builtin(name), &[]);
        let all = rings(&[(0.0, 0.0), (apart, 0.0)], 4, 5.0);
        assert_eq!(
            b.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        for (k, first) in [(0, 0), (1, 5)] {
            assert_close(&placement(&b[k]), &all);
            assert_eq!(space(&b[k]).first_node, first, "{name}");
            assert_eq!(b[k].channel, 36);
            assert_eq!(b[k].cfg.cell.stack.name, "linux-6.16");
            // rrul from station 1: 30 s of loaders with 5 s of pings either side.
            assert_eq!(b[k].cfg.duration.as_ns(), 40_000_000_000);
            assert_eq!(
                b[k].cfg
                    .flows
                    .iter()
                    .filter(|f| matches!(f, Flow::Tcp(_)))
                    .count(),
                8
            );
        }
        // In range every node detects every other; out of range no node of one BSS
        // detects any of the other's.
        let map = RadioMap::new(space(&b[0]), Band::Ghz5, ChannelWidth::Mhz20);
        for i in 0..10 {
            for j in (0..10).filter(|&j| j != i) {
                let same = (i < 5) == (j < 5);
                assert_eq!(map.detects(i, j), same || apart == 20.0, "{name} {i} {j}");
            }
        }
    }
}

#[test]
fn the_apartment_block_mixes_stacks_on_one_channel() {
    let b = bsss(builtin("apartment-block"), &[]);
    let aps = [(0.0, 0.0), (20.0, 0.0), (0.0, 20.0), (20.0, 20.0)];
    let all = rings(&aps, 4, 5.0);
    let stacks: Vec<&str> = b.iter().map(|b| b.cfg.cell.stack.name.as_str()).collect();
    assert_eq!(
        stacks,
        ["linux-4.8-bloated", "linux-6.16", "linux-4.9", "linux-5.14"]
    );
    for (k, bss) in b.iter().enumerate() {
        assert_close(&placement(bss), &all);
        assert_eq!(space(bss).first_node, 5 * k);
        assert_eq!(bss.channel, 36);
        assert!(bss.cfg.flows.iter().any(|f| matches!(f, Flow::Tcp(_))));
    }
    // The header: every node hears every other, the farthest stations (36.1 m) just.
    let map = RadioMap::new(space(&b[0]), Band::Ghz5, ChannelWidth::Mhz20);
    assert!(map.all_detect_all());
    assert!((rx_5ghz_dbm(30f64.hypot(20.0)) + 81.26).abs() < 0.01);
}

#[test]
fn neighbours_bss4_is_bench_bss4s_topology() {
    let b = bsss(builtin("neighbours-bss4"), &[]);
    let aps = [(0.0, 0.0), (20.0, 0.0), (0.0, 20.0), (20.0, 20.0)];
    let all = rings(&aps, 16, 5.0);
    let ht20_mcs7 = TxVector::Ht {
        mcs: 7,
        width: ChannelWidth::Mhz20,
        gi: txop_core::phy::GuardInterval::Long,
    };
    for (k, bss) in b.iter().enumerate() {
        assert_eq!(bss.name, format!("bss{k}"));
        assert_close(&placement(bss), &all);
        assert_eq!(space(bss).first_node, 17 * k);
        assert_eq!(space(bss).tx_power_dbm, 20.0);
        let c = &bss.cfg;
        assert_eq!(c.cell.stations.len(), 16);
        assert!(c.cell.stations.iter().all(|s| s.tx == ht20_mcs7));
        assert!(c.cell.aggregation && c.cell.rts_threshold_bytes.is_none() && !c.cell.beacons);
        assert_eq!(c.cell.max_ampdu_duration.as_ns(), 4_000_000);
        assert_eq!(c.cell.stack.name, "linux-6.16");
        assert_eq!(c.duration.as_ns(), 10_000_000_000);
        assert_eq!(
            (
                c.wired.rate_bps,
                c.wired.delay.as_ns(),
                c.wired.limit_packets
            ),
            (1_000_000_000, 1_000_000, 1000)
        );
        // One CUBIC download per station from t = 0, nothing else.
        let downloads: Vec<Host> = c
            .flows
            .iter()
            .map(|f| match f {
                Flow::Tcp(t)
                    if t.sender == Host::Server && t.start.as_ns() == 0 && t.stop.is_none() =>
                {
                    assert_eq!(t.cfg.cc, txop_sim::tcp::CongestionControl::Cubic);
                    t.receiver
                }
                other => panic!("not a download: {other:?}"),
            })
            .collect();
        assert_eq!(downloads, (1..=16).map(Host::Station).collect::<Vec<_>>());
    }
    // bss4.cc: 10 of the 2016 station pairs (all in diagonal BSSs, > 37.85 m apart)
    // are below −82 dBm, counted here from the positions; the cells' radio map agrees.
    let map = RadioMap::new(space(&b[0]), Band::Ghz5, ChannelWidth::Mhz20);
    let stations: Vec<usize> = (0..68).filter(|i| i % 17 != 0).collect();
    let (mut hidden, mut pairs, mut mapped) = (0, 0, 0);
    for (x, &i) in stations.iter().enumerate() {
        for &j in &stations[x + 1..] {
            pairs += 1;
            let d = Position::new(all[i].0, all[i].1).distance_m(Position::new(all[j].0, all[j].1));
            if rx_5ghz_dbm(d) < -82.0 {
                hidden += 1;
                assert!(d > 37.85 && (i / 17) + (j / 17) == 3, "{i} {j} {d}");
            }
            mapped += usize::from(!map.detects(i, j));
        }
    }
    assert_eq!((pairs, hidden, mapped), (2016, 10, 10));
}

/// The two-BSS built-ins run 2 s (the loaders from t = 0): each BSS's packets are
/// conserved, and in range the two share the airtime, so each carries clearly less
/// than out of range, where each has the channel to itself.
#[test]
fn neighbours_run_and_share_the_air_in_range_only() {
    let short = [("duration_s", "2"), ("traffic.delay_s", "0")];
    let mut mbps = Vec::new();
    for name in ["neighbours-in-range", "neighbours-out-of-range"] {
        let results = run(&bsss(builtin(name), &short));
        let mut per_bss = Vec::new();
        for (k, r) in results.iter().enumerate() {
            check_conservation(r).unwrap_or_else(|e| panic!("{name} bss {k}: {e}"));
            assert!(r.conservation.delivered_packets > 0, "{name} bss {k}");
            per_bss.push(r.total_throughput_bps / 1e6);
        }
        mbps.push(per_bss);
    }
    let (inside, apart) = (&mbps[0], &mbps[1]);
    for k in 0..2 {
        assert!(
            inside[k] < 0.75 * apart[k],
            "in range {inside:?} Mbit/s, apart {apart:?}"
        );
    }
    // Out of range the two BSSs are alike but for their seeds: within 20 %.
    assert!((apart[0] - apart[1]).abs() < 0.2 * apart[0], "{apart:?}");
}

/// docs/scenarios.md's `[[bss]]` example resolves as its comments say.
#[test]
fn the_docs_example_resolves_as_described() {
    let doc = include_str!("../../../docs/scenarios.md");
    let section = &doc[doc.find("## `[[bss]]`").expect("a [[bss]] section")..];
    let section = &section[..section.find("\n## ").expect("a next section")];
    let block = section.split("```toml\n").nth(1).expect("an example");
    let block = &block[..block.find("```").expect("closed")];
    let b = bsss(block, &[]);
    let names: Vec<&str> = b.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["home", "neighbour", "across"]);
    assert_eq!(channel_groups(&b), vec![vec![0, 1], vec![2]]);
    assert_eq!(b[1].cfg.cell.stack.name, "linux-4.8-bloated");
    assert_eq!(b[1].cfg.cell.rts_threshold_bytes, Some(0));
    assert_eq!(b[0].cfg.cell.rts_threshold_bytes, None);
    let tcp = |r: &ResolvedBss| {
        r.cfg
            .flows
            .iter()
            .filter(|f| matches!(f, Flow::Tcp(_)))
            .count()
    };
    assert_eq!((tcp(&b[0]), tcp(&b[1]), tcp(&b[2])), (8, 8, 1));
    assert_close(&placement(&b[2]), &rings(&[(0.0, 20.0)], 4, 5.0));
}

/// Beacons and power save in an apartment block (issue 26: space refused them): the
/// four co-channel BSSs of `apartment-block`, every station in power save, a flent
/// ping from each BSS's station 1 for 10 s. In every BSS each station hears at least
/// nine in ten of its AP's beacons (one per 100 TU; the four APs' beacons start
/// together, and a station 5 m from its AP captures its own over the others' 15–25 m
/// away), the three idle stations doze nine tenths of the run and more, and the pinging
/// station's replies come while it is awake (its dynamic timeout outlasts the RTT).
#[test]
fn beacons_and_power_save_in_an_apartment_block() {
    let b = bsss(
        builtin("apartment-block"),
        &[
            ("traffic.test", "ping"),
            ("traffic.length_s", "10"),
            (
                "stations.power_save",
                "{ dynamic_timeout_ms = 100, ps_poll = false, wake_every_beacons = 1 }",
            ),
        ],
    );
    let results = run(&b);
    for (bss, r) in b.iter().zip(&results) {
        let name = &bss.name;
        check_conservation(r).unwrap_or_else(|e| panic!("{name}: {e}"));
        let beacons = (r.duration_s / 0.1024).floor();
        for s in &r.stations {
            let ps = s
                .power_save
                .as_ref()
                .unwrap_or_else(|| panic!("{name}: station {} not in power save", s.station));
            assert!(
                ps.beacons_heard as f64 >= 0.9 * beacons,
                "{name}: station {} heard {} of {beacons} beacons",
                s.station,
                ps.beacons_heard
            );
            if s.station != 1 {
                let dozed_s = ps.doze_ns as f64 / 1e9;
                assert!(
                    dozed_s >= 0.9 * r.duration_s,
                    "{name}: idle station {} dozed {dozed_s:.2} s of {}",
                    s.station,
                    r.duration_s
                );
            }
        }
        let rtt = r
            .flows
            .iter()
            .find_map(|f| (f.kind == "ping").then_some(f.rtt_ms.as_ref()).flatten())
            .unwrap_or_else(|| panic!("{name}: no ping RTT"));
        assert!(rtt.p50 < 20.0, "{name}: ping p50 {} ms", rtt.p50);
    }
}
