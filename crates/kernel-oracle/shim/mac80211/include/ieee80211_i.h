/* kernel-oracle shim: everything airtime.c needs is in mac80211_shim.h. */
#include <mac80211_shim.h>
