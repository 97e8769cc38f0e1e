//! Several BSSs simulated together: one [`Simulation`] per BSS, each a
//! [`BssDriver`] of the core's [`World`], which runs them in its one order, couples
//! their air and carries traffic between them through its junction (`crate::transit`).
//!
//! Each BSS keeps everything of its own (its cell, wired link, hosts, traffic, TCP and
//! results) and shares only the air and the junction: every cell's space places every
//! node of every BSS ([`SpaceConfig::first_node`](txop_core::phy::space::SpaceConfig)
//! says where its own begin). Deterministic: the order depends on the scenario and seed
//! only.

use crate::sim::{SimConfig, Simulation, Stuck};
use crate::traffic::Host;
use txop_core::budget::Passes;
use txop_core::network::Network;
use txop_core::world::{BssDriver, BssId, Carried, Crossing, Route, World};
use txop_core::{DropReason, Nanos};
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

/// BSSs on one or more channels, simulated together: a [`World`] of simulations.
pub struct Neighbourhood {
    world: World<Simulation>,
}

impl Neighbourhood {
    /// One simulation per BSS, in order. Each cell's space must place all the BSSs'
    /// nodes alike, its own from its `first_node` on (the caller builds them so).
    pub fn new(bsss: Vec<BssConfig>) -> Result<Neighbourhood, String> {
        if bsss.is_empty() {
            return Err("a neighbourhood needs at least one BSS".into());
        }
        let mut sims = bsss
            .into_iter()
            .enumerate()
            .map(|(b, bss)| {
                let sim = Simulation::new(bss.sim).map_err(|e| format!("bss {}: {e}", b + 1))?;
                Ok((sim, bss.channel))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let crossing = sims.iter().any(|(s, _)| !s.remote.is_empty());
        for (sim, _) in &mut sims {
            sim.crossing = crossing;
        }
        let world = World::new(sims)?;
        check_remote_ends(world.bsss())?;
        Ok(Neighbourhood { world })
    }

    /// The simulations, one per BSS, in order.
    pub fn bsss(&self) -> &[Simulation] {
        self.world.bsss()
    }

    /// The simulations, one per BSS, in order, to change (e.g. to capture their air).
    pub fn bsss_mut(&mut self) -> &mut [Simulation] {
        self.world.bsss_mut()
    }

    /// Run every BSS until `until` (at most its end), in the world's order.
    pub fn run_until(&mut self, until: Nanos) {
        self.world.run_until(until, &mut ());
    }

    /// Run to the end and summarise each BSS, or say where one got stuck.
    pub fn try_run(mut self) -> Result<Vec<Results>, Stuck> {
        let end = self
            .bsss()
            .iter()
            .map(Simulation::end)
            .max()
            .unwrap_or(Nanos::ZERO);
        self.run_until(end);
        let mut out = Vec::with_capacity(self.bsss().len());
        for sim in self.bsss() {
            if let Some(stuck) = sim.stuck() {
                return Err(stuck.clone());
            }
            out.push(sim.results());
        }
        Ok(out)
    }
}

/// A simulation is one BSS of a world: its network, its own events in its agenda's
/// order, and its end of the junction (`crate::transit`).
impl BssDriver for Simulation {
    type Io<'io> = ();
    /// The cells a packet crossed so far: its delay budget goes with it.
    type Cargo = Option<Passes>;

    fn network_mut(&mut self) -> &mut Network {
        Simulation::network_mut(self)
    }

    fn next_at(&mut self) -> Option<Nanos> {
        Simulation::next_at(self)
    }

    fn step(&mut self, now: Nanos, _io: &mut ()) -> bool {
        Simulation::step(self, now)
    }

    fn poll_crossing(&mut self) -> Option<Crossing<Option<Passes>>> {
        self.transits.pop_front()
    }

    fn enter(
        &mut self,
        home: BssId,
        at: Nanos,
        route: Route,
        c: Carried<Option<Passes>>,
        _io: &mut (),
    ) {
        self.enter_from(home, at, route.from, route.to, c);
    }

    fn come_back(
        &mut self,
        at: Nanos,
        c: Carried<Option<Passes>>,
        dropped: Option<DropReason>,
        _io: &mut (),
    ) {
        Simulation::come_back(self, at, c, dropped);
    }

    fn finish_at(&mut self, until: Nanos) {
        Simulation::finish_at(self, until);
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
