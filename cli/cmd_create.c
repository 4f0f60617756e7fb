/* timelake create */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_own.h"
#include "cli.h"
#include "schema_text.h"

/* The schema of the first batch of a data file. */
static tl_status schema_like(const cli_args *a, const char *path, struct ArrowSchema *out,
                             tl_error *err)
{
    tl_data_read_options o = {.format = cli_opt(a, "format")};
    struct ArrowArrayStream s;
    CLI_TRY(tl_data_read_file(path, &o, &s, err));
    int rc = s.get_schema(&s, out);
    if (rc != 0) cli_error_set(err, TL_ERR_INVALID, "%s: %s", path, s.get_last_error(&s));
    s.release(&s);
    return rc == 0 ? TL_OK : err->code;
}

/* Splits "a,b" into a NULL-terminated array of pointers into `copy`. */
static int split_list(char *copy, const char **items, int max)
{
    int n = 0;
    for (char *tok = strtok(copy, ","); tok && n < max; tok = strtok(NULL, ",")) items[n++] = tok;
    items[n] = NULL;
    return n;
}

static int options_from_args(cli_args *a, tl_table_options *o, char *keys, const char **key,
                             char *parts, const char **part, const char **props)
{
    o->time_column = cli_opt(a, "time-column");
    const char *sk = cli_opt(a, "series-key");
    if (sk) {
        strcpy(keys, sk);
        o->series_key = key;
        o->series_key_len = (size_t)split_list(keys, key, 63);
    }
    const char *pb = cli_opt(a, "partition-by");
    if (pb) {
        strcpy(parts, pb);
        o->partition_by = part;
        o->partition_by_len = (size_t)split_list(parts, part, 15);
    }
    o->chunk = cli_opt(a, "chunk");
    o->retention = cli_opt(a, "retention");
    o->dedup = -1;
    o->ingest_time = cli_flag(a, "no-ingest-time") ? 0 : -1;
    const char *dedup = cli_opt(a, "dedup");
    if (dedup && strcmp(dedup, "on") != 0 && strcmp(dedup, "off") != 0)
        return cli_usage(a, "--dedup must be on or off, not \"%s\"", dedup);
    if (dedup) o->dedup = strcmp(dedup, "on") == 0;
    int rc = cli_key_values(a, "property", props);
    if (rc >= 0) return rc;
    o->properties = props[0] ? props : NULL;
    return -1;
}

static void report(const cli_args *a, tl_table *t)
{
    if (a->json) {
        cli_print_json(json_pack("{s:s,s:s,s:I}", "table", tl_table_name(t), "location",
                                 tl_table_location(t), "version", (json_int_t)tl_table_version(t)));
    } else {
        printf("created %s at %s (version %lld)\n", tl_table_name(t), tl_table_location(t),
               (long long)tl_table_version(t));
    }
}

int cmd_create(cli_args *a)
{
    const char *name = cli_table_name(a, true);
    if (name == NULL) return cli_usage(a, "no table: give NAME, --table or set TIMELAKE_TABLE");
    if (a->npos > 0) return cli_usage(a, "unexpected argument \"%s\"", a->pos[0]);
    const char *spec = cli_opt(a, "schema"), *like = cli_opt(a, "like");
    if ((spec == NULL) == (like == NULL)) return cli_usage(a, "give one of --schema and --like");
    static char keys[4096], parts[4096];
    const char *key[64], *part[16], *props[2 * 64 + 1];
    const char *sk = cli_opt(a, "series-key"), *pb = cli_opt(a, "partition-by");
    if (sk && strlen(sk) >= sizeof keys) return cli_usage(a, "--series-key is too long");
    if (pb && strlen(pb) >= sizeof parts) return cli_usage(a, "--partition-by is too long");
    tl_table_options o = {0};
    int rc = options_from_args(a, &o, keys, key, parts, part, props);
    if (rc >= 0) return rc;
    tl_error err;
    struct ArrowSchema schema = {0};
    tl_status st =
        spec ? cli_schema_parse(spec, &schema, &err) : schema_like(a, like, &schema, &err);
    if (st != TL_OK) return cli_fail(a, &err);
    tl_lake *lake = NULL;
    rc = cli_open_lake(a, &lake);
    tl_table *t = NULL;
    if (rc == EXIT_OK && tl_lake_create_table(lake, name, &schema, &o, &t, &err) != TL_OK)
        rc = cli_fail(a, &err);
    if (rc == EXIT_OK) report(a, t);
    tl_table_close(t);
    tl_lake_close(lake);
    cli_schema_release(&schema);
    return rc;
}
