/* kernel-oracle shim: the clock is fed by the harness (nanoseconds), per thread. */
#ifndef ORACLE_SHIM_LINUX_KTIME_H
#define ORACLE_SHIM_LINUX_KTIME_H
#include <linux/types.h>
#define NSEC_PER_USEC 1000L
#define NSEC_PER_MSEC 1000000L
extern _Thread_local u64 oracle_now_ns;
static inline u64 ktime_get_ns(void)
{
	return oracle_now_ns;
}
#define do_div(n, base)                                                        \
	({                                                                     \
		u32 __rem = (u32)((n) % (base));                               \
		(n) /= (base);                                                 \
		__rem;                                                         \
	})
#endif
