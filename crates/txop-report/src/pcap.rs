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

/// The capture options of a run: what `txop run --pcap …` and `txop emu --pcap …`
/// ask (the command line's `PcapArgs` parses them), without the command-line syntax.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PcapOptions {
    /// Capture the air (`--pcap`).
    pub pcap: bool,
    /// Only PPDUs that start within this window of simulated time, seconds (START,
    /// END).
    pub window: Option<(f64, f64)>,
    /// Only PPDUs sent by or to these stations (numbers from 1; beacons always).
    pub stations: Option<Vec<u16>>,
    /// Bytes kept of each frame, radiotap header included (default 256).
    pub snaplen: Option<u32>,
    /// The capture file's size bound in MiB (default 256).
    pub max_mib: Option<u64>,
}

impl PcapOptions {
    /// The capture to run, for a cell of `stations` stations on `band` (`None`
    /// without `--pcap`), or why the options do not fit the scenario.
    pub fn config(&self, band: Band, stations: usize) -> Result<Option<CaptureConfig>, String> {
        if !self.pcap {
            return Ok(None);
        }
        if let Some(list) = &self.stations {
            if let Some(n) = list.iter().find(|&&n| n as usize > stations) {
                return Err(format!(
                    "--pcap-stations: no station {n} in this cell (it has {stations})"
                ));
            }
        }
        let secs = |s: f64| Nanos::from_ns((s * 1e9).round() as u64);
        Ok(Some(CaptureConfig {
            window: self.window.map(|(a, b)| (secs(a), secs(b))),
            stations: self.stations.clone(),
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
    fn a_station_outside_the_cell_is_refused() {
        let options = PcapOptions {
            pcap: true,
            stations: Some(vec![5]),
            ..PcapOptions::default()
        };
        assert_eq!(
            options.config(Band::Ghz5, 4).unwrap_err(),
            "--pcap-stations: no station 5 in this cell (it has 4)"
        );
        let off = PcapOptions::default();
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
