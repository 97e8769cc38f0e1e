//! The network around the cell: the wired link to the servers behind the AP.

pub mod wired;
