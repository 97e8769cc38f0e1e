//! Several BSSs on one channel: one [`Simulation`] per BSS, run in one time order and
//! coupled through the air.
//!
//! Each BSS keeps everything of its own (its cell, wired link, hosts, traffic, TCP and
//! results) and shares only the air: every cell's space places every node of every BSS
//! ([`SpaceConfig::first_node`](txop_core::phy::space::SpaceConfig) says where its own
//! begin). The BSSs are stepped in one order — always the one whose next instant is
//! earliest, the first listed at a tie — and each PPDU a cell puts on the air is handed
//! at once to every other cell ([`txop_core::cell::Cell::handle_air`]), which senses it,
//! suffers it and honours its Duration. Deterministic: the order depends on the
//! scenario and seed only.

use crate::sim::{SimConfig, Simulation, Stuck};
use crate::traffic::Host;
use crate::transit::Leg;
use txop_core::Nanos;
use txop_results::Results;

/// One BSS of a neighbourhood: its simulation and its channel.
#[derive(Clone, Debug)]
pub struct BssConfig {
    /// Its simulation. Its cell's space places every node of every BSS on its channel
    /// (its own from `first_node`).
    pub sim: SimConfig,
    /// Its 20 MHz channel: BSSs on different channels do not hear each other
    /// (adjacent-channel interference is not modelled).
    pub channel: u16,
}

/// BSSs on one or more channels, simulated together.
pub struct Neighbourhood {
    sims: Vec<Simulation>,
    channels: Vec<u16>,
}

impl Neighbourhood {
    /// One simulation per BSS, in order. Each cell's space must place all the BSSs'
    /// nodes alike, its own from its `first_node` on (the caller builds them so).
    pub fn new(bsss: Vec<BssConfig>) -> Result<Neighbourhood, String> {
        if bsss.is_empty() {
            return Err("a neighbourhood needs at least one BSS".into());
        }
        let channels = bsss.iter().map(|b| b.channel).collect();
        let mut sims = bsss
            .into_iter()
            .enumerate()
            .map(|(b, bss)| Simulation::new(bss.sim).map_err(|e| format!("bss {}: {e}", b + 1)))
            .collect::<Result<Vec<_>, _>>()?;
        if sims.len() > 1 {
            for sim in &mut sims {
                sim.network_mut().share_air();
            }
        }
        check_remote_ends(&sims)?;
        let crossing = sims.iter().any(|s| !s.remote.is_empty());
        for sim in &mut sims {
            sim.crossing = crossing;
        }
        Ok(Neighbourhood { sims, channels })
    }

    /// The simulations, one per BSS, in order.
    pub fn bsss(&self) -> &[Simulation] {
        &self.sims
    }

    /// The simulations, one per BSS, in order, to change (e.g. to capture their air).
    pub fn bsss_mut(&mut self) -> &mut [Simulation] {
        &mut self.sims
    }

    /// Run every BSS until `until` (at most its end).
    pub fn run_until(&mut self, until: Nanos) {
        loop {
            let mut next: Option<(Nanos, usize)> = None;
            for (b, sim) in self.sims.iter_mut().enumerate() {
                if let Some(t) = sim.next_at().filter(|&t| t <= until) {
                    if next.is_none_or(|(bt, _)| t < bt) {
                        next = Some((t, b));
                    }
                }
            }
            let Some((t, b)) = next else {
                break;
            };
            if !self.sims[b].step(t) {
                break;
            }
            self.settle();
        }
        for sim in &mut self.sims {
            sim.finish_at(until);
        }
    }

    /// Hand on what the last step put on the air or across the wired sides, until
    /// nothing more crosses: each PPDU to every other cell on its channel, each packet
    /// crossing between BSSs (`crate::transit`) to its simulation there, which may
    /// answer at once.
    fn settle(&mut self) {
        loop {
            let mut moved = false;
            for b in 0..self.sims.len() {
                while let Some(ppdu) = self.sims[b].network_mut().poll_air() {
                    moved = true;
                    let channel = self.channels[b];
                    for (other, sim) in self.sims.iter_mut().enumerate() {
                        if other != b && self.channels[other] == channel {
                            sim.network_mut().handle_air(ppdu);
                        }
                    }
                }
                while let Some(transit) = self.sims[b].poll_transit() {
                    moved = true;
                    let p = transit.packet;
                    match transit.leg {
                        Leg::Out { bss, from, to } => {
                            self.sims[bss].enter_from(b, transit.at, from, to, p)
                        }
                        Leg::Back { home, dropped } => {
                            self.sims[home].come_back(transit.at, p, dropped)
                        }
                    }
                }
            }
            if !moved {
                return;
            }
        }
    }

    /// Run to the end and summarise each BSS, or say where one got stuck.
    pub fn try_run(mut self) -> Result<Vec<Results>, Stuck> {
        let end = self
            .sims
            .iter()
            .map(Simulation::end)
            .max()
            .unwrap_or(Nanos::ZERO);
        self.run_until(end);
        let mut out = Vec::with_capacity(self.sims.len());
        for sim in &self.sims {
            if let Some(stuck) = sim.stuck() {
                return Err(stuck.clone());
            }
            out.push(sim.results());
        }
        Ok(out)
    }
}

/// Every flow end in another BSS names a BSS of the neighbourhood other than its own,
/// and a station there (an AP's own host sends only over its air, not its wired link).
fn check_remote_ends(sims: &[Simulation]) -> Result<(), String> {
    for (b, sim) in sims.iter().enumerate() {
        for far in sim.remote.iter().flatten() {
            let at = format!("bss {}: flow {}", b + 1, far.flow);
            let Some(there) = sims.get(far.bss).filter(|_| far.bss != b) else {
                return Err(format!("{at}: its far end is in no other BSS"));
            };
            let stations = there.cell().stations();
            match far.host {
                Host::Station(n) if (1..=stations).contains(&usize::from(n)) => {}
                host => {
                    return Err(format!(
                        "{at}: BSS {} has no {} to end it",
                        far.bss + 1,
                        host.name()
                    ))
                }
            }
        }
    }
    Ok(())
}

/// The seed of BSS `b` (0-based) of a run seeded `seed`: BSS 0 keeps the run's seed (a
/// lone BSS runs as it would alone); the others get streams of their own, so that two
/// BSSs alike do not draw alike.
pub fn bss_seed(seed: u64, b: usize) -> u64 {
    if b == 0 {
        seed
    } else {
        txop_core::rng::mix64(seed ^ (0x9e37_79b9_7f4a_7c15u64.wrapping_mul(b as u64)))
    }
}
