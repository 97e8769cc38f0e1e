//! txop-sim: the virtual-time driver of the txop core.
