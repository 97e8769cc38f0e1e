/* kernel-oracle shim: an sk_buff with the fields fq and CoDel read (len, truesize,
 * the flow hash, mac80211's enqueue time, the IPv4 header's TOS for ECN) and the
 * sk_buff_head queue operations of include/linux/skbuff.h. */
#ifndef ORACLE_SHIM_LINUX_SKBUFF_H
#define ORACLE_SHIM_LINUX_SKBUFF_H
#include <linux/types.h>

/* The part of struct iphdr that IP_ECN_set_ce touches. */
struct iphdr {
	u8 tos;
	__sum16 check;
};

struct sk_buff {
	/* First, as in the kernel: an sk_buff_head doubles as a list node. */
	struct sk_buff *next, *prev;
	u32 len;
	u32 truesize;
	u32 hash;
	/* IEEE80211_SKB_CB(skb)->control.enqueue_time (codel_time_t). */
	u32 enqueue_time;
	u64 id;
	struct iphdr iph;
};

struct sk_buff_head {
	struct sk_buff *next, *prev;
	u32 qlen;
};

static inline u32 skb_get_hash(struct sk_buff *skb)
{
	return skb->hash;
}
static inline void __skb_queue_head_init(struct sk_buff_head *l)
{
	l->next = l->prev = (struct sk_buff *)l;
	l->qlen = 0;
}
static inline u32 skb_queue_len(const struct sk_buff_head *l)
{
	return l->qlen;
}
static inline void __skb_unlink(struct sk_buff *skb, struct sk_buff_head *l)
{
	struct sk_buff *next = skb->next, *prev = skb->prev;
	l->qlen--;
	skb->next = skb->prev = NULL;
	next->prev = prev;
	prev->next = next;
}
static inline struct sk_buff *__skb_dequeue(struct sk_buff_head *l)
{
	struct sk_buff *skb = l->next;
	if (skb == (struct sk_buff *)l)
		return NULL;
	__skb_unlink(skb, l);
	return skb;
}
static inline void __skb_queue_tail(struct sk_buff_head *l, struct sk_buff *n)
{
	struct sk_buff *prev = l->prev;
	n->next = (struct sk_buff *)l;
	n->prev = prev;
	prev->next = n;
	l->prev = n;
	l->qlen++;
}
static inline void skb_mark_not_on_list(struct sk_buff *skb)
{
	skb->next = NULL;
}
#define skb_list_walk_safe(first, skb, next_skb)                               \
	for ((skb) = (first), (next_skb) = (skb) ? (skb)->next : NULL; (skb);  \
	     (skb) = (next_skb), (next_skb) = (skb) ? (skb)->next : NULL)
#define skb_queue_walk_safe(queue, skb, tmp)                                   \
	for (skb = (queue)->next, tmp = skb->next;                             \
	     skb != (struct sk_buff *)(queue); skb = tmp, tmp = skb->next)
#endif
