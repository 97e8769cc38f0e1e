//! txop-emu: the real-time emulator. Real programs in network namespaces send through
//! TUN devices into the modelled network (the same sans-I/O `txop_core::network` the
//! simulator drives: the cell, the wired link between the server and the AP, the
//! stations' host buses, and the order of things at one instant), and what reaches a
//! host is written back at its modelled time.
//!
//! ```text
//! netns txop-PID-srv  ── txop0 (198.18.0.1) ─┐                  ┌─ txop0 (198.18.1.1) ── netns txop-PID-sta1
//!                                            └─ txop emu: wire ─ AP ─ cell ─ stations ─┤ …
//!                                                                  └─ txop0 (198.18.1.N) ── netns txop-PID-staN
//! ```
//!
//! - Contained by construction: every endpoint is in a namespace txop created, with
//!   only its TUN device and loopback and no route but the cell's own range
//!   (198.18.0.0/16, fd74:786f:7000::/48); in the root namespace that range is an
//!   `unreachable` route, installed before anything starts and left in place.
//! - Cleaned up on every exit path ([`session`]); what a SIGKILLed run leaves is removed
//!   by the next run's start (or `txop emu --cleanup`), never a live run's ([`runs`]).
//! - Programs get `TXOP_EMU_ID`, `TXOP_NODE`, `TXOP_SERVER`, `TXOP_STA<n>` (and `_6`
//!   variants) and `TXOP_EXE` in their environment ([`emulator::program_env`]).
//! - Several BSSs (`[[bss]]`): one [`Engine`] per BSS in the core's
//!   `txop_core::world::World`, each BSS with its own server and stations and unique
//!   addresses ([`addr::Site`]); packets between BSSs cross at the junction.
//!
//! Modules:
//! - [`addr`]: txop's own address range, namespace and device names;
//! - [`parse`]: IP headers (etherparse) → flow hash, DSCP, ECN; CE rewriting;
//! - [`slab`]: the bounded store of packet bytes (the model's `token`);
//! - [`engine`]: forwarding through the modelled network, sans-I/O;
//! - [`flows`], [`timing`]: per-flow statistics and the timing error;
//! - [`netns`], [`tun`]: namespaces, TUN devices, routes, process cleanup;
//! - [`nsexec`]: starting a program inside a namespace (what `ip netns exec` does);
//! - [`runs`]: which runs are alive (a lock each holds while it lives);
//! - [`session`], [`emulator`]: setting everything up and tearing it down on every
//!   exit path; one run from start to finish;
//! - [`runloop`]: the real-time loop (epoll, the monotonic clock);
//! - [`results`]: the cell's view of a run, in the simulator's results format.

pub mod addr;
pub mod emulator;
pub mod engine;
pub mod flows;
pub mod netns;
pub mod nsexec;
pub mod parse;
pub mod results;
pub mod runloop;
pub mod runs;
pub mod session;
pub mod slab;
pub mod timing;
pub mod tun;

pub use addr::Endpoint;
pub use emulator::{emulate, CongestionControls, EmuConfig, Outcome, Program};
pub use engine::{Engine, Port};
