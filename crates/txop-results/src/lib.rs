//! txop-results: what a txop run reports, shared by both drivers (the simulator and
//! the emulator): per-flow statistics bounded over time ([`flowstats`]), the results
//! object that `--json` prints ([`results`]), and flent's data file ([`flentfile`]).

pub mod flentfile;
pub mod flowstats;
pub mod results;

pub use flowstats::{BudgetArrival, Direction, FlowStats};
pub use results::{
    BusResult, Conservation, DelayBudgetResult, DirectionBudget, FlowResult, GroupResult,
    LatencySummary, Results, Spread, StageBudget, StationResult,
};
