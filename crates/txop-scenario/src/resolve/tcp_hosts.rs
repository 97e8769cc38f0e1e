//! The hosts' TCP receive windows: each host gets its kernel's defaults (the stack
//! preset's era unless its `tcp.kernel` says otherwise), with its `tcp` keys over them
//! (`txop_sim::tcp::LinuxReceive`).

use crate::error::ScenarioError;
use crate::resolve::choose_in;
use crate::schema::{Scenario, TcpHostSpec};
use txop_sim::tcp::{LinuxReceive, TcpRmem, WindowShare};
use txop_sim::{HostWindow, TcpHosts};

/// The receive defaults `tcp.kernel` names.
const KERNELS: [(&str, LinuxReceive); 3] = [
    ("4.9", LinuxReceive::linux_4_9()),
    ("5.4", LinuxReceive::linux_5_4()),
    ("6.12", LinuxReceive::linux_6_12()),
];

/// Largest `tcp_rmem` value taken: the window can be at most 65535 << 14 (RFC 7323
/// §2.3), about 1 GiB.
const MAX_RMEM_BYTES: u32 = 1 << 30;

/// Smallest `tcp_rmem[1]` taken: a buffer whose window holds a few full segments
/// (below it, a 1500-byte MTU's segments would not fit the initial window).
const MIN_RMEM_DEFAULT_BYTES: u32 = 8192;

/// Which kernel's receive defaults the hosts of a stack preset have: the kernel of
/// the preset's own era (the 4.x presets 4.9, 5.5–6.0 the 4.20–6.5 defaults, 6.16,
/// `simple` and the firmware-stage presets of 6.12 6.12).
pub(crate) fn preset_era(stack: &str) -> LinuxReceive {
    match stack {
        "linux-4.8-bloated" | "fq_codel-qdisc" | "linux-4.9" | "linux-4.11-ath9k" => {
            LinuxReceive::linux_4_9()
        }
        "linux-5.5" | "linux-5.14" | "linux-6.0" => LinuxReceive::linux_5_4(),
        _ => LinuxReceive::linux_6_12(),
    }
}

impl Scenario {
    /// The receive defaults of this scenario's stack preset ([`preset_era`]).
    pub(crate) fn receive_era(&self) -> LinuxReceive {
        preset_era(&self.stack)
    }

    /// Every host's receive window: the preset era's, the server's `[server] tcp`,
    /// and `stations`' own (already resolved).
    pub(crate) fn tcp_hosts(
        &self,
        count: u16,
        stations: Vec<(u16, HostWindow)>,
    ) -> Result<TcpHosts, ScenarioError> {
        let era = self.receive_era();
        let mut hosts = TcpHosts::all(HostWindow::Linux(era), count);
        if let Some(t) = self.server.as_ref().and_then(|s| s.tcp.as_ref()) {
            hosts.server = Some(t.resolve("server.tcp", era)?);
        }
        for (sta, r) in stations {
            hosts.stations[sta as usize - 1] = Some(r);
        }
        Ok(hosts)
    }
}

impl TcpHostSpec {
    /// The receive window these keys (at `key`) give over `era`'s defaults.
    pub(crate) fn resolve(
        &self,
        key: &str,
        era: LinuxReceive,
    ) -> Result<HostWindow, ScenarioError> {
        let err = |k: &str, m: &str| ScenarioError::new(format!("{key}.{k}"), m);
        if let Some(w) = self.fixed_window_bytes {
            let linux_keys = self.kernel.is_some()
                || self.rmem_bytes.is_some()
                || self.adv_win_scale.is_some()
                || self.scaling_ratio.is_some()
                || self.moderate_rcvbuf.is_some()
                || self.read_rate_mbps.is_some();
            if linux_keys {
                return Err(err(
                    "fixed_window_bytes",
                    "a fixed window takes none of the other tcp keys",
                ));
            }
            if w < MIN_RMEM_DEFAULT_BYTES as u64 || w > MAX_RMEM_BYTES as u64 {
                return Err(err(
                    "fixed_window_bytes",
                    "must be 8192 to 1073741824 bytes",
                ));
            }
            return Ok(HostWindow::Fixed { window_bytes: w });
        }
        let mut r = match &self.kernel {
            Some(k) => choose_in(&format!("{key}.kernel"), k, &KERNELS)?,
            None => era,
        };
        if let Some([min, default, max]) = self.rmem_bytes {
            if !(1 <= min && min <= default && default <= max) {
                return Err(err(
                    "rmem_bytes",
                    "must be [min, default, max] with min ≤ default ≤ max",
                ));
            }
            if default < MIN_RMEM_DEFAULT_BYTES || max > MAX_RMEM_BYTES {
                return Err(err(
                    "rmem_bytes",
                    "default must be at least 8192 bytes and max at most 1073741824",
                ));
            }
            r.rmem = TcpRmem {
                min_bytes: min,
                default_bytes: default,
                max_bytes: max,
            };
        }
        match (self.adv_win_scale, self.scaling_ratio) {
            (Some(_), Some(_)) => {
                return Err(err(
                    "scaling_ratio",
                    "give adv_win_scale (before 6.6) or scaling_ratio (6.6 on), not both",
                ))
            }
            (Some(n), None) => {
                if !(-31..=31).contains(&n) {
                    return Err(err("adv_win_scale", "must be -31 to 31"));
                }
                r.share = WindowShare::AdvWinScale(n);
            }
            (None, Some(ratio)) => {
                if ratio == 0 {
                    return Err(err("scaling_ratio", "must be 1 to 255"));
                }
                r.share = WindowShare::ScalingRatio(ratio);
            }
            (None, None) => {}
        }
        if let Some(m) = self.moderate_rcvbuf {
            r.moderate_rcvbuf = m;
        }
        if let Some(mbps) = self.read_rate_mbps {
            if !(mbps.is_finite() && mbps > 0.0 && mbps <= 100_000.0) {
                return Err(err(
                    "read_rate_mbps",
                    "must be above 0 and at most 100000 Mbit/s",
                ));
            }
            r.read_rate_bytes_per_s = Some(((mbps * 1e6 / 8.0).round() as u64).max(1));
        }
        Ok(HostWindow::Linux(r))
    }
}
