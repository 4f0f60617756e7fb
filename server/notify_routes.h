/* Which table an object goes to, by the prefix of its key. */
#ifndef TL_NOTIFY_ROUTES_H
#define TL_NOTIFY_ROUTES_H

#include "notify.h"

/* The table of a key: the longest matching route prefix, else the default
 * table, else NULL. */
const char *tl_notify_route_table(const tl_notify_config *cfg, const char *key);

#endif
