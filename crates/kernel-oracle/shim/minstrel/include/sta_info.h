/* kernel-oracle shim: everything minstrel_ht needs is in minstrel_shim.h. */
#include <minstrel_shim.h>
