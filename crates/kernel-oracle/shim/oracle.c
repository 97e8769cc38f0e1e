/* kernel-oracle: a small C API over the kernel's own include/net/fq_impl.h and
 * codel_impl.h (extracted from the installed Linux source at build time, never kept in
 * the repository), glued together as mac80211 does it in net/mac80211/tx.c:
 * one struct fq per radio, one fq_tin per TXQ with its default flow's CoDel state
 * (txqi->def_cvars) and CoDel statistics (txqi->cstats), CoDel state per global flow
 * (local->cvars[]), and the callbacks fq_tin_dequeue_func, codel_dequeue_func,
 * codel_drop_func, codel_skb_len_func and codel_skb_time_func of tx.c re-written here
 * over the shim's sk_buff. The Rust side (src/lib.rs) declares the same structs. */
#include <net/codel.h>
#include <net/codel_impl.h>
#include <net/fq.h>
#include <net/fq_impl.h>

_Thread_local u64 oracle_now_ns;
static _Thread_local u32 oracle_warnings;

void oracle_warn(const char *file, int line)
{
	(void)file;
	(void)line;
	oracle_warnings++;
}

enum oracle_event_kind {
	ORACLE_DROP_OVERLIMIT = 1,
	ORACLE_DROP_OVERMEMORY = 2,
	ORACLE_DROP_CODEL = 3,
	ORACLE_PURGE = 4,
};

struct oracle_event {
	uint64_t id;
	uint32_t kind;
	uint32_t ecn;
};

struct oracle;

/* struct txq_info's fq and CoDel parts. */
struct oracle_txq {
	struct fq_tin tin;
	struct codel_vars def_cvars;
	struct codel_stats cstats;
	struct oracle *local;
	uint32_t index;
};

/* struct ieee80211_local's fq and CoDel parts, plus the harness's event log. */
struct oracle {
	struct fq fq;
	struct codel_vars *cvars;
	struct codel_params cparams;
	struct oracle_txq **txqs;
	uint32_t ntxqs;
	struct oracle_event *events;
	uint32_t nevents, cap;
};

static void oracle_log(struct oracle *o, struct sk_buff *skb, uint32_t kind)
{
	if (o->nevents == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 64;
		o->events = realloc(o->events, o->cap * sizeof(o->events[0]));
	}
	o->events[o->nevents].id = skb->id;
	o->events[o->nevents].kind = kind;
	o->events[o->nevents].ecn = skb->iph.tos & INET_ECN_MASK;
	o->nevents++;
}

/* tx.c codel_skb_len_func, codel_skb_time_func. */
static u32 codel_skb_len_func(const struct sk_buff *skb)
{
	return skb->len;
}

static codel_time_t codel_skb_time_func(const struct sk_buff *skb)
{
	return skb->enqueue_time;
}

/* tx.c codel_dequeue_func: the flow whose CoDel state this is. */
static struct sk_buff *codel_dequeue_func(struct codel_vars *cvars, void *ctx)
{
	struct oracle_txq *txqi = ctx;
	struct oracle *local = txqi->local;
	struct fq *fq = &local->fq;
	struct fq_flow *flow;

	if (cvars == &txqi->def_cvars)
		flow = &txqi->tin.default_flow;
	else
		flow = &fq->flows[cvars - local->cvars];

	return fq_flow_dequeue(fq, flow);
}

/* tx.c codel_drop_func: ieee80211_free_txskb. */
static void codel_drop_func(struct sk_buff *skb, void *ctx)
{
	struct oracle_txq *txqi = ctx;

	oracle_log(txqi->local, skb, ORACLE_DROP_CODEL);
	free(skb);
}

/* tx.c fq_tin_dequeue_func. */
static struct sk_buff *fq_tin_dequeue_func(struct fq *fq, struct fq_tin *tin,
					   struct fq_flow *flow)
{
	struct oracle *local = container_of(fq, struct oracle, fq);
	struct oracle_txq *txqi = container_of(tin, struct oracle_txq, tin);
	struct codel_vars *cvars;

	if (flow == &tin->default_flow)
		cvars = &txqi->def_cvars;
	else
		cvars = &local->cvars[flow - fq->flows];

	return codel_dequeue(txqi, &flow->backlog, &local->cparams, cvars,
			     &txqi->cstats, codel_skb_len_func,
			     codel_skb_time_func, codel_drop_func,
			     codel_dequeue_func);
}

/* tx.c fq_skb_free_func, called by fq_tin_enqueue's overload loop from inside
 * fq_flow_drop, before __fq_adjust_removal: fq->memory_usage is still the value the
 * pass started with, so it tells whether the memory limit caused the pass (the `oom`
 * of fq_tin_enqueue). */
static void fq_skb_free_func(struct fq *fq, struct fq_tin *tin,
			     struct fq_flow *flow, struct sk_buff *skb)
{
	struct oracle *o = container_of(fq, struct oracle, fq);

	(void)tin;
	(void)flow;
	oracle_log(o, skb,
		   fq->memory_usage > fq->memory_limit ? ORACLE_DROP_OVERMEMORY :
							 ORACLE_DROP_OVERLIMIT);
	free(skb);
}

/* ieee80211_txq_purge's fq_tin_reset. */
static void oracle_purge_func(struct fq *fq, struct fq_tin *tin,
			      struct fq_flow *flow, struct sk_buff *skb)
{
	struct oracle *o = container_of(fq, struct oracle, fq);

	(void)tin;
	(void)flow;
	oracle_log(o, skb, ORACLE_PURGE);
	free(skb);
}

/* ieee80211_txq_init's fq and CoDel part: TXQ number o->ntxqs. Each TXQ is its own
 * allocation, as each txq_info is in the kernel: flows point at their tin. */
uint32_t oracle_add_txq(struct oracle *o)
{
	struct oracle_txq *t = calloc(1, sizeof(*t));

	fq_tin_init(&t->tin);
	codel_vars_init(&t->def_cvars);
	codel_stats_init(&t->cstats);
	t->local = o;
	t->index = o->ntxqs;
	o->txqs = realloc(o->txqs, (o->ntxqs + 1) * sizeof(o->txqs[0]));
	o->txqs[o->ntxqs] = t;
	return o->ntxqs++;
}

/* ieee80211_txq_setup_flows + one ieee80211_txq_init per TXQ. */
struct oracle *oracle_new(uint32_t flows, uint32_t quantum, uint32_t limit,
			  uint32_t memory_limit, uint32_t ntxqs)
{
	struct oracle *o = calloc(1, sizeof(*o));
	uint32_t i;

	if (fq_init(&o->fq, flows)) {
		free(o);
		return NULL;
	}
	o->fq.quantum = quantum;
	o->fq.limit = limit;
	o->fq.memory_limit = memory_limit;
	o->cvars = calloc(o->fq.flows_cnt, sizeof(o->cvars[0]));
	for (i = 0; i < o->fq.flows_cnt; i++)
		codel_vars_init(&o->cvars[i]);
	for (i = 0; i < ntxqs; i++)
		oracle_add_txq(o);
	oracle_warnings = 0;
	return o;
}

void oracle_free(struct oracle *o)
{
	uint32_t i;

	for (i = 0; i < o->ntxqs; i++)
		fq_tin_reset(&o->fq, &o->txqs[i]->tin, oracle_purge_func);
	fq_reset(&o->fq, oracle_purge_func);
	for (i = 0; i < o->ntxqs; i++)
		free(o->txqs[i]);
	free(o->cvars);
	free(o->txqs);
	free(o->events);
	free(o);
}

/* ieee80211_txq_enqueue: stamp the enqueue time (ieee80211_set_skb_enqueue_time),
 * classify (fq_flow_idx) and fq_tin_enqueue. */
void oracle_enqueue(struct oracle *o, uint32_t txq, uint64_t now_ns, uint64_t id,
		    uint32_t hash, uint32_t len, uint32_t truesize, uint32_t ecn)
{
	struct sk_buff *skb = calloc(1, sizeof(*skb));
	struct fq_tin *tin = &o->txqs[txq]->tin;

	oracle_now_ns = now_ns;
	skb->id = id;
	skb->hash = hash;
	skb->len = len;
	skb->truesize = truesize;
	skb->iph.tos = ecn & INET_ECN_MASK;
	skb->enqueue_time = codel_get_time();
	fq_tin_enqueue(&o->fq, tin, fq_flow_idx(&o->fq, skb), skb,
		       fq_skb_free_func);
}

struct oracle_codel_params {
	uint32_t target, interval, mtu, ecn, ce_threshold;
};

/* ieee80211_tx_dequeue's fq_tin_dequeue with the given CoDel parameters (local or
 * per-station cparams). Returns 1 and the packet's id and ECN bits, or 0. */
int oracle_dequeue(struct oracle *o, uint32_t txq, uint64_t now_ns,
		   const struct oracle_codel_params *p, uint64_t *id, uint32_t *ecn)
{
	struct sk_buff *skb;

	oracle_now_ns = now_ns;
	codel_params_init(&o->cparams);
	o->cparams.target = p->target;
	o->cparams.interval = p->interval;
	o->cparams.mtu = p->mtu;
	o->cparams.ecn = p->ecn != 0;
	o->cparams.ce_threshold = p->ce_threshold;
	skb = fq_tin_dequeue(&o->fq, &o->txqs[txq]->tin, fq_tin_dequeue_func);
	if (!skb)
		return 0;
	*id = skb->id;
	*ecn = skb->iph.tos & INET_ECN_MASK;
	free(skb);
	return 1;
}

/* ieee80211_txq_purge: fq_tin_reset. */
void oracle_reset_tin(struct oracle *o, uint32_t txq)
{
	fq_tin_reset(&o->fq, &o->txqs[txq]->tin, oracle_purge_func);
}

/* oracle_clone: where an old pointer into the source's fq, flows or TXQs lies in the
 * copy (NULL stays NULL). */
struct oracle_reloc {
	const struct oracle *from;
	struct oracle *to;
};

static void *oracle_relocate(const struct oracle_reloc *r, const void *p)
{
	const char *c = p;
	const char *flows = (const char *)r->from->fq.flows;
	const char *fq = (const char *)&r->from->fq;
	uint32_t i;

	if (!p)
		return NULL;
	if (c >= flows && c < flows + r->from->fq.flows_cnt * sizeof(struct fq_flow))
		return (char *)r->to->fq.flows + (c - flows);
	if (c >= fq && c < fq + sizeof(struct fq))
		return (char *)&r->to->fq + (c - fq);
	for (i = 0; i < r->from->ntxqs; i++) {
		const char *t = (const char *)r->from->txqs[i];

		if (c >= t && c < t + sizeof(struct oracle_txq))
			return (char *)r->to->txqs[i] + (c - t);
	}
	return NULL;
}

static void oracle_relocate_list(const struct oracle_reloc *r, struct list_head *l)
{
	l->next = oracle_relocate(r, l->next);
	l->prev = oracle_relocate(r, l->prev);
}

/* A flow of the copy: its lists relocated, its packets copied in order. */
static void oracle_copy_flow(const struct oracle_reloc *r, struct fq_flow *to,
			     const struct fq_flow *from)
{
	struct sk_buff *skb;

	to->tin = oracle_relocate(r, from->tin);
	oracle_relocate_list(r, &to->flowchain);
	__skb_queue_head_init(&to->queue);
	for (skb = from->queue.next; skb != (const struct sk_buff *)&from->queue;
	     skb = skb->next) {
		struct sk_buff *c = malloc(sizeof(*c));

		*c = *skb;
		__skb_queue_tail(&to->queue, c);
	}
}

/* An independent copy in the same state (a txop cell is cloneable): the fq, its flows,
 * CoDel states, TXQs and queued packets, every pointer between them moved to the
 * copy's. It knows the pointers of 6.12's struct fq, fq_tin and fq_flow; a tree that
 * adds one to them is copied without it. */
struct oracle *oracle_clone(const struct oracle *o)
{
	struct oracle *n = calloc(1, sizeof(*n));
	struct oracle_reloc r = { o, n };
	size_t bitmap = BITS_TO_LONGS(o->fq.flows_cnt) * sizeof(unsigned long);
	uint32_t i;

	n->fq = o->fq;
	n->fq.flows = malloc(o->fq.flows_cnt * sizeof(struct fq_flow));
	memcpy(n->fq.flows, o->fq.flows, o->fq.flows_cnt * sizeof(struct fq_flow));
	n->fq.flows_bitmap = malloc(bitmap);
	memcpy(n->fq.flows_bitmap, o->fq.flows_bitmap, bitmap);
	n->cvars = malloc(o->fq.flows_cnt * sizeof(n->cvars[0]));
	memcpy(n->cvars, o->cvars, o->fq.flows_cnt * sizeof(n->cvars[0]));
	n->cparams = o->cparams;
	n->ntxqs = o->ntxqs;
	n->txqs = malloc(o->ntxqs * sizeof(n->txqs[0]));
	for (i = 0; i < o->ntxqs; i++) {
		n->txqs[i] = malloc(sizeof(struct oracle_txq));
		*n->txqs[i] = *o->txqs[i];
		n->txqs[i]->local = n;
	}
	oracle_relocate_list(&r, &n->fq.tin_backlog);
	for (i = 0; i < o->fq.flows_cnt; i++)
		oracle_copy_flow(&r, &n->fq.flows[i], &o->fq.flows[i]);
	for (i = 0; i < o->ntxqs; i++) {
		struct fq_tin *t = &n->txqs[i]->tin;

		oracle_relocate_list(&r, &t->new_flows);
		oracle_relocate_list(&r, &t->old_flows);
		oracle_relocate_list(&r, &t->tin_list);
		oracle_copy_flow(&r, &t->default_flow, &o->txqs[i]->tin.default_flow);
	}
	return n;
}

const struct oracle_event *oracle_events(const struct oracle *o, uint32_t *n)
{
	*n = o->nevents;
	return o->events;
}

void oracle_clear_events(struct oracle *o)
{
	o->nevents = 0;
}

struct oracle_codel_vars {
	uint32_t count, lastcount, dropping, rec_inv_sqrt;
	uint32_t first_above_time, drop_next, ldelay;
};

struct oracle_flow_view {
	int32_t tin; /* owning TXQ, or -1 */
	uint32_t backlog_bytes, packets, listed;
	int32_t deficit;
	struct oracle_codel_vars cvars;
};

static void oracle_view_flow(const struct oracle *o, const struct fq_flow *f,
			     const struct codel_vars *cv, struct oracle_flow_view *v)
{
	(void)o;
	v->tin = f->tin ? (int32_t)container_of(f->tin, struct oracle_txq, tin)->index :
			  -1;
	v->backlog_bytes = f->backlog;
	v->packets = skb_queue_len(&f->queue);
	v->listed = !list_empty(&f->flowchain);
	v->deficit = f->deficit;
	v->cvars.count = cv->count;
	v->cvars.lastcount = cv->lastcount;
	v->cvars.dropping = cv->dropping;
	v->cvars.rec_inv_sqrt = cv->rec_inv_sqrt;
	v->cvars.first_above_time = cv->first_above_time;
	v->cvars.drop_next = cv->drop_next;
	v->cvars.ldelay = cv->ldelay;
}

void oracle_flow(const struct oracle *o, uint32_t idx, struct oracle_flow_view *v)
{
	oracle_view_flow(o, &o->fq.flows[idx], &o->cvars[idx], v);
}

void oracle_default_flow(const struct oracle *o, uint32_t txq,
			 struct oracle_flow_view *v)
{
	oracle_view_flow(o, &o->txqs[txq]->tin.default_flow,
			 &o->txqs[txq]->def_cvars, v);
}

struct oracle_tin_view {
	uint32_t backlog_bytes, backlog_packets, overlimit, collisions, flows;
	uint32_t tx_bytes, tx_packets, new_flows, old_flows;
	uint32_t maxpacket, drop_count, drop_len, ecn_mark, ce_mark;
};

static uint32_t list_len(const struct list_head *h)
{
	uint32_t n = 0;
	const struct list_head *p;

	for (p = h->next; p != h; p = p->next)
		n++;
	return n;
}

void oracle_tin(const struct oracle *o, uint32_t txq, struct oracle_tin_view *v)
{
	const struct oracle_txq *t = o->txqs[txq];

	v->backlog_bytes = t->tin.backlog_bytes;
	v->backlog_packets = t->tin.backlog_packets;
	v->overlimit = t->tin.overlimit;
	v->collisions = t->tin.collisions;
	v->flows = t->tin.flows;
	v->tx_bytes = t->tin.tx_bytes;
	v->tx_packets = t->tin.tx_packets;
	v->new_flows = list_len(&t->tin.new_flows);
	v->old_flows = list_len(&t->tin.old_flows);
	v->maxpacket = t->cstats.maxpacket;
	v->drop_count = t->cstats.drop_count;
	v->drop_len = t->cstats.drop_len;
	v->ecn_mark = t->cstats.ecn_mark;
	v->ce_mark = t->cstats.ce_mark;
}

struct oracle_fq_view {
	uint32_t flows_cnt, backlog, memory_usage, overlimit, overmemory, collisions;
	uint32_t warnings;
};

void oracle_fq(const struct oracle *o, struct oracle_fq_view *v)
{
	v->flows_cnt = o->fq.flows_cnt;
	v->backlog = o->fq.backlog;
	v->memory_usage = o->fq.memory_usage;
	v->overlimit = o->fq.overlimit;
	v->overmemory = o->fq.overmemory;
	v->collisions = o->fq.collisions;
	v->warnings = oracle_warnings;
}
