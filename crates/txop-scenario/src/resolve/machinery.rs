//! A station's own machinery resolved: background scanning, power save, its host bus.

use crate::error::ScenarioError;
use crate::resolve::choose_in;
use crate::schema::{BusSpec, PowerSaveSpec, ScanSpec};
use txop_core::mac80211::powersave::PowerSaveConfig;
use txop_core::mac80211::scan::{ScanBands, ScanConfig, ScanPolicy};
use txop_core::Nanos;
use txop_sim::{BusConfig, Completion, DataMode};

impl ScanSpec {
    /// The model's scan configuration; errors name `key` (e.g. `stations.scan`).
    pub(crate) fn resolve(&self, key: &str) -> Result<ScanConfig, ScenarioError> {
        let k = |f: &str| format!("{key}.{f}");
        let policy = choose_in(
            &k("policy"),
            &self.policy,
            &[
                ("legacy", ScanPolicy::Legacy),
                ("bounded", ScanPolicy::Bounded),
            ],
        )?;
        let bands = choose_in(
            &k("bands"),
            &self.bands,
            &[
                ("2.4", ScanBands::Ghz2_4),
                ("5", ScanBands::Ghz5),
                ("both", ScanBands::Both),
            ],
        )?;
        let seconds = |f: &str, v: f64, min_exclusive: bool| {
            let ok = v.is_finite() && v <= 1e6 && if min_exclusive { v > 0.0 } else { v >= 0.0 };
            if ok {
                Ok(Nanos::from_secs_f64(v))
            } else if min_exclusive {
                Err(ScenarioError::new(
                    k(f),
                    "must be above 0 and at most 1e6 s",
                ))
            } else {
                Err(ScenarioError::new(k(f), "must be 0 to 1e6 s"))
            }
        };
        let start = seconds("start_s", self.start_s, false)?;
        let pause = seconds("pause_s", self.pause_s, true)?;
        let network_latency = seconds("network_latency_s", self.network_latency_s, true)?;
        if !(self.channel_switch_ms.is_finite() && (0.0..=100.0).contains(&self.channel_switch_ms))
        {
            return Err(ScenarioError::new(
                k("channel_switch_ms"),
                "must be 0 to 100 ms",
            ));
        }
        if self.listen_interval == 0 {
            return Err(ScenarioError::new(
                k("listen_interval"),
                "must be at least 1 beacon interval",
            ));
        }
        if self.low_priority && policy == ScanPolicy::Legacy {
            return Err(ScenarioError::new(
                k("low_priority"),
                "the legacy rule has no abort path: low-priority scans need policy = \"bounded\"",
            ));
        }
        let mut c = ScanConfig::periodic(policy, bands, start, pause);
        c.pause = self.repeat.then_some(pause);
        c.low_priority = self.low_priority;
        c.channel_switch = Nanos::from_secs_f64(self.channel_switch_ms / 1e3);
        c.listen_interval = self.listen_interval;
        c.network_latency = network_latency;
        c.driver_flush = self.driver_flush;
        c.answer_tim = self.answer_tim;
        c.validate().map_err(|e| ScenarioError::new(key, e))?;
        Ok(c)
    }
}

impl PowerSaveSpec {
    pub(crate) fn resolve(&self, key: &str) -> Result<PowerSaveConfig, ScenarioError> {
        let ms = self.dynamic_timeout_ms;
        if !(ms.is_finite() && (1.0..=1e6).contains(&ms)) {
            return Err(ScenarioError::new(
                format!("{key}.dynamic_timeout_ms"),
                "must be 1 ms to 1e6 ms",
            ));
        }
        if self.wake_every_beacons == 0 {
            return Err(ScenarioError::new(
                format!("{key}.wake_every_beacons"),
                "must be at least 1",
            ));
        }
        let c = PowerSaveConfig {
            dynamic_timeout: Nanos::from_secs_f64(ms / 1e3),
            ps_poll: self.ps_poll,
            wake_every_beacons: self.wake_every_beacons,
        };
        c.validate().map_err(|e| ScenarioError::new(key, e))?;
        Ok(c)
    }
}

impl BusSpec {
    pub(crate) fn resolve(&self, key: &str) -> Result<BusConfig, ScenarioError> {
        let k = |f: &str| format!("{key}.{f}");
        let mut b = BusConfig::preset(&self.preset).ok_or_else(|| {
            ScenarioError::new(
                if self.is_bare() {
                    key.to_string()
                } else {
                    k("preset")
                },
                format!(
                    "unknown bus `{}`; expected one of {}",
                    self.preset,
                    BusConfig::PRESETS.join(", ")
                ),
            )
        })?;
        macro_rules! set {
            ($($field:ident),*) => {
                $(if let Some(v) = self.$field {
                    b.$field = v;
                })*
            };
        }
        set!(
            clock_hz,
            width_bits,
            block_bytes,
            block_gap_ns,
            transfer_overhead_ns,
            status_read_bytes,
            frame_overhead_bytes,
            cpu_per_transfer_ns,
            cpu_per_interrupt_ns,
            cpu_per_poll_ns,
            cpu_per_switch_ns,
            host_cpu_per_packet_ns,
            host_cpu_ps_per_byte,
            host_backlog_packets,
            host_tx_queue_packets,
            device_rx_buffers
        );
        let polled = match &self.completion {
            Some(c) => choose_in(
                &k("completion"),
                c,
                &[("interrupt", false), ("polled", true)],
            )?,
            None => matches!(b.completion, Completion::Polled { .. }),
        };
        let (mut jiffy, mut idle) = match b.completion {
            Completion::Polled {
                jiffy,
                idle_period_jiffies,
            } => (jiffy, idle_period_jiffies),
            // Linux's sdio_irq_thread at HZ = 200 (the S3C24xx's): 5 ms, 2 ticks idle.
            Completion::Interrupt => (Nanos::from_ms(5), 2),
        };
        if let Some(ms) = self.poll_jiffy_ms {
            if !(ms.is_finite() && ms > 0.0 && ms <= 1000.0) {
                return Err(ScenarioError::new(
                    k("poll_jiffy_ms"),
                    "must be above 0 and at most 1000 ms",
                ));
            }
            jiffy = Nanos::from_secs_f64(ms / 1e3);
        }
        if let Some(n) = self.poll_idle_jiffies {
            if n == 0 {
                return Err(ScenarioError::new(
                    k("poll_idle_jiffies"),
                    "must be at least 1",
                ));
            }
            idle = n;
        }
        if !polled && (self.poll_jiffy_ms.is_some() || self.poll_idle_jiffies.is_some()) {
            return Err(ScenarioError::new(
                k(if self.poll_jiffy_ms.is_some() {
                    "poll_jiffy_ms"
                } else {
                    "poll_idle_jiffies"
                }),
                "applies to completion = \"polled\" only",
            ));
        }
        b.completion = if polled {
            Completion::Polled {
                jiffy,
                idle_period_jiffies: idle,
            }
        } else {
            Completion::Interrupt
        };
        let pio = match &self.data {
            Some(d) => choose_in(&k("data"), d, &[("dma", false), ("pio", true)])?,
            None => matches!(b.data, DataMode::Pio { .. }),
        };
        let copy = match b.data {
            DataMode::Pio { copy_ps_per_byte } => copy_ps_per_byte,
            // The generic preset's figure: 600 ns per byte through the SDI's FIFO.
            DataMode::Dma => 600_000,
        };
        if !pio && self.pio_copy_ps_per_byte.is_some() {
            return Err(ScenarioError::new(
                k("pio_copy_ps_per_byte"),
                "applies to data = \"pio\" only",
            ));
        }
        b.data = if pio {
            DataMode::Pio {
                copy_ps_per_byte: self.pio_copy_ps_per_byte.unwrap_or(copy),
            }
        } else {
            DataMode::Dma
        };
        b.validate().map_err(|e| ScenarioError::new(key, e))?;
        Ok(b)
    }
}
