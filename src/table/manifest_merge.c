/* Merging manifests on append (see manifest_merge.h). */
#include "table/manifest_merge.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/random.h"
#include "table/append.h"
#include "table/maintain.h"

#define PROP_ENABLED "commit.manifest-merge.enabled"
#define PROP_MIN_COUNT "commit.manifest.min-count-to-merge"
#define PROP_TARGET_SIZE "commit.manifest.target-size-bytes"
#define DEFAULT_FAN_IN 8
#define DEFAULT_TARGET_SIZE (INT64_C(8) * 1024 * 1024)
#define MAX_TIERS 32

typedef struct merge_settings {
    bool enabled;
    int64_t fan_in;
    int64_t target_size;
} merge_settings;

static int64_t int_property(const tl_table *t, const char *key, int64_t fallback)
{
    const char *v = tl_ice_metadata_property(t->md, key);
    char *end = NULL;
    long long n = v ? strtoll(v, &end, 10) : 0;
    return v && v[0] && *end == '\0' && n > 0 ? n : fallback;
}

static merge_settings settings_of(const tl_table *t)
{
    const char *on = tl_ice_metadata_property(t->md, PROP_ENABLED);
    merge_settings s = {
        .enabled = t->md->format_version >= 2 && (on == NULL || strcasecmp(on, "false") != 0),
        .fan_in = int_property(t, PROP_MIN_COUNT, DEFAULT_FAN_IN),
        .target_size = int_property(t, PROP_TARGET_SIZE, DEFAULT_TARGET_SIZE),
    };
    if (s.fan_in < 2) s.fan_in = 2;
    return s;
}

static int64_t live_files(const tl_ice_manifest_file *m)
{
    return (int64_t)m->added_files_count + m->existing_files_count;
}

/* Only deleted entries, of an earlier snapshot: no reader needs it any more. */
static bool spent(const tl_ice_manifest_file *m)
{
    return m->content == 0 && live_files(m) == 0 && m->deleted_files_count > 0;
}

static int tier_of(int64_t files, int64_t fan_in)
{
    int tier = 0;
    for (int64_t limit = fan_in; files >= limit && tier < MAX_TIERS - 1; limit *= fan_in) tier++;
    return tier;
}

/* Marks in out->leave the manifests to merge (the lowest tier holding
 * fan-in of them) and the spent ones; returns how many are merged. */
static size_t choose(const tl_table *t, const merge_settings *s, const tl_ice_manifest_file *old,
                     size_t n_old, bool *leave)
{
    const tl_ice_partition_spec *spec = tl_ice_metadata_default_spec(t->md);
    int32_t spec_id = spec ? spec->spec_id : 0;
    size_t count[MAX_TIERS] = {0};
    bool *candidate = calloc(n_old + 1, sizeof *candidate);
    if (candidate == NULL) return 0;
    for (size_t i = 0; i < n_old; i++) {
        const tl_ice_manifest_file *m = &old[i];
        leave[i] = spent(m);
        candidate[i] = !leave[i] && m->content == 0 && m->partition_spec_id == spec_id &&
                       m->manifest_length < s->target_size && live_files(m) > 0;
        if (candidate[i]) count[tier_of(live_files(m), s->fan_in)]++;
    }
    int tier = 0;
    while (tier < MAX_TIERS && (int64_t)count[tier] < s->fan_in) tier++;
    size_t n = 0;
    for (size_t i = 0; tier < MAX_TIERS && i < n_old; i++)
        if (candidate[i] && tier_of(live_files(&old[i]), s->fan_in) == tier) {
            leave[i] = true;
            n++;
        }
    free(candidate);
    return n;
}

/* Appends the entries of every manifest marked to merge into one array. */
static tl_status gather(const tl_table *t, const tl_ice_manifest_file *old, size_t n_old,
                        const bool *merge, tl_ice_manifest_entry **out, size_t *n, tl_error *err)
{
    *out = NULL;
    *n = 0;
    tl_status st = TL_OK;
    for (size_t i = 0; st == TL_OK && i < n_old; i++) {
        if (!merge[i]) continue;
        tl_ice_manifest_entry *e = NULL;
        size_t k = 0;
        st = tl_manifest_cache_existing(t, &old[i], &e, &k, err);
        tl_ice_manifest_entry *all = st == TL_OK ? realloc(*out, (*n + k + 1) * sizeof *all) : NULL;
        if (st == TL_OK && all == NULL) st = tl_error_nomem(err);
        if (st == TL_OK) {
            *out = all;
            memcpy(all + *n, e, k * sizeof *e);
            *n += k;
            free(e); /* the files moved */
        } else {
            tl_ice_manifest_entries_free(e, k);
        }
    }
    return st;
}

static tl_status describe(const tl_table *t, const tl_ice_manifest_entry *e, size_t n,
                          int64_t snapshot_id, int64_t seq, tl_manifest_merge *out, tl_error *err)
{
    tl_ice_manifest_file *mf = calloc(1, sizeof *mf);
    const tl_ice_data_file **files = malloc((n + 1) * sizeof *files);
    if (mf == NULL || files == NULL) {
        free(mf);
        free(files);
        return tl_error_nomem(err);
    }
    out->merged = mf;
    const tl_ice_partition_spec *spec = tl_ice_metadata_default_spec(t->md);
    mf->manifest_path = tl_strdup_printf("%s%s", t->location, out->key + strlen(t->name.key));
    mf->manifest_length = (int64_t)out->avro.len;
    mf->partition_spec_id = spec ? spec->spec_id : 0;
    mf->added_snapshot_id = snapshot_id;
    mf->sequence_number = mf->min_sequence_number = seq;
    for (size_t i = 0; i < n; i++) {
        files[i] = &e[i].file;
        if (e[i].sequence_number < mf->min_sequence_number)
            mf->min_sequence_number = e[i].sequence_number;
        mf->existing_files_count++;
        mf->existing_rows_count += e[i].file.record_count;
    }
    tl_status st =
        mf->manifest_path ? tl_table_manifest_summarize(files, n, mf, err) : tl_error_nomem(err);
    free(files);
    return st;
}

tl_status tl_manifest_merge_plan(const tl_table *t, const tl_ice_manifest_file *old, size_t n_old,
                                 int64_t snapshot_id, int64_t seq, tl_manifest_merge *out,
                                 tl_error *err)
{
    memset(out, 0, sizeof *out);
    merge_settings s = settings_of(t);
    if (!s.enabled || n_old == 0) return TL_OK;
    out->leave = calloc(n_old, sizeof *out->leave);
    if (out->leave == NULL) return tl_error_nomem(err);
    if (choose(t, &s, old, n_old, out->leave) == 0) return TL_OK;
    bool *merge = calloc(n_old, sizeof *merge);
    if (merge == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n_old; i++) merge[i] = out->leave[i] && !spent(&old[i]);
    tl_ice_manifest_entry *e = NULL;
    size_t n = 0;
    tl_status st = gather(t, old, n_old, merge, &e, &n, err);
    free(merge);
    if (st == TL_OK && n == 0) return TL_OK; /* counts that promised live files lied */
    char uuid[TL_UUID_STR_LEN + 1];
    tl_uuid_v7(uuid); /* orphan cleanup ages files by it */
    if (st == TL_OK) {
        out->key = tl_strdup_printf("%s/metadata/%s-m-merged.avro", t->name.key, uuid);
        st = out->key ? tl_table_manifest_encode(t, e, n, &out->avro, err) : tl_error_nomem(err);
    }
    if (st == TL_OK) st = describe(t, e, n, snapshot_id, seq, out, err);
    tl_ice_manifest_entries_free(e, n);
    return st;
}

void tl_manifest_merge_clear(tl_table *t, tl_manifest_merge *m, bool remove)
{
    if (remove && m->key) tl_store_remove(t->lake->store, m->key, NULL);
    free(m->leave);
    free(m->key);
    tl_buf_free(&m->avro);
    tl_ice_manifest_files_free(m->merged, m->merged ? 1 : 0);
    memset(m, 0, sizeof *m);
}
