//! What `txop emu` runs of a resolved scenario: the simulator's configuration
//! (txop-report's `Prepared`, `PreparedBsss`) turned into the emulator's. Here, in the
//! command-line crate, so that the report library (and the Python package over it)
//! does not link the emulator.

use txop_core::network::NetworkConfig;
use txop_emu::EmuConfig;
use txop_report::neighbours::PreparedBsss;
use txop_sim::SimConfig;

/// The emulator's run of a resolved scenario: all of it but the traffic (`[traffic]`,
/// `[[flows]]`) and the duration, which the programs replace. Every part of
/// [`SimConfig`] is named here, so that a part added to the simulator's runs (rate
/// control, several cells) is either carried by the emulator or refused with its key,
/// never left out unseen.
pub fn single(cfg: SimConfig) -> EmuConfig {
    let SimConfig {
        cell,
        flows: _,
        duration: _,
        seed,
        wired,
        host_bus,
        // Only a scenario with `[[bss]]` has them; the emulator's programs are the
        // traffic, between BSSs too ([`bsss`]).
        remote_ends: _,
        // The emulator's hosts run real kernels, with their own TCP settings.
        tcp_hosts: _,
    } = cfg;
    let network = NetworkConfig {
        cell,
        wired,
        host_bus,
    };
    EmuConfig::new(network, seed)
}

/// The emulator's run of `p`: every BSS's network (as [`single`] takes it from its
/// simulation), seed and channel, under its name.
pub fn bsss(p: &PreparedBsss) -> EmuConfig {
    let mut bsss = p.bsss.iter().map(|b| {
        let cfg = single(b.cfg.clone());
        txop_emu::emulator::EmuBss {
            name: b.name.clone(),
            network: cfg.network,
            seed: cfg.seed,
            channel: b.channel,
            capture: None,
        }
    });
    let first = bsss.next().expect("a scenario with [[bss]] has a BSS");
    let mut cfg = EmuConfig::new(first.network, first.seed);
    cfg.world = Some(txop_emu::emulator::EmuWorld {
        name: first.name,
        channel: first.channel,
        others: bsss.collect(),
    });
    cfg
}
