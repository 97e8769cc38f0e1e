/* kernel-oracle shim: everything minstrel_ht needs is in mac80211_shim.h. */
#include <mac80211_shim.h>
