/* kernel-oracle: a small C API over the kernel's own net/mac80211/airtime.c (extracted
 * from the installed Linux source at build time, never kept in the repository),
 * compiled whole in this translation unit against mac80211_shim.h: the expected airtime
 * of a packet to a station (ieee80211_calc_expected_tx_airtime, from the station's last
 * reported tx rate), the received airtime (ieee80211_calc_rx_airtime), the rate table
 * lookup (ieee80211_get_rate_duration), the legacy formula and the 10-bit store of the
 * estimate (ieee80211_info_set_tx_time_est). The hw is dual-band: 2.4 GHz with 4 CCK
 * (IEEE80211_RATE_MANDATORY_B) + 8 ERP-OFDM rates, 5 GHz with 8 OFDM rates. The Rust
 * side (src/airtime.rs) declares the same struct. */
#include <mac80211_shim.h>
#include <ieee80211_i.h>
#include "airtime.c"

/* A rate as a driver reports it (struct ieee80211_tx_rate, as txop's TxVector maps;
 * HE rates as the struct rate_info that is their only form, sta's last_rate_info). */
struct kair_rate {
	u32 band;      /* NL80211_BAND_2GHZ or _5GHZ */
	u32 encoding;  /* 0 legacy, 1 HT, 2 VHT, 3 HE */
	u32 idx;       /* legacy: index in the band's bitrates; HT: MCS 0-31; VHT/HE: MCS */
	u32 nss;       /* VHT/HE streams */
	u32 width_mhz; /* 20, 40, 80, 160 (HE) */
	u32 sgi;
	u32 short_preamble;
	u32 he_gi;     /* HE: NL80211_RATE_INFO_HE_GI_0_8, _1_6, _3_2 (0, 1, 2) */
};

/* The rate_info a driver reports for an HE rate (mt76, ath11k: status->rates). */
static void kair_rate_info(const struct kair_rate *r, struct rate_info *ri)
{
	memset(ri, 0, sizeof(*ri));
	ri->flags = RATE_INFO_FLAGS_HE_MCS;
	ri->mcs = r->idx;
	ri->nss = r->nss;
	ri->he_gi = r->he_gi;
	switch (r->width_mhz) {
	case 40:
		ri->bw = RATE_INFO_BW_40;
		break;
	case 80:
		ri->bw = RATE_INFO_BW_80;
		break;
	case 160:
		ri->bw = RATE_INFO_BW_160;
		break;
	default:
		ri->bw = RATE_INFO_BW_20;
		break;
	}
}

static _Thread_local struct {
	struct ieee80211_rate rates_2g[12];
	struct ieee80211_rate rates_5g[8];
	struct ieee80211_supported_band sband[2];
	struct wiphy wiphy;
	struct ieee80211_hw hw;
	bool ready;
} kair;

static const u16 kair_ofdm[8] = { 60, 90, 120, 180, 240, 360, 480, 540 };
static const u16 kair_cck[4] = { 10, 20, 55, 110 };

static struct ieee80211_hw *kair_hw(void)
{
	int i;

	if (kair.ready)
		return &kair.hw;
	for (i = 0; i < 4; i++) {
		kair.rates_2g[i].bitrate = kair_cck[i];
		kair.rates_2g[i].flags = IEEE80211_RATE_MANDATORY_B |
					 (i ? IEEE80211_RATE_SHORT_PREAMBLE : 0);
	}
	for (i = 0; i < 8; i++) {
		kair.rates_2g[4 + i].bitrate = kair_ofdm[i];
		kair.rates_2g[4 + i].flags = IEEE80211_RATE_ERP_G;
		kair.rates_5g[i].bitrate = kair_ofdm[i];
	}
	kair.sband[0] = (struct ieee80211_supported_band){
		.bitrates = kair.rates_2g, .band = NL80211_BAND_2GHZ, .n_bitrates = 12
	};
	kair.sband[1] = (struct ieee80211_supported_band){
		.bitrates = kair.rates_5g, .band = NL80211_BAND_5GHZ, .n_bitrates = 8
	};
	kair.wiphy.bands[NL80211_BAND_2GHZ] = &kair.sband[0];
	kair.wiphy.bands[NL80211_BAND_5GHZ] = &kair.sband[1];
	kair.hw.wiphy = &kair.wiphy;
	kair.ready = true;
	return &kair.hw;
}

/* The ieee80211_tx_rate a driver reports for `r` (count 1). */
static void kair_tx_rate(const struct kair_rate *r, struct ieee80211_tx_rate *t)
{
	u16 flags = 0;

	if (r->width_mhz == 40)
		flags |= IEEE80211_TX_RC_40_MHZ_WIDTH;
	else if (r->width_mhz == 80)
		flags |= IEEE80211_TX_RC_80_MHZ_WIDTH;
	if (r->sgi)
		flags |= IEEE80211_TX_RC_SHORT_GI;
	if (r->short_preamble)
		flags |= IEEE80211_TX_RC_USE_SHORT_PREAMBLE;
	switch (r->encoding) {
	case 1:
		flags |= IEEE80211_TX_RC_MCS;
		t->idx = r->idx;
		break;
	case 2:
		flags |= IEEE80211_TX_RC_VHT_MCS;
		ieee80211_rate_set_vht(t, r->idx, r->nss);
		break;
	default:
		t->idx = r->idx;
		break;
	}
	t->flags = flags;
	t->count = 1;
}

/* ieee80211_calc_expected_tx_airtime for a station whose last reported tx rate is `r`,
 * in a BSS on r->band. */
u32 kair_expected(const struct kair_rate *r, int len, u32 ampdu)
{
	struct ieee80211_channel chan = { .band = r->band };
	struct ieee80211_chanctx_conf conf = { .def = { .chan = &chan } };
	struct ieee80211_vif vif = { 0 };
	struct sta_info si;

	memset(&si, 0, sizeof(si));
	vif.bss_conf.chanctx_conf = &conf;
	if (r->encoding == 3)
		kair_rate_info(r, &si.deflink.tx_stats.last_rate_info);
	else
		kair_tx_rate(r, &si.deflink.tx_stats.last_rate);
	return ieee80211_calc_expected_tx_airtime(kair_hw(), &vif, &si.sta, len, ampdu);
}

/* ieee80211_calc_rx_airtime of a frame of `len` bytes received at `r` (the rx status
 * ieee80211_fill_rx_status makes of the rate). */
u32 kair_rx(const struct kair_rate *r, int len)
{
	struct ieee80211_tx_rate t;
	struct ieee80211_rx_status stat;
	struct rate_info ri;

	kair_tx_rate(r, &t);
	kair_rate_info(r, &ri);
	if (ieee80211_fill_rx_status(&stat, kair_hw(), &t, r->encoding == 3 ? &ri : NULL,
				     r->band, len))
		return 0;
	return ieee80211_calc_rx_airtime(kair_hw(), &stat, len);
}

/* ieee80211_get_rate_duration: the 1024-byte duration (1/1024 us) and the overhead. */
u32 kair_rate_duration(const struct kair_rate *r, u32 *overhead)
{
	struct ieee80211_tx_rate t;
	struct ieee80211_rx_status stat;
	struct rate_info ri;

	*overhead = 0;
	kair_tx_rate(r, &t);
	kair_rate_info(r, &ri);
	if (ieee80211_fill_rx_status(&stat, kair_hw(), &t, r->encoding == 3 ? &ri : NULL,
				     r->band, 0) ||
	    stat.encoding == RX_ENC_LEGACY)
		return 0;
	return ieee80211_get_rate_duration(kair_hw(), &stat, overhead);
}

/* ieee80211_info_set_tx_time_est as the AQL path calls it: with the u32 estimate,
 * which the u16 parameter truncates. */
u32 kair_set_tx_time_est(u32 est)
{
	struct ieee80211_tx_info info;

	memset(&info, 0, sizeof(info));
	return ieee80211_info_set_tx_time_est(&info, est);
}

/* WARN_ON_ONCEs fired in airtime.c so far (this thread). */
u32 kair_warnings(void)
{
	return oracle_warnings;
}
