/* kernel-oracle shim for include/net/inet_ecn.h: every packet is IPv4, and the
 * kernel's own IP_ECN_set_ce (extracted from the source's inet_ecn.h at build time
 * into ip_ecn_set_ce.h) decides whether CE can be set. */
#ifndef ORACLE_SHIM_NET_INET_ECN_H
#define ORACLE_SHIM_NET_INET_ECN_H
#include <linux/skbuff.h>

enum {
	INET_ECN_NOT_ECT = 0,
	INET_ECN_ECT_1 = 1,
	INET_ECN_ECT_0 = 2,
	INET_ECN_CE = 3,
	INET_ECN_MASK = 3,
};

#define htons(x) __builtin_bswap16((u16)(x))

/* include/net/checksum.h (the value is never read here). */
static inline __sum16 csum16_add(__sum16 csum, __be16 addend)
{
	u16 res = (u16)csum;
	res += (u16)addend;
	return (__sum16)(res + (res < (u16)addend));
}

#include "ip_ecn_set_ce.h"

static inline int INET_ECN_set_ce(struct sk_buff *skb)
{
	return IP_ECN_set_ce(&skb->iph);
}

static inline int skb_get_dsfield(struct sk_buff *skb)
{
	return skb->iph.tos;
}
#endif
