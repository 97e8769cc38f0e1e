//! Reading the kernel's sources: a C function's text by its signature, the version in
//! the top Makefile, and the FNV-1a hash results name the code by. Shared, by
//! `#[path]`, with kernel-oracle's build script, which builds the same code at test
//! time: one definition of what "the files compiled" and their hash are.

/// The text of the C function whose definition starts with `signature`, up to the
/// closing brace at the start of a line.
pub fn function<'a>(source: &'a str, signature: &str) -> Option<&'a str> {
    let start = source.find(signature)?;
    let end = source[start..].find("\n}\n")? + start + 3;
    Some(&source[start..end])
}

/// `VERSION.PATCHLEVEL.SUBLEVEL` from the kernel's top Makefile.
pub fn kernel_version(makefile: &str) -> String {
    let field = |name: &str| {
        makefile
            .lines()
            .find_map(|l| {
                l.strip_prefix(name)?
                    .trim_start()
                    .strip_prefix('=')
                    .map(str::trim)
            })
            .unwrap_or("?")
    };
    format!(
        "{}.{}.{}",
        field("VERSION"),
        field("PATCHLEVEL"),
        field("SUBLEVEL")
    )
}

/// FNV-1a, 64 bits: a hash of the kernel files compiled, so results can say which ran.
pub struct Fnv64(pub u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv64 {
    /// Adds `bytes` to the hash.
    pub fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// What minstrel.c needs besides `rc80211_minstrel_ht.c` and `.h`: the kernel's own
/// `ieee80211_frame_duration` (`net/mac80211/util.c`), `rate_supported`,
/// `rate_lowest_index`, `ieee80211_rate_valid` and `ieee80211_info_set_tx_time_est`
/// (`include/net/mac80211.h`), in one text (`kernel_helpers.h`), or the file and the
/// signature not found.
pub fn minstrel_helpers(util_c: &str, mac80211_h: &str) -> Result<String, String> {
    let take = |text: &str, file: &str, signature: &str| -> Result<String, String> {
        function(text, signature)
            .map(str::to_string)
            .ok_or_else(|| format!("{file}: no `{}`", signature.replace('\n', " ")))
    };
    Ok([
        format!(
            "static {}",
            take(
                util_c,
                "net/mac80211/util.c",
                "int ieee80211_frame_duration("
            )?
        ),
        take(
            mac80211_h,
            "include/net/mac80211.h",
            "static inline int rate_supported(",
        )?,
        take(
            mac80211_h,
            "include/net/mac80211.h",
            "static inline s8\nrate_lowest_index(",
        )?,
        take(
            mac80211_h,
            "include/net/mac80211.h",
            "static inline bool ieee80211_rate_valid(",
        )?,
        take(
            mac80211_h,
            "include/net/mac80211.h",
            "static inline u16\nieee80211_info_set_tx_time_est(",
        )?,
    ]
    .join("\n"))
}
