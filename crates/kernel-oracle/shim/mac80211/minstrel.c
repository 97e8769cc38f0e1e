/* kernel-oracle: a small C API over the kernel's own net/mac80211/rc80211_minstrel_ht.c
 * (extracted from the installed Linux source at build time, never kept in the
 * repository), compiled whole in this translation unit against mac80211_shim.h. One
 * struct kmin is one hw (dual-band: a 2.4 GHz band of 4 CCK + 8 ERP-OFDM rates and a
 * 5 GHz band of 8 OFDM rates) with one station, driven as mac80211 drives it: rate_init
 * (minstrel_ht_update_caps), get_rate per frame, tx_status_ext per status. The Rust side
 * (src/minstrel.rs) declares the same structs. */
#include <mac80211_shim.h>
#include "rc80211_minstrel_ht.c"

_Thread_local unsigned long oracle_jiffies;

/* Never called: the harness installs the sample table txop drew (kmin_new). */
void get_random_bytes(void *buf, size_t len)
{
	memset(buf, 0, len);
	oracle_warnings++;
}

/* What the harness sets up (the Rust side fills it from txop's PeerCaps/HwRateCaps). */
struct kmin_params {
	u32 band;            /* NL80211_BAND_2GHZ or NL80211_BAND_5GHZ */
	u32 cck;             /* the peer receives CCK (supp_rates: the 4 CCK rates) */
	u32 ofdm;            /* the peer receives legacy OFDM (supp_rates) */
	u32 ht;              /* ht_cap.ht_supported */
	u32 vht;             /* vht_cap.vht_supported */
	u32 sgi;             /* SGI_20 | SGI_40 (HT), SHORT_GI_80 (VHT) */
	u32 bandwidth;       /* enum ieee80211_sta_rx_bandwidth */
	u32 nss;             /* spatial streams the peer receives */
	u32 short_preamble;  /* WLAN_STA_SHORT_PREAMBLE and bss_conf.use_short_preamble */
	u32 max_rates;       /* hw->max_rates */
	u32 max_rate_tries;  /* hw->max_rate_tries */
	u8 sample_table[SAMPLE_COLUMNS][MCS_GROUP_RATES];
};

/* One entry of sta->rates as minstrel_ht_update_rates set it. */
struct kmin_table_entry {
	s32 idx;
	u32 count, count_cts, count_rts, flags;
};

struct kmin_rate_view {
	u32 attempts, last_attempts, success, last_success;
	u32 att_hist, succ_hist;
	u32 prob_avg, prob_avg_1;
	u32 retry_count, retry_count_rtscts, retry_updated;
};

struct kmin_state_view {
	u32 max_tp_rate[MAX_THR_RATES];
	u32 max_prob_rate;
	u32 avg_ampdu_len;
	u32 sample_seq;
	u64 sample_time;
	u64 last_stats_update;
	u32 n_table;
	struct kmin_table_entry table[IEEE80211_TX_RATE_TABLE_SIZE];
	u32 sample_rates[__MINSTREL_SAMPLE_TYPE_MAX][MINSTREL_SAMPLE_RATES];
	u32 warnings;
};

struct kmin {
	struct ieee80211_rate rates_2g[12];
	struct ieee80211_rate rates_5g[8];
	struct ieee80211_supported_band sband[2];
	struct wiphy wiphy;
	struct ieee80211_hw hw;
	struct ieee80211_sub_if_data sdata;
	struct sta_info si;
	struct minstrel_priv *mp;
	struct minstrel_ht_sta *mi;
	struct ieee80211_sta_rates table;
	u32 table_updates;	/* rate_control_set_rates calls so far */
	u8 sample_table[SAMPLE_COLUMNS][MCS_GROUP_RATES];
	bool short_preamble;
};

int rate_control_set_rates(struct ieee80211_hw *hw, struct ieee80211_sta *pubsta,
			   struct ieee80211_sta_rates *rates)
{
	struct sta_info *si = container_of(pubsta, struct sta_info, sta);
	struct kmin *k = container_of(si, struct kmin, si);
	(void)hw;
	k->table = *rates;
	k->table_updates++;
	kfree(rates);
	return 0;
}

/* How many times minstrel has set the rate table so far: a caller that keeps the table
 * (crates/txop-kernel) reads it again (kmin_state) only when this moved. */
u32 kmin_table_updates(struct kmin *k)
{
	return k->table_updates;
}

/* The sample table is module-wide in the kernel; each kmin carries its own and
 * installs it before every call into minstrel (the Rust side serialises the calls). */
static void kmin_enter(struct kmin *k, u64 now_ns)
{
	memcpy(sample_table, k->sample_table, sizeof(sample_table));
	jiffies = (unsigned long)now_ns;
}

static const u16 kmin_ofdm_bitrates[8] = { 60, 90, 120, 180, 240, 360, 480, 540 };
static const u16 kmin_cck_bitrates[4] = { 10, 20, 55, 110 };

struct kmin *kmin_new(const struct kmin_params *p, u64 now_ns)
{
	struct kmin *k = calloc(1, sizeof(*k));
	struct ieee80211_link_sta *link = &k->si.sta.deflink;
	struct ieee80211_supported_band *sband;
	u32 nss;
	int i;

	if (!k)
		return NULL;
	memcpy(k->sample_table, p->sample_table, sizeof(k->sample_table));
	k->short_preamble = p->short_preamble;
	kmin_enter(k, now_ns);

	for (i = 0; i < 4; i++) {
		k->rates_2g[i].bitrate = kmin_cck_bitrates[i];
		/* 1 Mbit/s has no short preamble. The hw offers it on the others only
		 * when the BSS uses it: minstrel marks the short twins supported
		 * whenever the hw has them, and with a long-preamble BSS they are never
		 * sent or reported (txop leaves them out; docs/reference/kernel-oracle.md). */
		k->rates_2g[i].flags =
			i && p->short_preamble ? IEEE80211_RATE_SHORT_PREAMBLE : 0;
	}
	for (i = 0; i < 8; i++) {
		k->rates_2g[4 + i].bitrate = kmin_ofdm_bitrates[i];
		k->rates_2g[4 + i].flags = IEEE80211_RATE_ERP_G;
		k->rates_5g[i].bitrate = kmin_ofdm_bitrates[i];
	}
	k->sband[0] = (struct ieee80211_supported_band){
		.bitrates = k->rates_2g, .band = NL80211_BAND_2GHZ, .n_bitrates = 12
	};
	k->sband[1] = (struct ieee80211_supported_band){
		.bitrates = k->rates_5g, .band = NL80211_BAND_5GHZ, .n_bitrates = 8
	};
	k->wiphy.bands[NL80211_BAND_2GHZ] = &k->sband[0];
	k->wiphy.bands[NL80211_BAND_5GHZ] = &k->sband[1];
	k->hw.wiphy = &k->wiphy;
	k->hw.flags = BIT(IEEE80211_HW_SUPPORTS_HT_CCK_RATES);
	k->hw.max_rates = p->max_rates;
	k->hw.max_rate_tries = p->max_rate_tries;

	if (p->band == NL80211_BAND_2GHZ) {
		if (p->cck)
			link->supp_rates[NL80211_BAND_2GHZ] |= 0x00f;
		if (p->ofdm)
			link->supp_rates[NL80211_BAND_2GHZ] |= 0xff0;
	} else if (p->ofdm) {
		link->supp_rates[NL80211_BAND_5GHZ] = 0xff;
	}
	link->smps_mode = IEEE80211_SMPS_OFF;
	link->bandwidth = p->bandwidth;
	link->ht_cap.ht_supported = p->ht;
	if (p->sgi)
		link->ht_cap.cap |= IEEE80211_HT_CAP_SGI_20 | IEEE80211_HT_CAP_SGI_40;
	for (nss = 0; p->ht && nss < p->nss && nss < 4; nss++)
		link->ht_cap.mcs.rx_mask[nss] = 0xff;
	link->vht_cap.vht_supported = p->vht;
	if (p->vht) {
		u16 map = 0;
		if (p->sgi)
			link->vht_cap.cap |= IEEE80211_VHT_CAP_SHORT_GI_80;
		for (nss = 0; nss < 8; nss++)
			map |= (nss < p->nss ? IEEE80211_VHT_MCS_SUPPORT_0_9
					     : IEEE80211_VHT_MCS_NOT_SUPPORTED)
			       << (2 * nss);
		link->vht_cap.vht_mcs.tx_mcs_map = cpu_to_le16(map);
		link->vht_cap.vht_mcs.rx_mcs_map = cpu_to_le16(map);
	}
	k->sdata.vif.bss_conf.use_short_preamble = p->short_preamble;
	if (p->short_preamble)
		k->si._flags |= BIT(WLAN_STA_SHORT_PREAMBLE);
	k->si.sdata = &k->sdata;

	k->mp = mac80211_minstrel_ht.alloc(&k->hw);
	k->mi = mac80211_minstrel_ht.alloc_sta(k->mp, &k->si.sta, GFP_ATOMIC);
	if (!k->mp || !k->mi) {
		free(k->mp);
		free(k->mi);
		free(k);
		return NULL;
	}
	sband = &k->sband[p->band == NL80211_BAND_2GHZ ? 0 : 1];
	mac80211_minstrel_ht.rate_init(k->mp, sband, &k->hw.conf.chandef, &k->si.sta,
				       k->mi);
	return k;
}

void kmin_free(struct kmin *k)
{
	if (!k)
		return;
	mac80211_minstrel_ht.free_sta(k->mp, &k->si.sta, k->mi);
	mac80211_minstrel_ht.free(k->mp);
	free(k);
}

/* An independent copy of k in the same state (txop's cells are Clone; crates/txop-kernel
 * runs this code in scenarios): the struct and minstrel's two allocations copied, and
 * every pointer that pointed into k pointed into the copy. */
struct kmin *kmin_clone(const struct kmin *src)
{
	struct kmin *k = malloc(sizeof(*k));

	if (!k)
		return NULL;
	*k = *src;
	k->mp = malloc(sizeof(*k->mp));
	k->mi = malloc(sizeof(*k->mi));
	if (!k->mp || !k->mi) {
		free(k->mp);
		free(k->mi);
		free(k);
		return NULL;
	}
	*k->mp = *src->mp;
	*k->mi = *src->mi;
	k->mp->hw = &k->hw;
	k->mi->sta = &k->si.sta;
	k->sband[0].bitrates = k->rates_2g;
	k->sband[1].bitrates = k->rates_5g;
	k->wiphy.bands[NL80211_BAND_2GHZ] = &k->sband[0];
	k->wiphy.bands[NL80211_BAND_5GHZ] = &k->sband[1];
	k->hw.wiphy = &k->wiphy;
	k->si.sdata = &k->sdata;
	return k;
}

/* minstrel's number (MI_RATE) of a reported rate: the stats entry the kernel's own
 * lookup (minstrel_ht_get_stats) finds for it. */
static u32 kmin_mi_rate_of(struct kmin *k, struct ieee80211_tx_rate *r)
{
	struct minstrel_rate_stats *mrs = minstrel_ht_get_stats(k->mp, k->mi, r);
	u32 g;

	for (g = 0; g < MINSTREL_GROUPS_NB; g++) {
		struct minstrel_rate_stats *base = k->mi->groups[g].rates;
		if (mrs >= base && mrs < base + MCS_GROUP_RATES)
			return MI_RATE(g, mrs - base);
	}
	return 0xffff;
}

/* The ieee80211_tx_rate a driver reports for minstrel's rate `index`: idx and flags as
 * minstrel_ht_set_rate writes them, plus the short-preamble flag mac80211 adds to a CCK
 * rate sent with the short preamble (what minstrel_ht_get_stats reads back). */
static void kmin_tx_rate(struct kmin *k, u32 index, struct ieee80211_tx_rate *r)
{
	int group_idx = MI_RATE_GROUP(index);
	const struct mcs_group *group = &minstrel_mcs_groups[group_idx];
	u32 i = MI_RATE_IDX(index);
	u16 flags = group->flags;

	if (group_idx == MINSTREL_CCK_GROUP) {
		r->idx = k->mp->cck_rates[i % ARRAY_SIZE(k->mp->cck_rates)];
		if (i >= 4)
			flags |= IEEE80211_TX_RC_USE_SHORT_PREAMBLE;
	} else if (group_idx == MINSTREL_OFDM_GROUP) {
		r->idx = k->mp->ofdm_rates[k->mi->band][i % 8];
	} else if (flags & IEEE80211_TX_RC_VHT_MCS) {
		r->idx = ((group->streams - 1) << 4) | (i & 0xF);
	} else {
		r->idx = i + (group->streams - 1) * 8;
	}
	r->flags = flags;
}

/* Enters the kernel's code at now_ns with a fresh frame: no rates set (idx -1). */
static struct ieee80211_tx_info *kmin_frame(struct kmin *k, u64 now_ns,
					    struct sk_buff *skb)
{
	struct ieee80211_tx_info *info = IEEE80211_SKB_CB(skb);
	int i;

	kmin_enter(k, now_ns);
	memset(skb, 0, sizeof(*skb));
	for (i = 0; i < IEEE80211_TX_MAX_RATES; i++)
		info->status.rates[i].idx = -1;
	return info;
}

/* minstrel_ht_get_rate for the next frame at now_ns: returns 1 and the sample rate
 * (MI_RATE) in *sample when minstrel marks the frame as a probe, else 0. */
u32 kmin_get_rate(struct kmin *k, u64 now_ns, u32 *sample)
{
	struct sk_buff skb;
	struct ieee80211_tx_info *info = kmin_frame(k, now_ns, &skb);
	struct ieee80211_tx_rate_control txrc = { 0 };

	txrc.hw = &k->hw;
	txrc.skb = &skb;
	txrc.short_preamble = k->short_preamble;
	mac80211_minstrel_ht.get_rate(k->mp, &k->si.sta, k->mi, &txrc);
	if (!(info->flags & IEEE80211_TX_CTL_RATE_CTRL_PROBE))
		return 0;
	if (info->status.rates[0].count != 1)
		oracle_warnings++;
	*sample = kmin_mi_rate_of(k, &info->status.rates[0]);
	/* A CCK probe goes out with the BSS's preamble (get_rate checked it matches). */
	if (MI_RATE_GROUP(*sample) == MINSTREL_CCK_GROUP && k->short_preamble &&
	    (k->mi->supported[MINSTREL_CCK_GROUP] & BIT(MI_RATE_IDX(*sample) + 4)))
		*sample += 4;
	return 1;
}

/* minstrel_ht_tx_status for one PPDU at now_ns: stage s was tried counts[s] times at
 * rates[s] (MI_RATE), the first stage with 0 tries ends the chain; ampdu_len MPDUs,
 * ampdu_ack_len of them acknowledged (reported as an A-MPDU status). */
void kmin_tx_status(struct kmin *k, u64 now_ns, const u32 *rates, const u32 *counts,
		    u32 n, u32 ampdu_len, u32 ampdu_ack_len, u32 probe)
{
	struct sk_buff skb;
	struct ieee80211_tx_info *info = kmin_frame(k, now_ns, &skb);
	struct ieee80211_tx_status st = { 0 };
	u32 i;

	for (i = 0; i < n && i < IEEE80211_TX_MAX_RATES && counts[i]; i++) {
		kmin_tx_rate(k, rates[i], &info->status.rates[i]);
		info->status.rates[i].count = counts[i];
	}
	info->flags = IEEE80211_TX_CTL_AMPDU | IEEE80211_TX_STAT_AMPDU;
	if (probe)
		info->flags |= IEEE80211_TX_CTL_RATE_CTRL_PROBE;
	info->status.ampdu_len = ampdu_len;
	info->status.ampdu_ack_len = ampdu_ack_len;
	st.sta = &k->si.sta;
	st.info = info;
	st.skb = &skb;
	mac80211_minstrel_ht.tx_status_ext(k->mp, &k->sband[k->mi->band ? 1 : 0],
					   k->mi, &st);
}

/* The kernel's state after the last call: the rates chosen, the rate table (entries
 * translated to MI_RATE through minstrel's own lookup, flags as set), the sample lists. */
void kmin_state(struct kmin *k, struct kmin_state_view *v)
{
	u32 i, t;

	memset(v, 0, sizeof(*v));
	for (i = 0; i < MAX_THR_RATES; i++)
		v->max_tp_rate[i] = k->mi->max_tp_rate[i];
	v->max_prob_rate = k->mi->max_prob_rate;
	v->avg_ampdu_len = k->mi->avg_ampdu_len;
	v->sample_seq = k->mi->sample_seq;
	v->sample_time = k->mi->sample_time;
	v->last_stats_update = k->mi->last_stats_update;
	for (i = 0; i < IEEE80211_TX_RATE_TABLE_SIZE; i++) {
		struct ieee80211_tx_rate r;
		if (k->table.rate[i].idx < 0)
			break;
		r.idx = k->table.rate[i].idx;
		r.flags = k->table.rate[i].flags;
		r.count = 1;
		v->table[i].idx = kmin_mi_rate_of(k, &r);
		v->table[i].count = k->table.rate[i].count;
		v->table[i].count_cts = k->table.rate[i].count_cts;
		v->table[i].count_rts = k->table.rate[i].count_rts;
		v->table[i].flags = k->table.rate[i].flags;
		v->n_table = i + 1;
	}
	for (t = 0; t < __MINSTREL_SAMPLE_TYPE_MAX; t++)
		for (i = 0; i < MINSTREL_SAMPLE_RATES; i++)
			v->sample_rates[t][i] = k->mi->sample[t].sample_rates[i];
	v->warnings = oracle_warnings;
}

/* minstrel's statistics of rate `index` (MI_RATE). */
void kmin_rate(struct kmin *k, u32 index, struct kmin_rate_view *v)
{
	struct minstrel_rate_stats *mrs = minstrel_get_ratestats(k->mi, index);

	v->attempts = mrs->attempts;
	v->last_attempts = mrs->last_attempts;
	v->success = mrs->success;
	v->last_success = mrs->last_success;
	v->att_hist = mrs->att_hist;
	v->succ_hist = mrs->succ_hist;
	v->prob_avg = mrs->prob_avg;
	v->prob_avg_1 = mrs->prob_avg_1;
	v->retry_count = mrs->retry_count;
	v->retry_count_rtscts = mrs->retry_count_rtscts;
	v->retry_updated = mrs->retry_updated;
}

/* mi->supported[group]. */
u32 kmin_supported(struct kmin *k, u32 group)
{
	return group < MINSTREL_GROUPS_NB ? k->mi->supported[group] : 0;
}

/* minstrel_ht_get_expected_throughput. */
u32 kmin_expected_throughput(struct kmin *k)
{
	return mac80211_minstrel_ht.get_expected_throughput(k->mi);
}
