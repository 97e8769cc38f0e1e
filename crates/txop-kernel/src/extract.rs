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

/// The TXQ scheduler's and AQL's functions (6.12) as kernel-oracle's
/// `shim/mac80211/scheduler.c` includes them (`sched_kernel.h`): `ieee802_1d_to_ac`
/// (`net/mac80211/wme.c`), five helpers of `net/mac80211/ieee80211_i.h`, the scheduler
/// and AQL checks of `net/mac80211/tx.c`, `ieee80211_sta_register_airtime` and
/// `ieee80211_sta_update_pending_airtime` (`net/mac80211/sta_info.c`) and two inline
/// wrappers of `include/net/mac80211.h`, in an order in which each is declared before
/// use; or the file and the signature not found.
pub fn scheduler_functions(
    tx_c: &str,
    sta_info_c: &str,
    ieee80211_i_h: &str,
    wme_c: &str,
    mac80211_h: &str,
) -> Result<String, String> {
    let take = |parts: &mut Vec<String>, file: &str, text: &str, signature: &str| {
        let f = function(text, signature)
            .ok_or_else(|| format!("{file}: no `{}`", signature.replace('\n', " ")))?;
        parts.push(format!("/* {file} */\n{f}"));
        Ok::<(), String>(())
    };
    let table = "const int ieee802_1d_to_ac[8] = {";
    let at = wme_c
        .find(table)
        .ok_or_else(|| format!("net/mac80211/wme.c: no `{table}`"))?;
    let end = wme_c[at..]
        .find("};")
        .ok_or_else(|| format!("net/mac80211/wme.c: `{table}` unclosed"))?;
    let mut parts = vec![format!(
        "/* net/mac80211/wme.c */\n{};\n",
        &wme_c[at..at + end + 1]
    )];
    // By file, in an order in which each function is declared before use; the
    // `aql_disable` key goes before the AQL checks that read it.
    let groups: [(&str, &str, &[&str]); 5] = [
        (
            "net/mac80211/ieee80211_i.h",
            ieee80211_i_h,
            &[
                "static inline struct ieee80211_local *hw_to_local(",
                "static inline struct txq_info *to_txq_info(",
                "static inline bool txq_has_queue(",
                "static inline int ieee80211_ac_from_tid(",
                "static inline bool\nieee80211_sta_keep_active(",
            ],
        ),
        (
            "net/mac80211/tx.c",
            tx_c,
            &[
                "static inline s32 ieee80211_sta_deficit(",
                "static void\nieee80211_txq_set_active(",
                "static bool\nieee80211_txq_keep_active(",
                "struct ieee80211_txq *ieee80211_next_txq(",
                "void __ieee80211_schedule_txq(",
            ],
        ),
        (
            "net/mac80211/tx.c",
            tx_c,
            &[
                "bool ieee80211_txq_airtime_check(",
                "static bool\nieee80211_txq_schedule_airtime_check(",
                "bool ieee80211_txq_may_transmit(",
                "void ieee80211_txq_schedule_start(",
            ],
        ),
        (
            "net/mac80211/sta_info.c",
            sta_info_c,
            &[
                "void ieee80211_sta_register_airtime(",
                "void ieee80211_sta_update_pending_airtime(",
            ],
        ),
        (
            "include/net/mac80211.h",
            mac80211_h,
            &[
                "static inline void\nieee80211_schedule_txq(",
                "static inline void\nieee80211_return_txq(",
            ],
        ),
    ];
    let key = "DEFINE_STATIC_KEY_FALSE(aql_disable);";
    for (i, (file, text, signatures)) in groups.into_iter().enumerate() {
        if i == 2 {
            if !tx_c.contains(key) {
                return Err(format!("net/mac80211/tx.c: no `{key}`"));
            }
            parts.push(format!("/* net/mac80211/tx.c */\n{key}\n"));
        }
        for sig in signatures {
            take(&mut parts, file, text, sig)?;
        }
    }
    Ok(parts.join("\n"))
}
