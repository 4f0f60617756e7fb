/* The storage options pytest hands a store test program in
 * TL_TEST_STORE_OPTIONS ("key=value;key=value"), as a NULL-terminated
 * key/value list with room for a few more pairs (64 slots in all). */
#ifndef TL_TEST_STORE_OPTIONS_H
#define TL_TEST_STORE_OPTIONS_H

#include <stdlib.h>
#include <string.h>

static char **test_store_options(void)
{
    const char *env = getenv("TL_TEST_STORE_OPTIONS");
    char **opts = calloc(64, sizeof *opts);
    size_t n = 0;
    char *copy = strdup(env ? env : "");
    for (char *save = NULL, *p = strtok_r(copy, ";", &save); p && n < 56;
         p = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(p, '=');
        if (eq == NULL) continue;
        *eq = '\0';
        opts[n++] = strdup(p);
        opts[n++] = strdup(eq + 1);
    }
    free(copy);
    return opts;
}

static void test_store_options_free(char **opts)
{
    for (size_t i = 0; opts[i]; i++) free(opts[i]);
    free(opts);
}

#endif
