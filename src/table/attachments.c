#include "table/attachments.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/random.h"
#include "formats/input/text_batch.h"
#include "core/json_text.h"
#include "table/contract.h"
#include "table/live_files.h"

#define ATTACHMENT_PREFIX "att-"
#define MAX_KEY_BYTES 256

/* Iceberg's own summary keys (the spec's, and what Java and Spark write). */
static bool iceberg_key(const char *k)
{
    static const char *const exact[] = {
        "operation",        "source-snapshot-id",           "replace-partitions",      "wap.id",
        "published-wap-id", "partition-summaries-included", "changed-partition-count", NULL};
    static const char *const prefixes[] = {"added-",   "deleted-",    "removed-", "total-",
                                           "changed-", "partitions.", "spark.",   NULL};
    for (size_t i = 0; exact[i]; i++)
        if (strcmp(k, exact[i]) == 0) return true;
    for (size_t i = 0; prefixes[i]; i++)
        if (strncmp(k, prefixes[i], strlen(prefixes[i])) == 0) return true;
    return false;
}

static tl_status check_key(const char *what, const char *k, const tl_strlist *seen, tl_error *err)
{
    if (k == NULL || k[0] == '\0')
        return tl_error_set(err, TL_ERR_INVALID, "%s: an empty key", what);
    if (strlen(k) > MAX_KEY_BYTES || !tl_utf8_valid((const uint8_t *)k, strlen(k)))
        return tl_error_set(err, TL_ERR_INVALID,
                            "%s \"%.64s\": keys are valid UTF-8 of at most %d bytes", what, k,
                            MAX_KEY_BYTES);
    if (strncmp(k, "timelake.", 9) == 0 || iceberg_key(k))
        return tl_error_set(err, TL_ERR_INVALID,
                            "%s \"%s\" is reserved (timelake.* and Iceberg's own summary keys): "
                            "choose another name",
                            what, k);
    if (tl_strlist_contains(seen, k))
        return tl_error_set(err, TL_ERR_INVALID, "%s \"%s\" is given twice", what, k);
    return TL_OK;
}

tl_status tl_commit_extras_check(const tl_append_options *o, tl_error *err)
{
    tl_strlist seen = {0};
    tl_status st = TL_OK;
    for (const char *const *kv = o->summary; st == TL_OK && kv && kv[0]; kv += 2) {
        st = check_key("summary key", kv[0], &seen, err);
        if (st == TL_OK && (kv[1] == NULL || !tl_utf8_valid((const uint8_t *)kv[1], strlen(kv[1]))))
            st = tl_error_set(err, TL_ERR_INVALID,
                              "summary key \"%s\": its value is missing or not valid UTF-8", kv[0]);
        if (st == TL_OK && tl_strlist_push(&seen, kv[0]) != 0) st = tl_error_nomem(err);
    }
    if (st == TL_OK && o->attachments_len && o->attachments == NULL)
        st = tl_error_set(err, TL_ERR_INVALID, "attachments_len is %zu but attachments is NULL",
                          o->attachments_len);
    for (size_t i = 0; st == TL_OK && i < o->attachments_len; i++) {
        const tl_attachment *a = &o->attachments[i];
        st = check_key("attachment", a->name, &seen, err);
        if (st == TL_OK && a->len && a->data == NULL)
            st = tl_error_set(err, TL_ERR_INVALID, "attachment \"%s\" has no data", a->name);
        if (st == TL_OK && tl_strlist_push(&seen, a->name) != 0) st = tl_error_nomem(err);
    }
    tl_strlist_free(&seen);
    return st;
}

tl_status tl_attachments_prepare(const tl_table *t, const tl_attachment *a, size_t n,
                                 tl_attachment_uploads *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (n == 0) return TL_OK;
    out->names = calloc(n, sizeof *out->names);
    out->keys = calloc(n, sizeof *out->keys);
    out->urls = calloc(n, sizeof *out->urls);
    out->items = calloc(n, sizeof *out->items);
    if (!out->names || !out->keys || !out->urls || !out->items) {
        tl_attachments_free(NULL, out, false);
        return tl_error_nomem(err);
    }
    for (size_t i = 0; i < n; i++, out->n++) {
        /* UUIDv7: orphan cleanup ages an attachment no snapshot names by it. */
        char uuid[TL_UUID_STR_LEN + 1];
        tl_uuid_v7(uuid);
        out->names[i] = a[i].name;
        out->keys[i] =
            tl_strdup_printf("%s/metadata/" ATTACHMENT_PREFIX "%s.bin", t->name.key, uuid);
        out->urls[i] =
            out->keys[i] ? tl_strdup_printf("%s%s", t->location, out->keys[i] + strlen(t->name.key))
                         : NULL;
        out->items[i] = (tl_store_put_item){out->keys[i], a[i].data ? a[i].data : "", a[i].len};
        if (out->urls[i] == NULL) {
            out->n++;
            tl_attachments_free(NULL, out, false);
            return tl_error_nomem(err);
        }
    }
    return TL_OK;
}

void tl_attachments_free(tl_table *t, tl_attachment_uploads *u, bool remove)
{
    for (size_t i = 0; i < u->n; i++) {
        if (remove && t && u->keys[i]) tl_store_remove(t->lake->store, u->keys[i], NULL);
        free(u->keys[i]);
        free(u->urls[i]);
    }
    free(u->names);
    free(u->keys);
    free(u->urls);
    free(u->items);
    memset(u, 0, sizeof *u);
}

/* The names the summary of s lists (a malformed list, from another tool, is
 * none); NULL when out of memory. */
static json_t *names_of(const tl_ice_snapshot *s)
{
    const char *text = s ? tl_ice_snapshot_summary(s, TL_SUMMARY_ATTACHMENTS) : NULL;
    json_error_t je;
    bool nomem = false;
    json_t *a = text ? tl_json_loadb(text, strlen(text), 0, &je, &nomem) : NULL;
    if (nomem) return NULL;
    if (json_is_array(a)) return a;
    json_decref(a);
    return json_array();
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The source kept with s (its memo): the source's id, or s's own id for
 * none (s itself never is the source of a memo: a snapshot listing
 * attachments is its own source and needs none). False when nothing is kept,
 * or the source kept is not in md (expired by another writer since). */
static bool memo_of(const tl_ice_metadata *md, const tl_ice_snapshot *s,
                    const tl_ice_snapshot **out)
{
    int64_t id;
    if (!tl_ice_snapshot_memo(s, &id)) return false;
    *out = id == s->snapshot_id ? NULL : tl_ice_metadata_snapshot(md, id);
    return id == s->snapshot_id || *out != NULL;
}

/* Each commit looks up its parent's source: without the memos, a table that
 * never had attachments walked its whole history on every append. */
const tl_ice_snapshot *tl_attachments_source(const tl_ice_metadata *md, const tl_ice_snapshot *s)
{
    const tl_ice_snapshot *found = NULL, *at = s;
    size_t steps = 0;
    for (; at && steps <= md->n_snapshots; steps++) {
        if (tl_ice_snapshot_summary(at, TL_SUMMARY_ATTACHMENTS)) {
            found = at;
            break;
        }
        if (memo_of(md, at, &found)) break;
        const tl_ice_snapshot *parent = tl_ice_metadata_parent(md, at);
        /* A parent missing from md (expired) ends the walk, but what it found
         * holds for md only: nothing is kept. */
        if (parent == NULL && at->has_parent) return NULL;
        at = parent;
    }
    if (steps > md->n_snapshots) return NULL; /* a parent cycle (malformed metadata) */
    /* The answer follows from the snapshots between s and `at` alone: kept. */
    for (const tl_ice_snapshot *p = s; p && p != at; p = tl_ice_metadata_parent(md, p))
        tl_ice_snapshot_set_memo(p, found ? found->snapshot_id : p->snapshot_id);
    return found;
}

tl_status tl_attachments_sources(const tl_ice_metadata *md, size_t **out, tl_error *err)
{
    const size_t none = SIZE_MAX, unknown = SIZE_MAX - 1, n = md->n_snapshots;
    size_t *src = malloc((n + 1) * sizeof *src), *path = malloc((n + 1) * sizeof *path);
    if (src == NULL || path == NULL) {
        free(src);
        free(path);
        return tl_error_nomem(err);
    }
    for (size_t i = 0; i < n; i++) src[i] = unknown;
    for (size_t i = 0; i < n; i++) {
        /* Up the ancestry to a snapshot already resolved, or one listing attachments. */
        size_t k = i, len = 0;
        while (k != none && src[k] == unknown && len <= n) {
            const tl_ice_snapshot *s = &md->snapshots[k];
            if (tl_ice_snapshot_summary(s, TL_SUMMARY_ATTACHMENTS)) {
                src[k] = k;
                break;
            }
            path[len++] = k;
            const tl_ice_snapshot *p = tl_ice_metadata_parent(md, s);
            k = p ? (size_t)(p - md->snapshots) : none;
        }
        /* A parent cycle (malformed metadata) ends unresolved: no source. */
        size_t found = k == none || src[k] == unknown ? none : src[k];
        for (size_t j = 0; j < len; j++) src[path[j]] = found;
    }
    free(path);
    *out = src;
    return TL_OK;
}

tl_status tl_attachments_summary(const tl_ice_metadata *md, const tl_ice_snapshot *parent,
                                 const tl_attachment_uploads *own, tl_strlist *kv, tl_error *err)
{
    parent = tl_attachments_source(md, parent);
    json_t *old = names_of(parent);
    tl_strlist names = {0}, urls = {0};
    bool ok = old != NULL;
    for (size_t i = 0; ok && own && i < own->n; i++)
        ok = tl_strlist_push(&names, own->names[i]) == 0 &&
             tl_strlist_push(&urls, own->urls[i]) == 0;
    size_t i;
    json_t *v;
    json_array_foreach(old, i, v)
    {
        const char *name = json_string_value(v);
        const char *url = name ? tl_ice_snapshot_summary(parent, name) : NULL;
        if (!ok || url == NULL || tl_strlist_contains(&names, name)) continue;
        ok = tl_strlist_push(&names, name) == 0 && tl_strlist_push(&urls, url) == 0;
    }
    json_decref(old);
    for (size_t k = 0; ok && k < names.len; k++)
        ok = tl_strlist_push(kv, names.items[k]) == 0 && tl_strlist_push(kv, urls.items[k]) == 0;
    /* The list, sorted so that equal sets read equal. */
    char **sorted = ok && names.len ? malloc(names.len * sizeof *sorted) : NULL;
    if (sorted) {
        memcpy(sorted, names.items, names.len * sizeof *sorted);
        qsort(sorted, names.len, sizeof *sorted, cmp_str);
    }
    json_t *list = names.len && sorted ? json_array() : NULL;
    for (size_t k = 0; list && k < names.len; k++)
        ok = ok && json_array_append_new(list, json_string(sorted[k])) == 0;
    char *text = list ? tl_json_dumps(list, JSON_COMPACT) : NULL;
    if (names.len && (text == NULL || tl_strlist_push(kv, TL_SUMMARY_ATTACHMENTS) != 0 ||
                      tl_strlist_push_owned(kv, text) != 0)) {
        free(text);
        ok = false;
    }
    json_decref(list);
    free(sorted);
    tl_strlist_free(&names);
    tl_strlist_free(&urls);
    return ok ? TL_OK : tl_error_nomem(err);
}

tl_status tl_snapshot_attachment_urls(const tl_ice_snapshot *s, tl_strlist *urls, tl_error *err)
{
    json_t *names = names_of(s);
    if (names == NULL) return tl_error_nomem(err);
    size_t i;
    json_t *v;
    bool ok = true;
    json_array_foreach(names, i, v)
    {
        const char *url =
            json_string_value(v) ? tl_ice_snapshot_summary(s, json_string_value(v)) : NULL;
        if (ok && url) ok = tl_strlist_push(urls, url) == 0;
    }
    json_decref(names);
    return ok ? TL_OK : tl_error_nomem(err);
}

bool tl_attachment_key(const char *base_name)
{
    size_t n = strlen(base_name);
    return strncmp(base_name, ATTACHMENT_PREFIX, strlen(ATTACHMENT_PREFIX)) == 0 && n > 4 &&
           strcmp(base_name + n - 4, ".bin") == 0;
}

tl_status tl_table_attachment(tl_table *t, const char *name, void **out, size_t *out_len,
                              tl_error *err)
{
    if (name == NULL) return tl_error_set(err, TL_ERR_INVALID, "no attachment name given");
    const tl_ice_snapshot *s =
        tl_attachments_source(t->md, tl_ice_metadata_current_snapshot(t->md));
    json_t *names = names_of(s);
    bool listed = false;
    size_t i;
    json_t *v;
    json_array_foreach(names, i, v) listed =
        listed || (json_string_value(v) && strcmp(json_string_value(v), name) == 0);
    json_decref(names);
    const char *url = listed ? tl_ice_snapshot_summary(s, name) : NULL;
    if (url == NULL)
        return tl_error_set(err, TL_ERR_NOT_FOUND, "%s: no attachment \"%s\" in version %lld",
                            t->name.full, name, (long long)t->version);
    tl_buf b = {0};
    tl_status st = tl_table_read_url(t, url, &b, err);
    if (st == TL_OK && b.data == NULL && tl_buf_reserve(&b, 1) != 0) st = tl_error_nomem(err);
    if (st != TL_OK) {
        tl_buf_free(&b);
        return tl_error_prefix(err, "%s: attachment \"%s\"", t->name.full, name);
    }
    *out = tl_buf_detach(&b, out_len);
    return TL_OK;
}
