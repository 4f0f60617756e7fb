/* Writing the next batch ledger when expiry removes snapshots (see
 * batch_ledger.h).
 *
 * After the expiry every kept snapshot whose parent is gone (or that has
 * none) is a lineage root, and its entries are the batch ids of all its
 * ancestors: walking the metadata before the expiry from its parent, through
 * expired and kept snapshots alike, to where that walk ends, then the old
 * ledger's entries of the root it ends at. A root that stays a root keeps its
 * entries. Entries of lines no kept snapshot descends from are dropped: no
 * rollback can make their rows current again. So an id lands in the ledger
 * once per line that holds it, and never for a line that does not. */
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/grow.h"
#include "core/random.h"
#include "table/batch_ids.h"
#include "table/batch_ledger.h"

typedef struct inherit {
    int64_t from; /* a root of the old ledger (or where a walk ended) */
    int64_t root; /* the new root that takes its entries */
} inherit;

typedef struct draft {
    tl_ledger l;
    size_t cap, cap_lineages;
    inherit *inherits;
    size_t n_inherits, cap_inherits;
} draft;

static bool push_entry(draft *d, const char *batch_id, int64_t ms, bool tagged, int64_t lineage)
{
    if (TL_GROW(d->l.entries, d->cap, d->l.n + 1, 64) != 0) return false;
    char *copy = strdup(batch_id);
    if (copy == NULL) return false;
    d->l.entries[d->l.n++] = (tl_ledger_entry){copy, ms, tagged, lineage};
    return true;
}

static tl_status add_snapshot(draft *d, const tl_ice_snapshot *s, int64_t root, tl_error *err)
{
    tl_strlist ids = {0};
    tl_status st = tl_snapshot_batch_ids(s, &ids, err);
    for (size_t i = 0; st == TL_OK && i < ids.len; i++)
        if (!push_entry(d, ids.items[i], s->timestamp_ms, true, root)) st = tl_error_nomem(err);
    tl_strlist_free(&ids);
    return st;
}

/* Notes k (kept) as a root when its parent is gone after the expiry, with
 * the ids of its expired ancestry and where its walk ends. */
static tl_status add_root(draft *d, const tl_ice_metadata *md, const bool *expire,
                          const tl_ice_snapshot *k, tl_error *err)
{
    const tl_ice_snapshot *s = tl_ice_metadata_parent(md, k);
    if (s && !expire[s - md->snapshots]) return TL_OK; /* not a root */
    if (TL_GROW(d->l.lineages, d->cap_lineages, d->l.n_lineages + 1, 8) != 0 ||
        TL_GROW(d->inherits, d->cap_inherits, d->n_inherits + 1, 8) != 0)
        return tl_error_nomem(err);
    d->l.lineages[d->l.n_lineages++] = k->snapshot_id;
    const tl_ice_snapshot *end = k;
    /* Bounded by the snapshot count, in case of a malformed parent cycle. */
    for (size_t steps = 0; s != NULL && steps <= md->n_snapshots; steps++) {
        TL_TRY(add_snapshot(d, s, k->snapshot_id, err));
        end = s;
        s = tl_ice_metadata_parent(md, s);
    }
    d->inherits[d->n_inherits++] = (inherit){end->snapshot_id, k->snapshot_id};
    return TL_OK;
}

/* Carries the old ledger's entries: untagged ones as they are, tagged ones
 * to the new roots that inherit their root. A root the old ledger does not
 * list (another tool's expiry removed snapshots since) inherits every tagged
 * entry: the ids of its history are among them, but which ones is unknown. */
static tl_status carry(draft *d, const tl_ledger *old, tl_error *err)
{
    for (size_t i = 0; i < old->n; i++) {
        const tl_ledger_entry *e = &old->entries[i];
        if (!e->tagged && !push_entry(d, e->batch_id, e->committed_ms, false, 0))
            return tl_error_nomem(err);
    }
    for (size_t h = 0; h < d->n_inherits; h++) {
        bool known = tl_ledger_has_lineage(old, d->inherits[h].from);
        for (size_t i = 0; i < old->n; i++) {
            const tl_ledger_entry *e = &old->entries[i];
            if (!e->tagged || (known && e->lineage != d->inherits[h].from)) continue;
            if (!push_entry(d, e->batch_id, e->committed_ms, true, d->inherits[h].root))
                return tl_error_nomem(err);
        }
    }
    return TL_OK;
}

/* Drops entries older than timelake.batch-id-retention. */
static tl_status apply_retention(const tl_table *t, tl_ledger *l, tl_error *err)
{
    const char *v = tl_ice_metadata_property(t->md, TL_PROP_BATCH_ID_RETENTION);
    if (v == NULL) return TL_OK;
    int64_t us;
    if (tl_duration_parse(v, &us, err) != TL_OK)
        return tl_error_prefix(err, "%s", TL_PROP_BATCH_ID_RETENTION);
    int64_t cutoff = tl_now_millis() - us / 1000;
    size_t m = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (l->entries[i].committed_ms >= cutoff)
            l->entries[m++] = l->entries[i];
        else
            free(l->entries[i].batch_id);
    }
    l->n = m;
    return TL_OK;
}

static bool same(const tl_ledger *a, const tl_ledger *b)
{
    if (a->lined != b->lined || a->n != b->n || a->n_lineages != b->n_lineages) return false;
    if (a->n_lineages && memcmp(a->lineages, b->lineages, a->n_lineages * sizeof *a->lineages))
        return false;
    for (size_t i = 0; i < a->n; i++) {
        const tl_ledger_entry *x = &a->entries[i], *y = &b->entries[i];
        if (strcmp(x->batch_id, y->batch_id) != 0 || x->committed_ms != y->committed_ms ||
            x->tagged != y->tagged || x->lineage != y->lineage)
            return false;
    }
    return true;
}

/* Uploads the ledger, names it in `next` and caches it (taking l). */
static tl_status publish(const tl_table *t, tl_ledger *l, tl_ice_metadata *next, char **new_key,
                         tl_error *err)
{
    tl_buf avro = {0};
    char uuid[TL_UUID_STR_LEN + 1];
    tl_uuid_v7(uuid);
    char *key = tl_strdup_printf("%s/metadata/batch-ledger-%s.avro", t->name.key, uuid);
    char *url = key ? tl_strdup_printf("%s%s", t->location, key + strlen(t->name.key)) : NULL;
    tl_status st = url ? tl_ledger_encode(l, &avro, err) : tl_error_nomem(err);
    if (st == TL_OK) st = tl_store_put_new(t->lake->store, key, avro.data, avro.len, err);
    tl_buf_free(&avro);
    if (st == TL_OK) {
        *new_key = key;
        key = NULL;
        st = tl_ice_metadata_set_property(next, TL_PROP_BATCH_LEDGER, url, err);
    }
    if (st == TL_OK) {
        l->url = url;
        url = NULL;
        tl_batch_ledger_remember(l);
    }
    free(key);
    free(url);
    return st;
}

static tl_status build(const tl_table *t, const bool *expire, const tl_ledger *old, draft *d,
                       tl_error *err)
{
    const tl_ice_metadata *md = t->md;
    d->l.lined = true;
    for (size_t i = 0; i < md->n_snapshots; i++)
        if (!expire[i]) TL_TRY(add_root(d, md, expire, &md->snapshots[i], err));
    TL_TRY(carry(d, old, err));
    d->l.n = tl_ledger_sort_unique(d->l.entries, d->l.n);
    d->l.n_lineages = tl_ledger_sort_lineages(d->l.lineages, d->l.n_lineages);
    return apply_retention(t, &d->l, err);
}

tl_status tl_batch_ledger_extend(const tl_table *t, const bool *expire, tl_ice_metadata *next,
                                 char **new_key, tl_error *err)
{
    *new_key = NULL;
    tl_ledger old;
    TL_TRY(tl_batch_ledger_load(t, &old, err));
    draft d = {0};
    tl_status st = build(t, expire, &old, &d, err);
    /* Nothing to remember, or nothing new: no file. */
    bool none = d.l.n == 0 && tl_ice_metadata_property(t->md, TL_PROP_BATCH_LEDGER) == NULL;
    if (st == TL_OK && !none && !same(&d.l, &old)) st = publish(t, &d.l, next, new_key, err);
    tl_ledger_free(&d.l);
    free(d.inherits);
    tl_ledger_free(&old);
    return st;
}
