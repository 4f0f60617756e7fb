/* A handle that takes turns with another (tl_table_set_commit_turns: the
 * notification server's maintainer and its requests' group commits) holds
 * the turn for a compaction's commit alone: the merge and the writing of the
 * merged file happen before it, so the other handle's commits never wait for
 * a whole compaction. An append that lands between the merge and the commit
 * is kept: the compaction's commit loses that race, tries again on top of
 * it, and no row is lost or doubled. */
#include <string.h>

#include "test_table_helpers.h"

#define ROWS 12

static int is_data_file(const char *path, const char *folder, void *ctx)
{
    (void)folder;
    (void)ctx;
    size_t n = strlen(path);
    return n > 8 && strcmp(path + n - 8, ".parquet") == 0;
}

typedef struct turns {
    char data_dir[700];
    tl_table *other; /* the other handle, whose append lands in the window */
    const struct ArrowSchema *schema;
    int enters, leaves;
    bool inside;              /* between an enter and its leave */
    int files_at_first_enter; /* data files when the first turn began */
    int files_written_inside; /* data files that appeared during a turn */
} turns;

static void enter(tl_table *t, void *ctx)
{
    (void)t;
    turns *x = ctx;
    if (x->enters++ == 0) {
        x->files_at_first_enter = ttable_walk_files(x->data_dir, is_data_file, NULL);
        tl_append_options o = {.maintain = 0};
        tl_append_result r;
        tl_error err;
        CHECK_OK(ttable_append_row(x->other, x->schema, ROWS, &o, &r, &err), &err);
    }
    CHECK(!x->inside);
    x->inside = true;
    x->files_written_inside -= ttable_walk_files(x->data_dir, is_data_file, NULL);
}

static void leave(tl_table *t, void *ctx)
{
    (void)t;
    turns *x = ctx;
    CHECK(x->inside);
    x->inside = false;
    x->leaves++;
    x->files_written_inside += ttable_walk_files(x->data_dir, is_data_file, NULL);
}

static void test_compaction_commits_alone_in_its_turn(void)
{
    tl_lake *lake, *lake2;
    struct ArrowSchema schema;
    tl_error err;
    tl_append_result r;
    tl_append_options no_maintain = {.maintain = 0};
    tl_table *t = ttable_create(&lake, "turns", "iot.turns", "device", "u", false, &schema);
    for (int i = 0; i < ROWS; i++)
        CHECK_OK(ttable_append_row(t, &schema, i, &no_maintain, &r, &err), &err);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/turns", unit_tmpdir());
    CHECK_OK(tl_lake_open(dir, NULL, &lake2, &err), &err);
    tl_table *m;
    CHECK_OK(tl_lake_open_table(lake2, "iot.turns", &m, &err), &err);
    turns x = {.other = t, .schema = &schema};
    snprintf(x.data_dir, sizeof x.data_dir, "%s/iot/turns/data", dir);
    CHECK_INT(ttable_walk_files(x.data_dir, is_data_file, NULL), ROWS);
    tl_table_set_commit_turns(m, enter, leave, &x);

    tl_maintain_options o = {.compact = 1};
    tl_maintain_report rep;
    CHECK_OK(tl_table_maintain(m, &o, &rep, &err), &err);
    CHECK_INT(rep.files_rewritten, ROWS);
    CHECK_INT(rep.files_written, 1);
    /* The merged file was written before the first turn, none inside one. */
    CHECK_INT(x.files_at_first_enter, ROWS + 1);
    CHECK_INT(x.files_written_inside, 0);
    /* The append of the other handle won the first attempt's version; the
     * commit went again, on top of it. */
    CHECK(x.enters >= 2);
    CHECK_INT(x.leaves, x.enters);

    /* Every row once: the other handle's file kept beside the merged one. */
    tl_table_info info;
    CHECK_OK(tl_table_refresh(t, &err), &err);
    CHECK_OK(tl_table_info_get(t, &info, &err), &err);
    CHECK_INT(info.rows, ROWS + 1);
    CHECK_INT(info.files, 2);
    tl_table_info_clear(&info);
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(*) FROM iot.turns"), ROWS + 1);
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(DISTINCT time) FROM iot.turns"), ROWS + 1);

    tl_table_close(m);
    tl_lake_close(lake2);
    tl_table_close(t);
    tl_lake_close(lake);
    tl_schema_release(&schema);
}

/* Turns as the server takes them: enter brings the maintainer's handle to
 * the other's version (tl_table_follow), so that each maintenance commit
 * lands at its first attempt, even after the other handle committed in
 * the window; leave hands the commit to the other handle. One pair per
 * commit: the compaction's and the expiry's. */
typedef struct following {
    tl_table *other;
    const struct ArrowSchema *schema;
    int enters, leaves, behind_after_enter;
    bool inside;
} following;

static void enter_following(tl_table *t, void *ctx)
{
    following *x = ctx;
    tl_error err;
    if (x->enters++ == 0) {
        tl_append_options o = {.maintain = 0};
        tl_append_result r;
        CHECK_OK(ttable_append_row(x->other, x->schema, ROWS, &o, &r, &err), &err);
    }
    CHECK(!x->inside);
    x->inside = true;
    CHECK_OK(tl_table_follow(t, x->other, &err), &err);
    x->behind_after_enter += tl_table_version(t) < tl_table_version(x->other);
}

static void leave_following(tl_table *t, void *ctx)
{
    following *x = ctx;
    tl_error err;
    CHECK(x->inside);
    x->inside = false;
    x->leaves++;
    CHECK_OK(tl_table_follow(x->other, t, &err), &err);
}

static void test_turns_follow_the_other_handle(void)
{
    tl_lake *lake, *lake2;
    struct ArrowSchema schema;
    tl_error err;
    tl_append_result r;
    tl_append_options no_maintain = {.maintain = 0};
    tl_table *t =
        ttable_create(&lake, "turns_follow", "iot.follow_turns", "device", "u", false, &schema);
    const char *keep_two[] = {"min-snapshots", "1", "max-snapshots", "2", NULL};
    CHECK_OK(tl_table_set_properties(t, keep_two, &err), &err);
    for (int i = 0; i < ROWS; i++)
        CHECK_OK(ttable_append_row(t, &schema, i, &no_maintain, &r, &err), &err);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/turns_follow", unit_tmpdir());
    CHECK_OK(tl_lake_open(dir, NULL, &lake2, &err), &err);
    tl_table *m;
    CHECK_OK(tl_lake_open_table(lake2, "iot.follow_turns", &m, &err), &err);
    following x = {.other = t, .schema = &schema};
    tl_table_set_commit_turns(m, enter_following, leave_following, &x);

    tl_maintain_options o = {.compact = 1, .expire = 1};
    tl_maintain_report rep;
    CHECK_OK(tl_table_maintain(m, &o, &rep, &err), &err);
    CHECK_INT(rep.partitions_compacted, 1);
    CHECK(rep.snapshots_expired > 0);
    CHECK_INT(x.enters, 2); /* no attempt lost a race */
    CHECK_INT(x.leaves, 2);
    CHECK_INT(x.behind_after_enter, 0);
    CHECK(!x.inside);
    /* The other handle took the maintainer's commits without a read. */
    CHECK_INT(tl_table_version(t), tl_table_version(m));
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(*) FROM iot.follow_turns"), ROWS + 1);

    /* Turns unset: maintenance commits without calling them. */
    tl_table_set_commit_turns(m, NULL, NULL, NULL);
    for (int i = 0; i < 3; i++)
        CHECK_OK(ttable_append_row(t, &schema, ROWS + 1 + i, &no_maintain, &r, &err), &err);
    tl_maintain_options compact = {.compact = 1};
    CHECK_OK(tl_table_maintain(m, &compact, &rep, &err), &err);
    CHECK_INT(rep.partitions_compacted, 1);
    CHECK_INT(x.enters, 2);

    tl_table_close(m);
    tl_lake_close(lake2);
    tl_table_close(t);
    tl_lake_close(lake);
    tl_schema_release(&schema);
}

UNIT_TESTS(UNIT(test_compaction_commits_alone_in_its_turn),
           UNIT(test_turns_follow_the_other_handle))
