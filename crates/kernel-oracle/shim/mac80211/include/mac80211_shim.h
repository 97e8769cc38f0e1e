/* kernel-oracle shim for net/mac80211/rc80211_minstrel_ht.c (6.x) and airtime.c: the
 * mac80211 and cfg80211 structs, flags and helpers they read, cut down to the fields they
 * touch, for a user-space build. Flag values are the kernel's (include/net/mac80211.h,
 * include/net/cfg80211.h, include/linux/ieee80211.h of 6.12). The stub headers next to
 * this one (linux/netdevice.h, net/mac80211.h, rate.h, sta_info.h, ...) all include it.
 * ieee80211_frame_duration (net/mac80211/util.c), rate_supported and rate_lowest_index
 * (include/net/mac80211.h) are the kernel's own, extracted by build.rs into
 * kernel_helpers.h, as are ieee80211_rate_valid and ieee80211_info_set_tx_time_est for
 * airtime.c (airtime_helpers.h). The clock: jiffies run at HZ = 10^9 (one jiffy a nanosecond), so
 * the harness's nanosecond clock is the kernel's. */
#ifndef ORACLE_MINSTREL_SHIM_H
#define ORACLE_MINSTREL_SHIM_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
typedef uint16_t __le16;
typedef unsigned int gfp_t;

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define __init
#define __exit
#define __read_mostly
#define BIT(n) (1UL << (n))
#define GENMASK(h, l) (((~0UL) >> (63 - (h))) & (~0UL << (l)))
#define FIELD_PREP(mask, val) (((u64)(val) << __builtin_ctzl(mask)) & (mask))
#define FIELD_GET(mask, reg) (((reg) & (mask)) >> __builtin_ctzl(mask))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define BUILD_BUG_ON(c) ((void)sizeof(char[1 - 2 * !!(c)]))
#define min(a, b)                                                              \
	({                                                                     \
		__typeof__(a) __a = (a);                                       \
		__typeof__(b) __b = (b);                                       \
		__a < __b ? __a : __b;                                         \
	})
#define max(a, b)                                                              \
	({                                                                     \
		__typeof__(a) __a = (a);                                       \
		__typeof__(b) __b = (b);                                       \
		__a > __b ? __a : __b;                                         \
	})
#define min_t(type, a, b) ((type)(a) < (type)(b) ? (type)(a) : (type)(b))
#define max_t(type, a, b) ((type)(a) > (type)(b) ? (type)(a) : (type)(b))
#define container_of(ptr, type, member)                                        \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define cpu_to_le16(x) ((u16)(x))
#define le16_to_cpu(x) ((u16)(x))
#define U16_MAX 0xffff
#define U32_MAX 0xffffffffU

/* WARN_ON: counted per translation unit and thread; the harness fails on any (the
 * kernel would log a backtrace). */
static _Thread_local u32 oracle_warnings;
#define WARN_ON(cond)                                                          \
	({                                                                     \
		int __c = !!(cond);                                            \
		if (__c)                                                       \
			oracle_warnings++;                                     \
		__c;                                                           \
	})
#define WARN_ON_ONCE(cond) WARN_ON(cond)
#define rcu_dereference(p) (p)
#define ffs(x) __builtin_ffs(x)

#define GFP_ATOMIC 0
#define kzalloc(size, gfp) calloc(1, (size))
#define kfree(p) free(p)

/* Module glue: nothing to register or export. */
#define EXPORT_SYMBOL(sym)
#define EXPORT_SYMBOL_GPL(sym)
#define module_param(name, type, perm)
#define MODULE_PARM_DESC(name, desc)

/* The clock (include/linux/jiffies.h), fed by the harness: HZ = 10^9. */
#define HZ 1000000000UL
extern _Thread_local unsigned long oracle_jiffies;
#define jiffies oracle_jiffies
#define time_after(a, b) ((long)((b) - (a)) < 0)
#define time_before(a, b) time_after(b, a)
#define time_is_after_jiffies(a) time_before(jiffies, a)

/* The random source: init_sample_table's get_random_bytes (the harness installs
 * txop's table instead and never calls it; see minstrel.c). */
void get_random_bytes(void *buf, size_t len);

struct sk_buff {
	u8 cb[512];
};
struct dentry;
struct rcu_head {
	void *unused;
};

/* include/uapi/linux/nl80211.h */
enum nl80211_band {
	NL80211_BAND_2GHZ,
	NL80211_BAND_5GHZ,
	NL80211_BAND_60GHZ,
	NL80211_BAND_6GHZ,
	NL80211_BAND_S1GHZ,
	NL80211_BAND_LC,
	NUM_NL80211_BANDS,
};

/* include/net/cfg80211.h */
enum ieee80211_rate_flags {
	IEEE80211_RATE_SHORT_PREAMBLE = BIT(0),
	IEEE80211_RATE_MANDATORY_B = BIT(1),
	IEEE80211_RATE_ERP_G = BIT(4),
};
struct ieee80211_channel {
	enum nl80211_band band;
};
struct ieee80211_rate {
	u32 flags;
	u16 bitrate;
	u16 hw_value, hw_value_short;
};
struct ieee80211_supported_band {
	struct ieee80211_rate *bitrates;
	enum nl80211_band band;
	int n_bitrates;
};
struct wiphy {
	struct ieee80211_supported_band *bands[NUM_NL80211_BANDS];
};
struct cfg80211_chan_def {
	struct ieee80211_channel *chan;
	int width;
};
/* Only 5 and 10 MHz channels restrict the rates; the harness has neither. */
static inline u32 ieee80211_chandef_rate_flags(struct cfg80211_chan_def *chandef)
{
	(void)chandef;
	return 0;
}
enum rate_info_flags {
	RATE_INFO_FLAGS_MCS = BIT(0),
	RATE_INFO_FLAGS_VHT_MCS = BIT(1),
	RATE_INFO_FLAGS_SHORT_GI = BIT(2),
	RATE_INFO_FLAGS_HE_MCS = BIT(4),
	RATE_INFO_FLAGS_EHT_MCS = BIT(7),
};
enum rate_info_bw {
	RATE_INFO_BW_20 = 0,
	RATE_INFO_BW_5,
	RATE_INFO_BW_10,
	RATE_INFO_BW_40,
	RATE_INFO_BW_80,
	RATE_INFO_BW_160,
	RATE_INFO_BW_HE_RU,
	RATE_INFO_BW_320,
	RATE_INFO_BW_EHT_RU,
};
struct rate_info {
	u16 flags;
	u16 legacy;
	u8 mcs;
	u8 nss;
	u8 bw;
	u8 he_gi;
	u8 eht_gi;
};

/* include/linux/ieee80211.h */
#define IEEE80211_HT_CAP_LDPC_CODING 0x0001
#define IEEE80211_HT_CAP_SGI_20 0x0020
#define IEEE80211_HT_CAP_SGI_40 0x0040
#define IEEE80211_HT_CAP_RX_STBC 0x0300
#define IEEE80211_HT_CAP_RX_STBC_SHIFT 8
#define IEEE80211_VHT_CAP_RXLDPC 0x00000010
#define IEEE80211_VHT_CAP_SHORT_GI_80 0x00000020
#define IEEE80211_VHT_CAP_RXSTBC_MASK 0x00000700
#define IEEE80211_VHT_CAP_RXSTBC_SHIFT 8
#define IEEE80211_MAX_MPDU_LEN_HT_BA 4095
enum ieee80211_vht_mcs_support {
	IEEE80211_VHT_MCS_SUPPORT_0_7 = 0,
	IEEE80211_VHT_MCS_SUPPORT_0_8 = 1,
	IEEE80211_VHT_MCS_SUPPORT_0_9 = 2,
	IEEE80211_VHT_MCS_NOT_SUPPORTED = 3,
};
struct ieee80211_mcs_info {
	u8 rx_mask[10];
	__le16 rx_highest;
	u8 tx_params;
};
struct ieee80211_sta_ht_cap {
	u16 cap;
	bool ht_supported;
	struct ieee80211_mcs_info mcs;
};
struct ieee80211_vht_mcs_info {
	__le16 rx_mcs_map, rx_highest, tx_mcs_map, tx_highest;
};
struct ieee80211_sta_vht_cap {
	bool vht_supported;
	u32 cap;
	struct ieee80211_vht_mcs_info vht_mcs;
};

/* include/net/mac80211.h */
enum mac80211_tx_info_flags {
	IEEE80211_TX_CTL_NO_ACK = BIT(2),
	IEEE80211_TX_CTL_AMPDU = BIT(6),
	IEEE80211_TX_STAT_ACK = BIT(9),
	IEEE80211_TX_STAT_AMPDU = BIT(10),
	IEEE80211_TX_CTL_RATE_CTRL_PROBE = BIT(12),
	IEEE80211_TX_CTL_LDPC = BIT(22),
};
#define IEEE80211_TX_CTL_STBC_SHIFT 23
enum mac80211_tx_control_flags {
	IEEE80211_TX_CTRL_PORT_CTRL_PROTO = BIT(0),
};
enum mac80211_rate_control_flags {
	IEEE80211_TX_RC_USE_RTS_CTS = BIT(0),
	IEEE80211_TX_RC_USE_CTS_PROTECT = BIT(1),
	IEEE80211_TX_RC_USE_SHORT_PREAMBLE = BIT(2),
	IEEE80211_TX_RC_MCS = BIT(3),
	IEEE80211_TX_RC_GREEN_FIELD = BIT(4),
	IEEE80211_TX_RC_40_MHZ_WIDTH = BIT(5),
	IEEE80211_TX_RC_DUP_DATA = BIT(6),
	IEEE80211_TX_RC_SHORT_GI = BIT(7),
	IEEE80211_TX_RC_VHT_MCS = BIT(8),
	IEEE80211_TX_RC_80_MHZ_WIDTH = BIT(9),
	IEEE80211_TX_RC_160_MHZ_WIDTH = BIT(10),
};
#define IEEE80211_TX_MAX_RATES 4
#define IEEE80211_TX_RATE_TABLE_SIZE 4
struct ieee80211_tx_rate {
	s8 idx;
	u16 count : 5, flags : 11;
} __attribute__((packed));
static inline void ieee80211_rate_set_vht(struct ieee80211_tx_rate *rate, u8 mcs,
					  u8 nss)
{
	rate->idx = ((nss - 1) << 4) | mcs;
}
static inline u8 ieee80211_rate_get_vht_mcs(const struct ieee80211_tx_rate *rate)
{
	return rate->idx & 0xF;
}
static inline u8 ieee80211_rate_get_vht_nss(const struct ieee80211_tx_rate *rate)
{
	return (rate->idx >> 4) + 1;
}
/* control and status overlay in the kernel (a union); separate here. */
struct ieee80211_tx_info {
	u32 flags;
	u8 band;
	u16 tx_time_est : 10;
	struct {
		struct ieee80211_tx_rate rates[IEEE80211_TX_MAX_RATES];
		u32 flags;
	} control;
	struct {
		struct ieee80211_tx_rate rates[IEEE80211_TX_MAX_RATES];
		u8 ampdu_ack_len;
		u8 ampdu_len;
	} status;
};
#define IEEE80211_SKB_CB(skb) ((struct ieee80211_tx_info *)(skb)->cb)
struct ieee80211_rate_status {
	struct rate_info rate_idx;
	u8 try_count;
	u8 tx_power_idx;
};
struct ieee80211_tx_status {
	struct ieee80211_sta *sta;
	struct ieee80211_tx_info *info;
	struct sk_buff *skb;
	struct ieee80211_rate_status *rates;
	int n_rates;
};
struct ieee80211_sta_rates {
	struct rcu_head rcu_head;
	struct {
		s8 idx;
		u8 count;
		u8 count_cts;
		u8 count_rts;
		u16 flags;
	} rate[IEEE80211_TX_RATE_TABLE_SIZE];
};
enum ieee80211_sta_rx_bandwidth {
	IEEE80211_STA_RX_BW_20 = 0,
	IEEE80211_STA_RX_BW_40,
	IEEE80211_STA_RX_BW_80,
	IEEE80211_STA_RX_BW_160,
};
enum ieee80211_smps_mode {
	IEEE80211_SMPS_AUTOMATIC,
	IEEE80211_SMPS_OFF,
	IEEE80211_SMPS_STATIC,
	IEEE80211_SMPS_DYNAMIC,
};
struct ieee80211_sta_aggregates {
	u16 max_amsdu_len;
	u16 max_rc_amsdu_len;
};
struct ieee80211_link_sta {
	u32 supp_rates[NUM_NL80211_BANDS];
	struct ieee80211_sta_ht_cap ht_cap;
	struct ieee80211_sta_vht_cap vht_cap;
	struct ieee80211_sta_aggregates agg;
	enum ieee80211_smps_mode smps_mode;
	enum ieee80211_sta_rx_bandwidth bandwidth;
};
struct ieee80211_sta {
	struct ieee80211_link_sta deflink;
	struct ieee80211_sta_rates *rates;
};
enum ieee80211_hw_flags {
	IEEE80211_HW_TX_STATUS_NO_AMPDU_LEN,
	IEEE80211_HW_SUPPORTS_HT_CCK_RATES,
};
struct ieee80211_conf {
	struct cfg80211_chan_def chandef;
};
struct ieee80211_hw {
	struct ieee80211_conf conf;
	struct wiphy *wiphy;
	unsigned long flags;
	u8 max_rates;
	u8 max_rate_tries;
};
#define ieee80211_hw_check(hw, flg) (!!((hw)->flags & BIT(IEEE80211_HW_##flg)))
struct ieee80211_chanctx_conf {
	struct cfg80211_chan_def def;
};
struct ieee80211_bss_conf {
	bool use_short_preamble;
	u32 basic_rates;
	struct ieee80211_chanctx_conf *chanctx_conf;
};
struct ieee80211_tx_rate_control {
	struct ieee80211_hw *hw;
	struct ieee80211_supported_band *sband;
	struct ieee80211_bss_conf *bss_conf;
	struct sk_buff *skb;
	struct ieee80211_tx_rate reported_rate;
	bool rts, short_preamble;
	u32 rate_idx_mask;
	u8 *rate_idx_mcs_mask;
	bool bss;
};
#define RATE_CTRL_CAPA_AMPDU_TRIGGER BIT(1)
struct rate_control_ops {
	unsigned long capa;
	const char *name;
	void *(*alloc)(struct ieee80211_hw *hw);
	void (*add_debugfs)(struct ieee80211_hw *hw, void *priv,
			    struct dentry *debugfsdir);
	void (*free)(void *priv);
	void *(*alloc_sta)(void *priv, struct ieee80211_sta *sta, gfp_t gfp);
	void (*rate_init)(void *priv, struct ieee80211_supported_band *sband,
			  struct cfg80211_chan_def *chandef,
			  struct ieee80211_sta *sta, void *priv_sta);
	void (*rate_update)(void *priv, struct ieee80211_supported_band *sband,
			    struct cfg80211_chan_def *chandef,
			    struct ieee80211_sta *sta, void *priv_sta,
			    u32 changed);
	void (*free_sta)(void *priv, struct ieee80211_sta *sta, void *priv_sta);
	void (*tx_status_ext)(void *priv, struct ieee80211_supported_band *sband,
			      void *priv_sta, struct ieee80211_tx_status *st);
	void (*get_rate)(void *priv, struct ieee80211_sta *sta, void *priv_sta,
			 struct ieee80211_tx_rate_control *txrc);
	void (*add_sta_debugfs)(void *priv, void *priv_sta,
				struct dentry *dir);
	u32 (*get_expected_throughput)(void *priv_sta);
};
static inline int
ieee80211_rate_control_register(const struct rate_control_ops *ops)
{
	(void)ops;
	return 0;
}
static inline void
ieee80211_rate_control_unregister(const struct rate_control_ops *ops)
{
	(void)ops;
}
/* The rate table minstrel hands mac80211: kept on the station (minstrel.c reads it). */
int rate_control_set_rates(struct ieee80211_hw *hw, struct ieee80211_sta *pubsta,
			   struct ieee80211_sta_rates *rates);
static inline void ieee80211_sta_recalc_aggregates(struct ieee80211_sta *sta)
{
	(void)sta;
}

/* net/mac80211/sta_info.h and ieee80211_i.h: the two flags minstrel reads. */
struct ieee80211_vif {
	struct ieee80211_bss_conf bss_conf;
};
struct ieee80211_sub_if_data {
	struct ieee80211_vif vif;
};
enum ieee80211_sta_info_flags {
	WLAN_STA_SHORT_PREAMBLE = 4,
};
/* include/net/mac80211.h: struct ieee80211_rx_status, the fields airtime.c reads. */
enum mac80211_rx_encoding {
	RX_ENC_LEGACY = 0,
	RX_ENC_HT,
	RX_ENC_VHT,
	RX_ENC_HE,
	RX_ENC_EHT,
};
enum mac80211_rx_encoding_flags {
	RX_ENC_FLAG_SHORTPRE = BIT(0),
	RX_ENC_FLAG_SHORT_GI = BIT(2),
};
struct ieee80211_rx_status {
	u8 enc_flags;
	u8 encoding : 3, bw : 4;
	union {
		struct {
			u8 he_ru : 3;
			u8 he_gi : 2;
			u8 he_dcm : 1;
		};
		struct {
			u8 ru : 4;
			u8 gi : 2;
		} eht;
	};
	u8 rate_idx;
	u8 nss;
	u8 band;
};
/* net/mac80211/sta_info.h: struct link_sta_info's last reported tx rate. */
struct link_sta_info {
	struct {
		struct ieee80211_tx_rate last_rate;
		struct rate_info last_rate_info;
	} tx_stats;
};
struct sta_info {
	unsigned long _flags;
	struct ieee80211_sub_if_data *sdata;
	struct link_sta_info deflink;
	struct ieee80211_sta sta;
};
#define test_sta_flag(sta, flag) (!!((sta)->_flags & BIT(flag)))

/* The kernel's own helpers (extracted by build.rs). */
#include <kernel_helpers.h>

#endif
