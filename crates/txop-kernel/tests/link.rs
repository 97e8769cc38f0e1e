//! The loaded kernel minstrel_ht behind the core's `ExternalRateControl`, against txop's
//! own `MinstrelHt` on the same statuses: the same chains PPDU by PPDU (probes, rates,
//! tries, RTS/CTS), the same rate set; and a copy (`clone_box`, the shim's
//! `kmin_clone`) that goes on exactly as the original, independently of it.
//!
//! Needs Debian's linux-source-6.12 and a C compiler (the object is cached under the
//! test's temporary directory).

use txop_core::mac80211::minstrel_ht::{MinstrelHt, PeerCaps};
use txop_core::mac80211::rate_chain::{RateChain, TxStatus};
use txop_core::mac80211::rate_control::{ExternalRateControl, HwRateCaps, MinstrelEra};
use txop_core::phy::{Band, ChannelWidth, Standard};
use txop_core::Nanos;

/// A status for `chain` at step `i`: a deterministic mix of tries used, A-MPDU lengths
/// and acknowledged shares (a fixed-point walk, no randomness to share).
fn status(chain: &RateChain, i: u64) -> (u32, u16, u16) {
    let total = chain.total_tries();
    let tries_used = (i.wrapping_mul(7) % u64::from(total)) as u32 + 1;
    let ampdu_len = (i % 24 + 1) as u16;
    let mut acked = (u64::from(ampdu_len) * (i * 37 % 101) / 100) as u16;
    if tries_used < total {
        acked = acked.max(1);
    }
    (tries_used, ampdu_len, acked)
}

/// Drives txop's `rust` and the kernel's `kernel` with the same PPDUs from step
/// `start` for `n` steps (one every 1.7 ms), asserting they choose the same chains;
/// returns how many probed.
fn drive(rust: &mut MinstrelHt, kernel: &mut dyn ExternalRateControl, start: u64, n: u64) -> u32 {
    let mut probes = 0;
    for i in start..start + n {
        let now = Nanos::from_us(1700 * i);
        let chain = rust.rates(now);
        assert_eq!(chain, kernel.rates(now), "step {i}: the chains differ");
        probes += u32::from(chain.probe);
        let (tries_used, ampdu_len, ampdu_ack_len) = status(&chain, i);
        let st = TxStatus {
            chain: &chain,
            tries_used,
            acked: ampdu_ack_len > 0,
            ampdu_len,
            ampdu_ack_len,
        };
        rust.tx_status(now, &st);
        kernel.tx_status(now, &st);
    }
    probes
}

#[test]
fn kernel_link_chooses_txops_chains_and_its_copy_goes_on_alike() {
    std::env::set_var(
        "TXOP_CACHE_DIR",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/kernel-link-cache"),
    );
    let code = txop_kernel::minstrel_ht(None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(code.0.origin().unit, "minstrel_ht");
    let peer = |standard, band, width, sgi, max_nss| PeerCaps {
        standard,
        band,
        width,
        sgi,
        max_nss,
        // With the short preamble the kernel also counts the long-preamble twins of
        // the CCK rates (docs/reference/kernel-oracle.md, "CCK with the short
        // preamble"): where the two differ on purpose.
        short_preamble: false,
    };
    for (caps, seed) in [
        (
            peer(Standard::N, Band::Ghz5, ChannelWidth::Mhz20, false, 1),
            3,
        ),
        (
            peer(Standard::Ac, Band::Ghz5, ChannelWidth::Mhz80, true, 2),
            11,
        ),
        (
            peer(Standard::G, Band::Ghz2_4, ChannelWidth::Mhz20, false, 1),
            5,
        ),
    ] {
        let hw = HwRateCaps::ATH9K;
        let mut rust = MinstrelHt::new(MinstrelEra::Linux6, &caps, hw, seed);
        let mut kernel = code.0.link(&caps, hw, seed);
        assert_eq!(kernel.rate_set(), rust.supported_rates());
        let probes = drive(&mut rust, kernel.as_mut(), 0, 3000);
        assert!(probes > 50, "{caps:?}: {probes} probes");

        // A copy of the kernel's state goes on as txop's does, and so does the
        // original, each on its own (a copy of txop's for the original).
        let mut copy = kernel.clone_box();
        let mut rust_for_original = rust.clone();
        drive(&mut rust, copy.as_mut(), 3000, 2000);
        drop(copy);
        drive(&mut rust_for_original, kernel.as_mut(), 3000, 2000);
    }
}
