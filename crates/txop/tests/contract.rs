//! The outputs' contracts: results.json against its documented schema, and the summary
//! of a short deterministic run against a golden copy.

mod support;
use support::*;

/// Every flow kind (TCP with retransmits and cwnd, ICMP and UDP pings, a web page) in
/// results.json and in --json, and a comparison's results.json.
#[test]
fn results_json_follows_the_schema() {
    let dir = scratch("schema");
    let out = dir.join("rrul");
    let o = txop(&[
        "run",
        "tcp-ndown-6mbit",
        "--set",
        "traffic.test=rrul",
        "--set",
        "traffic.length_s=4",
        "--set",
        "traffic.web.start_s=1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let kinds: std::collections::BTreeSet<&str> = v["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        ["ping", "tcp", "udp_ping", "web"]
    );
    assert_valid(&v, "results.json");
    let o = txop(&["run", "anomaly", "--set", "duration_s=1", "--json"]);
    let plain: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_valid(&plain, "--json");
    // Stations that neither scan nor save power carry no such counters.
    assert!(plain["stations"][0]
        .as_object()
        .unwrap()
        .get("scan")
        .is_none());
    // A scanning, power-saving station reports its counters.
    let o = txop(&[
        "run",
        "e1-scan-ping",
        "--set",
        "duration_s=8",
        "--set",
        "stations.power_save={}",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_valid(&v, "scanning station");
    let sta = &v["stations"][0];
    assert!(
        sta["scan"]["scans_completed"].as_u64().unwrap() >= 1,
        "{sta}"
    );
    assert!(sta["scan"]["off_channel_ns"].as_u64().unwrap() > 0);
    assert!(
        sta["power_save"]["beacons_heard"].as_u64().unwrap() > 0,
        "{sta}"
    );
    let o = txop(&[
        "compare",
        "default",
        "--stack",
        "linux-4.9",
        "--stack",
        "linux-6.16",
        "--set",
        "duration_s=1",
        "--json",
    ]);
    assert_valid(
        &serde_json::from_slice(&o.stdout).unwrap(),
        "compare --json",
    );
    // The schema is not vacuous: a field it does not document, or a wrong type, fails.
    let mut bad = v.clone();
    bad["flows"][0]["surprise"] = 1.into();
    assert!(!schema().is_valid(&bad));
    let mut bad = v;
    bad["stations"][0]["airtime_share"] = "high".into();
    assert!(!schema().is_valid(&bad));
    std::fs::remove_dir_all(&dir).ok();
}

/// A run of several BSSs (`[[bss]]`): results.json as `txop run -o DIR` writes it, and
/// `--json`, follow the schema (issue 25 item 3: the `bss` array was undocumented and
/// the schema refused every such file), and the schema is not vacuous about a BSS.
#[test]
fn a_run_of_several_bsss_follows_the_schema() {
    let dir = scratch("schema-bss");
    let out = dir.join("hood");
    let o = txop(&[
        "run",
        "neighbours-in-range",
        "--set",
        "duration_s=1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(v["bss"].as_array().map(Vec::len), Some(2));
    assert!(v["bss"][0]["resolved"].is_object());
    assert_valid(&v, "results.json of [[bss]]");
    let o = txop(&[
        "run",
        "neighbours-in-range",
        "--set",
        "duration_s=1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let plain: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_valid(&plain, "--json of [[bss]]");
    let mut bad = v.clone();
    bad["bss"][1]["surprise"] = 1.into();
    assert!(!schema().is_valid(&bad));
    let mut bad = v.clone();
    bad["bss"][0]
        .as_object_mut()
        .unwrap()
        .remove("channel")
        .unwrap();
    assert!(!schema().is_valid(&bad));
    let mut bad = v;
    bad["bss"][0]["stations"][0]["airtime_share"] = "high".into();
    assert!(!schema().is_valid(&bad));
    std::fs::remove_dir_all(&dir).ok();
}

/// The summary of a short deterministic run, character for character. A change in
/// the model shows up here first; if it is intended, regenerate the golden file with
/// `TXOP_UPDATE_GOLDEN=1 cargo test -p txop --test contract` and review its diff.
#[test]
fn summary_matches_golden() {
    let cases = [
        (
            "default-2s.txt",
            vec!["run", "default", "--set", "duration_s=2"],
        ),
        (
            "tcp-ndown-6mbit-10s.txt",
            vec!["run", "tcp-ndown-6mbit", "--set", "traffic.length_s=10"],
        ),
        // rrul at HT20 MCS7: EDCA starves the BK download, which delivers nothing in
        // 5 s: its latencies print as "-"; every row carries flent's series name.
        (
            "rrul-mcs7-5s.txt",
            vec![
                "run",
                "tcp-ndown-6mbit",
                "--set",
                "traffic.test=rrul",
                "--set",
                "traffic.length_s=5",
                "--set",
                "stations.mcs=7",
            ],
        ),
    ];
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    for (file, args) in cases {
        let o = txop(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let path = golden.join(file);
        if std::env::var_os("TXOP_UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, &o.stdout).unwrap();
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            stdout(&o),
            want,
            "{file} differs (TXOP_UPDATE_GOLDEN=1 regenerates it)"
        );
    }
}
