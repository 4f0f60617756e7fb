/* Parsed schemas shared by their text (tl_avro_schema_shared). A few
 * entries, least recently used replaced; a schema stays alive while a
 * reader holds it, even once replaced. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "formats/avro/avro_schema.h"

#define ENTRIES 16

typedef struct entry {
    char *text; /* NULL: free */
    size_t len;
    tl_avro_schema *schema;
    uint64_t used;
} entry;

/* References per schema are counted here, under the lock: the cache's own
 * (while listed) plus one per holder. */
typedef struct holder_count {
    tl_avro_schema *schema;
    size_t refs;
} holder_count;

static struct {
    pthread_mutex_t lock;
    entry e[ENTRIES];
    holder_count *counts;
    size_t n_counts, cap_counts;
    uint64_t clock;
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

static holder_count *count_of(const tl_avro_schema *s)
{
    for (size_t i = 0; i < cache.n_counts; i++)
        if (cache.counts[i].schema == s) return &cache.counts[i];
    return NULL;
}

/* Drops one reference (lock held); the last one frees the schema. */
static void unref(tl_avro_schema *s)
{
    holder_count *c = count_of(s);
    if (c == NULL || --c->refs > 0) return;
    *c = cache.counts[--cache.n_counts];
    s->shared = false;
    tl_avro_schema_free(s);
}

static tl_avro_schema *lookup(const char *json, size_t len)
{
    for (size_t i = 0; i < ENTRIES; i++) {
        entry *e = &cache.e[i];
        if (e->text && e->len == len && memcmp(e->text, json, len) == 0) {
            e->used = ++cache.clock;
            count_of(e->schema)->refs++;
            return e->schema;
        }
    }
    return NULL;
}

/* Lists a freshly parsed schema with two references (the cache's, the caller's). */
static bool insert(const char *json, size_t len, tl_avro_schema *s)
{
    char *text = malloc(len + 1);
    if (text == NULL) return false;
    memcpy(text, json, len);
    if (TL_GROW(cache.counts, cache.cap_counts, cache.n_counts + 1, ENTRIES * 2) != 0) {
        free(text);
        return false;
    }
    entry *slot = &cache.e[0];
    for (size_t i = 0; i < ENTRIES && slot->text; i++)
        if (cache.e[i].text == NULL || cache.e[i].used < slot->used) slot = &cache.e[i];
    if (slot->text) {
        free(slot->text);
        unref(slot->schema);
    }
    s->shared = true;
    cache.counts[cache.n_counts++] = (holder_count){s, 2};
    *slot = (entry){text, len, s, ++cache.clock};
    return true;
}

tl_status tl_avro_schema_shared(const char *json, size_t len, tl_avro_schema **out, tl_error *err)
{
    pthread_mutex_lock(&cache.lock);
    *out = lookup(json, len);
    pthread_mutex_unlock(&cache.lock);
    if (*out) return TL_OK;
    tl_avro_schema *s = NULL;
    TL_TRY(tl_avro_schema_parse(json, len, &s, err));
    /* Printed once, for writers of files of this schema. */
    tl_buf printed = {0};
    if (tl_avro_schema_print(s, &printed, NULL) == TL_OK)
        s->printed = (char *)tl_buf_detach(&printed, &s->printed_len);
    tl_buf_free(&printed);
    pthread_mutex_lock(&cache.lock);
    tl_avro_schema *again = lookup(json, len); /* another thread parsed it meanwhile */
    if (again == NULL) insert(json, len, s);   /* unlisted (out of memory): the caller's alone */
    pthread_mutex_unlock(&cache.lock);
    if (again) {
        tl_avro_schema_free(s);
        s = again;
    }
    *out = s;
    return TL_OK;
}

void tl_avro_schema_release(tl_avro_schema *schema)
{
    if (schema == NULL) return;
    pthread_mutex_lock(&cache.lock);
    unref(schema);
    pthread_mutex_unlock(&cache.lock);
}
