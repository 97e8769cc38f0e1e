//! Where a node is over time: still, moving at a constant velocity, or following
//! waypoints.
//!
//! The three models are ns-3's `ConstantPositionMobilityModel`,
//! `ConstantVelocityMobilityModel` and `WaypointMobilityModel`, in two dimensions (txop's
//! cell is a floor plan; height adds nothing the path-loss model distinguishes). Each is
//! a pure function of time, so any party (the MAC per PPDU, an `ideal` rate control when
//! it builds one) evaluates it without shared state.

use crate::Nanos;

/// A point on the floor plan, in metres.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Position {
    /// East–west coordinate, m.
    pub x_m: f64,
    /// North–south coordinate, m.
    pub y_m: f64,
}

impl Position {
    /// The point (`x_m`, `y_m`).
    pub const fn new(x_m: f64, y_m: f64) -> Position {
        Position { x_m, y_m }
    }

    /// The straight-line distance to `other`, m. Exact when the two differ in one
    /// coordinate only (`sqrt(d²) = |d|` in IEEE arithmetic), so a station at
    /// `[d, 0]` is exactly `d` from the origin.
    pub fn distance_m(self, other: Position) -> f64 {
        let (dx, dy) = (self.x_m - other.x_m, self.y_m - other.y_m);
        (dx * dx + dy * dy).sqrt()
    }

    fn is_finite(self) -> bool {
        self.x_m.is_finite() && self.y_m.is_finite()
    }
}

/// One waypoint: where the node is at time `at`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Waypoint {
    /// When the node is at `position`.
    pub at: Nanos,
    /// Where it is then.
    pub position: Position,
}

/// A node's movement.
#[derive(Clone, Debug, PartialEq)]
pub enum Mobility {
    /// Never moves (ns-3's `ConstantPositionMobilityModel`).
    Still(Position),
    /// Starts at `start` at time 0 and moves at `velocity_mps` (x, y components in
    /// m/s) for ever (ns-3's `ConstantVelocityMobilityModel`).
    ConstantVelocity {
        /// The position at time 0.
        start: Position,
        /// The velocity: metres per second along x and along y.
        velocity_mps: (f64, f64),
    },
    /// Straight lines at constant speed between waypoints, strictly increasing in
    /// time; at the first waypoint's position before it and at the last one's after it
    /// (ns-3's `WaypointMobilityModel` with `LazyNotify` off, its initial position being
    /// the first waypoint's).
    Waypoints(Vec<Waypoint>),
}

impl Mobility {
    /// The position at time `t`.
    pub fn position_at(&self, t: Nanos) -> Position {
        match self {
            Mobility::Still(p) => *p,
            Mobility::ConstantVelocity {
                start,
                velocity_mps: (vx, vy),
            } => {
                let s = t.as_secs_f64();
                Position::new(start.x_m + vx * s, start.y_m + vy * s)
            }
            Mobility::Waypoints(points) => {
                // The first waypoint after `t`; the node is between it and the one before.
                let next = points.partition_point(|w| w.at <= t);
                match (next.checked_sub(1).map(|i| &points[i]), points.get(next)) {
                    (None, Some(first)) => first.position,
                    (Some(last), None) => last.position,
                    (Some(a), Some(b)) => {
                        // a.at <= t < b.at, so the span is not empty.
                        let f = (t - a.at).as_ns() as f64 / (b.at - a.at).as_ns() as f64;
                        Position::new(
                            a.position.x_m + f * (b.position.x_m - a.position.x_m),
                            a.position.y_m + f * (b.position.y_m - a.position.y_m),
                        )
                    }
                    (None, None) => Position::default(),
                }
            }
        }
    }

    /// Whether the node never moves: still, a zero velocity, or waypoints that all
    /// stand at one position.
    pub fn is_still(&self) -> bool {
        match self {
            Mobility::Still(_) => true,
            Mobility::ConstantVelocity { velocity_mps, .. } => *velocity_mps == (0.0, 0.0),
            Mobility::Waypoints(points) => {
                points.windows(2).all(|w| w[0].position == w[1].position)
            }
        }
    }

    /// Check the model: finite coordinates and velocity; at least one waypoint, in
    /// strictly increasing time. The error says what is wrong (the caller names the
    /// key).
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Mobility::Still(p) => {
                if !p.is_finite() {
                    return Err("the position must be finite".into());
                }
            }
            Mobility::ConstantVelocity {
                start,
                velocity_mps: (vx, vy),
            } => {
                if !start.is_finite() {
                    return Err("the position must be finite".into());
                }
                if !(vx.is_finite() && vy.is_finite()) {
                    return Err("the velocity must be finite".into());
                }
            }
            Mobility::Waypoints(points) => {
                if points.is_empty() {
                    return Err("at least one waypoint is needed".into());
                }
                for (i, w) in points.iter().enumerate() {
                    if !w.position.is_finite() {
                        return Err(format!("waypoint {i}: the position must be finite"));
                    }
                    if i > 0 && w.at <= points[i - 1].at {
                        return Err(format!(
                            "waypoint {i}: at {} s, not after waypoint {} at {} s; \
                             times must increase",
                            w.at.as_secs_f64(),
                            i - 1,
                            points[i - 1].at.as_secs_f64()
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: f64) -> Nanos {
        Nanos::from_secs_f64(s)
    }

    #[test]
    fn still_and_constant_velocity() {
        let p = Position::new(3.0, -4.0);
        assert_eq!(Mobility::Still(p).position_at(at(100.0)), p);
        assert_eq!(p.distance_m(Position::default()), 5.0);
        // A station at [d, 0] is exactly d from the origin.
        for d in [0.3, 1.0, 7.7, 12.345, 9999.9] {
            assert_eq!(Position::new(d, 0.0).distance_m(Position::default()), d);
        }
        let walk = Mobility::ConstantVelocity {
            start: Position::new(1.0, 2.0),
            velocity_mps: (1.5, -0.5),
        };
        assert_eq!(walk.position_at(Nanos::ZERO), Position::new(1.0, 2.0));
        assert_eq!(walk.position_at(at(10.0)), Position::new(16.0, -3.0));
        assert!(!walk.is_still());
        assert!(Mobility::ConstantVelocity {
            start: p,
            velocity_mps: (0.0, 0.0)
        }
        .is_still());
    }

    #[test]
    fn waypoints_interpolate_and_hold() {
        let w = |s: f64, x: f64, y: f64| Waypoint {
            at: at(s),
            position: Position::new(x, y),
        };
        let m = Mobility::Waypoints(vec![w(1.0, 0.0, 0.0), w(3.0, 10.0, 0.0), w(4.0, 10.0, 5.0)]);
        m.validate().unwrap();
        // Held before the first and after the last.
        assert_eq!(m.position_at(Nanos::ZERO), Position::new(0.0, 0.0));
        assert_eq!(m.position_at(at(100.0)), Position::new(10.0, 5.0));
        // Linear in between, exact at each waypoint.
        assert_eq!(m.position_at(at(2.0)), Position::new(5.0, 0.0));
        assert_eq!(m.position_at(at(3.0)), Position::new(10.0, 0.0));
        assert_eq!(m.position_at(at(3.5)), Position::new(10.0, 2.5));
        assert!(!m.is_still());
        assert!(Mobility::Waypoints(vec![w(0.0, 2.0, 2.0), w(5.0, 2.0, 2.0)]).is_still());
        // One waypoint: still.
        let one = Mobility::Waypoints(vec![w(2.0, 1.0, 1.0)]);
        assert_eq!(one.position_at(at(7.0)), Position::new(1.0, 1.0));
    }

    #[test]
    fn validation_names_the_problem() {
        let w = |s: f64| Waypoint {
            at: at(s),
            position: Position::default(),
        };
        let e = Mobility::Waypoints(vec![w(1.0), w(1.0)])
            .validate()
            .unwrap_err();
        assert_eq!(
            e,
            "waypoint 1: at 1 s, not after waypoint 0 at 1 s; times must increase"
        );
        assert!(Mobility::Waypoints(vec![]).validate().is_err());
        assert!(Mobility::Still(Position::new(f64::NAN, 0.0))
            .validate()
            .is_err());
        assert!(Mobility::ConstantVelocity {
            start: Position::default(),
            velocity_mps: (f64::INFINITY, 0.0)
        }
        .validate()
        .is_err());
    }
}
