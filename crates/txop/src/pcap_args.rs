//! The command-line syntax of the capture options (`--pcap`, `--pcap-window`, …) of
//! `txop run` and `txop emu`; what they mean is txop-report's `PcapOptions` (the
//! report library links no clap).

use txop::pcap::PcapOptions;

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
    /// The options as the report library takes them.
    pub fn options(&self) -> PcapOptions {
        PcapOptions {
            pcap: self.pcap,
            window: self.window,
            stations: self.stations.as_ref().map(|l| l.0.clone()),
            snaplen: self.snaplen,
            max_mib: self.max_mib,
        }
    }
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
    }
}
