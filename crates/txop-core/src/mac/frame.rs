//! The frames the MAC sends on its own: one MPDU each, without an MSDU, named by their
//! 802.11 frame type (802.11-2016 9.2.4.1.3). The AP sends beacons (management); a
//! station in power save or scanning sends null-data frames (data without a body) and
//! PS-Polls (control).
//!
//! A station's frames wait on AC VO ahead of its data (mac80211 sends null-data frames
//! at TID 7) and are acknowledged and retried like data. Beacons go on the AP's beacon
//! queue (AIFSN 1, no backoff) and are broadcast: nobody answers them.

/// Frames queued per station: a null-data frame and a PS-Poll at most, plus slack.
pub(crate) const MAX_QUEUED_FRAMES: usize = 4;

/// A frame the MAC sends on its own, by type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    Mgmt(MgmtFrame),
    Ctl(CtlFrame),
    Data(DataFrame),
}

/// Management frames (type 00).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MgmtFrame {
    /// The AP's `k`-th beacon.
    Beacon { k: u64 },
}

/// Control frames (type 01).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CtlFrame {
    /// Station → AP: release one buffered frame.
    PsPoll,
}

/// Data frames (type 10) without a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DataFrame {
    /// Station → AP: the PM bit tells the AP to buffer (1) or release (0).
    NullData { pm: bool },
}
