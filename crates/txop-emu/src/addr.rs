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
//!
//! With several BSSs (`[[bss]]`), BSS `k` (0-based, in the scenario's order) has its own
//! server and stations: its server is `198.18.(2k).1` / `fd74:786f:7000::k:0:1` and its
//! station `n` is `198.18.(2k+1).n` / `fd74:786f:7000::k:1:n`, so BSS 0's are a lone
//! BSS's and every address is unique across the BSSs ([`Site`]). Their namespaces are
//! named `txop-ID-k.NAME.node` (`NAME`: the BSS's name), which users write `NAME.node`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use txop_core::network::Host;
use txop_core::world::BssId;

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

/// Most BSSs one emulator runs: BSS `k`'s stations are `198.18.(2k+1).n`.
pub const MAX_BSSS: u16 = 127;

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

    /// Its IPv4 address in a lone BSS (BSS 0).
    pub fn ipv4(self) -> Ipv4Addr {
        Site::new(BssId(0), self).ipv4()
    }

    /// Its IPv6 address in a lone BSS (BSS 0).
    pub fn ipv6(self) -> Ipv6Addr {
        Site::new(BssId(0), self).ipv6()
    }

    /// The endpoint an address belongs to in a lone cell of `stations` stations.
    pub fn of(addr: IpAddr, stations: u16) -> Option<Endpoint> {
        Site::of(addr, &[stations])
            .filter(|s| s.bss == BssId(0))
            .map(|s| s.endpoint)
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

/// An endpoint of one BSS of the emulated world: where a packet is read or written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Site {
    /// The BSS (0 for a lone one).
    pub bss: BssId,
    /// The endpoint in it.
    pub endpoint: Endpoint,
}

impl Site {
    pub fn new(bss: BssId, endpoint: Endpoint) -> Site {
        Site { bss, endpoint }
    }

    /// Its IPv4 address: `198.18.(2k).1` for BSS `k`'s server, `198.18.(2k+1).n` for
    /// its station `n`.
    pub fn ipv4(self) -> Ipv4Addr {
        let [a, b] = NET4_BASE;
        let k = (self.bss.0.min(MAX_BSSS) * 2) as u8;
        match self.endpoint {
            Endpoint::Server => Ipv4Addr::new(a, b, k, 1),
            Endpoint::Station(n) => Ipv4Addr::new(a, b, k + 1, n as u8),
        }
    }

    /// Its IPv6 address: `fd74:786f:7000::k:0:1` for BSS `k`'s server,
    /// `fd74:786f:7000::k:1:n` for its station `n`.
    pub fn ipv6(self) -> Ipv6Addr {
        let [a, b, c] = NET6_BASE;
        let k = self.bss.0;
        match self.endpoint {
            Endpoint::Server => Ipv6Addr::new(a, b, c, 0, 0, k, 0, 1),
            Endpoint::Station(n) => Ipv6Addr::new(a, b, c, 0, 0, k, 1, n),
        }
    }

    /// The site an address belongs to in a world whose BSS `k` has `stations[k]`
    /// stations; `None` for an address of no endpoint there.
    pub fn of(addr: IpAddr, stations: &[u16]) -> Option<Site> {
        let (k, endpoint) = match addr {
            IpAddr::V4(a) => {
                let o = a.octets();
                if o[0..2] != NET4_BASE {
                    return None;
                }
                let k = u16::from(o[2] / 2);
                match (o[2] % 2, o[3]) {
                    (0, 1) => (k, Endpoint::Server),
                    (1, n) => (k, Endpoint::Station(u16::from(n))),
                    _ => return None,
                }
            }
            IpAddr::V6(a) => {
                let s = a.segments();
                if s[0..3] != NET6_BASE || s[3..5] != [0, 0] {
                    return None;
                }
                match (s[6], s[7]) {
                    (0, 1) => (s[5], Endpoint::Server),
                    (1, n) => (s[5], Endpoint::Station(n)),
                    _ => return None,
                }
            }
        };
        let count = *stations.get(usize::from(k))?;
        match endpoint {
            Endpoint::Station(n) if n == 0 || n > count.min(MAX_STATIONS) => None,
            e => Some(Site::new(BssId(k), e)),
        }
    }
}

/// One BSS of the emulated world as the address plan and the names see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BssPlan {
    /// Its name with several BSSs (`[[bss]]`'s `name`); `None` for a lone BSS.
    pub name: Option<String>,
    pub stations: u16,
}

/// Every BSS of an emulated world, in order (index = [`BssId`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub bsss: Vec<BssPlan>,
}

impl Plan {
    /// A lone BSS of `stations` stations.
    pub fn lone(stations: u16) -> Plan {
        Plan {
            bsss: vec![BssPlan {
                name: None,
                stations,
            }],
        }
    }

    /// Each BSS's station count (index = BSS), as [`Site::of`] takes it.
    pub fn stations(&self) -> Vec<u16> {
        self.bsss.iter().map(|b| b.stations).collect()
    }

    /// Every site, BSS by BSS, each BSS's server first then its stations.
    pub fn sites(&self) -> Vec<Site> {
        let mut sites = Vec::new();
        for (k, b) in self.bsss.iter().enumerate() {
            let bss = BssId(k as u16);
            sites.push(Site::new(bss, Endpoint::Server));
            sites.extend((1..=b.stations).map(|n| Site::new(bss, Endpoint::Station(n))));
        }
        sites
    }

    /// What users call `site`: `sta1`, `server` in a lone BSS; `flat2.sta1`,
    /// `flat2.server` with several.
    pub fn name(&self, site: Site) -> String {
        match self
            .bsss
            .get(site.bss.index())
            .and_then(|b| b.name.as_deref())
        {
            Some(bss) => format!("{bss}.{}", site.endpoint.name()),
            None => site.endpoint.name(),
        }
    }

    /// The site a user means by `node`: `server`, `srv` or `staN` (in the first BSS),
    /// or `NAME.server`, `NAME.staN` (in BSS `NAME`). Errors say what is expected.
    pub fn parse(&self, node: &str) -> Result<Site, String> {
        let (bss, end) = match node.split_once('.') {
            Some((name, end)) => {
                let k = self
                    .bsss
                    .iter()
                    .position(|b| b.name.as_deref() == Some(name))
                    .ok_or_else(|| {
                        let names: Vec<&str> =
                            self.bsss.iter().filter_map(|b| b.name.as_deref()).collect();
                        match names.is_empty() {
                            true => {
                                format!("{node}: no BSS named `{name}`: the scenario has one BSS")
                            }
                            false => format!(
                                "{node}: no BSS named `{name}` (BSSs: {})",
                                names.join(", ")
                            ),
                        }
                    })?;
                (BssId(k as u16), end)
            }
            None => (BssId(0), node),
        };
        let expected = match self.bsss.len() {
            1 => "`server` or `staN`",
            _ => "`NAME.server` or `NAME.staN` (NAME: a [[bss]]'s name; without it, the first BSS)",
        };
        let endpoint = Endpoint::parse(end)
            .ok_or_else(|| format!("{node}: not a node; expected {expected}"))?;
        let stations = self.bsss.get(bss.index()).map_or(0, |b| b.stations);
        match endpoint {
            Endpoint::Station(n) if n > stations => {
                Err(format!("{node}: the cell has {stations} station(s)"))
            }
            e => Ok(Site::new(bss, e)),
        }
    }

    /// The namespace of `site` in run `run_id`.
    pub fn namespace(&self, run_id: u32, site: Site) -> String {
        match self
            .bsss
            .get(site.bss.index())
            .and_then(|b| b.name.as_deref())
        {
            Some(name) => bss_namespace(run_id, site.bss, name, site.endpoint),
            None => namespace(run_id, site.endpoint),
        }
    }

    /// The plan of a run, read back from its namespaces' names.
    pub fn of_namespaces(names: &[String]) -> Plan {
        let mut bsss: Vec<BssPlan> = Vec::new();
        for n in names.iter().filter_map(|n| parse_namespace(n)) {
            let (k, name) = match n.bss {
                Some((k, name)) => (k.index(), Some(name)),
                None => (0, None),
            };
            if bsss.len() <= k {
                bsss.resize(
                    k + 1,
                    BssPlan {
                        name: None,
                        stations: 0,
                    },
                );
            }
            bsss[k].name = name;
            if let Endpoint::Station(s) = n.endpoint {
                bsss[k].stations = bsss[k].stations.max(s);
            }
        }
        Plan { bsss }
    }
}

/// The namespace of `endpoint` in the emulator run `run_id` (a lone BSS).
pub fn namespace(run_id: u32, endpoint: Endpoint) -> String {
    format!("{NS_PREFIX}{run_id}-{}", node_name(endpoint))
}

/// The namespace of `endpoint` of BSS `bss`, named `bss_name`, in the emulator run
/// `run_id` with several BSSs: `txop-ID-k.NAME.node`.
pub fn bss_namespace(run_id: u32, bss: BssId, bss_name: &str, endpoint: Endpoint) -> String {
    format!(
        "{NS_PREFIX}{run_id}-{}.{bss_name}.{}",
        bss.0,
        node_name(endpoint)
    )
}

/// An endpoint's part of a namespace name: `srv` or `staN`.
fn node_name(endpoint: Endpoint) -> String {
    match endpoint {
        Endpoint::Server => "srv".into(),
        Endpoint::Station(n) => format!("sta{n}"),
    }
}

/// What a txop namespace's name says: its run, and its BSS (with several) and endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamespaceName {
    pub run_id: u32,
    /// The BSS's place and name, in a run with several BSSs.
    pub bss: Option<(BssId, String)>,
    pub endpoint: Endpoint,
}

/// What a txop namespace name says, if it is one.
pub fn parse_namespace(name: &str) -> Option<NamespaceName> {
    let rest = name.strip_prefix(NS_PREFIX)?;
    let (id, node) = rest.split_once('-')?;
    let run_id = id.parse().ok()?;
    let mut parts = node.split('.');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(node), None, None, None) => Some(NamespaceName {
            run_id,
            bss: None,
            endpoint: Endpoint::parse(node)?,
        }),
        (Some(k), Some(bss), Some(node), None) => Some(NamespaceName {
            run_id,
            bss: Some((BssId(k.parse().ok()?), bss.to_string())),
            endpoint: Endpoint::parse(node)?,
        }),
        _ => None,
    }
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

    /// Every BSS's addresses are unique and read back to their BSS; a lone BSS's
    /// are BSS 0's.
    #[test]
    fn addresses_are_unique_across_bsss() {
        let stations = [2, 3, 1];
        let mut seen = std::collections::BTreeSet::new();
        for (k, &count) in stations.iter().enumerate() {
            let bss = BssId(k as u16);
            let ends = std::iter::once(Endpoint::Server).chain((1..=count).map(Endpoint::Station));
            for e in ends {
                let site = Site::new(bss, e);
                assert!(seen.insert(IpAddr::V4(site.ipv4())), "{site:?}");
                assert!(seen.insert(IpAddr::V6(site.ipv6())), "{site:?}");
                assert_eq!(Site::of(IpAddr::V4(site.ipv4()), &stations), Some(site));
                assert_eq!(Site::of(IpAddr::V6(site.ipv6()), &stations), Some(site));
            }
        }
        assert_eq!(
            Site::new(BssId(1), Endpoint::Station(2)).ipv4(),
            Ipv4Addr::new(198, 18, 3, 2)
        );
        assert_eq!(
            Site::new(BssId(1), Endpoint::Server).ipv6().to_string(),
            "fd74:786f:7000::1:0:1"
        );
        let of = |s: &str| Site::of(s.parse().unwrap(), &stations);
        assert_eq!(of("198.18.3.4"), None, "BSS 1 has 3 stations");
        assert_eq!(of("198.18.6.1"), None, "no BSS 3");
        assert_eq!(
            Endpoint::of("198.18.3.1".parse().unwrap(), 3),
            None,
            "not BSS 0's"
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
        let lone = |run_id, endpoint| {
            Some(NamespaceName {
                run_id,
                bss: None,
                endpoint,
            })
        };
        let n = namespace(4242, Endpoint::Station(12));
        assert_eq!(n, "txop-4242-sta12");
        assert_eq!(parse_namespace(&n), lone(4242, Endpoint::Station(12)));
        assert_eq!(
            parse_namespace(&namespace(7, Endpoint::Server)),
            lone(7, Endpoint::Server)
        );
        let n = bss_namespace(9, BssId(1), "flat2", Endpoint::Station(3));
        assert_eq!(n, "txop-9-1.flat2.sta3");
        assert_eq!(
            parse_namespace(&n),
            Some(NamespaceName {
                run_id: 9,
                bss: Some((BssId(1), "flat2".into())),
                endpoint: Endpoint::Station(3),
            })
        );
        assert_eq!(parse_namespace("txop-9-1.flat2.sta3.x"), None);
        assert_eq!(parse_namespace("other-1-sta1"), None);
        assert_eq!(parse_namespace("txop-x-sta1"), None);
    }
}
