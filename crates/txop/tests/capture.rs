//! `txop run … --pcap` read back with tshark (Debian's, installed by scripts/setup.sh),
//! an implementation of 802.11, radiotap and TCP that owes nothing to txop: the file
//! parses without a malformed packet or an expert error, its counts agree with
//! results.json, Wireshark's TCP analysis finds the retransmissions txop counted, and
//! the inter-frame spaces and airtimes Wireshark computes are those the MAC modelled.

mod support;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use support::*;

/// SIFS at 5 GHz (802.11-2016 Table 19-25), µs.
const SIFS_US: i64 = 16;

/// One frame as tshark decodes it.
#[derive(Debug, Default, Clone)]
struct Frame {
    subtype: String,
    ta: String,
    ra: String,
    retry: bool,
    bad_fcs: bool,
    ampdu_ref: Option<u32>,
    ifs_us: Option<i64>,
    start_us: Option<i64>,
    end_us: Option<i64>,
    comment: String,
    tcp_retransmission: bool,
    tcp_payload: bool,
    tcp_from_station: bool,
}

const FIELDS: &[&str] = &[
    "wlan.fc.type_subtype",
    "wlan.ta",
    "wlan.ra",
    "wlan.fc.retry",
    "radiotap.flags.badfcs",
    "radiotap.ampdu.reference",
    "radiotap.ampdu.flags.last",
    "wlan_radio.ifs",
    "wlan_radio.start_tsf",
    "wlan_radio.end_tsf",
    "frame.comment",
    "tcp.analysis.retransmission",
    "tcp.analysis.fast_retransmission",
    "tcp.len",
    "ip.src",
    "tcp.analysis.out_of_order",
];

/// Every frame of `file`, in order, as tshark reads it (and its stderr, which must
/// be empty of complaints).
fn tshark_frames(file: &Path) -> Vec<Frame> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r")
        .arg(file)
        .args(["-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"]);
    for f in FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd
        .output()
        .expect("tshark (Debian's tshark package; scripts/setup.sh installs it)");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tshark failed: {err}");
    assert!(
        !err.contains("damaged") && !err.contains("corrupt"),
        "{err}"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .map(|line| {
            let c: Vec<&str> = line.split('\t').collect();
            let get = |i: usize| c.get(i).copied().unwrap_or("");
            let flag = |i: usize| matches!(get(i), "1" | "True");
            let num = |i: usize| get(i).parse::<i64>().ok();
            Frame {
                subtype: get(0).to_string(),
                ta: get(1).to_string(),
                ra: get(2).to_string(),
                retry: flag(3),
                bad_fcs: flag(4),
                ampdu_ref: get(5).parse().ok(),
                ifs_us: num(7),
                start_us: num(8),
                end_us: num(9),
                comment: get(10).to_string(),
                // A segment below what the flow already sent: a retransmission, or,
                // when Wireshark never saw the original (dropped before the air),
                // what it calls out of order when it fills the hole soon after.
                tcp_retransmission: !get(11).is_empty()
                    || !get(12).is_empty()
                    || !get(15).is_empty(),
                tcp_payload: num(13).is_some_and(|n| n > 0),
                tcp_from_station: get(14).starts_with("10.1."),
            }
        })
        .collect()
}

/// Frames of `file` matching the display filter `filter` (tshark's count).
fn tshark_count(file: &Path, filter: &str) -> usize {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r")
        .arg(file)
        .args(["-Y", filter, "-T", "fields", "-e", "frame.number"]);
    tshark_stdout(&mut cmd).lines().count()
}

/// What tshark run as `cmd` printed (it must succeed).
fn tshark_stdout(cmd: &mut Command) -> String {
    let out = cmd.output().expect("tshark");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// Run `args` with `-o DIR --pcap` and return DIR and its results.json.
fn captured_run(name: &str, args: &[&str]) -> (std::path::PathBuf, serde_json::Value) {
    let dir = scratch(name).join("out");
    let mut all: Vec<&str> = args.to_vec();
    let d = dir.to_str().unwrap();
    all.extend(["-o", d, "--pcap", "-q"]);
    let o = txop(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    let json = std::fs::read_to_string(dir.join("results.json")).unwrap();
    (dir.clone(), serde_json::from_str(&json).unwrap())
}

const STA1: &str = "02:00:00:00:00:01";
const DATA: &str = "0x0028";
const BLOCK_ACK: &str = "0x0019";
const ACK: &str = "0x001d";

/// Whether `count`, counted over all `frames`, is the model's `model`: exactly, or
/// without the last data PPDU's frames (`in_last`), whose exchange may end after the
/// run (the capture has it, the counters do not yet).
fn agrees(what: &str, frames: &[Frame], count: impl Fn(&[Frame]) -> usize, model: usize) {
    let last = (0..frames.len())
        .rev()
        .find(|&i| frames[i].subtype == DATA && starts_ppdu(frames, i))
        .unwrap_or(frames.len());
    let all = count(frames);
    let settled = count(&frames[..last]);
    assert!(
        all == model || settled == model,
        "{what}: capture {all} ({settled} before the last data PPDU), results.json {model}"
    );
}

/// A PPDU's first frame: not a data frame, or an A-MPDU's first subframe.
fn starts_ppdu(frames: &[Frame], i: usize) -> bool {
    let f = &frames[i];
    match f.ampdu_ref {
        None => true,
        Some(r) => i == 0 || frames[i - 1].ampdu_ref != Some(r),
    }
}

fn u(v: &serde_json::Value, key: &str) -> usize {
    v[key].as_u64().unwrap_or_else(|| panic!("{key}")) as usize
}

/// The scenario file of the UDP run: one HT20 MCS 7 station, saturated on VI (TXOP
/// 3 ms) with A-MPDUs of 8 subframes, half of its MPDUs lost.
fn udp_scenario(dir: &Path) -> std::path::PathBuf {
    let file = dir.join("udp.toml");
    std::fs::write(
        &file,
        "name = \"capture-udp\"\nduration_s = 1\nseed = 5\nstack = \"linux-6.16\"\n\
         [phy]\nstandard = \"n\"\nband = \"5\"\n\
         [mac]\nmax_ampdu_subframes = 8\n\
         [stations]\ncount = 1\nmcs = 7\nloss = 0.5\n\
         [traffic]\nkind = \"saturated\"\ndirection = \"downlink\"\ntid = 5\n",
    )
    .unwrap();
    file
}

#[test]
fn a_lossy_udp_capture_counts_and_times_as_the_model() {
    let dir = scratch("capture-udp");
    let scenario = udp_scenario(&dir);
    let (out, v) = captured_run("capture-udp-run", &["run", scenario.to_str().unwrap()]);
    let file = out.join("air.pcapng");
    assert_eq!(tshark_count(&file, "_ws.malformed"), 0);
    assert_eq!(
        tshark_count(&file, "_ws.expert.severity >= 8388608"),
        0,
        "expert errors"
    );
    let frames = tshark_frames(&file);
    let s = &v["stations"][0];
    let data: Vec<&Frame> = frames.iter().filter(|f| f.subtype == DATA).collect();
    let count = |p: fn(&Frame) -> bool| move |fs: &[Frame]| fs.iter().filter(|f| p(f)).count();
    agrees(
        "data frames",
        &frames,
        count(|f| f.subtype == DATA),
        u(s, "mpdus"),
    );
    let retry = count(|f| f.subtype == DATA && f.retry);
    agrees("retries", &frames, retry, u(s, "mpdu_retries"));
    assert!(u(s, "mpdu_retries") > 100);
    let dropped = count(|f| f.comment.contains("dropped=retry_limit"));
    agrees(
        "retry-limit drops",
        &frames,
        dropped,
        u(s, "dropped_retry_limit"),
    );
    assert!(u(s, "dropped_retry_limit") > 0, "no drop to compare");
    // A BlockAck for every A-MPDU something of got through.
    let acked = u(s, "ppdus") - u(s, "failures") - u(s, "collisions");
    agrees(
        "BlockAcks",
        &frames,
        count(|f| f.subtype == BLOCK_ACK),
        acked,
    );
    let lost = data.iter().filter(|f| f.bad_fcs).count();
    assert!(
        lost > data.len() / 3 && lost < data.len() * 2 / 3,
        "{lost} of {}",
        data.len()
    );

    // Timing as Wireshark computes it from radiotap.
    let mut continuations = 0;
    let mut airtime_us = 0i64;
    let mut busy_from = None;
    let mut last_exchange_us = 0;
    for i in 0..frames.len() {
        let f = &frames[i];
        if f.subtype == BLOCK_ACK {
            assert_eq!(
                f.ifs_us,
                Some(SIFS_US),
                "BlockAck {i} not SIFS after its A-MPDU"
            );
            assert_eq!(f.ra, STA1.replace(":01", ":00"));
            // The exchange ends with its BlockAck.
            last_exchange_us = f.end_us.unwrap() - busy_from.take().unwrap();
            airtime_us += last_exchange_us;
            continue;
        }
        if f.subtype != DATA || !starts_ppdu(&frames, i) {
            continue;
        }
        // The first subframe's start is the PPDU's start the model recorded.
        let start_ns: i64 = f
            .comment
            .split_whitespace()
            .find_map(|w| w.strip_prefix("ppdu_start_ns="))
            .expect("the first subframe names its PPDU")
            .parse()
            .unwrap();
        assert_eq!(f.start_us, Some(start_ns / 1000), "frame {i}");
        if i == 0 {
            busy_from = f.start_us;
            continue;
        }
        let ifs = f.ifs_us.unwrap();
        let prev = &frames[i - 1];
        if let Some(from) = busy_from.take() {
            // The previous A-MPDU got no BlockAck: its exchange ended with it.
            last_exchange_us = prev.end_us.unwrap() - from;
            airtime_us += last_exchange_us;
        }
        if ifs == SIFS_US {
            // Within the TXOP: right after the previous exchange's BlockAck, whose
            // SIFS is this exchange's airtime.
            assert_eq!(prev.subtype, BLOCK_ACK, "frame {i}: SIFS after no response");
            continuations += 1;
            busy_from = prev.end_us;
        } else {
            // After contention: at least the AP's AIFS[VI], SIFS + 1 slot (802.11-2016
            // Table 9-155, the AP's EDCA parameters).
            assert!(ifs >= SIFS_US + 9, "frame {i}: IFS {ifs} µs");
            busy_from = f.start_us;
        }
    }
    if let (Some(from), Some(last)) = (busy_from, frames.last()) {
        last_exchange_us = last.end_us.unwrap() - from;
        airtime_us += last_exchange_us;
    }
    assert!(continuations > 50, "{continuations} TXOP continuations");
    // The exchanges' airtimes, summed, are the station's airtime to the µs (the last
    // exchange is charged when it ends, which may be after the run's end).
    let model_us = (u(s, "airtime_ns") / 1000) as i64;
    assert!(
        model_us == airtime_us || model_us == airtime_us - last_exchange_us,
        "capture {airtime_us} µs (last exchange {last_exchange_us}), model {model_us} µs"
    );
}

#[test]
fn tcp_retransmissions_in_the_capture_are_those_txop_counted() {
    let (out, v) = captured_run(
        "capture-rrul",
        &[
            "run",
            "tcp-ndown-6mbit",
            "--set",
            "traffic.test=rrul",
            "--set",
            "traffic.length_s=2",
            "--set",
            "traffic.delay_s=0",
            "--set",
            "stations.mcs=7",
            "--set",
            "stations.loss=0.1",
        ],
    );
    let file = out.join("air.pcapng");
    assert_eq!(tshark_count(&file, "_ws.malformed"), 0);
    assert_eq!(
        tshark_count(&file, "_ws.expert.severity >= 8388608"),
        0,
        "expert errors"
    );
    let frames = tshark_frames(&file);
    let s = &v["stations"][0];
    let count = |p: fn(&Frame) -> bool| move |fs: &[Frame]| fs.iter().filter(|f| p(f)).count();
    agrees(
        "data frames",
        &frames,
        count(|f| f.subtype == DATA),
        u(s, "mpdus"),
    );
    let retry = count(|f| f.subtype == DATA && f.retry);
    agrees("retries", &frames, retry, u(s, "mpdu_retries"));
    let responses = count(|f| f.subtype == BLOCK_ACK || f.subtype == ACK);
    let acked = u(s, "ppdus") - u(s, "failures") - u(s, "collisions");
    agrees("responses", &frames, responses, acked);
    // A TCP retransmission is a new MPDU (Retry bit clear) carrying a segment
    // Wireshark saw before; the MAC's own retries are not TCP's.
    let mut wireshark: HashMap<bool, u64> = HashMap::new();
    for f in frames.iter().filter(|f| f.subtype == DATA && !f.retry) {
        if f.tcp_payload && f.tcp_retransmission {
            *wireshark.entry(f.tcp_from_station).or_default() += 1;
        }
    }
    // Per direction: txop's retransmissions, and the packets of its TCP flows that
    // never reached the air (dropped before it, or inside the network at the end).
    let mut txop: HashMap<bool, u64> = HashMap::new();
    let mut not_aired: HashMap<bool, u64> = HashMap::new();
    for flow in v["flows"].as_array().unwrap() {
        if let Some(n) = flow["retransmits"].as_u64() {
            let up = flow["src"] != "server";
            *txop.entry(up).or_default() += n;
            let delivered = flow["delivered_packets"].as_u64().unwrap();
            *not_aired.entry(up).or_default() +=
                flow["offered_packets"].as_u64().unwrap() - delivered;
        }
    }
    assert!(txop.values().sum::<u64>() > 5, "{txop:?}");
    // Every retransmission Wireshark finds on the air is one txop sent (none of them
    // an artefact of the capture, as the first segments after 8-byte SYN payloads
    // were, issue 25); txop's that Wireshark does not find are retransmissions that
    // never reached the air (an AQM drop of a retransmission, or one still queued).
    for (up, what) in [(true, "uplink"), (false, "downlink")] {
        let ws = wireshark.get(&up).copied().unwrap_or(0);
        let model = txop.get(&up).copied().unwrap_or(0);
        let slack = not_aired.get(&up).copied().unwrap_or(0);
        assert!(
            ws <= model && model <= ws + slack,
            "{what} retransmissions: Wireshark {ws}, txop {model} ({slack} packets not aired)"
        );
    }
    // With both directions' drops and end-of-run packets few, the counts are near.
    let total_ws: u64 = wireshark.values().sum();
    assert!(
        total_ws * 10 >= txop.values().sum::<u64>() * 8,
        "{wireshark:?} {txop:?}"
    );
}

#[test]
fn bounds_select_what_is_captured_and_bad_options_are_refused() {
    let (out, _) = captured_run(
        "capture-window",
        &[
            "run",
            "default",
            "--set",
            "duration_s=2",
            "--pcap-window",
            "0.5-0.6",
            "--pcap-stations",
            "2",
            "--pcap-snaplen",
            "100",
        ],
    );
    let file = out.join("air.pcapng");
    // Same scenario and seed, same bytes.
    let (again, _) = captured_run(
        "capture-window-again",
        &[
            "run",
            "default",
            "--set",
            "duration_s=2",
            "--pcap-window",
            "0.5-0.6",
            "--pcap-stations",
            "2",
            "--pcap-snaplen",
            "100",
        ],
    );
    assert!(std::fs::read(&file).unwrap() == std::fs::read(again.join("air.pcapng")).unwrap());
    let frames = tshark_frames(&file);
    assert!(!frames.is_empty());
    let sta2 = "02:00:00:00:00:02";
    for f in &frames {
        assert!(f.ta == sta2 || f.ra == sta2, "{f:?}");
        // TSFT marks the end: within the window plus the longest PPDU.
        let end = f.end_us.unwrap_or(0);
        assert!((500_000..=606_000).contains(&end), "{end}");
    }
    assert_eq!(tshark_count(&file, "frame.cap_len > 100"), 0);
    assert_eq!(tshark_count(&file, "_ws.malformed"), 0);
    assert_user_error(&["run", "default", "--pcap"], &["--pcap", "-o DIR"]);
    let d = scratch("capture-bad").join("out");
    let d = d.to_str().unwrap();
    assert_user_error(
        &["run", "default", "-o", d, "--pcap", "--pcap-stations", "9"],
        &["--pcap-stations", "no station 9"],
    );
    assert_user_error(
        &["run", "default", "-o", d, "--pcap", "--pcap-window", "3-2"],
        &["--pcap-window", "end after it starts"],
    );
    assert!(!Path::new(d).exists(), "a refused run leaves nothing");
}

/// `--pcap` of several BSSs (issue 26: refused before): one capture per BSS,
/// `air-<name>.pcapng`, each of its own BSS's PPDUs, parsing cleanly, its beacons,
/// data PPDUs and BlockAcks those of that BSS in results.json. (The four BSSs of
/// `apartment-block` share one channel, so each also hears the others; a capture holds
/// what its own cell sent.)
#[test]
fn several_bsss_write_a_capture_each() {
    let (out, v) = captured_run(
        "capture-bsss",
        &[
            "run",
            "apartment-block",
            "--set",
            "traffic.length_s=2",
            "--set",
            "mac.beacons=true",
        ],
    );
    let bsss = v["bss"].as_array().expect("a run of several BSSs");
    assert_eq!(bsss.len(), 4);
    for bss in bsss {
        let name = bss["name"].as_str().expect("a BSS's name");
        let file = out.join(format!("air-{name}.pcapng"));
        assert!(file.exists(), "{}", file.display());
        assert_eq!(tshark_count(&file, "_ws.malformed"), 0, "{name}");
        let frames = tshark_frames(&file);
        let stations = bss["stations"].as_array().unwrap();
        let ppdus: usize = stations.iter().map(|s| u(s, "ppdus")).sum();
        agrees(
            &format!("{name}: data PPDUs"),
            &frames,
            |f| {
                (0..f.len())
                    .filter(|&i| f[i].subtype == DATA && starts_ppdu(f, i))
                    .count()
            },
            ppdus,
        );
        let beacons = tshark_count(&file, "wlan.fc.type_subtype == 0x0008");
        let duration_s = bss["duration_s"].as_f64().expect("duration_s");
        let expected = (duration_s / 0.1024).floor() as usize;
        assert!(
            beacons + 1 >= expected && beacons <= expected + 1,
            "{name}: {beacons} beacons, about {expected} expected"
        );
    }
}

#[test]
fn a_capture_with_space_shows_every_ppdu_of_the_per_node_medium() {
    // Two hidden stations with RTS/CTS: the per-node medium (air/medium/spatial.rs) records
    // each PPDU when it ends.
    let (out, v) = captured_run(
        "capture-hidden",
        &["run", "hidden-stations-rts", "--set", "duration_s=1"],
    );
    let file = out.join("air.pcapng");
    assert_eq!(tshark_count(&file, "_ws.malformed"), 0);
    assert_eq!(
        tshark_count(&file, "_ws.expert.severity >= 8388608"),
        0,
        "expert errors"
    );
    assert!(
        tshark_count(&file, "wlan.fc.type_subtype == 0x1b") > 100,
        "RTS"
    );
    assert!(
        tshark_count(&file, "wlan.fc.type_subtype == 0x1c") > 100,
        "CTS"
    );
    // Every exchange acknowledged is one BlockAck its holder received.
    let mut acked = 0;
    for s in v["stations"].as_array().unwrap() {
        acked += u(s, "ppdus") - u(s, "failures") - u(s, "collisions");
    }
    let received_block_acks = tshark_count(
        &file,
        "wlan.fc.type_subtype == 0x19 && radiotap.flags.badfcs == 0",
    );
    assert!(
        received_block_acks == acked,
        "{received_block_acks} BlockAcks received, {acked} exchanges acknowledged"
    );
    // Both stations send, and their RTSs collide at the AP (bad FCS) some of the time.
    assert!(
        tshark_count(
            &file,
            "wlan.fc.type_subtype == 0x1b && radiotap.flags.badfcs == 1"
        ) > 0
    );
}

/// tshark's `fields` of every frame of `file` matching `filter`, one row per frame.
fn tshark_rows(file: &Path, filter: &str, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(file).args([
        "-Y",
        filter,
        "-T",
        "fields",
        "-E",
        "separator=\t",
        "-E",
        "occurrence=f",
    ]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("tshark");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let mut row: Vec<String> = l.split('\t').map(str::to_string).collect();
            row.resize(fields.len(), String::new());
            row
        })
        .collect()
}

#[test]
fn syns_carry_linuxs_options_and_the_first_segments_are_no_retransmissions() {
    // Issue 25: SYNs were 60-byte IP packets with only the timestamp option, so
    // Wireshark read 8 bytes of payload in each and took the first data segment
    // after it for a retransmission.
    let (out, v) = captured_run(
        "capture-syn",
        &[
            "run",
            "tcp-ndown-6mbit",
            "--set",
            "traffic.test=rrul",
            "--set",
            "traffic.length_s=2",
            "--set",
            "traffic.delay_s=0",
            "--set",
            "stations.mcs=7",
        ],
    );
    let file = out.join("air.pcapng");
    let tcp_flows = v["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["retransmits"].is_u64())
        .count();
    assert!(tcp_flows >= 8, "{tcp_flows} TCP flows");
    // Every SYN and SYN-ACK on the air, retries included, in Linux's layout
    // (`tcp_syn_options`): MSS 1460 for a 1500-byte MTU, SACK permitted,
    // timestamps, window scale 7 (`tcp_rmem[2]`, 6 MiB, of the 6.12 hosts of
    // linux-6.16), the initial window 45 × 1448 = 65160, no payload.
    let syns = tshark_count(&file, "tcp.flags.syn == 1");
    assert!(syns >= tcp_flows + 4, "{syns} SYNs and SYN-ACKs");
    let linux = "tcp.flags.syn == 1 && ip.len == 60 && tcp.hdr_len == 40 && tcp.len == 0 \
                 && tcp.options.mss_val == 1460 && tcp.options.sack_perm \
                 && tcp.options.wscale.shift == 7 && tcp.options.timestamp.tsval \
                 && tcp.window_size_value == 65160";
    assert_eq!(tshark_count(&file, linux), syns);
    // The windows Wireshark scales with that shift are the model's: data segments
    // carry the initial window (65160 → field 509 → 65152), ACKs the receiver's
    // advertised one, which auto-tuning grows past it.
    let data = tshark_count(&file, "tcp.len > 0");
    assert!(data > 1000, "{data} data segments");
    assert_eq!(
        tshark_count(&file, "tcp.len > 0 && tcp.window_size == 65152"),
        data
    );
    assert!(
        tshark_count(
            &file,
            "tcp.len == 0 && tcp.flags.syn == 0 && tcp.window_size > 65152"
        ) > 0
    );
    // Each direction's first segment with data is new data: a TCP retransmission
    // comes after an original, and the capture has the whole run.
    let rows = tshark_rows(
        &file,
        "tcp.len > 0 && wlan.fc.retry == 0",
        &["tcp.stream", "ip.src", "tcp.analysis.retransmission"],
    );
    let mut seen = std::collections::HashSet::new();
    let mut firsts = 0;
    for r in &rows {
        if seen.insert((r[0].clone(), r[1].clone())) {
            firsts += 1;
            assert!(
                r[2].is_empty(),
                "first segment of {r:?} is a retransmission"
            );
        }
    }
    let sending = v["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["retransmits"].is_u64() && f["delivered_packets"].as_u64() > Some(0))
        .count();
    assert!(firsts >= sending && sending >= 4, "{firsts} first segments");
}

#[test]
fn beacons_say_the_configured_interval_and_dtim() {
    // Issue 25: beacons said 100 TU and DTIM period 2, their count alternating 1/0,
    // whatever `mac` said.
    let (out, _) = captured_run(
        "capture-beacon",
        &[
            "run",
            "e3-power-save",
            "--set",
            "duration_s=2",
            "--set",
            "mac.beacon_interval_tu=50",
            "--set",
            "mac.dtim_period=3",
        ],
    );
    let file = out.join("air.pcapng");
    let rows = tshark_rows(
        &file,
        "wlan.fc.type_subtype == 0x08",
        &[
            "wlan.seq",
            "wlan.fixed.beacon",
            "wlan.tim.dtim_period",
            "wlan.tim.dtim_count",
            "wlan_radio.start_tsf",
        ],
    );
    // 2 s / 51.2 ms: beacons 1 to 39.
    assert_eq!(rows.len(), 39);
    let mut starts_us = Vec::new();
    for r in &rows {
        let k: u64 = r[0].parse().unwrap();
        assert_eq!(r[1], "50", "beacon {k}: interval");
        assert_eq!(r[2], "3", "beacon {k}: DTIM period");
        // Counting down to 0 on every third beacon (k = 3, 6, …).
        assert_eq!(
            r[3],
            ((3 - k % 3) % 3).to_string(),
            "beacon {k}: DTIM count"
        );
        starts_us.push(r[4].parse::<i64>().unwrap());
    }
    // The field's interval is the one on the air: 50 TU = 51.2 ms between starts, on
    // average (a busy medium defers a beacon but not its TBTT).
    let mean_us = (starts_us[starts_us.len() - 1] - starts_us[0]) / (starts_us.len() as i64 - 1);
    assert!(
        (mean_us - 51_200).abs() < 200,
        "{mean_us} µs between beacons"
    );
}

#[test]
fn dozes_are_the_sleeps_the_capture_shows() {
    // Issue 25: `dozes` (2 per PM=1 here) said it counted PM=1s acknowledged. It
    // counts every time the radio goes off: each acknowledged PM=1 null-data frame,
    // and each beacon the station woke for while in power save whose TIM did not
    // name it (dynamic power save, one beacon in one, no loss). Both from the air.
    let (out, v) = captured_run(
        "capture-dozes",
        &["run", "e3-power-save", "--set", "duration_s=4"],
    );
    let file = out.join("air.pcapng");
    let rows = tshark_rows(
        &file,
        "wlan.ta == 02:00:00:00:00:01 || wlan.ra == 02:00:00:00:00:01 \
         || wlan.fc.type_subtype == 0x08",
        &[
            "wlan.fc.type_subtype",
            "wlan.fc.pwrmgt",
            "wlan.ta",
            "wlan.tim.partial_virtual_bitmap",
        ],
    );
    let sta = "02:00:00:00:00:01";
    let (mut in_ps, mut pm1_acked, mut quiet_beacons) = (false, 0u64, 0u64);
    for (i, r) in rows.iter().enumerate() {
        let acked = rows.get(i + 1).is_some_and(|n| n[0] == "0x001d");
        match r[0].as_str() {
            "0x0024" if r[2] == sta => {
                if r[1] == "1" || r[1] == "True" {
                    if acked {
                        in_ps = true;
                        pm1_acked += 1;
                    }
                } else {
                    in_ps = false;
                }
            }
            DATA if r[2] == sta => in_ps = false,
            "0x0008" if in_ps => {
                let first = u8::from_str_radix(r[3].get(..2).unwrap_or("00"), 16).unwrap();
                if first & 0b10 == 0 {
                    quiet_beacons += 1;
                }
            }
            _ => {}
        }
    }
    let ps = &v["stations"][0]["power_save"];
    assert!(pm1_acked > 5, "{pm1_acked} PM=1 acknowledged");
    assert!(quiet_beacons > 0);
    assert_eq!(u(ps, "dozes") as u64, pm1_acked + quiet_beacons);
}

#[test]
fn the_size_bound_is_in_mib_and_what_it_left_out_is_said_under_quiet() {
    // Issue 25: `--pcap-max-mb` was MiB, and -q hid the line saying PPDUs were left
    // out. The bound is `--pcap-max-mib` (the old name still works), and the warning
    // goes to stderr whatever -q says.
    for flag in ["--pcap-max-mb", "--pcap-max-mib"] {
        let dir = scratch(&format!("capture-bound{flag}")).join("out");
        let d = dir.to_str().unwrap();
        let o = txop(&[
            "run",
            "default",
            "--set",
            "duration_s=1",
            "-o",
            d,
            "--pcap",
            flag,
            "1",
            "-q",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("PPDUs left out") && err.contains("1 MiB"),
            "{flag}: {err}"
        );
        assert!(
            !err.contains("frames,"),
            "-q keeps the summary line off: {err}"
        );
        let bytes = std::fs::metadata(dir.join("air.pcapng")).unwrap().len();
        // Within 2^20 bytes, and past 10^6: the bound is a MiB, not an MB.
        assert!((1_000_000..=1 << 20).contains(&bytes), "{bytes} bytes");
        assert!(tshark_count(&dir.join("air.pcapng"), "frame") > 0);
    }
}

/// A-MSDU in the capture (reference mac80211-tx-path.md §16), as tshark decodes it:
/// with `stack_options.amsdu` the uploads' QoS data frames carry the A-MSDU Present
/// bit and tshark finds their subframes; each frame's length is what 802.11-2016
/// 9.3.2.2.2 makes of the subframes tshark read (QoS header 26, per subframe its
/// 14-byte header and the length field's bytes, padding to 4 bytes but after the last,
/// FCS 4), its FCS verifies, and no frame is malformed. Without the key (every preset's
/// default) no frame carries an A-MSDU.
#[test]
fn amsdu_subframes_decode() {
    let args = |amsdu: &'static str| {
        [
            "run",
            "e3-rtt-fair-up",
            "--set",
            amsdu,
            "--set",
            "duration_s=11",
            "--pcap-window",
            "10-10.3",
            "--pcap-snaplen",
            "65535",
        ]
    };
    let (dir, _) = captured_run("amsdu-on", &args("stack_options.amsdu=true"));
    let file = dir.join("air.pcapng");
    let text = tshark_stdout(
        Command::new("tshark")
            .arg("-r")
            .arg(&file)
            .args(["-o", "wlan.check_checksum:TRUE"])
            .args(["-Y", "wlan.qos.amsdupresent == 1", "-T", "fields"])
            .args([
                "-E",
                "separator=\t",
                "-E",
                "occurrence=a",
                "-E",
                "aggregator=,",
            ])
            .args(["-e", "frame.len", "-e", "radiotap.length"])
            .args(["-e", "wlan_aggregate.a_mdsu.length", "-e", "ip.len"])
            .args(["-e", "wlan.fcs.status"]),
    );
    let mut frames = 0;
    for line in text.lines() {
        let c: Vec<&str> = line.split('\t').collect();
        let nums = |i: usize| -> Vec<usize> {
            c[i].split(',')
                .map(|v| v.parse().expect("a number"))
                .collect()
        };
        let (len, radiotap) = (nums(0)[0], nums(1)[0]);
        let (subframes, ips) = (nums(2), nums(3));
        assert!(subframes.len() >= 2, "{line}");
        assert_eq!(
            ips.len(),
            subframes.len(),
            "an IP packet per subframe: {line}"
        );
        let mut amsdu = 0;
        for (k, (&sub, &ip)) in subframes.iter().zip(&ips).enumerate() {
            assert_eq!(sub, 8 + ip, "LLC/SNAP and the IP packet: {line}");
            amsdu += 14 + sub;
            if k + 1 < subframes.len() {
                amsdu = amsdu.div_ceil(4) * 4;
            }
        }
        assert_eq!(len - radiotap, 26 + amsdu + 4, "{line}");
        assert_eq!(c[4], "1", "the FCS verifies: {line}");
        frames += 1;
    }
    println!("{frames} A-MSDU frames");
    assert!(frames > 50, "{frames} A-MSDU frames");
    assert_eq!(tshark_count(&file, "_ws.malformed"), 0);
    let (dir, _) = captured_run("amsdu-off", &args("stack_options.amsdu=false"));
    assert_eq!(
        tshark_count(&dir.join("air.pcapng"), "wlan.qos.amsdupresent == 1"),
        0
    );
    assert!(tshark_count(&dir.join("air.pcapng"), "wlan.fc.type_subtype == 0x0028") > 50);
}
