/* timelake upgrade and rollback: a table's format and history. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>

#include "cli.h"

static int open_named(cli_args *a, const char *name, tl_lake **lake, tl_table **t)
{
    if (name == NULL) return cli_usage(a, "no table: give NAME, --table or set TIMELAKE_TABLE");
    int rc = cli_open_lake(a, lake);
    if (rc == EXIT_OK) rc = cli_open_table(a, *lake, name, t);
    return rc;
}

static void upgrade_print(const cli_args *a, const char *name, const tl_upgrade_report *r,
                          bool dry_run)
{
    if (a->json) {
        json_t *steps = json_array();
        for (char **s = r->steps; s && *s; s++) json_array_append_new(steps, json_string(*s));
        json_t *o = json_pack("{s:s,s:o,s:I,s:b}", "table", name, "steps", steps, "version_before",
                              (json_int_t)r->version_before, "dry_run", dry_run);
        json_object_set_new(o, "snapshot_before",
                            r->snapshot_before ? json_integer(r->snapshot_before) : json_null());
        json_object_set_new(o, "keep_snapshots_until_ms",
                            r->keep_snapshots_until_ms ? json_integer(r->keep_snapshots_until_ms)
                                                       : json_null());
        cli_print_json(o);
        return;
    }
    if (r->steps == NULL || r->steps[0] == NULL) {
        printf("%s is current: nothing to do\n", name);
        return;
    }
    printf(dry_run ? "%s would take these steps:\n" : "%s:\n", name);
    for (char **s = r->steps; *s; s++) printf("  %s\n", *s);
    if (!dry_run && r->snapshot_before)
        printf("undo with: timelake rollback %s %lld (snapshots kept until %lld ms)\n", name,
               (long long)r->snapshot_before, (long long)r->keep_snapshots_until_ms);
}

int cmd_upgrade(cli_args *a)
{
    const char *name = cli_table_name(a, true);
    if (a->npos > 0) return cli_usage(a, "unexpected argument \"%s\"", a->pos[0]);
    tl_lake *lake = NULL;
    tl_table *t = NULL;
    int rc = open_named(a, name, &lake, &t);
    tl_upgrade_options o = {.dry_run = cli_flag(a, "dry-run"),
                            .compact = !cli_flag(a, "no-compact"),
                            .keep_snapshots = cli_opt(a, "keep-snapshots")};
    tl_upgrade_report r;
    tl_error err;
    if (rc == EXIT_OK && tl_table_upgrade(t, &o, &r, &err) != TL_OK) rc = cli_fail(a, &err);
    if (rc == EXIT_OK) {
        upgrade_print(a, tl_table_name(t), &r, o.dry_run);
        tl_upgrade_report_clear(&r);
    }
    tl_table_close(t);
    tl_lake_close(lake);
    return rc;
}

int cmd_rollback(cli_args *a)
{
    /* [NAME] SNAPSHOT: the snapshot is the last argument. */
    if (a->npos == 0 || a->npos > 2) return cli_usage(a, "give the snapshot id to roll back to");
    const char *snapshot = a->pos[--a->npos];
    const char *name = cli_table_name(a, true);
    if (a->npos > 0) return cli_usage(a, "unexpected argument \"%s\"", a->pos[0]);
    char *end;
    errno = 0;
    long long id = strtoll(snapshot, &end, 10);
    if (errno || end == snapshot || *end)
        return cli_usage(a, "snapshot \"%s\" is not a snapshot id (an integer)", snapshot);
    tl_lake *lake = NULL;
    tl_table *t = NULL;
    int rc = open_named(a, name, &lake, &t);
    tl_error err;
    if (rc == EXIT_OK && tl_table_rollback(t, (int64_t)id, &err) != TL_OK) rc = cli_fail(a, &err);
    if (rc == EXIT_OK) {
        if (a->json)
            cli_print_json(json_pack("{s:s,s:I,s:I}", "table", tl_table_name(t), "snapshot_id",
                                     (json_int_t)id, "version", (json_int_t)tl_table_version(t)));
        else
            printf("%s: snapshot %lld is current again; version %lld\n", tl_table_name(t), id,
                   (long long)tl_table_version(t));
    }
    tl_table_close(t);
    tl_lake_close(lake);
    return rc;
}
