/* kernel-oracle shim for mac80211's TXQ scheduler and AQL accounting (6.12): the
 * structs and helpers the kernel's functions read, cut down to the fields they touch,
 * for a user-space build. The functions themselves are the kernel's, extracted by
 * build.rs from the installed source into sched_kernel.h:
 *   net/mac80211/tx.c: ieee80211_sta_deficit, ieee80211_txq_set_active,
 *     ieee80211_txq_keep_active, ieee80211_next_txq, __ieee80211_schedule_txq,
 *     ieee80211_txq_airtime_check, ieee80211_txq_schedule_airtime_check,
 *     ieee80211_txq_may_transmit, ieee80211_txq_schedule_start;
 *   net/mac80211/sta_info.c: ieee80211_sta_register_airtime,
 *     ieee80211_sta_update_pending_airtime;
 *   net/mac80211/ieee80211_i.h: ieee80211_sta_keep_active, hw_to_local, to_txq_info,
 *     txq_has_queue, ieee80211_ac_from_tid;
 *   net/mac80211/wme.c: ieee802_1d_to_ac;
 *   include/net/mac80211.h: ieee80211_schedule_txq, ieee80211_return_txq.
 * What is the shim's own (not extracted, because it sits inside functions that do far
 * more): the part of sta_info_alloc that initialises the airtime state (deficit =
 * weight = IEEE80211_DEFAULT_AIRTIME_WEIGHT, the AQL limits copied from the radio's),
 * the part of ieee80211_alloc_hw_nm that sets the radio's defaults (main.c), the
 * list_del_init of sta_ps_start (rx.c), `airtime_weight` as sta_apply_parameters
 * (cfg.c) sets it, and the debugfs writes (aql_enable's static key, aql_threshold, a
 * station's `aql limit`). The clock: jiffies run at HZ = 10^9 (one jiffy a nanosecond),
 * offset by the caller so that a `last_active` of 0 is long ago, as on a running
 * system. */
/* The fixed-width types, container_of and include/linux/list.h's list, as the fq shim
 * has them. */
#include <linux/types.h>

#define BIT(n) (1UL << (n))
#define EXPORT_SYMBOL(s)

/* WARN_ONCE: counted per thread (the kernel would log it once). */
static _Thread_local u32 ksched_warnings;
#define WARN_ONCE(cond, ...)                                                   \
	({                                                                     \
		int __c = !!(cond);                                            \
		if (__c)                                                       \
			ksched_warnings++;                                     \
		__c;                                                           \
	})

/* The rest of include/linux/list.h that the scheduler uses. */
#define list_first_entry_or_null(head, type, member)                           \
	(list_empty(head) ? NULL : list_entry((head)->next, type, member))
#define list_for_each_entry_safe(pos, n, head, member)                         \
	for (pos = list_entry((head)->next, __typeof__(*pos), member),         \
	    n = list_entry(pos->member.next, __typeof__(*pos), member);        \
	     &pos->member != (head);                                           \
	     pos = n, n = list_entry(n->member.next, __typeof__(*n), member))

/* Atomics and locks: one thread. */
typedef struct {
	int counter;
} atomic_t;
#define atomic_read(v) ((v)->counter)
#define atomic_set(v, i) ((v)->counter = (i))
#define atomic_add(i, v) ((v)->counter += (int)(i))
#define atomic_sub(i, v) ((v)->counter -= (int)(i))
#define atomic_sub_return(i, v) ((v)->counter -= (int)(i))
static inline int atomic_cmpxchg(atomic_t *v, int old, int new)
{
	int cur = v->counter;
	if (cur == old)
		v->counter = new;
	return cur;
}
typedef int spinlock_t;
#define spin_lock_bh(l) ((void)(l))
#define spin_unlock_bh(l) ((void)(l))

/* The clock. */
#define HZ 1000000000UL
static _Thread_local unsigned long jiffies;
#define time_after(a, b) ((long)((b) - (a)) < 0)
#define time_before_eq(a, b) ((long)((a) - (b)) <= 0)

/* Static keys (include/linux/jump_label.h): a flag. */
struct static_key_false {
	bool enabled;
};
#define DEFINE_STATIC_KEY_FALSE(name) static _Thread_local struct static_key_false name
#define static_branch_unlikely(k) ((k)->enabled)

static inline int test_bit(int nr, const unsigned long *addr)
{
	return (*addr >> nr) & 1;
}

/* cfg80211 */
enum nl80211_ext_feature_index {
	NL80211_EXT_FEATURE_AIRTIME_FAIRNESS,
	NL80211_EXT_FEATURE_AQL,
};
struct wiphy {
	unsigned long ext_features;
};
static inline bool wiphy_ext_feature_isset(struct wiphy *w, int f)
{
	return (w->ext_features >> f) & 1;
}
#define wiphy_name(w) "oracle"
#define IEEE80211_NUM_TIDS 16
#define IEEE80211_NUM_ACS 4
#define IEEE80211_DEFAULT_AIRTIME_WEIGHT 256
enum ieee80211_ac_numbers {
	IEEE80211_AC_VO = 0,
	IEEE80211_AC_VI = 1,
	IEEE80211_AC_BE = 2,
	IEEE80211_AC_BK = 3,
};
#define AIRTIME_USE_TX BIT(0)
#define AIRTIME_USE_RX BIT(1)

/* mac80211 */
struct sk_buff_head {
	u32 qlen;
};
static inline int skb_queue_empty(const struct sk_buff_head *l)
{
	return l->qlen == 0;
}
struct ieee80211_sta {
	u8 unused;
};
struct ieee80211_txq {
	struct ieee80211_sta *sta;
	u8 tid;
	u8 ac;
};
enum txq_info_flags {
	IEEE80211_TXQ_STOP,
};
struct txq_info {
	struct {
		u32 backlog_packets;
	} tin;
	struct sk_buff_head frags;
	unsigned long flags;
	struct list_head schedule_order;
	u16 schedule_round;
	struct ieee80211_txq txq;
};
struct ieee80211_hw {
	struct wiphy *wiphy;
};
struct ieee80211_local {
	struct ieee80211_hw hw;
	u32 airtime_flags;
	u32 aql_txq_limit_low[IEEE80211_NUM_ACS];
	u32 aql_txq_limit_high[IEEE80211_NUM_ACS];
	u32 aql_threshold;
	atomic_t aql_total_pending_airtime;
	atomic_t aql_ac_pending_airtime[IEEE80211_NUM_ACS];
	spinlock_t active_txq_lock[IEEE80211_NUM_ACS];
	struct list_head active_txqs[IEEE80211_NUM_ACS];
	u16 schedule_round[IEEE80211_NUM_ACS];
};
struct ieee80211_sub_if_data {
	struct ieee80211_local *local;
};
struct airtime_info {
	u64 rx_airtime;
	u64 tx_airtime;
	unsigned long last_active;
	s32 deficit;
	atomic_t aql_tx_pending;
	u32 aql_limit_low;
	u32 aql_limit_high;
};
struct sta_info {
	struct ieee80211_local *local;
	struct ieee80211_sub_if_data *sdata;
	struct ieee80211_sta sta;
	struct airtime_info airtime[IEEE80211_NUM_ACS];
	u16 airtime_weight;
};

/* Their declarations in include/net/mac80211.h and sta_info.h. */
bool ieee80211_txq_airtime_check(struct ieee80211_hw *hw, struct ieee80211_txq *txq);
void ieee80211_sta_update_pending_airtime(struct ieee80211_local *local,
					  struct sta_info *sta, u8 ac,
					  u16 tx_airtime, bool tx_completed);

/* The kernel's functions (and ieee802_1d_to_ac). */
#include "sched_kernel.h"

/* ---- The harness's interface. ---- */

/* TIDs 0..7 per station (what txop uses); the vif TXQ is TID 0 on BE. */
#define KSCHED_TIDS 8

struct ksched_sta {
	struct sta_info sta;
	struct txq_info txqs[KSCHED_TIDS];
};

struct ksched {
	struct wiphy wiphy;
	struct ieee80211_sub_if_data sdata;
	struct ieee80211_local local;
	struct txq_info vif_txq;
	struct ksched_sta **stas;
	u32 n_stas;
	/* Stand-ins for another scheduler's active TXQs (ksched_ac_airtime_ok). */
	struct txq_info *stand_ins;
	u32 n_stand_ins;
};

struct ksched_sta_view {
	s32 deficit;
	s32 aql_tx_pending;
	u32 aql_limit_low;
	u32 aql_limit_high;
	u64 tx_airtime;
	u64 rx_airtime;
	u32 eligible;
};

struct ksched_ac_view {
	u32 schedule_round;
	s32 ac_pending;
	u32 active_txqs;
	u32 schedule_airtime_ok;
};

static void ksched_txq_init(struct txq_info *t, struct ieee80211_sta *sta, u8 tid,
			    u8 ac)
{
	memset(t, 0, sizeof(*t));
	INIT_LIST_HEAD(&t->schedule_order);
	t->txq.sta = sta;
	t->txq.tid = tid;
	t->txq.ac = ac;
}

/* ieee80211_alloc_hw_nm's defaults (main.c), with the given limits. */
struct ksched *ksched_new(u32 airtime_flags, u32 aql, const u32 *low, const u32 *high,
			  u32 threshold)
{
	struct ksched *k = calloc(1, sizeof(*k));
	int i;

	k->wiphy.ext_features = BIT(NL80211_EXT_FEATURE_AIRTIME_FAIRNESS);
	if (aql)
		k->wiphy.ext_features |= BIT(NL80211_EXT_FEATURE_AQL);
	k->local.hw.wiphy = &k->wiphy;
	k->sdata.local = &k->local;
	for (i = 0; i < IEEE80211_NUM_ACS; i++) {
		INIT_LIST_HEAD(&k->local.active_txqs[i]);
		k->local.aql_txq_limit_low[i] = low[i];
		k->local.aql_txq_limit_high[i] = high[i];
	}
	k->local.airtime_flags = airtime_flags;
	k->local.aql_threshold = threshold;
	ksched_txq_init(&k->vif_txq, NULL, 0, IEEE80211_AC_BE);
	aql_disable.enabled = false;
	ksched_warnings = 0;
	return k;
}

void ksched_free(struct ksched *k)
{
	u32 i;
	for (i = 0; i < k->n_stas; i++)
		free(k->stas[i]);
	free(k->stas);
	free(k->stand_ins);
	free(k);
}

/* sta_info_alloc's airtime part; the TXQs as ieee80211_txq_init sets them. */
u32 ksched_add_sta(struct ksched *k)
{
	struct ksched_sta *s = calloc(1, sizeof(*s));
	int i;

	s->sta.local = &k->local;
	s->sta.sdata = &k->sdata;
	s->sta.airtime_weight = IEEE80211_DEFAULT_AIRTIME_WEIGHT;
	for (i = 0; i < IEEE80211_NUM_ACS; i++) {
		s->sta.airtime[i].deficit = s->sta.airtime_weight;
		atomic_set(&s->sta.airtime[i].aql_tx_pending, 0);
		s->sta.airtime[i].aql_limit_low = k->local.aql_txq_limit_low[i];
		s->sta.airtime[i].aql_limit_high = k->local.aql_txq_limit_high[i];
	}
	for (i = 0; i < KSCHED_TIDS; i++)
		ksched_txq_init(&s->txqs[i], &s->sta.sta, i, ieee80211_ac_from_tid(i));
	k->stas = realloc(k->stas, (k->n_stas + 1) * sizeof(*k->stas));
	k->stas[k->n_stas] = s;
	return k->n_stas++;
}

static struct txq_info *ksched_txq(struct ksched *k, int sta, u32 tid)
{
	if (sta < 0)
		return &k->vif_txq;
	return &k->stas[sta]->txqs[tid];
}

static void ksched_clock(u64 now)
{
	jiffies = (unsigned long)now;
}

/* A packet queued: the tin's backlog grows and ieee80211_queue_skb's
 * schedule_and_wake_txq calls ieee80211_schedule_txq. */
void ksched_enqueue(struct ksched *k, u64 now, int sta, u32 tid)
{
	struct txq_info *t = ksched_txq(k, sta, tid);
	ksched_clock(now);
	t->tin.backlog_packets++;
	ieee80211_schedule_txq(&k->local.hw, &t->txq);
}

void ksched_schedule_start(struct ksched *k, u64 now, u32 ac)
{
	ksched_clock(now);
	ieee80211_txq_schedule_start(&k->local.hw, ac);
}

/* ieee80211_next_txq: 1 and the TXQ, or 0. */
int ksched_next_txq(struct ksched *k, u64 now, u32 ac, int *sta, u32 *tid)
{
	struct ieee80211_txq *txq;
	u32 i;
	ksched_clock(now);
	txq = ieee80211_next_txq(&k->local.hw, ac);
	if (!txq)
		return 0;
	*tid = txq->tid;
	*sta = -1;
	for (i = 0; i < k->n_stas; i++)
		if (txq->sta == &k->stas[i]->sta.sta)
			*sta = i;
	return 1;
}

/* ieee80211_tx_dequeue's AQL part: one packet leaves the tin; a non-zero stored
 * estimate is charged (ieee80211_sta_update_pending_airtime, tx_completed false). */
void ksched_dequeue(struct ksched *k, u64 now, int sta, u32 tid, u32 airtime)
{
	struct txq_info *t = ksched_txq(k, sta, tid);
	ksched_clock(now);
	if (t->tin.backlog_packets)
		t->tin.backlog_packets--;
	if (airtime)
		ieee80211_sta_update_pending_airtime(&k->local,
						     sta < 0 ? NULL : &k->stas[sta]->sta,
						     t->txq.ac, airtime, false);
}

void ksched_return_txq(struct ksched *k, u64 now, int sta, u32 tid, u32 force)
{
	ksched_clock(now);
	ieee80211_return_txq(&k->local.hw, &ksched_txq(k, sta, tid)->txq, force);
}

u32 ksched_may_transmit(struct ksched *k, u64 now, int sta, u32 tid)
{
	ksched_clock(now);
	return ieee80211_txq_may_transmit(&k->local.hw, &ksched_txq(k, sta, tid)->txq);
}

/* A tx status: ieee80211_sta_update_pending_airtime(.., tx_completed true). */
void ksched_complete(struct ksched *k, u64 now, u32 sta, u32 ac, u32 airtime)
{
	ksched_clock(now);
	ieee80211_sta_update_pending_airtime(&k->local, &k->stas[sta]->sta, ac, airtime,
					     true);
}

void ksched_register_airtime(struct ksched *k, u64 now, u32 sta, u32 tid, u32 tx,
			     u32 rx)
{
	ksched_clock(now);
	ieee80211_sta_register_airtime(&k->stas[sta]->sta.sta, tid, tx, rx);
}

/* sta_apply_parameters (cfg.c): `if (params->airtime_weight) sta->airtime_weight =
 * params->airtime_weight;`. */
void ksched_set_weight(struct ksched *k, u32 sta, u16 weight)
{
	if (weight)
		k->stas[sta]->sta.airtime_weight = weight;
}

/* sta_ps_start (rx.c): every TXQ of the station leaves its active list. */
void ksched_ps_start(struct ksched *k, u32 sta)
{
	int i;
	for (i = 0; i < KSCHED_TIDS; i++) {
		struct txq_info *t = &k->stas[sta]->txqs[i];
		if (!list_empty(&t->schedule_order))
			list_del_init(&t->schedule_order);
	}
}

/* debugfs aql_enable (0 sets the aql_disable key). */
void ksched_set_aql_enable(struct ksched *k, u32 on)
{
	(void)k;
	aql_disable.enabled = !on;
}

/* debugfs aql_threshold. */
void ksched_set_threshold(struct ksched *k, u32 threshold)
{
	k->local.aql_threshold = threshold;
}

/* The station's debugfs `aql` write "limit <ac> <low> <high>". */
void ksched_set_sta_limits(struct ksched *k, u32 sta, u32 ac, u32 low, u32 high)
{
	k->stas[sta]->sta.airtime[ac].aql_limit_low = low;
	k->stas[sta]->sta.airtime[ac].aql_limit_high = high;
}

void ksched_sta_view(struct ksched *k, u32 sta, u32 ac, struct ksched_sta_view *v)
{
	struct ksched_sta *s = k->stas[sta];
	struct airtime_info *a = &s->sta.airtime[ac];
	u32 tid;

	v->deficit = a->deficit;
	v->aql_tx_pending = atomic_read(&a->aql_tx_pending);
	v->aql_limit_low = a->aql_limit_low;
	v->aql_limit_high = a->aql_limit_high;
	v->tx_airtime = a->tx_airtime;
	v->rx_airtime = a->rx_airtime;
	v->eligible = 0;
	for (tid = 0; tid < KSCHED_TIDS; tid++)
		if (s->txqs[tid].txq.ac == ac) {
			v->eligible = ieee80211_txq_airtime_check(&k->local.hw,
								  &s->txqs[tid].txq);
			break;
		}
}

void ksched_ac_view(struct ksched *k, u32 ac, struct ksched_ac_view *v)
{
	struct txq_info *t;
	v->schedule_round = k->local.schedule_round[ac];
	v->ac_pending = atomic_read(&k->local.aql_ac_pending_airtime[ac]);
	v->active_txqs = 0;
	list_for_each_entry(t, &k->local.active_txqs[ac], schedule_order)
		v->active_txqs++;
	v->schedule_airtime_ok = ieee80211_txq_schedule_airtime_check(&k->local, ac);
}

s32 ksched_total_pending(struct ksched *k)
{
	return atomic_read(&k->local.aql_total_pending_airtime);
}

/* Whether the TXQ is on its active list. */
u32 ksched_listed(struct ksched *k, int sta, u32 tid)
{
	return !list_empty(&ksched_txq(k, sta, tid)->schedule_order);
}

/* The AC's active list in order, as (station, tid) pairs (station -1: the vif);
 * returns its length (at most `max`). */
u32 ksched_active_list(struct ksched *k, u32 ac, int *stas, u32 *tids, u32 max)
{
	struct txq_info *t;
	u32 n = 0, i;
	list_for_each_entry(t, &k->local.active_txqs[ac], schedule_order) {
		if (n == max)
			break;
		stas[n] = -1;
		for (i = 0; i < k->n_stas; i++)
			if (t->txq.sta == &k->stas[i]->sta.sta)
				stas[n] = i;
		tids[n] = t->txq.tid;
		n++;
	}
	return n;
}

u32 ksched_ac_from_tid(u32 tid)
{
	return ieee80211_ac_from_tid(tid);
}

u32 ksched_warning_count(void)
{
	return ksched_warnings;
}

/* ieee80211_txq_schedule_airtime_check(local, ac) when another scheduler (txop's)
 * keeps the active list: the AC's list holds `n` stand-in TXQs for the call, and is
 * empty again after it. 1: the round may go on. */
u32 ksched_ac_airtime_ok(struct ksched *k, u32 ac, u32 n)
{
	u32 i, ok;

	if (n > k->n_stand_ins) {
		k->stand_ins = realloc(k->stand_ins, n * sizeof(k->stand_ins[0]));
		k->n_stand_ins = n;
	}
	for (i = 0; i < n; i++)
		list_add_tail(&k->stand_ins[i].schedule_order, &k->local.active_txqs[ac]);
	ok = ieee80211_txq_schedule_airtime_check(&k->local, ac);
	INIT_LIST_HEAD(&k->local.active_txqs[ac]);
	return ok;
}

/* The radio's default limits on `ac` (local->aql_txq_limit_{low,high}[ac]; what
 * debugfs aql_txq_limit writes before moving the stations on the old pair). */
void ksched_set_radio_limits(struct ksched *k, u32 ac, u32 low, u32 high)
{
	k->local.aql_txq_limit_low[ac] = low;
	k->local.aql_txq_limit_high[ac] = high;
}

/* An independent copy of a radio whose active lists are empty (AQL alone: only its
 * counters and limits are state), every pointer moved to the copy's. */
struct ksched *ksched_clone(const struct ksched *k)
{
	struct ksched *n = malloc(sizeof(*n));
	u32 i, t;
	int ac;

	*n = *k;
	n->local.hw.wiphy = &n->wiphy;
	n->sdata.local = &n->local;
	for (ac = 0; ac < IEEE80211_NUM_ACS; ac++)
		INIT_LIST_HEAD(&n->local.active_txqs[ac]);
	INIT_LIST_HEAD(&n->vif_txq.schedule_order);
	n->stand_ins = NULL;
	n->n_stand_ins = 0;
	n->stas = malloc(k->n_stas * sizeof(n->stas[0]));
	for (i = 0; i < k->n_stas; i++) {
		struct ksched_sta *s = malloc(sizeof(*s));

		*s = *k->stas[i];
		s->sta.local = &n->local;
		s->sta.sdata = &n->sdata;
		for (t = 0; t < KSCHED_TIDS; t++) {
			INIT_LIST_HEAD(&s->txqs[t].schedule_order);
			s->txqs[t].txq.sta = &s->sta.sta;
		}
		n->stas[i] = s;
	}
	return n;
}

/* ieee80211_sta_update_pending_airtime for station `sta` on `ac` (a dequeue's charge,
 * or a completion's release). */
void ksched_update_pending(struct ksched *k, u64 now, u32 sta, u32 ac, u32 airtime,
			   u32 completed)
{
	ksched_clock(now);
	ieee80211_sta_update_pending_airtime(&k->local, &k->stas[sta]->sta, ac, airtime,
					     completed != 0);
}

/* ieee80211_txq_airtime_check for station `sta`'s TXQs on `ac`. */
u32 ksched_airtime_check(struct ksched *k, u32 sta, u32 ac)
{
	struct ksched_sta *s = k->stas[sta];
	u32 tid;

	for (tid = 0; tid < KSCHED_TIDS; tid++)
		if (s->txqs[tid].txq.ac == ac)
			return ieee80211_txq_airtime_check(&k->local.hw, &s->txqs[tid].txq);
	return 1;
}

/* ---- The scheduler as a scenario runs it (txop-kernel's `scheduler` unit). ----
 * txop keeps the TXQs' packets and AQL (its own, or the `aql` unit's radio): every
 * TXQ's backlog here stays 0, so that `force` alone says whether a TXQ has data
 * (ieee80211_schedule_txq forces; ieee80211_return_txq is forced by the caller with
 * "it has data"), and the AQL values the scheduler's functions read are set before
 * each call that reads them (ksched_set_aql_view, ksched_set_ac_over). */

/* The AC of a TXQ as the caller files it (txop files every TID of a non-QoS station
 * under BE; ieee80211_txq_init would take the TID's). */
void ksched_set_txq_ac(struct ksched *k, int sta, u32 tid, u32 ac)
{
	ksched_txq(k, sta, tid)->txq.ac = ac;
}

/* The TXQ leaves its active list (sta_ps_start's list_del_init, for one TXQ). */
void ksched_unschedule(struct ksched *k, int sta, u32 tid)
{
	struct txq_info *t = ksched_txq(k, sta, tid);
	if (!list_empty(&t->schedule_order))
		list_del_init(&t->schedule_order);
}

/* The first `n` stations' AQL state on `ac` as another AQL keeps it: `aql_tx_pending`
 * (which ieee80211_sta_deficit subtracts) is the pending airtime, and the station's
 * limits are stand-ins that make ieee80211_txq_airtime_check give `eligible[i]`:
 * a low limit above any pending airtime (eligible), or both limits 0 (not). */
void ksched_set_aql_view(struct ksched *k, u32 ac, u32 n, const s32 *pending,
			 const u8 *eligible)
{
	u32 i;
	for (i = 0; i < n && i < k->n_stas; i++) {
		struct airtime_info *a = &k->stas[i]->sta.airtime[ac];
		atomic_set(&a->aql_tx_pending, pending[i]);
		a->aql_limit_low = eligible[i] ? 0xffffffffU : 0;
		a->aql_limit_high = 0;
	}
}

/* The per-AC check's answer as another AQL gives it: the radio's limits on `ac` are
 * stand-ins (low 0, high 1: a limit of 1 whatever the list's length) and the AC's
 * pending airtime 0 (under it) or -1 (as u32, over it). */
void ksched_set_ac_over(struct ksched *k, u32 ac, u32 over)
{
	k->local.aql_txq_limit_low[ac] = 0;
	k->local.aql_txq_limit_high[ac] = 1;
	atomic_set(&k->local.aql_ac_pending_airtime[ac], over ? -1 : 0);
}

/* The TXQs on `ac`'s active list. */
u32 ksched_active_count(struct ksched *k, u32 ac)
{
	struct txq_info *t;
	u32 n = 0;
	list_for_each_entry(t, &k->local.active_txqs[ac], schedule_order)
		n++;
	return n;
}

/* The copy's TXQ of the original's `t`. */
static struct txq_info *ksched_same_txq(const struct ksched *k, struct ksched *n,
					 const struct txq_info *t)
{
	u32 i;
	if (t == &k->vif_txq)
		return &n->vif_txq;
	for (i = 0; i < k->n_stas; i++)
		if (t >= k->stas[i]->txqs && t < k->stas[i]->txqs + KSCHED_TIDS)
			return &n->stas[i]->txqs[t - k->stas[i]->txqs];
	return NULL;
}

/* An independent copy of a radio with its active lists in the same order. */
struct ksched *ksched_clone_scheduler(const struct ksched *k)
{
	struct ksched *n = ksched_clone(k);
	struct txq_info *t;
	int ac;

	for (ac = 0; ac < IEEE80211_NUM_ACS; ac++)
		list_for_each_entry(t, &k->local.active_txqs[ac], schedule_order)
			list_add_tail(&ksched_same_txq(k, n, t)->schedule_order,
				      &n->local.active_txqs[ac]);
	return n;
}
