#include "table/version_cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "table/settings.h"

#define SLOTS 256 /* tables remembered; the least recently noted goes */

typedef struct entry {
    char *url; /* the table's root URL; NULL: free */
    int64_t version;
    char uuid[40];       /* the table's; a table made again under the name has another */
    double noted_ms;     /* monotonic */
    int64_t interval_us; /* the table's setting as of the note */
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry entries[SLOTS];

static entry *find(const char *url)
{
    for (size_t i = 0; i < SLOTS; i++)
        if (entries[i].url && strcmp(entries[i].url, url) == 0) return &entries[i];
    return NULL;
}

static entry *slot_for(const char *url)
{
    entry *e = find(url), *oldest = &entries[0];
    if (e) return e;
    for (size_t i = 0; i < SLOTS; i++) {
        if (entries[i].url == NULL) return &entries[i];
        if (entries[i].noted_ms < oldest->noted_ms) oldest = &entries[i];
    }
    free(oldest->url);
    oldest->url = NULL;
    return oldest;
}

void tl_version_cache_note(const tl_table *t, int64_t version)
{
    char *url = tl_store_url_of(t->lake->store, t->name.key);
    if (url == NULL) return; /* only a shortcut is lost */
    int64_t interval =
        tl_setting_duration(t->md, NULL, "version-check-interval", TL_VERSION_CHECK_DEFAULT_US);
    const char *uuid = t->md->table_uuid ? t->md->table_uuid : "";
    pthread_mutex_lock(&lock);
    entry *e = slot_for(url);
    if (e->url == NULL) {
        e->url = url;
        url = NULL;
        e->version = 0;
    }
    /* A slower check that saw an older version must not hide a newer one;
     * but the versions of a table dropped and made again (here or by another
     * process) start over, and are not comparable. */
    if (version >= e->version || strcmp(e->uuid, uuid) != 0) {
        e->version = version;
        snprintf(e->uuid, sizeof e->uuid, "%s", uuid);
        e->noted_ms = tl_monotonic_ms();
        e->interval_us = interval;
    }
    pthread_mutex_unlock(&lock);
    free(url);
}

void tl_version_cache_forget(tl_lake *lake, const tl_qname *name)
{
    char *url = tl_store_url_of(lake->store, name->key);
    if (url == NULL) return;
    pthread_mutex_lock(&lock);
    entry *e = find(url);
    if (e) {
        free(e->url);
        memset(e, 0, sizeof *e);
    }
    pthread_mutex_unlock(&lock);
    free(url);
}

/* The version noted for the table within the interval, or 0; its table's
 * UUID into uuid. */
static int64_t recent_version(tl_lake *lake, const tl_qname *name, const char *const *session,
                              char uuid[40])
{
    char *url = tl_store_url_of(lake->store, name->key);
    if (url == NULL) return 0;
    int64_t session_us = tl_setting_duration(NULL, session, "version-check-interval", -1);
    int64_t version = 0;
    pthread_mutex_lock(&lock);
    const entry *e = find(url);
    if (e) {
        int64_t interval = session_us >= 0 ? session_us : e->interval_us;
        double age_us = (tl_monotonic_ms() - e->noted_ms) * 1000.0;
        if (age_us < (double)interval) {
            version = e->version;
            memcpy(uuid, e->uuid, sizeof e->uuid);
        }
    }
    pthread_mutex_unlock(&lock);
    free(url);
    return version;
}

tl_status tl_table_load_for_query(tl_lake *lake, const tl_qname *name, const char *const *session,
                                  tl_table **out, tl_error *err)
{
    char uuid[40] = "";
    int64_t version = recent_version(lake, name, session, uuid);
    /* Only what the lake holds parsed saves a request: a cold lake reads the
     * newest version the usual way (on an object store, the head). The
     * parse is of that version's file name, which a table dropped and made
     * again reuses: it must be of the same table. */
    if (version > 0 && tl_table_load_cached(lake, name, version, out, NULL) == TL_OK) {
        const char *got = (*out)->md->table_uuid ? (*out)->md->table_uuid : "";
        if (strcmp(got, uuid) == 0) return TL_OK;
        tl_table_close(*out);
        *out = NULL;
    }
    return tl_table_load(lake, name, 0, out, err);
}
