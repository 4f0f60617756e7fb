/* A drop wins over handles that loaded the table before it: their commits
 * into the emptied folder, or into the table created again under the same
 * name, are undone and fail with TL_ERR_NOT_FOUND; nothing of theirs stays,
 * and the new table is untouched. */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "table/commit_point.h"
#include "test_table_helpers.h"

static struct ArrowSchema schema;

static int one(const char *path, const char *folder, void *ctx)
{
    (void)path, (void)folder, (void)ctx;
    return 1;
}

/* Files under dir, recursively. */
static int count_files(const char *dir)
{
    return ttable_walk_files(dir, one, NULL);
}

static void table_dir(const char *lake, char *out, size_t size)
{
    snprintf(out, size, "%s/%s/default/t", unit_tmpdir(), lake);
}

static void test_stale_handles_after_a_drop(void)
{
    tl_lake *lake;
    tl_table *t = ttable_create(&lake, "cp-lake", "t", "device", "u", false, &schema);
    tl_table *v1 = NULL, *v2 = NULL, *v2b = NULL, *v3 = NULL;
    tl_error err;
    tl_append_result r;
    tl_append_options o = {.maintain = 0};
    CHECK_OK(tl_lake_open_table(lake, "t", &v1, &err), &err);
    CHECK_OK(ttable_append_row(t, &schema, 1, &o, &r, &err), &err);
    CHECK_OK(tl_lake_open_table(lake, "t", &v2, &err), &err);
    CHECK_OK(tl_lake_open_table(lake, "t", &v2b, &err), &err);
    CHECK_OK(ttable_append_row(t, &schema, 2, &o, &r, &err), &err);
    CHECK_OK(tl_lake_open_table(lake, "t", &v3, &err), &err);
    CHECK_INT(tl_table_version(t), 3);
    CHECK_OK(tl_lake_drop_table(lake, "t", &err), &err);
    char dir[700];
    table_dir("cp-lake", dir, sizeof dir);
    CHECK_INT(count_files(dir), 0);

    /* Each would create the next version of the one it holds in the empty
     * folder (v4, v3, v2): each finds its parent gone and undoes it. */
    tl_table *handles[] = {t, v2, v1};
    for (int i = 0; i < 3; i++) {
        CHECK_INT(ttable_append_row(handles[i], &schema, 10 + i, &o, &r, &err), TL_ERR_NOT_FOUND);
        CHECK(strstr(err.message, "default.t was dropped") != NULL);
        CHECK_INT(count_files(dir), 0);
        /* Later commits of a handle that saw the drop fail before writing. */
        CHECK_INT(ttable_append_row(handles[i], &schema, 20 + i, &o, &r, &err), TL_ERR_NOT_FOUND);
        CHECK(tl_table_check_not_dropped(handles[i], &err) == TL_ERR_NOT_FOUND);
    }

    /* Created again and at v2: a handle from before does not write into it,
     * whether the new table has its version (v2: another table-uuid) or not
     * (v3 missing: its v4 would have no parent). */
    tl_lake *lake2;
    tl_table *fresh = ttable_create(&lake2, "cp-lake", "t", "device", "u", false, NULL);
    CHECK_OK(ttable_append_row(fresh, &schema, 30, &o, &r, &err), &err);
    int files = count_files(dir);
    CHECK_INT(ttable_append_row(v2b, &schema, 31, &o, &r, &err), TL_ERR_NOT_FOUND);
    CHECK_INT(ttable_append_row(v3, &schema, 32, &o, &r, &err), TL_ERR_NOT_FOUND);
    CHECK_INT(count_files(dir), files);
    CHECK_OK(ttable_append_row(fresh, &schema, 33, &o, &r, &err), &err);
    CHECK_INT(tl_table_version(fresh), 3);
    /* A refresh follows the table now under the name, and clears the mark. */
    CHECK_OK(tl_table_refresh(v3, &err), &err);
    CHECK_OK(ttable_append_row(v3, &schema, 34, &o, &r, &err), &err);
    CHECK_INT(tl_table_version(v3), 4);

    tl_table *all[] = {t, v1, v2, v2b, v3, fresh};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) tl_table_close(all[i]);
    tl_schema_release(&schema);
    tl_lake_close(lake);
    tl_lake_close(lake2);
}

/* A file a stale handle's version names found gone is a lost race once a
 * newer version is listed (the next reload lists), and stays the error it
 * was while the table is still at the handle's version. */
static void test_gone_file_of_a_stale_version_is_a_lost_race(void)
{
    tl_lake *lake;
    tl_table *t = ttable_create(&lake, "cp-gone", "t", "device", "u", false, &schema);
    tl_table *stale = NULL;
    tl_error err;
    tl_append_result r;
    tl_append_options o = {.maintain = 0};
    CHECK_OK(tl_lake_open_table(lake, "t", &stale, &err), &err);
    tl_error_set(&err, TL_ERR_NOT_FOUND, "x is missing");
    CHECK_INT(tl_table_lost_if_moved_on(stale, TL_ERR_NOT_FOUND, &err), TL_ERR_NOT_FOUND);
    CHECK_STR(err.message, "x is missing");
    CHECK_OK(ttable_append_row(t, &schema, 1, &o, &r, &err), &err);
    CHECK_INT(tl_table_lost_if_moved_on(stale, TL_ERR_STORAGE, &err), TL_ERR_STORAGE);
    CHECK(!stale->newer_listed);
    CHECK_INT(tl_table_lost_if_moved_on(stale, TL_ERR_NOT_FOUND, &err), TL_ERR_EXISTS);
    CHECK(stale->newer_listed);
    CHECK_OK(tl_table_reload_same(stale, &err), &err);
    CHECK_INT(tl_table_version(stale), tl_table_version(t));
    tl_table_close(stale);
    tl_table_close(t);
    tl_schema_release(&schema);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_stale_handles_after_a_drop),
           UNIT(test_gone_file_of_a_stale_version_is_a_lost_race))
