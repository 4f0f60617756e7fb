#include "notify_routes.h"

#include <string.h>

const char *tl_notify_route_table(const tl_notify_config *cfg, const char *key)
{
    const char *best = NULL;
    size_t best_len = 0;
    for (int i = 0; i < cfg->n_routes; i++) {
        size_t n = strlen(cfg->routes[i].prefix);
        if (strncmp(key, cfg->routes[i].prefix, n) == 0 && (best == NULL || n > best_len))
            best = cfg->routes[i].table, best_len = n;
    }
    return best ? best : cfg->default_table;
}
