/* tl_maintain_options.inline_mode: one pass of maintenance as an append's
 * inline maintenance runs it (the notification server's maintainer thread,
 * whose appends commit with maintain 0): size tiers of small files, not a
 * full compaction; expiry by count only well past max-snapshots; nothing
 * when the table's auto-maintain is off; from the handle's version, with no
 * reload. */
#include "test_table_helpers.h"

/* Files of a tier that trigger inline compaction: the default of
 * timelake.compact-min-files. */
#define MIN_FILES 8

static const tl_append_options no_maintain = {.maintain = 0};
static const tl_maintain_options inline_pass = {
    .compact = 1, .retention = 1, .expire = 1, .inline_mode = 1};

static void append_rows(tl_table *t, const struct ArrowSchema *schema, int from, int n,
                        const tl_append_options *o, tl_append_result *r)
{
    tl_error err;
    for (int i = from; i < from + n; i++)
        CHECK_OK(ttable_append_row(t, schema, i, o, r, &err), &err);
}

static int64_t files_of(tl_table *t)
{
    tl_table_info info;
    tl_error err;
    CHECK_OK(tl_table_info_get(t, &info, &err), &err);
    int64_t n = info.files;
    tl_table_info_clear(&info);
    return n;
}

static int64_t work_of(const tl_maintain_report *r)
{
    return r->partitions_compacted + r->files_rewritten + r->files_written + r->rows_rewritten +
           r->partitions_dropped + r->snapshots_expired + r->objects_deleted + r->rollups_refreshed;
}

static void set_property(tl_table *t, const char *key, const char *value)
{
    const char *changes[] = {key, value, NULL};
    tl_error err;
    CHECK_OK(tl_table_set_properties(t, changes, &err), &err);
}

/* The pass does what the inline maintenance of the append that filled the
 * tier does: one table gets its MIN_FILES-th file by an append that
 * maintains, the other by one that does not, then the pass. */
static void test_inline_pass_as_an_appends(void)
{
    tl_lake *la, *lb;
    struct ArrowSchema sa, sb;
    tl_append_result r;
    tl_maintain_report rep;
    tl_error err;
    tl_table *a = ttable_create(&la, "inline_a", "iot.a", "device", "u", false, &sa);
    tl_table *b = ttable_create(&lb, "inline_b", "iot.b", "device", "u", false, &sb);
    append_rows(a, &sa, 0, MIN_FILES - 1, &no_maintain, &r);
    append_rows(b, &sb, 0, MIN_FILES, &no_maintain, &r);
    tl_append_options maintain = {.maintain = -1};
    append_rows(a, &sa, MIN_FILES - 1, 1, &maintain, &r);
    CHECK_INT(r.maintained, 1);
    CHECK(r.maintenance_error[0] == '\0');
    CHECK_INT(files_of(b), MIN_FILES);
    CHECK_OK(tl_table_maintain(b, &inline_pass, &rep, &err), &err);
    CHECK_INT(rep.partitions_compacted, 1);
    CHECK_INT(rep.partitions_compacted, r.maintenance.partitions_compacted);
    CHECK_INT(rep.files_rewritten, r.maintenance.files_rewritten);
    CHECK_INT(rep.files_written, r.maintenance.files_written);
    CHECK_INT(rep.rows_rewritten, r.maintenance.rows_rewritten);
    CHECK_INT(rep.snapshots_expired, r.maintenance.snapshots_expired);
    CHECK(rep.seconds > 0);
    CHECK_INT(files_of(b), files_of(a));
    CHECK_INT(files_of(b), 1);
    CHECK_INT(ttable_sql_int64(lb, "SELECT count(*) FROM iot.b"), MIN_FILES);
    tl_table_close(a);
    tl_table_close(b);
    tl_lake_close(la);
    tl_lake_close(lb);
    tl_schema_release(&sa);
    tl_schema_release(&sb);
}

/* Below a tier's count, and below max-snapshots + 20, the pass does
 * nothing (no commit), where maintenance in full compacts and expires. */
static void test_inline_pass_only_what_is_due(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_append_result r;
    tl_maintain_report rep;
    tl_error err;
    tl_table *t = ttable_create(&lake, "inline_due", "iot.due", "device", "u", false, &schema);
    set_property(t, "min-snapshots", "1");
    set_property(t, "max-snapshots", "2");
    append_rows(t, &schema, 0, MIN_FILES - 1, &no_maintain, &r);
    int64_t version = tl_table_version(t);
    CHECK_OK(tl_table_maintain(t, &inline_pass, &rep, &err), &err);
    CHECK_INT(work_of(&rep), 0);
    CHECK_INT(tl_table_version(t), version);
    CHECK_INT(files_of(t), MIN_FILES - 1);

    tl_maintain_options full = {.compact = 1, .expire = 1};
    CHECK_OK(tl_table_maintain(t, &full, &rep, &err), &err);
    CHECK_INT(rep.partitions_compacted, 1);
    CHECK(rep.snapshots_expired > 0);
    CHECK_INT(files_of(t), 1);
    tl_table_close(t);
    tl_lake_close(lake);
    tl_schema_release(&schema);
}

/* With auto-maintain off the pass does nothing at all, as an append with
 * maintain -1 then does; maintenance in full still compacts. */
static void test_inline_pass_off_without_auto_maintain(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_append_result r;
    tl_maintain_report rep;
    tl_error err;
    tl_table *t = ttable_create(&lake, "inline_off", "iot.off", "device", "u", false, &schema);
    set_property(t, "auto-maintain", "false");
    append_rows(t, &schema, 0, MIN_FILES, &no_maintain, &r);
    int64_t version = tl_table_version(t);
    CHECK_OK(tl_table_maintain(t, &inline_pass, &rep, &err), &err);
    CHECK_INT(work_of(&rep), 0);
    CHECK_INT(tl_table_version(t), version);
    CHECK_INT(files_of(t), MIN_FILES);

    tl_maintain_options all = {.compact = 1, .retention = 1, .expire = 1};
    CHECK_OK(tl_table_maintain(t, &all, &rep, &err), &err);
    CHECK_INT(rep.partitions_compacted, 1);
    CHECK_INT(files_of(t), 1);
    tl_table_close(t);
    tl_lake_close(lake);
    tl_schema_release(&schema);
}

/* The pass works from the handle's version: a handle behind the files
 * another handle appended does not see them (no reload) until it follows. */
static void test_inline_pass_from_the_handles_version(void)
{
    tl_lake *lake, *lake2;
    struct ArrowSchema schema;
    tl_append_result r;
    tl_maintain_report rep;
    tl_error err;
    tl_table *t =
        ttable_create(&lake, "inline_behind", "iot.behind", "device", "u", false, &schema);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/inline_behind", unit_tmpdir());
    CHECK_OK(tl_lake_open(dir, NULL, &lake2, &err), &err);
    tl_table *m;
    CHECK_OK(tl_lake_open_table(lake2, "iot.behind", &m, &err), &err);
    int64_t behind = tl_table_version(m);
    append_rows(t, &schema, 0, MIN_FILES, &no_maintain, &r);

    CHECK_OK(tl_table_maintain(m, &inline_pass, &rep, &err), &err);
    CHECK_INT(work_of(&rep), 0);
    CHECK_INT(tl_table_version(m), behind);

    CHECK_OK(tl_table_follow(m, t, &err), &err);
    CHECK_OK(tl_table_maintain(m, &inline_pass, &rep, &err), &err);
    CHECK_INT(rep.partitions_compacted, 1);
    CHECK_INT(rep.files_rewritten, MIN_FILES);
    CHECK(tl_table_version(m) > tl_table_version(t));
    CHECK_INT(files_of(m), 1);
    tl_table_close(m);
    tl_lake_close(lake2);
    tl_table_close(t);
    tl_lake_close(lake);
    tl_schema_release(&schema);
}

UNIT_TESTS(UNIT(test_inline_pass_as_an_appends), UNIT(test_inline_pass_only_what_is_due),
           UNIT(test_inline_pass_off_without_auto_maintain),
           UNIT(test_inline_pass_from_the_handles_version))
