/* Atomic replace (tl_table_replace), compare-and-swap (expect_version),
 * snapshot summary entries and attachments (tl_append_options), on a local
 * lake through the public API: what each commits, what a lost race does, and
 * that every refused or failed commit leaves the table and its folder exactly
 * as they were. Readers of other implementations: tests/py/test_replace.py. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arrow/stream.h"
#include "core/strlist.h"
#include "iceberg/metadata.h"
#include "test_arrow_helpers.h"
#include "test_table_helpers.h"
#include "timelake.h"

static void kv_schema(struct ArrowSchema *s)
{
    tl_error err;
    CHECK_OK(tl_schema_init(s, "+s", NULL, 0, 2, &err), &err);
    CHECK_OK(tl_schema_init(s->children[0], "u", "k", ARROW_FLAG_NULLABLE, 0, &err), &err);
    CHECK_OK(tl_schema_init(s->children[1], "l", "n", ARROW_FLAG_NULLABLE, 0, &err), &err);
}

/* A stream of rows (keys[i], i + first). */
static void kv_stream(const char *const *keys, int64_t rows, int64_t first,
                      struct ArrowArrayStream *out)
{
    tl_error err;
    int64_t n[64];
    for (int64_t i = 0; i < rows; i++) n[i] = first + i;
    tcol c0, c1;
    tcol_strs(&c0, "u", keys, rows);
    tcol_ints(&c1, "l", n, NULL, rows);
    struct ArrowArray batch;
    CHECK_OK(tl_array_init(&batch, 1, 2, &err), &err);
    batch.length = rows;
    tl_array_move(&c0.array, batch.children[0]);
    tl_array_move(&c1.array, batch.children[1]);
    tcol_free(&c0);
    tcol_free(&c1);
    struct ArrowSchema schema;
    kv_schema(&schema);
    CHECK_OK(tl_stream_from_batches(&schema, &batch, rows ? 1 : 0, &out[0], &err), &err);
    if (rows == 0) tl_array_release(&batch);
}

static tl_status commit(tl_table *t, bool replace, const tl_append_options *o,
                        const char *const *keys, int64_t rows, int64_t first, tl_append_result *r,
                        tl_error *err)
{
    struct ArrowArrayStream s;
    kv_stream(keys, rows, first, &s);
    return replace ? tl_table_replace(t, &s, o, r, err) : tl_table_append(t, &s, o, r, err);
}

static tl_table *create_with(const char *dir_name, const char *name, const char *const *props,
                             tl_lake **lake, char *dir, size_t size)
{
    snprintf(dir, size, "%s/%s", unit_tmpdir(), dir_name);
    tl_error err;
    CHECK_OK(tl_lake_open(dir, NULL, lake, &err), &err);
    struct ArrowSchema schema;
    kv_schema(&schema);
    const char *by[] = {"k"};
    tl_table_options o = {.dedup = -1,
                          .ingest_time = -1,
                          .partition_by = by,
                          .partition_by_len = 1,
                          .properties = props};
    tl_table *t = NULL;
    CHECK_OK(tl_lake_create_table(*lake, name, &schema, &o, &t, &err), &err);
    tl_schema_release(&schema);
    return t;
}

static tl_table *create(const char *dir_name, const char *name, tl_lake **lake, char *dir,
                        size_t size)
{
    return create_with(dir_name, name, NULL, lake, dir, size);
}

/* sum(n) and count(*) of the table, through SQL. */
static void totals(tl_lake *lake, const char *table, int64_t *count, int64_t *sum)
{
    char q[256];
    snprintf(q, sizeof q, "SELECT count(*), coalesce(sum(n), 0)::BIGINT FROM %s", table);
    struct ArrowArrayStream s;
    tl_error err;
    CHECK_OK(tl_lake_sql(lake, q, NULL, &s, NULL, &err), &err);
    struct ArrowSchema schema;
    struct ArrowArray *b = NULL;
    size_t n = 0;
    CHECK_OK(tl_stream_collect(&s, &schema, &b, &n, &err), &err);
    *count = *sum = -1;
    if (n > 0) {
        *count = ((const int64_t *)b[0].children[0]->buffers[1])[0];
        *sum = ((const int64_t *)b[0].children[1]->buffers[1])[0];
    }
    for (size_t i = 0; i < n; i++) tl_array_release(&b[i]);
    free(b);
    tl_schema_release(&schema);
    s.release(&s);
}

/* count(*) of the table where `column` is not null, through SQL. */
static void totals_text(tl_lake *lake, const char *table, const char *column, int64_t *count)
{
    char q[256];
    snprintf(q, sizeof q, "SELECT count(%s) FROM %s WHERE %s IN ('x', 'y')", column, table, column);
    struct ArrowArrayStream s;
    tl_error err;
    CHECK_OK(tl_lake_sql(lake, q, NULL, &s, NULL, &err), &err);
    struct ArrowSchema schema;
    struct ArrowArray *b = NULL;
    size_t n = 0;
    CHECK_OK(tl_stream_collect(&s, &schema, &b, &n, &err), &err);
    *count = n > 0 ? ((const int64_t *)b[0].children[0]->buffers[1])[0] : -1;
    for (size_t i = 0; i < n; i++) tl_array_release(&b[i]);
    free(b);
    tl_schema_release(&schema);
    s.release(&s);
}

/* Every file under dir, as "name\n" lines sorted, into a malloc'd string. */
static void list_files(const char *dir, const char *rel, tl_strlist *out)
{
    char path[1024];
    snprintf(path, sizeof path, "%s%s%s", dir, rel[0] ? "/" : "", rel);
    DIR *d = opendir(path);
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' && (e->d_name[1] == 0 || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        char sub[1024], full[2048];
        snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        snprintf(full, sizeof full, "%s/%s", dir, sub);
        struct stat sb;
        if (stat(full, &sb) == 0 && S_ISDIR(sb.st_mode))
            list_files(dir, sub, out);
        else
            tl_strlist_push(out, sub);
    }
    closedir(d);
    tl_strlist_sort(out);
}

static bool same_files(const tl_strlist *a, const tl_strlist *b)
{
    if (a->len != b->len) return false;
    for (size_t i = 0; i < a->len; i++)
        if (strcmp(a->items[i], b->items[i]) != 0) return false;
    return true;
}

static void test_replace_makes_the_stream_the_table(void)
{
    tl_lake *lake;
    char dir[600];
    tl_table *t = create("replace-basic", "k.r", &lake, dir, sizeof dir);
    const char *a[] = {"eu", "us", "eu"}, *b[] = {"ap", "ap"};
    tl_append_result r;
    tl_error err;
    tl_append_options o = {.maintain = 0};
    CHECK_OK(commit(t, false, &o, a, 3, 1, &r, &err), &err);
    CHECK_OK(commit(t, false, &o, a, 3, 10, &r, &err), &err);
    CHECK_OK(commit(t, true, &o, b, 2, 100, &r, &err), &err);
    CHECK_INT(r.rows, 2);
    CHECK_INT(r.version, 4);
    int64_t count, sum;
    totals(lake, "k.r", &count, &sum);
    CHECK_INT(count, 2);
    CHECK_INT(sum, 201);
    tl_table_info info;
    CHECK_OK(tl_table_info_get(t, &info, &err), &err);
    CHECK_INT(info.rows, 2);
    CHECK_INT(info.files, 1);
    CHECK_INT(info.snapshots, 3);
    tl_table_info_clear(&info);

    /* An empty stream empties the table, in one more snapshot. */
    CHECK_OK(commit(t, true, &o, b, 0, 0, &r, &err), &err);
    CHECK_INT(r.rows, 0);
    CHECK_INT(r.version, 5);
    totals(lake, "k.r", &count, &sum);
    CHECK_INT(count, 0);
    CHECK_OK(tl_table_info_get(t, &info, &err), &err);
    CHECK_INT(info.rows, 0);
    CHECK_INT(info.files, 0);
    tl_table_info_clear(&info);

    /* A replace repeated with its batch id commits nothing. */
    o.batch_id = "run-7";
    CHECK_OK(commit(t, true, &o, a, 3, 1, &r, &err), &err);
    CHECK_INT(r.duplicate, 0);
    CHECK_OK(commit(t, true, &o, b, 2, 1, &r, &err), &err);
    CHECK_INT(r.duplicate, 1);
    totals(lake, "k.r", &count, &sum);
    CHECK_INT(count, 3);
    tl_table_close(t);
    tl_lake_close(lake);
}

static void test_expect_version(void)
{
    tl_lake *lake;
    char dir[600];
    tl_table *t = create("replace-cas", "k.c", &lake, dir, sizeof dir);
    tl_table *other = NULL;
    tl_error err;
    CHECK_OK(tl_lake_open_table(lake, "k.c", &other, &err), &err);
    const char *a[] = {"eu", "us"};
    tl_append_result r;
    tl_append_options o = {.maintain = 0, .expect_version = 1};
    CHECK_OK(commit(t, false, &o, a, 2, 1, &r, &err), &err);
    CHECK_INT(r.version, 2);

    /* The other handle is at 1 but the table at 2: its commit loses the race
     * for version 2 and stops there, leaving nothing. */
    tl_strlist before = {0}, after = {0};
    list_files(dir, "", &before);
    CHECK_INT(commit(other, false, &o, a, 2, 1, &r, &err), TL_ERR_CONFLICT);
    CHECK(strstr(err.message, "version 1") != NULL);
    list_files(dir, "", &after);
    CHECK(same_files(&before, &after));
    tl_strlist_free(&after);
    /* A handle behind the version it expects catches up and commits. */
    o.expect_version = 2;
    CHECK_OK(commit(other, true, &o, a, 1, 50, &r, &err), &err);
    CHECK_INT(r.version, 3);
    /* t is at 2, the table at 3: expecting 2 is refused, and leaves nothing. */
    tl_strlist_free(&before);
    list_files(dir, "", &before);
    CHECK_INT(commit(t, false, &o, a, 2, 1, &r, &err), TL_ERR_CONFLICT);
    CHECK_INT(commit(t, true, &o, a, 2, 1, &r, &err), TL_ERR_CONFLICT);
    list_files(dir, "", &after);
    CHECK(same_files(&before, &after));
    CHECK_INT(tl_table_version(t), 2); /* no rebase: the caller refreshes */
    /* Expecting a version the handle is ahead of: refused at once. */
    o.expect_version = 1;
    CHECK_INT(commit(other, false, &o, a, 2, 1, &r, &err), TL_ERR_CONFLICT);
    CHECK(strstr(err.message, "at version 3, not 1") != NULL);
    o.expect_version = -1;
    CHECK_INT(commit(t, false, &o, a, 2, 1, &r, &err), TL_ERR_INVALID);
    int64_t count, sum;
    totals(lake, "k.c", &count, &sum);
    CHECK_INT(count, 1);
    CHECK_INT(sum, 50);
    tl_strlist_free(&before);
    tl_strlist_free(&after);
    tl_table_close(other);
    tl_table_close(t);
    tl_lake_close(lake);
}

/* Attachments and summary entries: committed with the rows, inherited by
 * later snapshots of every kind, replaced by name, read back. */
static void test_attachments_are_inherited(void)
{
    tl_lake *lake;
    char dir[600];
    tl_table *t = create("replace-attach", "k.a", &lake, dir, sizeof dir);
    const char *a[] = {"eu", "us"};
    tl_append_result r;
    tl_error err;
    void *data = NULL;
    size_t len = 0;
    CHECK_INT(tl_table_attachment(t, "files", &data, &len, &err), TL_ERR_NOT_FOUND);
    tl_attachment att[] = {{"files", "a.csv,b.csv", 11}, {"config", "\0binary\xff", 8}};
    const char *summary[] = {"job", "job-1", NULL};
    tl_append_options o = {
        .maintain = 0, .summary = summary, .attachments = att, .attachments_len = 2};
    CHECK_OK(commit(t, false, &o, a, 2, 1, &r, &err), &err);
    CHECK_OK(tl_table_attachment(t, "config", &data, &len, &err), &err);
    CHECK(len == 8 && memcmp(data, "\0binary\xff", 8) == 0);
    tl_free(data);

    /* A plain append, a compaction and a replace keep naming them. */
    tl_append_options plain = {.maintain = 0};
    CHECK_OK(commit(t, false, &plain, a, 2, 5, &r, &err), &err);
    tl_maintain_report rep;
    tl_maintain_options mo = {.compact = 1};
    CHECK_OK(tl_table_maintain(t, &mo, &rep, &err), &err);
    CHECK(rep.files_rewritten > 0);
    tl_attachment files2 = {"files", "c.csv", 5};
    tl_append_options replace = {.maintain = 0, .attachments = &files2, .attachments_len = 1};
    CHECK_OK(commit(t, true, &replace, a, 1, 9, &r, &err), &err);
    CHECK_OK(tl_table_attachment(t, "files", &data, &len, &err), &err);
    CHECK(len == 5 && memcmp(data, "c.csv", 5) == 0);
    tl_free(data);
    CHECK_OK(tl_table_attachment(t, "config", &data, &len, &err), &err);
    CHECK_INT(len, 8);
    tl_free(data);
    /* Another handle reads them from storage. */
    tl_table *other;
    CHECK_OK(tl_lake_open_table(lake, "k.a", &other, &err), &err);
    CHECK_OK(tl_table_attachment(other, "files", &data, &len, &err), &err);
    CHECK(len == 5 && memcmp(data, "c.csv", 5) == 0);
    tl_free(data);
    CHECK_INT(tl_table_attachment(other, "job", &data, &len, &err), TL_ERR_NOT_FOUND);
    tl_table_close(other);

    /* An attachment with no rows is a commit of its own. */
    tl_attachment files3 = {"files", "", 0};
    tl_append_options only = {.maintain = 0, .attachments = &files3, .attachments_len = 1};
    int64_t v = tl_table_version(t);
    CHECK_OK(commit(t, false, &only, a, 0, 0, &r, &err), &err);
    CHECK_INT(tl_table_version(t), v + 1);
    CHECK_OK(tl_table_attachment(t, "files", &data, &len, &err), &err);
    CHECK(data != NULL && len == 0);
    tl_free(data);
    int64_t count, sum;
    totals(lake, "k.a", &count, &sum);
    CHECK_INT(count, 1);
    tl_table_close(t);
    tl_lake_close(lake);
}

static void test_bad_summaries_commit_nothing(void)
{
    tl_lake *lake;
    char dir[600];
    tl_table *t = create("replace-bad", "k.b", &lake, dir, sizeof dir);
    const char *a[] = {"eu"};
    tl_append_result r;
    tl_error err;
    tl_strlist before = {0}, after = {0};
    list_files(dir, "", &before);
    const char *bad_keys[] = {
        "operation",          "timelake.batch-id",  "added-records", "total-records",
        "deleted-data-files", "removed-files-size", "spark.app.id",  ""};
    for (size_t i = 0; i < sizeof bad_keys / sizeof bad_keys[0]; i++) {
        const char *summary[] = {bad_keys[i], "x", NULL};
        tl_append_options o = {.maintain = 0, .summary = summary};
        CHECK_INT(commit(t, i % 2 == 0, &o, a, 1, 1, &r, &err), TL_ERR_INVALID);
        tl_attachment att = {bad_keys[i], "x", 1};
        tl_append_options o2 = {.maintain = 0, .attachments = &att, .attachments_len = 1};
        CHECK_INT(commit(t, false, &o2, a, 1, 1, &r, &err), TL_ERR_INVALID);
    }
    const char *twice[] = {"a", "1", "a", "2", NULL};
    tl_append_options o = {.maintain = 0, .summary = twice};
    CHECK_INT(commit(t, false, &o, a, 1, 1, &r, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "twice") != NULL);
    const char *clash[] = {"files", "1", NULL};
    tl_attachment att = {"files", "x", 1};
    tl_append_options o3 = {
        .maintain = 0, .summary = clash, .attachments = &att, .attachments_len = 1};
    CHECK_INT(commit(t, false, &o3, a, 1, 1, &r, &err), TL_ERR_INVALID);
    const char *no_value[] = {"k", NULL};
    tl_append_options o4 = {.maintain = 0, .summary = no_value};
    CHECK_INT(commit(t, false, &o4, a, 1, 1, &r, &err), TL_ERR_INVALID);
    const char *not_utf8[] = {"k", "\xff\xfe", NULL};
    tl_append_options o5 = {.maintain = 0, .summary = not_utf8};
    CHECK_INT(commit(t, false, &o5, a, 1, 1, &r, &err), TL_ERR_INVALID);
    list_files(dir, "", &after);
    CHECK(same_files(&before, &after));
    CHECK_INT(tl_table_version(t), 1);
    tl_strlist_free(&before);
    tl_strlist_free(&after);
    tl_table_close(t);
    tl_lake_close(lake);
}

/* A replace that loses a race without expect_version rebases: its rows are
 * the table, whatever the winner appended. */
static void test_lost_race_rebases(void)
{
    tl_lake *lake;
    char dir[600];
    tl_table *t = create("replace-race", "k.x", &lake, dir, sizeof dir);
    tl_table *other = NULL;
    tl_error err;
    CHECK_OK(tl_lake_open_table(lake, "k.x", &other, &err), &err);
    const char *a[] = {"eu", "us"}, *b[] = {"ap"};
    tl_append_result r;
    tl_append_options o = {.maintain = 0};
    CHECK_OK(commit(t, false, &o, a, 2, 1, &r, &err), &err);
    CHECK_OK(commit(other, true, &o, b, 1, 7, &r, &err), &err); /* other is at 1: rebases */
    CHECK_INT(r.attempts, 2);
    CHECK_INT(r.version, 3);
    int64_t count, sum;
    totals(lake, "k.x", &count, &sum);
    CHECK_INT(count, 1);
    CHECK_INT(sum, 7);
    tl_table_close(other);
    tl_table_close(t);
    tl_lake_close(lake);
}

/* Whether an object of the lake exists. */
static bool exists(tl_lake *lake, const char *url)
{
    const char *key = strstr(url, "k/e/metadata/");
    tl_object o;
    tl_error err;
    tl_status st = key ? tl_lake_stat_object(lake, key, &o, &err) : TL_ERR_NOT_FOUND;
    if (st == TL_OK) tl_object_clear(&o);
    return st == TL_OK;
}

/* The URL the current snapshot gives attachment `name`, via the metadata file. */
static void attachment_url(const char *dir, int64_t version, const char *name, char *out,
                           size_t size)
{
    char path[800];
    snprintf(path, sizeof path, "%s/k/e/metadata/v%lld.metadata.json", dir, (long long)version);
    tl_buf b = {0};
    FILE *f = fopen(path, "rb");
    char chunk[4096];
    size_t n;
    while (f && (n = fread(chunk, 1, sizeof chunk, f)) > 0) tl_buf_append(&b, chunk, n);
    if (f) fclose(f);
    tl_buf_append_byte(&b, 0);
    out[0] = 0;
    char needle[128];
    snprintf(needle, sizeof needle, "\"%s\":\"", name);
    /* The last mention: the current snapshot is the newest in the document. */
    const char *hit = NULL;
    for (const char *p = (const char *)b.data; (p = strstr(p, needle)) != NULL; p++) hit = p;
    if (hit) {
        hit += strlen(needle);
        const char *end = strchr(hit, '"');
        snprintf(out, size, "%.*s", end ? (int)(end - hit) : 0, hit);
    }
    tl_buf_free(&b);
}

/* Expiry keeps an attachment while a live snapshot names it, and deletes it
 * with the last snapshot that does. */
static void test_expiry_keeps_named_attachments(void)
{
    tl_lake *lake;
    char dir[600];
    const char *props[] = {"timelake.min-snapshots", "1", "timelake.max-snapshots", "1", NULL};
    tl_table *t = create_with("replace-expire", "k.e", props, &lake, dir, sizeof dir);
    tl_error err;
    const char *a[] = {"eu"};
    tl_append_result r;
    tl_attachment first = {"files", "one", 3};
    tl_append_options o = {.maintain = 0, .attachments = &first, .attachments_len = 1};
    CHECK_OK(commit(t, false, &o, a, 1, 1, &r, &err), &err);
    char url1[1024], url2[1024];
    attachment_url(dir, tl_table_version(t), "files", url1, sizeof url1);
    CHECK(exists(lake, url1));
    tl_append_options plain = {.maintain = 0};
    for (int i = 0; i < 4; i++) CHECK_OK(commit(t, false, &plain, a, 1, 2 + i, &r, &err), &err);
    setenv("TIMELAKE_ORPHAN_WINDOW", "0s", 1);
    /* Expire every snapshot but the current: it still names the first. */
    tl_maintain_options expire = {.expire = 1};
    tl_maintain_report rep;
    CHECK_OK(tl_table_maintain(t, &expire, &rep, &err), &err);
    CHECK(exists(lake, url1));
    void *data;
    size_t len;
    CHECK_OK(tl_table_attachment(t, "files", &data, &len, &err), &err);
    CHECK(len == 3 && memcmp(data, "one", 3) == 0);
    tl_free(data);
    /* A new attachment of that name: once the snapshots naming the first
     * expire, it goes. */
    tl_attachment second = {"files", "two", 3};
    o.attachments = &second;
    CHECK_OK(commit(t, false, &o, a, 1, 9, &r, &err), &err);
    attachment_url(dir, tl_table_version(t), "files", url2, sizeof url2);
    CHECK(strcmp(url1, url2) != 0 && exists(lake, url2));
    for (int i = 0; i < 3; i++) CHECK_OK(commit(t, false, &plain, a, 1, 20 + i, &r, &err), &err);
    CHECK_OK(tl_table_maintain(t, &expire, &rep, &err), &err);
    CHECK(rep.snapshots_expired > 0);
    CHECK(!exists(lake, url1));
    CHECK(exists(lake, url2));
    unsetenv("TIMELAKE_ORPHAN_WINDOW");
    tl_table_close(t);
    tl_lake_close(lake);
}

/* ---- tl_table_replace_schema ---- */

static void kvn_schema(struct ArrowSchema *s)
{
    tl_error err;
    CHECK_OK(tl_schema_init(s, "+s", NULL, 0, 3, &err), &err);
    CHECK_OK(tl_schema_init(s->children[0], "u", "k", ARROW_FLAG_NULLABLE, 0, &err), &err);
    CHECK_OK(tl_schema_init(s->children[1], "l", "n", ARROW_FLAG_NULLABLE, 0, &err), &err);
    CHECK_OK(tl_schema_init(s->children[2], "u", "note", ARROW_FLAG_NULLABLE, 0, &err), &err);
}

/* A stream of rows (keys[i], i + first, notes[i]) with columns k, n, note. */
static void kvn_stream(const char *const *keys, const char *const *notes, int64_t rows,
                       int64_t first, struct ArrowArrayStream *out)
{
    tl_error err;
    int64_t n[64];
    for (int64_t i = 0; i < rows; i++) n[i] = first + i;
    tcol c0, c1, c2;
    tcol_strs(&c0, "u", keys, rows);
    tcol_ints(&c1, "l", n, NULL, rows);
    tcol_strs(&c2, "u", notes, rows);
    struct ArrowArray batch;
    CHECK_OK(tl_array_init(&batch, 1, 3, &err), &err);
    batch.length = rows;
    tl_array_move(&c0.array, batch.children[0]);
    tl_array_move(&c1.array, batch.children[1]);
    tl_array_move(&c2.array, batch.children[2]);
    tcol_free(&c0);
    tcol_free(&c1);
    tcol_free(&c2);
    struct ArrowSchema schema;
    kvn_schema(&schema);
    CHECK_OK(tl_stream_from_batches(&schema, &batch, rows ? 1 : 0, out, &err), &err);
    if (rows == 0) tl_array_release(&batch);
}

/* The table's metadata version `version`, parsed (the caller frees it). */
static tl_ice_metadata *read_metadata(const char *dir, const char *table_dir, int64_t version)
{
    char path[900];
    snprintf(path, sizeof path, "%s/%s/metadata/v%lld.metadata.json", dir, table_dir,
             (long long)version);
    tl_buf b = {0};
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    char chunk[4096];
    size_t n;
    while (f && (n = fread(chunk, 1, sizeof chunk, f)) > 0) tl_buf_append(&b, chunk, n);
    if (f) fclose(f);
    tl_ice_metadata *md = NULL;
    tl_error err;
    CHECK_OK(tl_ice_metadata_parse((const char *)b.data, b.len, &md, &err), &err);
    tl_buf_free(&b);
    return md;
}

static int32_t field_id(const tl_ice_metadata *md, const char *name)
{
    const tl_ice_field *f = tl_ice_schema_find(tl_ice_metadata_current_schema(md), name);
    return f ? f->id : -1;
}

/* A new column and other partition keys, in one overwrite snapshot: kept
 * columns keep their ids, the new one gets the next; a new spec; the same
 * table UUID and every older snapshot. */
static void test_replace_schema_adds_a_column_and_repartitions(void)
{
    tl_lake *lake;
    char dir[600];
    tl_table *t = create("replace-schema", "k.s", &lake, dir, sizeof dir);
    const char *a[] = {"eu", "us", "eu"}, *notes[] = {"x", "y", "x"};
    tl_append_result r;
    tl_error err;
    tl_append_options o = {.maintain = 0};
    CHECK_OK(commit(t, false, &o, a, 3, 1, &r, &err), &err);
    tl_ice_metadata *before = read_metadata(dir, "k/s", 2);
    struct ArrowSchema schema;
    struct ArrowArrayStream s;
    kvn_schema(&schema);
    kvn_stream(a, notes, 3, 10, &s);
    const char *by[] = {"note", "k"};
    CHECK_OK(tl_table_replace_schema(t, &schema, by, 2, &s, &o, &r, &err), &err);
    CHECK_INT(r.rows, 3);
    CHECK_INT(r.version, 3);
    int64_t count, sum;
    totals(lake, "k.s", &count, &sum);
    CHECK_INT(count, 3);
    CHECK_INT(sum, 33);
    struct ArrowSchema now;
    CHECK_OK(tl_table_schema(t, &now, &err), &err);
    CHECK_INT(now.n_children, 3);
    CHECK_STR(now.children[2]->name, "note");
    tl_schema_release(&now);
    tl_table_info info;
    CHECK_OK(tl_table_info_get(t, &info, &err), &err);
    CHECK_STR(info.partition_by[0], "note");
    CHECK_STR(info.partition_by[1], "k");
    CHECK(info.partition_by[2] == NULL);
    CHECK_INT(info.files, 2);
    tl_table_info_clear(&info);

    tl_ice_metadata *md = read_metadata(dir, "k/s", 3);
    CHECK_STR(md->table_uuid, before->table_uuid);
    CHECK_INT(md->n_schemas, 2);
    CHECK_INT(md->current_schema_id, 1);
    CHECK_INT(field_id(md, "k"), field_id(before, "k"));
    CHECK_INT(field_id(md, "n"), field_id(before, "n"));
    CHECK_INT(field_id(md, "note"), before->last_column_id + 1);
    CHECK_INT(md->last_column_id, before->last_column_id + 1);
    CHECK_INT(md->n_specs, 2);
    CHECK_INT(md->default_spec_id, 1);
    const tl_ice_partition_spec *spec = tl_ice_metadata_default_spec(md);
    CHECK_INT(spec->n_fields, 2);
    CHECK_INT(spec->fields[0].field_id, 1001);                                /* note: new */
    CHECK_INT(spec->fields[1].field_id, before->specs[0].fields[0].field_id); /* k: kept */
    CHECK_INT(md->last_partition_id, 1001);
    CHECK_INT(md->n_snapshots, 2);
    const tl_ice_snapshot *cur = tl_ice_metadata_current_snapshot(md);
    CHECK_STR(tl_ice_snapshot_summary(cur, "operation"), "overwrite");
    CHECK_INT(cur->schema_id, 1);
    CHECK(tl_ice_metadata_snapshot(md, before->current_snapshot_id) != NULL);
    tl_ice_metadata_free(md);

    /* Back to the first columns and partitions: schema 0 and spec 0 again. */
    struct ArrowSchema first;
    kv_schema(&first);
    kv_stream(a, 2, 5, &s);
    const char *by_k[] = {"k"};
    CHECK_OK(tl_table_replace_schema(t, &first, by_k, 1, &s, &o, &r, &err), &err);
    md = read_metadata(dir, "k/s", 4);
    CHECK_INT(md->n_schemas, 2);
    CHECK_INT(md->current_schema_id, 0);
    CHECK_INT(md->n_specs, 2);
    CHECK_INT(md->default_spec_id, 0);
    tl_ice_metadata_free(md);
    totals(lake, "k.s", &count, &sum);
    CHECK_INT(count, 2);
    CHECK_INT(sum, 11);

    /* n becomes a string: a new column (a new id), unpartitioned. */
    struct ArrowSchema text;
    CHECK_OK(tl_schema_init(&text, "+s", NULL, 0, 2, &err), &err);
    CHECK_OK(tl_schema_init(text.children[0], "u", "k", ARROW_FLAG_NULLABLE, 0, &err), &err);
    CHECK_OK(tl_schema_init(text.children[1], "u", "n", ARROW_FLAG_NULLABLE, 0, &err), &err);
    tcol c0, c1;
    tcol_strs(&c0, "u", a, 2);
    tcol_strs(&c1, "u", notes, 2);
    struct ArrowArray batch;
    CHECK_OK(tl_array_init(&batch, 1, 2, &err), &err);
    batch.length = 2;
    tl_array_move(&c0.array, batch.children[0]);
    tl_array_move(&c1.array, batch.children[1]);
    tcol_free(&c0);
    tcol_free(&c1);
    struct ArrowSchema text_copy;
    CHECK_OK(tl_schema_copy(&text, &text_copy, &err), &err);
    CHECK_OK(tl_stream_from_batches(&text_copy, &batch, 1, &s, &err), &err);
    CHECK_OK(tl_table_replace_schema(t, &text, NULL, 0, &s, &o, &r, &err), &err);
    totals_text(lake, "k.s", "n", &count);
    CHECK_INT(count, 2);
    md = read_metadata(dir, "k/s", 5);
    CHECK_INT(field_id(md, "n"), 4);
    CHECK_INT(field_id(md, "k"), 1);
    CHECK_INT(tl_ice_metadata_default_spec(md)->n_fields, 0);
    tl_ice_metadata_free(md);
    tl_schema_release(&text);
    tl_schema_release(&first);
    tl_schema_release(&schema);
    tl_ice_metadata_free(before);
    tl_table_close(t);
    tl_lake_close(lake);
}

/* A refused or failed schema replace leaves the table, its folder and the
 * handle exactly as they were. */
static void test_failed_replace_schema_leaves_the_table(void)
{
    tl_lake *lake;
    char dir[600];
    tl_table *t = create("replace-schema-bad", "k.f", &lake, dir, sizeof dir);
    tl_table *other = NULL;
    tl_error err;
    CHECK_OK(tl_lake_open_table(lake, "k.f", &other, &err), &err);
    const char *a[] = {"eu", "us"}, *notes[] = {"x", "y"};
    tl_append_result r;
    tl_append_options o = {.maintain = 0};
    CHECK_OK(commit(t, false, &o, a, 2, 1, &r, &err), &err);
    tl_strlist before = {0}, after = {0};
    list_files(dir, "", &before);
    struct ArrowSchema schema, two;
    struct ArrowArrayStream s;
    kv_schema(&two);
    kvn_schema(&schema);
    const char *by[] = {"note"};

    /* Rows with a column the new schema lacks. */
    kvn_stream(a, notes, 2, 1, &s);
    CHECK_INT(tl_table_replace_schema(t, &two, by, 0, &s, &o, &r, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "note") != NULL);
    /* A partition of a column the new schema lacks; a bad entry; no struct. */
    kvn_stream(a, notes, 2, 1, &s);
    CHECK_INT(tl_table_replace_schema(t, &two, by, 1, &s, &o, &r, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "note") != NULL);
    const char *bad[] = {"hour(k)"};
    kvn_stream(a, notes, 2, 1, &s);
    CHECK_INT(tl_table_replace_schema(t, &schema, bad, 1, &s, &o, &r, &err), TL_ERR_INVALID);
    kvn_stream(a, notes, 2, 1, &s);
    CHECK_INT(tl_table_replace_schema(t, schema.children[0], NULL, 0, &s, &o, &r, &err),
              TL_ERR_INVALID);
    /* A lost race with expect_version. */
    list_files(dir, "", &after);
    CHECK(same_files(&before, &after));
    tl_strlist_free(&after);
    tl_strlist_free(&before);
    CHECK_OK(commit(other, false, &o, a, 1, 50, &r, &err), &err);
    list_files(dir, "", &before);
    kvn_stream(a, notes, 2, 1, &s);
    tl_append_options cas = {.maintain = 0, .expect_version = 2};
    CHECK_INT(tl_table_replace_schema(t, &schema, by, 1, &s, &cas, &r, &err), TL_ERR_CONFLICT);
    list_files(dir, "", &after);
    CHECK(same_files(&before, &after));
    tl_strlist_free(&after);
    CHECK_INT(tl_table_version(t), 2);
    /* The handle is as it was: two columns, partitioned by k; it appends. */
    struct ArrowSchema now;
    CHECK_OK(tl_table_schema(t, &now, &err), &err);
    CHECK_INT(now.n_children, 2);
    tl_schema_release(&now);
    tl_table_info info;
    CHECK_OK(tl_table_info_get(t, &info, &err), &err);
    CHECK_STR(info.partition_by[0], "k");
    tl_table_info_clear(&info);
    CHECK_OK(tl_table_refresh(t, &err), &err);
    CHECK_OK(commit(t, false, &o, a, 1, 100, &r, &err), &err);
    int64_t count, sum;
    totals(lake, "k.f", &count, &sum);
    CHECK_INT(count, 4);
    CHECK_INT(sum, 153);

    /* Without expect_version a lost race makes the change again on the
     * winner's version: other is two versions behind. */
    kvn_stream(a, notes, 2, 20, &s);
    CHECK_OK(tl_table_replace_schema(other, &schema, by, 1, &s, &o, &r, &err), &err);
    CHECK_INT(r.attempts, 2);
    CHECK_INT(r.version, 5);
    totals(lake, "k.f", &count, &sum);
    CHECK_INT(count, 2);
    CHECK_INT(sum, 41);
    tl_ice_metadata *md = read_metadata(dir, "k/f", 5);
    CHECK_INT(md->current_schema_id, 1);
    CHECK_INT(field_id(md, "note"), 3);
    tl_ice_metadata_free(md);
    tl_schema_release(&schema);
    tl_schema_release(&two);
    tl_strlist_free(&before);
    tl_table_close(other);
    tl_table_close(t);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_replace_makes_the_stream_the_table), UNIT(test_expect_version),
           UNIT(test_expiry_keeps_named_attachments), UNIT(test_attachments_are_inherited),
           UNIT(test_bad_summaries_commit_nothing), UNIT(test_lost_race_rebases),
           UNIT(test_replace_schema_adds_a_column_and_repartitions),
           UNIT(test_failed_replace_schema_leaves_the_table))
