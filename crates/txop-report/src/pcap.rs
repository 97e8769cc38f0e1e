//! `txop run … --pcap`: the radiotap capture of the air written as `air.pcapng` into
//! the results directory (issue 17; docs/capture.md), and its bounds.

use txop_capture::writer::{DEFAULT_MAX_BYTES, DEFAULT_SNAPLEN_BYTES};
use txop_capture::{CaptureConfig, CaptureStats};
use txop_core::phy::Band;
use txop_core::Nanos;

/// The capture file's name in a results directory.
pub const PCAP_FILE: &str = "air.pcapng";

/// The capture file of the BSS named `name` in a run of several BSSs:
/// `air-<name>.pcapng`, the name made safe for a file name.
pub fn bss_file(name: &str) -> String {
    format!("air-{}.pcapng", crate::compare::slug(name))
}

/// The capture options of `txop run`.
#[derive(clap::Args, Clone, Debug, Default, PartialEq)]
pub struct PcapArgs {
    /// Write the air as a radiotap capture, DIR/air.pcapng (needs -o DIR): every PPDU
    /// once, readable by Wireshark and tshark (docs/capture.md).
    #[arg(long)]
    pub pcap: bool,
    /// Capture only PPDUs that start within this window of simulated time, in
    /// seconds, e.g. `2-2.5`.
    #[arg(long = "pcap-window", value_name = "START-END", requires = "pcap",
          value_parser = parse_window)]
    pub window: Option<(f64, f64)>,
    /// Capture only PPDUs sent by or to these stations (numbers from 1, comma-separated;
    /// beacons always), e.g. `1,3`.
    #[arg(long = "pcap-stations", value_name = "LIST", requires = "pcap",
          value_parser = parse_stations)]
    pub stations: Option<StationList>,
    /// Bytes kept of each frame, radiotap header included (64 to 65535; default 256).
    #[arg(long = "pcap-snaplen", value_name = "BYTES", requires = "pcap",
          value_parser = clap::value_parser!(u32).range(64..=65_535))]
    pub snaplen: Option<u32>,
    /// The capture file's size bound in MiB (2^20 bytes; 1 to 4096; default 256):
    /// PPDUs past it are left out, counted in the file's closing statistics block and
    /// on stderr. `--pcap-max-mb`, its old name, is still accepted (it always meant
    /// MiB).
    #[arg(long = "pcap-max-mib", alias = "pcap-max-mb", value_name = "MIB",
          requires = "pcap", value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub max_mib: Option<u64>,
}

/// `START-END` in seconds, START < END.
fn parse_window(s: &str) -> Result<(f64, f64), String> {
    let bad = || format!("'{s}' is not a window START-END in seconds, e.g. 2-2.5");
    let (a, b) = s.split_once('-').ok_or_else(bad)?;
    let a: f64 = a.trim().parse().map_err(|_| bad())?;
    let b: f64 = b.trim().parse().map_err(|_| bad())?;
    if !(a.is_finite() && b.is_finite() && a >= 0.0 && a < b) {
        return Err(format!(
            "'{s}': the window must start at 0 s or later and end after it starts"
        ));
    }
    Ok((a, b))
}

/// Station numbers (from 1), as `--pcap-stations` lists them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StationList(pub Vec<u16>);

/// A comma-separated list of station numbers (from 1).
fn parse_stations(s: &str) -> Result<StationList, String> {
    s.split(',')
        .map(|x| match x.trim().parse::<u16>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "'{x}' is not a station number (stations are numbered from 1)"
            )),
        })
        .collect::<Result<Vec<u16>, String>>()
        .map(StationList)
}

impl PcapArgs {
    /// The capture to run, for a cell of `stations` stations on `band` (`None`
    /// without `--pcap`), or why the options do not fit the scenario.
    pub fn config(&self, band: Band, stations: usize) -> Result<Option<CaptureConfig>, String> {
        if !self.pcap {
            return Ok(None);
        }
        if let Some(list) = &self.stations {
            if let Some(n) = list.0.iter().find(|&&n| n as usize > stations) {
                return Err(format!(
                    "--pcap-stations: no station {n} in this cell (it has {stations})"
                ));
            }
        }
        let secs = |s: f64| Nanos::from_ns((s * 1e9).round() as u64);
        Ok(Some(CaptureConfig {
            window: self.window.map(|(a, b)| (secs(a), secs(b))),
            stations: self.stations.as_ref().map(|l| l.0.clone()),
            snaplen_bytes: self.snaplen.unwrap_or(DEFAULT_SNAPLEN_BYTES),
            max_bytes: self.max_mib.map_or(DEFAULT_MAX_BYTES, |mib| mib << 20),
            band,
        }))
    }
}

/// The lines `txop run --pcap` prints on stderr about the file it wrote: what it holds
/// (not with `--quiet`), and what the size bound left out (always: a capture that
/// lacks PPDUs is a warning, as docs/capture.md says, and `--quiet` silences only
/// what is not one).
pub fn stderr_lines(stats: &CaptureStats, max_bytes: u64, quiet: bool) -> Vec<String> {
    let mut lines = Vec::new();
    if !quiet {
        lines.push(format!(
            "txop: {PCAP_FILE}: {} PPDUs, {} frames, {:.1} MiB",
            stats.ppdus,
            stats.packets,
            stats.bytes as f64 / (1u64 << 20) as f64
        ));
    }
    if stats.over_size > 0 {
        lines.push(format!(
            "txop: {PCAP_FILE}: {} PPDUs left out: the file reached its bound of {} MiB \
             (--pcap-max-mib)",
            stats.over_size,
            max_bytes >> 20
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_and_station_lists_parse_or_say_why_not() {
        assert_eq!(parse_window("2-2.5"), Ok((2.0, 2.5)));
        assert!(parse_window("3-2")
            .unwrap_err()
            .contains("end after it starts"));
        assert!(parse_window("x").unwrap_err().contains("START-END"));
        assert_eq!(parse_stations("1, 3"), Ok(StationList(vec![1, 3])));
        assert!(parse_stations("0").unwrap_err().contains("numbered from 1"));
        let args = PcapArgs {
            pcap: true,
            stations: Some(StationList(vec![5])),
            ..PcapArgs::default()
        };
        assert_eq!(
            args.config(Band::Ghz5, 4).unwrap_err(),
            "--pcap-stations: no station 5 in this cell (it has 4)"
        );
        let off = PcapArgs::default();
        assert_eq!(off.config(Band::Ghz5, 4), Ok(None));
    }

    #[test]
    fn quiet_keeps_the_left_out_warning() {
        let full = CaptureStats {
            ppdus: 10,
            packets: 20,
            over_size: 3,
            bytes: 1 << 20,
            ..CaptureStats::default()
        };
        let quiet = stderr_lines(&full, 1 << 20, true);
        assert_eq!(quiet.len(), 1);
        assert!(quiet[0].contains("3 PPDUs left out") && quiet[0].contains("1 MiB"));
        assert_eq!(stderr_lines(&full, 1 << 20, false).len(), 2);
        let fits = CaptureStats {
            over_size: 0,
            ..full
        };
        assert!(stderr_lines(&fits, 1 << 20, true).is_empty());
        assert!(stderr_lines(&fits, 1 << 20, false)[0].contains("1.0 MiB"));
    }
}
