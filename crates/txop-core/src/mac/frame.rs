//! Frames the MAC sends on its own, without an MSDU.

/// Management frames queued per station: a null-data frame and a PS-Poll at most, plus
/// slack.
pub(crate) const MAX_CTL_FRAMES: usize = 4;

/// A frame that is not data. Null-data frames and PS-Polls are acknowledged and retried
/// like data; beacons are broadcast.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CtlFrame {
    /// Station → AP: the PM bit tells the AP to buffer (1) or release (0).
    NullData { pm: bool },
    /// Station → AP: release one buffered frame.
    PsPoll,
    /// The AP's `k`-th beacon.
    Beacon { k: u64 },
}
