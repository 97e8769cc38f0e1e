/* kernel-oracle shim: the harness is single-threaded; locks and lockdep are no-ops. */
#ifndef ORACLE_SHIM_LINUX_SPINLOCK_H
#define ORACLE_SHIM_LINUX_SPINLOCK_H
#include <linux/types.h>
typedef struct {
	int unused;
} spinlock_t;
#define spin_lock_init(l) ((void)(l))
#define lockdep_assert_held(l) ((void)(l))
#endif
