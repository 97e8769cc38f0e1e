//! Drive a two-station cell by hand through its sans-I/O interface.
//!
//! `cargo run --release -p txop-core --example drive_cell`
//!
//! The AP sends ten 1500-byte packets to each station at t = 0, and station 1 answers
//! with five at t = 2 ms. The program runs the loop every driver of a [`Cell`] runs
//! (the simulator with virtual time, the emulator with the wall clock), then prints what
//! each station got and the airtime each was charged, and checks that every packet came
//! out once and that the airtime records add up to the time the medium was busy.

use txop_core::cell::{Cell, CellConfig, Output, StationConfig};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, ChannelWidth, GuardInterval, Standard, TxVector};
use txop_core::{Nanos, NodeId, Packet};

fn main() -> Result<(), String> {
    // An 802.11n cell at 5 GHz: station 1 at HT20 MCS 7 (65 Mbit/s), station 2 at
    // MCS 0 (6.5 Mbit/s), both on a loss-free channel. Ask for one airtime record per
    // data exchange.
    let ht20 = |mcs| TxVector::Ht {
        mcs,
        width: ChannelWidth::Mhz20,
        gi: GuardInterval::Long,
    };
    let stations = [7, 0].map(|mcs| StationConfig::new(ht20(mcs), ErrorModel::None));
    let mut cfg = CellConfig::new(Standard::N, Band::Ghz5, stations.to_vec());
    cfg.airtime_records = true;
    let mut cell = Cell::new(cfg, 42)?; // the seed fixes every random draw

    // The arrivals, in time order: (when, packet). Packet ids only need to be unique.
    let mut arrivals: Vec<(Nanos, Packet)> = Vec::new();
    for id in 0..20 {
        let sta = NodeId(1 + id as u16 % 2);
        arrivals.push((Nanos::ZERO, Packet::new(id, NodeId::AP, sta, 1500)));
    }
    for id in 20..25 {
        arrivals.push((
            Nanos::from_ms(2),
            Packet::new(id, NodeId(1), NodeId::AP, 1500),
        ));
    }
    let offered = arrivals.len();
    arrivals.reverse(); // pop() takes the earliest

    // Per station (index 1 and 2): packets delivered and airtime charged.
    let mut delivered = [0u32; 3];
    let mut airtime = [Nanos::ZERO; 3];
    let mut last_delivery = Nanos::ZERO;
    loop {
        // The cell's next deadline and the next arrival: whichever comes first goes
        // next; at one instant the cell's deadline first (handle_packet would run it).
        let next_arrival = arrivals.last().map(|&(at, _)| at);
        match cell.poll_timeout() {
            Some(t) if next_arrival.is_none_or(|a| t <= a) => cell.handle_timeout(t),
            _ => match arrivals.pop() {
                Some((at, packet)) => cell.handle_packet(at, packet),
                None => break, // the cell is idle and nothing more arrives
            },
        }
        // After every call: drain what the cell reported.
        while let Some(output) = cell.poll_output() {
            match output {
                Output::Delivered { at, packet, .. } => {
                    let sta = if packet.dst.is_ap() {
                        packet.src
                    } else {
                        packet.dst
                    };
                    delivered[sta.index()] += 1;
                    last_delivery = at;
                }
                Output::Dropped { packet, reason, .. } => {
                    return Err(format!("packet {} dropped: {reason:?}", packet.id));
                }
                Output::Airtime(record) => airtime[record.station.index()] += record.airtime,
            }
        }
    }

    for sta in 1..=2 {
        println!(
            "station {sta}: {} packets delivered, airtime {:.3} ms",
            delivered[sta],
            airtime[sta].as_ms_f64()
        );
    }
    let busy = Nanos(cell.busy_ns());
    println!(
        "last delivery at {:.3} ms, medium busy {:.3} ms",
        last_delivery.as_ms_f64(),
        busy.as_ms_f64()
    );

    // Everything offered came out, and the records tile the busy time.
    let total: u32 = delivered.iter().sum();
    if total as usize != offered || airtime[1] + airtime[2] != busy {
        return Err(format!(
            "{total} of {offered} delivered; airtime does not add up"
        ));
    }
    println!("all {offered} packets delivered; airtime records sum to the busy time");
    Ok(())
}
