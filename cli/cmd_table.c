/* timelake info, ls and drop */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static json_t *strings_json(char **items)
{
    json_t *a = json_array();
    for (char **k = items; k && *k; k++) json_array_append_new(a, json_string(*k));
    return a;
}

static json_t *info_json(const tl_table_info *i)
{
    json_t *o = json_pack(
        "{s:s,s:s,s:I,s:s?,s:o,s:s?,s:b,s:s?,s:I,s:I,s:I,s:I,s:I,s:s?}", "name", i->name,
        "location", i->location, "version", (json_int_t)i->version, "time_column", i->time_column,
        "series_key", strings_json(i->series_key), "chunk", i->chunk, "dedup", i->dedup,
        "ingest_time_column", i->ingest_time_column, "rows", (json_int_t)i->rows, "files",
        (json_int_t)i->files, "bytes", (json_int_t)i->bytes, "snapshots", (json_int_t)i->snapshots,
        "manifests", (json_int_t)i->manifests, "last_value_index", i->last_value_index);
    json_object_set_new(o, "partition_by", strings_json(i->partition_by));
    json_object_set_new(o, "snapshot_id", json_integer(i->snapshot_id));
    json_object_set_new(o, "last_commit_ms", json_integer(i->last_commit_ms));
    return o;
}

/* items joined by commas into buf. */
static void join(char **items, char *buf, size_t size)
{
    buf[0] = 0;
    for (char **k = items; k && *k; k++) {
        if (buf[0]) strncat(buf, ",", size - strlen(buf) - 1);
        strncat(buf, *k, size - strlen(buf) - 1);
    }
}

static void info_print(const tl_table_info *i)
{
    char keys[1024], parts[1024], size[32], num[6][32];
    join(i->series_key, keys, sizeof keys);
    join(i->partition_by, parts, sizeof parts);
    cli_format_bytes((double)i->bytes, size, sizeof size);
    snprintf(num[0], 32, "%lld", (long long)i->version);
    snprintf(num[1], 32, "%lld", (long long)i->rows);
    snprintf(num[2], 32, "%lld", (long long)i->files);
    snprintf(num[3], 32, "%lld", (long long)i->snapshots);
    snprintf(num[4], 32, "%lld", (long long)i->manifests);
    const char *cells[] = {
        "property",
        "value",
        "name",
        i->name,
        "location",
        i->location,
        "version",
        num[0],
        "time column",
        i->time_column ? i->time_column : "-",
        "series key",
        keys[0] ? keys : "-",
        "chunk",
        i->chunk ? i->chunk : "-",
        "partition by",
        parts[0] ? parts : "-",
        "dedup",
        i->dedup ? "on" : "off",
        "ingest time",
        i->ingest_time_column ? i->ingest_time_column : "-",
        "rows",
        num[1],
        "files",
        num[2],
        "size",
        size,
        "snapshots",
        num[3],
        "manifests",
        num[4],
        "last-value index",
        i->last_value_index ? i->last_value_index : "-",
    };
    cli_print_table(cells, (int)(sizeof cells / sizeof *cells) / 2, 2);
}

static int with_table(cli_args *a, bool positional, tl_lake **lake, tl_table **t)
{
    const char *name = cli_table_name(a, positional);
    if (name == NULL) return cli_usage(a, "no table: give NAME, --table or set TIMELAKE_TABLE");
    if (a->npos > 0) return cli_usage(a, "unexpected argument \"%s\"", a->pos[0]);
    int rc = cli_open_lake(a, lake);
    if (rc == EXIT_OK) rc = cli_open_table(a, *lake, name, t);
    return rc;
}

int cmd_info(cli_args *a)
{
    tl_lake *lake = NULL;
    tl_table *t = NULL;
    int rc = with_table(a, true, &lake, &t);
    tl_table_info info;
    tl_error err;
    if (rc == EXIT_OK && tl_table_info_get(t, &info, &err) != TL_OK) rc = cli_fail(a, &err);
    if (rc == EXIT_OK) {
        if (a->json)
            cli_print_json(info_json(&info));
        else
            info_print(&info);
        tl_table_info_clear(&info);
    }
    tl_table_close(t);
    tl_lake_close(lake);
    return rc;
}

/* One row of ls: name, version, rows, files, size. */
static tl_status ls_row(tl_lake *lake, const char *name, tl_table_info *info, tl_error *err)
{
    tl_table *t;
    CLI_TRY(tl_lake_open_table(lake, name, &t, err));
    tl_status st = tl_table_info_get(t, info, err);
    tl_table_close(t);
    return st;
}

static int ls_print(cli_args *a, tl_lake *lake, char **names, int n)
{
    json_t *arr = json_array();
    char(*num)[3][32] = calloc((size_t)n + 1, sizeof *num);
    const char **cells = calloc(((size_t)n + 1) * 5, sizeof *cells);
    char **owned = calloc((size_t)n + 1, sizeof *owned);
    int rc = arr && num && cells && owned ? EXIT_OK : EXIT_STORAGE;
    const char *head[] = {"TABLE", "VERSION", "ROWS", "FILES", "SIZE"};
    if (rc == EXIT_OK) memcpy(cells, head, sizeof head);
    int broken = EXIT_OK; /* a table that cannot be read is named, and the rest listed */
    for (int i = 0; rc == EXIT_OK && i < n; i++) {
        tl_table_info info;
        tl_error err;
        const char **row = &cells[(i + 1) * 5];
        if (ls_row(lake, names[i], &info, &err) != TL_OK) {
            cli_error_prefix(&err, "table %s cannot be read", names[i]);
            int code = cli_fail(a, &err);
            if (broken == EXIT_OK) broken = code;
            json_array_append_new(arr,
                                  json_pack("{s:s,s:s}", "name", names[i], "error", err.message));
            row[0] = names[i];
            row[1] = row[2] = row[3] = row[4] = "?";
            continue;
        }
        json_array_append_new(arr, info_json(&info));
        snprintf(num[i][0], 32, "%lld", (long long)info.version);
        snprintf(num[i][1], 32, "%lld", (long long)info.rows);
        snprintf(num[i][2], 32, "%lld", (long long)info.files);
        owned[i] = malloc(32);
        if (owned[i]) cli_format_bytes((double)info.bytes, owned[i], 32);
        row[0] = names[i];
        row[1] = num[i][0];
        row[2] = num[i][1];
        row[3] = num[i][2];
        row[4] = owned[i] ? owned[i] : "?";
        tl_table_info_clear(&info);
    }
    if (rc == EXIT_OK && a->json) {
        cli_print_json(arr);
        arr = NULL;
    } else if (rc == EXIT_OK) {
        cli_print_table(cells, n + 1, 5);
    }
    json_decref(arr);
    for (int i = 0; owned && i < n; i++) free(owned[i]);
    free(owned);
    free(cells);
    free(num);
    return rc == EXIT_OK ? broken : rc;
}

int cmd_ls(cli_args *a)
{
    if (a->npos > 0) return cli_usage(a, "unexpected argument \"%s\"", a->pos[0]);
    tl_lake *lake = NULL;
    int rc = cli_open_lake(a, &lake);
    char **names = NULL;
    tl_error err;
    if (rc == EXIT_OK && tl_lake_list_tables(lake, &names, &err) != TL_OK) rc = cli_fail(a, &err);
    int n = 0;
    while (names && names[n]) n++;
    if (rc == EXIT_OK) rc = ls_print(a, lake, names, n);
    tl_strings_free(names);
    tl_lake_close(lake);
    return rc;
}

int cmd_drop(cli_args *a)
{
    tl_lake *lake = NULL;
    tl_table *t = NULL;
    const char *name = cli_table_name(a, true);
    if (name == NULL) return cli_usage(a, "no table: give NAME, --table or set TIMELAKE_TABLE");
    if (a->npos > 0) return cli_usage(a, "unexpected argument \"%s\"", a->pos[0]);
    int rc = cli_open_lake(a, &lake);
    tl_error err;
    bool exists = false;
    if (rc == EXIT_OK) {
        tl_status st = tl_lake_open_table(lake, name, &t, &err);
        exists = st == TL_OK;
        if (st != TL_OK && !(st == TL_ERR_NOT_FOUND && cli_flag(a, "if-exists")))
            rc = cli_fail(a, &err);
        tl_table_close(t);
    }
    if (rc == EXIT_OK && exists && tl_lake_drop_table(lake, name, &err) != TL_OK)
        rc = cli_fail(a, &err);
    if (rc == EXIT_OK) {
        if (a->json)
            cli_print_json(json_pack("{s:s,s:b}", "dropped", name, "existed", exists));
        else
            printf(exists ? "dropped %s\n" : "%s does not exist: nothing dropped\n", name);
    }
    tl_lake_close(lake);
    return rc;
}
