//! flent's tests as traffic presets, with flent's names and timing: the loaders run
//! for `length` seconds after `delay` seconds of pings only, and the pings go on for
//! `delay` seconds after them (flent: `-l 60`, `DELAY` 5 s, sampling 0.2 s).
//!
//! The "test host" of a flent test is a station (station 1 by default), the netperf and
//! irtt server is the wired server behind the AP. `rtt_fair_*` runs one flow per
//! station. DSCP markings are flent's: BE 0, BK CS1 (8), CS5 (40), EF (46).

use super::ping::Ping;
use super::tcp::TcpFlow;
use super::{Flow, Host};
use crate::tcp::{CongestionControl, TcpConfig};
use txop_core::rng::mix64;
use txop_core::Nanos;

/// The flent tests txop runs.
pub const TESTS: &[(&str, &str)] = &[
    ("ping", "ICMP and UDP pings only"),
    ("tcp_1down", "one TCP download and an ICMP ping"),
    ("tcp_1up", "one TCP upload and an ICMP ping"),
    ("tcp_ndown", "`streams` TCP downloads and an ICMP ping"),
    ("tcp_nup", "`streams` TCP uploads and an ICMP ping"),
    (
        "rrul",
        "4 up + 4 down TCP marked BE, BK, CS5, EF; ICMP and UDP BE/BK/EF pings",
    ),
    (
        "rrul_be",
        "4 up + 4 down TCP, all best effort; ICMP and 3 UDP BE pings",
    ),
    (
        "rtt_fair_up",
        "a TCP upload and an ICMP ping from every station",
    ),
    (
        "rtt_fair_down",
        "a TCP download and an ICMP ping to every station",
    ),
    (
        "voip",
        "an isochronous UDP flow (20 ms, EF) measuring delay, jitter and loss",
    ),
];

/// A flent test and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct FlentTest {
    pub name: String,
    /// Loader duration (flent `-l`), 60 s by default.
    pub length: Nanos,
    /// Pings alone before and after the loaders (flent's DELAY), 5 s.
    pub delay: Nanos,
    /// Streams of tcp_ndown / tcp_nup.
    pub streams: u32,
    /// The station that is flent's test host.
    pub station: u16,
    pub cc: CongestionControl,
    pub ecn: bool,
}

impl FlentTest {
    /// `name` with flent's defaults.
    pub fn new(name: &str) -> FlentTest {
        FlentTest {
            name: name.to_string(),
            length: Nanos::from_secs(60),
            delay: Nanos::from_secs(5),
            streams: 4,
            station: 1,
            cc: CongestionControl::Cubic,
            ecn: false,
        }
    }

    /// The whole run: delay + length + delay.
    pub fn total(&self) -> Nanos {
        self.delay + self.length + self.delay
    }

    /// The test's flows in a cell of `stations` stations.
    pub fn flows(&self, stations: u16) -> Result<Vec<Flow>, String> {
        if !TESTS.iter().any(|(n, _)| *n == self.name) {
            let names: Vec<&str> = TESTS.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "unknown flent test `{}`; expected one of {}",
                self.name,
                names.join(", ")
            ));
        }
        if self.station == 0 || self.station > stations {
            return Err(format!("no station {} in this cell", self.station));
        }
        if self.streams == 0 || self.streams > 1000 {
            return Err("streams must be 1 to 1000".into());
        }
        let sta = Host::Station(self.station);
        let mut b = Builder {
            flows: Vec::new(),
            test: self,
        };
        let icmp = || "Ping (ms) ICMP".to_string();
        match self.name.as_str() {
            "ping" => {
                b.icmp(sta, icmp());
                b.udp_ping(sta, 0, "Ping (ms) UDP".into());
            }
            "tcp_1down" => {
                b.tcp(Host::Server, sta, 0, "TCP download".into());
                b.icmp(sta, icmp());
            }
            "tcp_1up" => {
                b.tcp(sta, Host::Server, 0, "TCP upload".into());
                b.icmp(sta, icmp());
            }
            "tcp_ndown" => {
                for i in 1..=self.streams {
                    b.tcp(Host::Server, sta, 0, format!("TCP download::{i}"));
                }
                b.icmp(sta, icmp());
            }
            "tcp_nup" => {
                for i in 1..=self.streams {
                    b.tcp(sta, Host::Server, 0, format!("TCP upload::{i}"));
                }
                b.icmp(sta, icmp());
            }
            "rrul" | "rrul_be" => {
                let rrul = self.name == "rrul";
                let marks: [(u8, &str); 4] = if rrul {
                    [(0, "BE"), (8, "BK"), (40, "CS5"), (46, "EF")]
                } else {
                    [(0, "BE"), (0, "BE2"), (0, "BE3"), (0, "BE4")]
                };
                for (m, name) in marks {
                    b.tcp(sta, Host::Server, m, format!("TCP upload {name}"));
                }
                for (m, name) in marks {
                    b.tcp(Host::Server, sta, m, format!("TCP download {name}"));
                }
                b.icmp(sta, icmp());
                let pings: [(u8, &str); 3] = if rrul {
                    [(0, "BE"), (8, "BK"), (46, "EF")]
                } else {
                    [(0, "BE1"), (0, "BE2"), (0, "BE3")]
                };
                for (m, name) in pings {
                    b.udp_ping(sta, m, format!("Ping (ms) UDP {name}"));
                }
            }
            "rtt_fair_up" | "rtt_fair_down" => {
                for n in 1..=stations {
                    let s = Host::Station(n);
                    if self.name == "rtt_fair_up" {
                        b.tcp(s, Host::Server, 0, format!("TCP upload BE{n} sta{n}"));
                    } else {
                        b.tcp(Host::Server, s, 0, format!("TCP download BE{n} sta{n}"));
                    }
                }
                for n in 1..=stations {
                    b.icmp(Host::Station(n), format!("Ping (ms) ICMP{n} sta{n}"));
                }
            }
            "voip" => {
                let mut p = Ping::irtt(sta, Host::Server, b.hash());
                p.dscp = 46;
                p.label = "VoIP".into();
                b.flows.push(Flow::Ping(p));
            }
            _ => unreachable!("checked above"),
        }
        Ok(b.flows)
    }
}

struct Builder<'a> {
    flows: Vec<Flow>,
    test: &'a FlentTest,
}

impl Builder<'_> {
    /// A well-spread flow hash per flow.
    fn hash(&self) -> u32 {
        (mix64(0x66_6c65_6e74 ^ self.flows.len() as u64) >> 32) as u32
    }

    fn tcp(&mut self, from: Host, to: Host, dscp: u8, label: String) {
        let mut t = TcpFlow::bulk(from, to, self.hash());
        t.cfg = TcpConfig {
            cc: self.test.cc,
            ecn: self.test.ecn,
            ..TcpConfig::default()
        };
        t.start = self.test.delay;
        t.stop = Some(self.test.delay + self.test.length);
        t.dscp = dscp;
        t.label = label;
        self.flows.push(Flow::Tcp(t));
    }

    /// `ping -i 0.2` from the test host to the server, for the whole run.
    fn icmp(&mut self, from: Host, label: String) {
        let mut p = Ping::new(from, Host::Server, self.hash());
        p.stop = Some(self.test.total());
        p.label = label;
        self.flows.push(Flow::Ping(p));
    }

    /// irtt at flent's 0.2 s interval (the "Ping (ms) UDP" series).
    fn udp_ping(&mut self, from: Host, dscp: u8, label: String) {
        let mut p = Ping::irtt(from, Host::Server, self.hash());
        p.interval = Nanos::from_ms(200);
        p.dscp = dscp;
        p.label = label;
        p.stop = Some(self.test.total());
        self.flows.push(Flow::Ping(p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rrul_has_flents_flows_and_markings() {
        let flows = FlentTest::new("rrul").flows(2).unwrap();
        let tcp: Vec<(Host, Host, u8)> = flows
            .iter()
            .filter_map(|f| match f {
                Flow::Tcp(t) => Some((t.sender, t.receiver, t.dscp)),
                _ => None,
            })
            .collect();
        assert_eq!(tcp.len(), 8);
        let up: Vec<u8> = tcp
            .iter()
            .filter(|t| t.1 == Host::Server)
            .map(|t| t.2)
            .collect();
        assert_eq!(up, vec![0, 8, 40, 46]);
        let pings = flows.iter().filter(|f| matches!(f, Flow::Ping(_))).count();
        assert_eq!(pings, 4, "ICMP + UDP BE/BK/EF");
    }

    #[test]
    fn timing_is_flents() {
        let t = FlentTest::new("tcp_ndown");
        assert_eq!(t.total(), Nanos::from_secs(70));
        let flows = t.flows(1).unwrap();
        assert_eq!(flows.len(), 5);
        match &flows[0] {
            Flow::Tcp(f) => {
                assert_eq!(f.start, Nanos::from_secs(5));
                assert_eq!(f.stop, Some(Nanos::from_secs(65)));
            }
            _ => panic!("a TCP flow first"),
        }
    }

    #[test]
    fn errors_are_clear() {
        assert!(FlentTest::new("tcp_down")
            .flows(1)
            .unwrap_err()
            .contains("tcp_ndown"));
        let mut t = FlentTest::new("ping");
        t.station = 3;
        assert!(t.flows(2).is_err());
        let flows = FlentTest::new("rtt_fair_up").flows(3).unwrap();
        assert_eq!(flows.len(), 6);
    }
}
