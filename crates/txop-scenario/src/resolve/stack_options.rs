//! The stack: a preset with `[stack_options]` applied.

use crate::error::ScenarioError;
use crate::limits;
use crate::resolve::choose_in;
use crate::schema::Scenario;
use txop_core::stack::{self, QueueLimit, StackConfig};
use txop_core::Nanos;

pub(crate) fn choose<T: Copy>(
    key: &str,
    value: &str,
    options: &[(&str, T)],
) -> Result<T, ScenarioError> {
    choose_in(&format!("stack_options.{key}"), value, options)
}

impl Scenario {
    /// The preset named by `stack` with `[stack_options]` applied.
    pub fn stack_config(&self) -> Result<StackConfig, ScenarioError> {
        use txop_core::mac80211::aql::{AqlEstimator, AqlParams};
        use txop_core::mac80211::classify::DscpMapping;
        use txop_core::mac80211::fq::OverloadPolicy;
        use txop_core::mac80211::scheduler::{MayTransmitAqlCheck, SchedulerKind};
        use txop_core::stack::{DriverKind, QdiscKind};
        let mut c = stack::preset(&self.stack).ok_or_else(|| {
            let names: Vec<&str> = stack::PRESETS.iter().map(|(n, _)| *n).collect();
            let near = names
                .iter()
                .map(|n| (strsim::damerau_levenshtein(&self.stack, n), *n))
                .min()
                .filter(|(d, _)| *d <= 3)
                .map(|(_, n)| format!(" (did you mean `{n}`?)"))
                .unwrap_or_default();
            ScenarioError::new(
                "stack",
                format!(
                    "unknown stack `{}`{near}; expected one of {} (`txop stacks` \
                     describes them)",
                    self.stack,
                    names.join(", ")
                ),
            )
        })?;
        let o = &self.stack_options;
        let qlimit = o.qdisc_limit_packets.unwrap_or(1000);
        if let Some(q) = &o.qdisc {
            c.qdisc = match q.as_str() {
                "noqueue" => QdiscKind::NoQueue,
                "pfifo_fast" => QdiscKind::PfifoFast {
                    limit_packets: qlimit,
                },
                "fq_codel" => QdiscKind::FqCodel,
                "fifo" => QdiscKind::Fifo {
                    limit_packets: qlimit,
                },
                other => {
                    return Err(ScenarioError::new(
                        "stack_options.qdisc",
                        format!(
                            "unknown value `{other}`; expected one of noqueue, pfifo_fast, \
                         fq_codel, fifo"
                        ),
                    ))
                }
            };
        } else if let Some(l) = o.qdisc_limit_packets {
            match &mut c.qdisc {
                QdiscKind::PfifoFast { limit_packets } | QdiscKind::Fifo { limit_packets } => {
                    *limit_packets = l
                }
                _ => {
                    return Err(ScenarioError::new(
                        "stack_options.qdisc_limit_packets",
                        "this stack's qdisc has no packet limit to set",
                    ))
                }
            }
        }
        macro_rules! set {
            ($field:ident) => {
                if let Some(v) = o.$field {
                    c.$field = v;
                }
            };
        }
        set!(mac80211_txqs);
        set!(fq_flows);
        set!(fq_quantum_bytes);
        set!(fq_limit_packets);
        set!(fq_memory_limit_bytes);
        set!(codel_ecn);
        set!(per_station_codel);
        set!(airtime_flags);
        set!(quantum_shift);
        set!(driver_queue_packets);
        set!(hw_queue_ppdus);
        set!(max_ampdu_subframes);
        if let Some(v) = &o.may_transmit_aql_check {
            c.may_transmit_aql_check = choose(
                "may_transmit_aql_check",
                v,
                &[
                    ("as_written", MayTransmitAqlCheck::AsWritten),
                    ("flipped", MayTransmitAqlCheck::Flipped),
                ],
            )?;
        }
        if let Some(v) = &o.fq_overload {
            c.fq_overload = choose(
                "fq_overload",
                v,
                &[
                    ("one_from_fattest", OverloadPolicy::OneFromFattest),
                    ("half_from_fattest", OverloadPolicy::HalfFromFattest),
                ],
            )?;
        }
        for (key, v, field) in [
            ("codel_target_ms", o.codel_target_ms, &mut c.codel_target),
            (
                "codel_interval_ms",
                o.codel_interval_ms,
                &mut c.codel_interval,
            ),
        ] {
            if let Some(ms) = v {
                if !(ms.is_finite() && ms > 0.0 && ms <= 10_000.0) {
                    return Err(ScenarioError::new(
                        format!("stack_options.{key}"),
                        "must be between 0 and 10000 ms",
                    ));
                }
                *field = Nanos::from_secs_f64(ms / 1000.0);
            }
        }
        if let Some(v) = &o.dscp_mapping {
            c.dscp_mapping = choose(
                "dscp_mapping",
                v,
                &[
                    ("legacy", DscpMapping::Legacy),
                    ("rfc8325", DscpMapping::Rfc8325),
                ],
            )?;
        }
        if let Some(v) = &o.scheduler {
            c.scheduler = choose(
                "scheduler",
                v,
                &[
                    ("round_robin", SchedulerKind::RoundRobin),
                    ("ath9k_drr", SchedulerKind::Ath9kDrr),
                    ("drr", SchedulerKind::Drr),
                    ("virtual_time", SchedulerKind::VirtualTime),
                    ("drr_aql", SchedulerKind::DrrAql),
                ],
            )?;
        }
        if let Some(v) = &o.driver {
            c.driver = choose(
                "driver",
                v,
                &[
                    ("ath9k", DriverKind::Ath9k),
                    ("firmware", DriverKind::Firmware),
                ],
            )?;
        }
        if let Some(v) = &o.mt76_chip {
            use txop_core::stack::{FirmwareStage, Mt76Params};
            let chip = choose(
                "mt76_chip",
                v,
                &[
                    ("mt7915", Mt76Params::MT7915),
                    ("mt7996", Mt76Params::MT7996),
                ],
            )?;
            let FirmwareStage::Mt76(_) = c.firmware else {
                return Err(ScenarioError::new(
                    "stack_options.mt76_chip",
                    "only an mt76 stack (`stack = \"mt76\"`) has an mt76 chip",
                ));
            };
            c.firmware = FirmwareStage::Mt76(chip);
            if o.driver_queue_packets.is_none() {
                c.driver_queue_packets = chip.usable_tokens();
            }
        }
        let (mut params, mut estimator) = match c.queue_limit {
            QueueLimit::Aql { params, estimator } => (params, estimator),
            _ => (AqlParams::default(), AqlEstimator::AggShift),
        };
        if let Some(v) = o.aql_limit_low_us {
            params.limit_low_us = [v; 4];
        }
        if let Some(v) = o.aql_limit_high_us {
            params.limit_high_us = [v; 4];
        }
        if let Some(v) = o.aql_threshold_us {
            params.threshold_us = v;
        }
        if let Some(v) = o.aql_per_ac_limit {
            params.per_ac_limit = v;
        }
        if let Some(v) = &o.aql_estimator {
            estimator = choose(
                "aql_estimator",
                v,
                &[
                    ("no_aggregation", AqlEstimator::NoAggregation),
                    ("div16", AqlEstimator::Div16),
                    ("agg_shift", AqlEstimator::AggShift),
                ],
            )?;
        }
        let kind = match &o.queue_limit {
            Some(v) => choose("queue_limit", v, &[("none", 0), ("aql", 1), ("dql", 2)])?,
            None => match c.queue_limit {
                QueueLimit::None => 0,
                QueueLimit::Aql { .. } => 1,
                QueueLimit::Dql => 2,
            },
        };
        c.queue_limit = match kind {
            0 => QueueLimit::None,
            1 => QueueLimit::Aql { params, estimator },
            _ => QueueLimit::Dql,
        };
        if matches!(c.queue_limit, QueueLimit::Aql { .. }) && !c.mac80211_txqs {
            return Err(ScenarioError::new(
                "stack_options.queue_limit",
                "AQL works at mac80211's TXQs: it needs mac80211_txqs = true",
            ));
        }
        if c.airtime_flags > limits::MAX_AIRTIME_FLAGS {
            return Err(ScenarioError::new(
                "stack_options.airtime_flags",
                "must be 0 to 3 (1: TX airtime, 2: RX airtime, 3: both)",
            ));
        }
        if c.quantum_shift > limits::MAX_QUANTUM_SHIFT {
            return Err(ScenarioError::new(
                "stack_options.quantum_shift",
                format!("must be 0 to {}", limits::MAX_QUANTUM_SHIFT),
            ));
        }
        if c.driver_queue_packets == 0 || c.max_ampdu_subframes == 0 {
            return Err(ScenarioError::new(
                "stack_options",
                "driver_queue_packets and max_ampdu_subframes must be at least 1",
            ));
        }
        if c.hw_queue_ppdus == 0 && c.mac80211_txqs && c.driver == DriverKind::Ath9k {
            return Err(ScenarioError::new(
                "stack_options.hw_queue_ppdus",
                "ath9k pulls from mac80211's TXQs into its hardware queue: it needs at least 1",
            ));
        }
        self.apply_amsdu(&mut c)?;
        if c.fq_flows == 0 || c.fq_quantum_bytes == 0 || c.fq_limit_packets == 0 {
            return Err(ScenarioError::new(
                "stack_options",
                "fq_flows, fq_quantum_bytes and fq_limit_packets must be at least 1",
            ));
        }
        self.apply_kernel_units(&mut c)?;
        Ok(c)
    }

    /// `[kernel] units`: the kernel's own code, built and loaded (`txop-kernel`) from
    /// `kernel.src` or the Debian tarball, in place of txop's Rust for each unit named.
    fn apply_kernel_units(&self, c: &mut StackConfig) -> Result<(), ScenarioError> {
        let units = &self.kernel.units;
        for (i, unit) in units.iter().enumerate() {
            if units[..i].contains(unit) {
                return Err(ScenarioError::new(
                    "kernel.units",
                    format!("`{unit}` is listed twice"),
                ));
            }
            match unit.as_str() {
                "fq" => {
                    if !c.mac80211_txqs {
                        return Err(ScenarioError::new(
                            "kernel.units",
                            format!(
                                "`fq` is mac80211's TXQ fq, which stack `{}` does not run \
                                 (it has no mac80211 TXQs)",
                                c.name
                            ),
                        ));
                    }
                    if c.amsdu.enabled {
                        return Err(ScenarioError::new(
                            "kernel.units",
                            "`fq` cannot build A-MSDUs (ieee80211_amsdu_aggregate is not \
                             lifted): leave stack_options.amsdu off",
                        ));
                    }
                    let src = self.kernel_src();
                    c.fq_code = Some(
                        txop_kernel::fq(src.as_deref())
                            .map_err(|e| ScenarioError::new("kernel.src", e))?,
                    );
                }
                "aql" => {
                    let QueueLimit::Aql { params, .. } = &mut c.queue_limit else {
                        return Err(ScenarioError::new(
                            "kernel.units",
                            format!(
                                "`aql` is mac80211's Airtime Queue Limits, which stack `{}` \
                                 does not run (its queue_limit is not aql)",
                                c.name
                            ),
                        ));
                    };
                    let src = self.kernel_src();
                    params.code = Some(
                        txop_kernel::aql(src.as_deref())
                            .map_err(|e| ScenarioError::new("kernel.src", e))?,
                    );
                }
                "scheduler" => {
                    let params = txop_core::mac80211::scheduler::SchedulerParams {
                        kind: c.scheduler,
                        airtime_flags: c.airtime_flags,
                        quantum_shift: c.quantum_shift,
                        may_transmit_aql_check: c.may_transmit_aql_check,
                    };
                    let unsupported = if c.mac80211_txqs {
                        txop_core::mac80211::scheduler::external_supports(&params).err()
                    } else {
                        Some("this stack has no mac80211 TXQs to schedule".to_string())
                    };
                    if let Some(why) = unsupported {
                        return Err(ScenarioError::new(
                            "kernel.units",
                            format!("`scheduler` cannot run on stack `{}`: {why}", c.name),
                        ));
                    }
                    let src = self.kernel_src();
                    c.scheduler_code = Some(
                        txop_kernel::scheduler(src.as_deref())
                            .map_err(|e| ScenarioError::new("kernel.src", e))?,
                    );
                }
                "airtime" => {
                    match &c.queue_limit {
                        QueueLimit::Aql { estimator, .. } if c.mac80211_txqs => {
                            if *estimator != txop_core::mac80211::aql::AqlEstimator::AggShift {
                                return Err(ScenarioError::new(
                                    "kernel.units",
                                    format!(
                                        "`airtime` is 6.12's estimate, and stack `{}` runs \
                                         an older one ({estimator:?})",
                                        c.name
                                    ),
                                ));
                            }
                        }
                        _ => {
                            return Err(ScenarioError::new(
                                "kernel.units",
                                format!(
                                    "`airtime` is AQL's airtime estimate, which stack `{}` \
                                     does not compute (its queue_limit is not aql)",
                                    c.name
                                ),
                            ))
                        }
                    }
                    let src = self.kernel_src();
                    c.airtime_code = Some(
                        txop_kernel::airtime(src.as_deref())
                            .map_err(|e| ScenarioError::new("kernel.src", e))?,
                    );
                }
                other => {
                    return Err(ScenarioError::new(
                        "kernel.units",
                        format!(
                            "unknown unit `{other}`; expected fq, aql, scheduler or airtime \
                             (minstrel_ht is a station's rate_control = \"minstrel_ht-kernel\")"
                        ),
                    ))
                }
            }
        }
        Ok(())
    }

    /// `[stack_options]`'s A-MSDU keys (reference §16).
    fn apply_amsdu(&self, c: &mut StackConfig) -> Result<(), ScenarioError> {
        use txop_core::mac80211::amsdu::STATION_MAX_LENS;
        let o = &self.stack_options;
        if let Some(v) = o.amsdu {
            c.amsdu.enabled = v;
        }
        if let Some(v) = o.amsdu_max_len_bytes {
            if v != 0 && !STATION_MAX_LENS.contains(&v) {
                return Err(ScenarioError::new(
                    "stack_options.amsdu_max_len_bytes",
                    format!(
                        "{v} is not a length a station advertises; expected 0 (the \
                         capability's default), 3839 or 7935 (HT), 3895, 7991 or 11454 \
                         (VHT, HE)"
                    ),
                ));
            }
            c.amsdu.max_len_bytes = v;
        }
        if let Some(v) = o.amsdu_max_subframes {
            if ![0, 8, 16, 32].contains(&v) {
                return Err(ScenarioError::new(
                    "stack_options.amsdu_max_subframes",
                    format!(
                        "{v} is not a limit Extended Capabilities can say; expected 0 (none), \
                         8, 16 or 32"
                    ),
                ));
            }
            c.amsdu.max_subframes = v;
        }
        if let Some(v) = o.amsdu_max_frags {
            if v > 255 {
                return Err(ScenarioError::new(
                    "stack_options.amsdu_max_frags",
                    "must be 0 (no limit) to 255",
                ));
            }
            c.amsdu.max_frags = v;
        }
        if c.amsdu.enabled && !c.mac80211_txqs {
            return Err(ScenarioError::new(
                "stack_options.amsdu",
                "mac80211 builds A-MSDUs in its TXQs: it needs mac80211_txqs = true",
            ));
        }
        Ok(())
    }
}
