//! The emulator's address plan and names: which addresses and namespace names belong to
//! txop, and which node of the cell an address is.
//!
//! txop uses ranges of its own that are never routed on the Internet:
//! `198.18.0.0/16`, inside the 198.18.0.0/15 block that RFC 2544 (and RFC 5735 §3)
//! reserves for benchmarking network devices, and the unique-local IPv6 prefix
//! `fd74:786f:7000::/48` (RFC 4193; `74 78 6f 70` is "txop" in ASCII). Inside the
//! emulator the server is `198.18.0.1` / `fd74:786f:7000::1` and station `n` is
//! `198.18.1.n` / `fd74:786f:7000::1:n`. In the root namespace the whole range is an
//! `unreachable` route, so nothing sent to it there can leave the machine.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use txop_core::network::Host;

/// The IPv4 range txop owns, as `ip route` spells it.
pub const NET4: &str = "198.18.0.0/16";
/// The IPv6 range txop owns.
pub const NET6: &str = "fd74:786f:7000::/48";
/// Prefix lengths of the addresses given to the TUN devices (the whole range, so the
/// kernel's connected route sends every cell address into the TUN device).
pub const PREFIX4: u8 = 16;
pub const PREFIX6: u8 = 48;

const NET4_BASE: [u8; 2] = [198, 18];
const NET6_BASE: [u16; 3] = [0xfd74, 0x786f, 0x7000];

/// Every namespace txop creates starts with this; `txop emu --cleanup` looks for it.
pub const NS_PREFIX: &str = "txop-";
/// The TUN device's name inside every namespace.
pub const TUN_NAME: &str = "txop0";
/// MTU of the TUN devices (Ethernet's, as a WiFi MSDU).
pub const MTU_BYTES: u32 = 1500;

/// Most stations one emulator runs: one namespace each, and the last octet of
/// `198.18.1.n` names the station.
pub const MAX_STATIONS: u16 = 250;

/// An endpoint of the emulated network: the wired server or a station's host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Endpoint {
    Server,
    /// Station `n` (1-based), as in the scenario.
    Station(u16),
}

impl Endpoint {
    /// The modelled network's host this endpoint is.
    pub fn host(self) -> Host {
        match self {
            Endpoint::Server => Host::Server,
            Endpoint::Station(n) => Host::Station(n),
        }
    }

    /// `server` or `staN`: the name users pass to `--in` and `txop emu exec`.
    pub fn name(self) -> String {
        match self {
            Endpoint::Server => "server".into(),
            Endpoint::Station(n) => format!("sta{n}"),
        }
    }

    /// Parse `server`, `srv` or `staN`.
    pub fn parse(s: &str) -> Option<Endpoint> {
        match s {
            "server" | "srv" => Some(Endpoint::Server),
            _ => {
                let n: u16 = s.strip_prefix("sta")?.parse().ok()?;
                (1..=MAX_STATIONS)
                    .contains(&n)
                    .then_some(Endpoint::Station(n))
            }
        }
    }

    pub fn ipv4(self) -> Ipv4Addr {
        let [a, b] = NET4_BASE;
        match self {
            Endpoint::Server => Ipv4Addr::new(a, b, 0, 1),
            Endpoint::Station(n) => Ipv4Addr::new(a, b, 1, n as u8),
        }
    }

    pub fn ipv6(self) -> Ipv6Addr {
        let [a, b, c] = NET6_BASE;
        match self {
            Endpoint::Server => Ipv6Addr::new(a, b, c, 0, 0, 0, 0, 1),
            Endpoint::Station(n) => Ipv6Addr::new(a, b, c, 0, 0, 0, 1, n),
        }
    }

    /// The endpoint an address belongs to in a cell of `stations` stations.
    pub fn of(addr: IpAddr, stations: u16) -> Option<Endpoint> {
        let e = match addr {
            IpAddr::V4(a) => {
                let o = a.octets();
                match (o[0..2] == NET4_BASE, o[2], o[3]) {
                    (true, 0, 1) => Endpoint::Server,
                    (true, 1, n) => Endpoint::Station(n as u16),
                    _ => return None,
                }
            }
            IpAddr::V6(a) => {
                let s = a.segments();
                match (s[0..3] == NET6_BASE && s[3..6] == [0, 0, 0], s[6], s[7]) {
                    (true, 0, 1) => Endpoint::Server,
                    (true, 1, n) => Endpoint::Station(n),
                    _ => return None,
                }
            }
        };
        match e {
            Endpoint::Station(n) if n == 0 || n > stations.min(MAX_STATIONS) => None,
            e => Some(e),
        }
    }

    /// Index into per-endpoint tables: the server is 0, station n is n.
    pub fn index(self) -> usize {
        match self {
            Endpoint::Server => 0,
            Endpoint::Station(n) => n as usize,
        }
    }

    /// The endpoint at table index `i`.
    pub fn from_index(i: usize) -> Endpoint {
        if i == 0 {
            Endpoint::Server
        } else {
            Endpoint::Station(i as u16)
        }
    }
}

/// The namespace of `endpoint` in the emulator run `run_id`.
pub fn namespace(run_id: u32, endpoint: Endpoint) -> String {
    match endpoint {
        Endpoint::Server => format!("{NS_PREFIX}{run_id}-srv"),
        Endpoint::Station(n) => format!("{NS_PREFIX}{run_id}-sta{n}"),
    }
}

/// The run id and endpoint of a txop namespace name, if it is one.
pub fn parse_namespace(name: &str) -> Option<(u32, Endpoint)> {
    let rest = name.strip_prefix(NS_PREFIX)?;
    let (id, node) = rest.split_once('-')?;
    Some((id.parse().ok()?, Endpoint::parse(node)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip_to_endpoints() {
        for e in [
            Endpoint::Server,
            Endpoint::Station(1),
            Endpoint::Station(7),
            Endpoint::Station(250),
        ] {
            assert_eq!(Endpoint::of(IpAddr::V4(e.ipv4()), 250), Some(e));
            assert_eq!(Endpoint::of(IpAddr::V6(e.ipv6()), 250), Some(e));
            assert_eq!(Endpoint::from_index(e.index()), e);
            assert_eq!(Endpoint::parse(&e.name()), Some(e));
        }
        assert_eq!(Endpoint::Station(3).ipv4(), Ipv4Addr::new(198, 18, 1, 3));
        assert_eq!(
            Endpoint::Station(3).ipv6().to_string(),
            "fd74:786f:7000::1:3"
        );
    }

    #[test]
    fn foreign_and_absent_addresses_are_nobody() {
        let none = |s: &str| Endpoint::of(s.parse().unwrap(), 4);
        assert_eq!(none("198.18.1.5"), None, "no station 5 in a 4-station cell");
        assert_eq!(none("198.18.1.0"), None);
        assert_eq!(none("198.18.0.2"), None);
        assert_eq!(none("192.0.2.1"), None);
        assert_eq!(none("8.8.8.8"), None);
        assert_eq!(none("ff02::2"), None);
        assert_eq!(none("fd74:786f:7001::1"), None);
        assert_eq!(none("fe80::1"), None);
    }

    #[test]
    fn namespace_names_parse_back() {
        let n = namespace(4242, Endpoint::Station(12));
        assert_eq!(n, "txop-4242-sta12");
        assert_eq!(parse_namespace(&n), Some((4242, Endpoint::Station(12))));
        assert_eq!(
            parse_namespace(&namespace(7, Endpoint::Server)),
            Some((7, Endpoint::Server))
        );
        assert_eq!(parse_namespace("other-1-sta1"), None);
        assert_eq!(parse_namespace("txop-x-sta1"), None);
    }
}
