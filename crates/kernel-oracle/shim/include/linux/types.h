/* kernel-oracle shim: the kernel's fixed-width types and the few compiler helpers
 * include/net/{fq,fq_impl,codel,codel_impl}.h use, for a user-space build. */
#ifndef ORACLE_SHIM_LINUX_TYPES_H
#define ORACLE_SHIM_LINUX_TYPES_H

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
typedef int32_t s32;
typedef int64_t s64;
typedef uint16_t __be16;
typedef uint32_t __be32;
typedef uint16_t __sum16;
typedef uint32_t __wsum;

#define __force
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* include/linux/typecheck.h: a compile-time type check (a warning if they differ). */
#define typecheck(type, x)                                                     \
	({                                                                     \
		type __dummy;                                                  \
		__typeof__(x) __dummy2;                                        \
		(void)(&__dummy == &__dummy2);                                 \
		1;                                                             \
	})

#define min_t(type, a, b) ((type)(a) < (type)(b) ? (type)(a) : (type)(b))
#define max_t(type, a, b) ((type)(a) > (type)(b) ? (type)(a) : (type)(b))

#define container_of(ptr, type, member)                                        \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* WARN_ON_ONCE: counted, and the harness fails on any (the kernel would log it). */
void oracle_warn(const char *file, int line);
#define WARN_ON_ONCE(cond)                                                     \
	({                                                                     \
		int __c = !!(cond);                                            \
		if (__c)                                                       \
			oracle_warn(__FILE__, __LINE__);                       \
		__c;                                                           \
	})

/* include/linux/math.h: (val * ep_ro) >> 32. */
static inline u32 reciprocal_scale(u32 val, u32 ep_ro)
{
	return (u32)(((u64)val * ep_ro) >> 32);
}

/* Allocation: the kernel's zeroing allocators, from libc. */
#define GFP_KERNEL 0
#define ENOMEM 12
#define kvcalloc(n, size, gfp) calloc((n), (size))
#define kvfree(p) free(p)

/* Bitmaps (include/linux/bitmap.h, bitops.h), one bit per flow. */
#define BITS_PER_LONG (8 * sizeof(unsigned long))
#define BITS_TO_LONGS(n) (((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)
#define bitmap_zalloc(n, gfp) calloc(BITS_TO_LONGS(n), sizeof(unsigned long))
#define bitmap_free(p) free(p)
static inline void __set_bit(unsigned long nr, unsigned long *addr)
{
	addr[nr / BITS_PER_LONG] |= 1UL << (nr % BITS_PER_LONG);
}
static inline void __clear_bit(unsigned long nr, unsigned long *addr)
{
	addr[nr / BITS_PER_LONG] &= ~(1UL << (nr % BITS_PER_LONG));
}
static inline unsigned long oracle_find_next_bit(const unsigned long *addr,
						 unsigned long size,
						 unsigned long from)
{
	for (; from < size; from++)
		if (addr[from / BITS_PER_LONG] & (1UL << (from % BITS_PER_LONG)))
			return from;
	return size;
}
/* Ascending bit order, as the kernel's find_next_bit. */
#define for_each_set_bit(bit, addr, size)                                      \
	for ((bit) = oracle_find_next_bit((addr), (size), 0); (bit) < (size);  \
	     (bit) = oracle_find_next_bit((addr), (size), (bit) + 1))

/* include/linux/list.h: the circular doubly linked list. */
struct list_head {
	struct list_head *next, *prev;
};
static inline void INIT_LIST_HEAD(struct list_head *l)
{
	l->next = l;
	l->prev = l;
}
static inline int list_empty(const struct list_head *h)
{
	return h->next == h;
}
static inline void __list_add(struct list_head *n, struct list_head *prev,
			      struct list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}
static inline void list_add(struct list_head *n, struct list_head *h)
{
	__list_add(n, h, h->next);
}
static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	__list_add(n, h->prev, h);
}
static inline void __list_del_entry(struct list_head *e)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
}
static inline void list_del_init(struct list_head *e)
{
	__list_del_entry(e);
	INIT_LIST_HEAD(e);
}
static inline void list_move_tail(struct list_head *e, struct list_head *h)
{
	__list_del_entry(e);
	list_add_tail(e, h);
}
#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(ptr, type, member) list_entry((ptr)->next, type, member)
#define list_for_each_entry(pos, head, member)                                 \
	for (pos = list_entry((head)->next, __typeof__(*pos), member);         \
	     &pos->member != (head);                                           \
	     pos = list_entry(pos->member.next, __typeof__(*pos), member))

#endif
