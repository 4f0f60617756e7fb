/* karet run: runs a pipeline against a lake and prints the job summary. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_util.h"
#include "run.h"

#define MAX_STORAGE_OPTIONS 64

/* --storage-option KEY=VALUE pairs, and for an s3:// lake with an http://
 * endpoint (an option or AWS_ENDPOINT_URL*) aws_allow_http, as boto3 allows. */
static int storage_options(karet_args *a, const char *lake, const char **opts, char **owned)
{
    const char *const *v;
    int count = karet_opt_all(a, "storage-option", &v), n = 0;
    const char *endpoint = NULL;
    bool allow = false;
    for (int i = 0; i < count && i < MAX_STORAGE_OPTIONS; i++) {
        const char *eq = strchr(v[i], '=');
        if (eq == NULL || eq == v[i])
            return karet_usage(a, "--storage-option \"%s\": expected KEY=VALUE", v[i]);
        if ((owned[i] = strndup(v[i], (size_t)(eq - v[i]))) == NULL) return KARET_EXIT_STORAGE;
        opts[n++] = owned[i];
        opts[n++] = eq + 1;
        if (strcmp(owned[i], "aws_endpoint") == 0) endpoint = eq + 1;
        if (strcmp(owned[i], "aws_allow_http") == 0) allow = true;
    }
    if (endpoint == NULL) endpoint = getenv("AWS_ENDPOINT_URL_S3");
    if (endpoint == NULL || endpoint[0] == 0) endpoint = getenv("AWS_ENDPOINT_URL");
    if (!allow && strncmp(lake, "s3://", 5) == 0 && endpoint &&
        strncmp(endpoint, "http://", 7) == 0)
        opts[n++] = "aws_allow_http", opts[n++] = "true";
    opts[n] = NULL;
    return KARET_EXIT_OK;
}

static void print_problems(const char *title, json_t *list, const char *field)
{
    size_t n = json_array_size(list);
    if (n == 0) return;
    printf("%s (%zu%s):\n", title, n, n >= 1000 ? ", the first 1000" : "");
    for (size_t i = 0; i < n && i < 20; i++) {
        json_t *p = json_array_get(list, i);
        json_t *line = json_object_get(p, "line"), *row = json_object_get(p, "row");
        const char *file = json_string_value(json_object_get(p, "file"));
        const char *mapping = json_string_value(json_object_get(p, "mapping"));
        printf("  %s", file ? file : mapping ? mapping : "");
        if (json_is_integer(line)) printf(":%lld", (long long)json_integer_value(line));
        if (json_is_integer(row)) printf(" row %lld", (long long)json_integer_value(row));
        printf(": %s\n", json_string_value(json_object_get(p, field)));
    }
    if (n > 20) printf("  ... (--json lists them all)\n");
}

static json_int_t count_of(json_t *o, const char *field)
{
    return json_integer_value(json_object_get(o, field));
}

/* "s" after a count other than 1. */
static const char *plural(json_int_t n)
{
    return n == 1 ? "" : "s";
}

static void print_summary(json_t *s)
{
    json_int_t files = count_of(s, "files_processed"), read = count_of(s, "rows_read");
    json_int_t parts = count_of(s, "partitions_written");
    const char *kind = json_string_value(json_object_get(s, "run_kind"));
    printf("%s run: %lld file%s processed, %lld row%s read, %lld written, %lld deduplicated, "
           "%lld partition%s written\n",
           kind ? kind : "incremental", (long long)files, plural(files), (long long)read,
           plural(read), (long long)count_of(s, "rows_written"),
           (long long)count_of(s, "rows_deduped"), (long long)parts, plural(parts));
    const char *id;
    json_t *t;
    json_object_foreach(json_object_get(s, "tables"), id, t)
    {
        const char *reason = json_string_value(json_object_get(t, "full_reason"));
        json_int_t t_files = count_of(t, "files_processed"), written = count_of(t, "rows_written");
        printf("  table %s: %s%s%s%s, %lld file%s, %lld row%s written, %lld deduplicated (version "
               "%lld)\n",
               id, json_string_value(json_object_get(t, "run_kind")), reason ? " (" : "",
               reason ? reason : "", reason ? ")" : "", (long long)t_files, plural(t_files),
               (long long)written, plural(written), (long long)count_of(t, "rows_deduped"),
               (long long)count_of(t, "version"));
    }
    print_problems("lines skipped or values read as null", json_object_get(s, "skipped"), "reason");
    print_problems("errors", json_object_get(s, "errors"), "message");
}

static int exit_code(int status)
{
    switch (status) {
    case KARET_OK:
        return KARET_EXIT_OK;
    case KARET_ERR_TRANSIENT:
        return KARET_EXIT_STORAGE;
    default:
        return KARET_EXIT_INPUT;
    }
}

int karet_cmd_run(karet_args *a)
{
    const char *lake_url = karet_opt(a, "lake"), *slug = karet_opt(a, "slug"), *file = NULL;
    if (lake_url == NULL) lake_url = getenv("KARET_LAKE");
    if (lake_url == NULL || lake_url[0] == 0) return karet_usage(a, "no lake: give --lake URL");
    if (slug == NULL) return karet_usage(a, "no --slug given");
    json_t *config = NULL;
    int rc = karet_read_pipeline(a, &file, &config);
    if (rc != KARET_EXIT_OK) return rc;
    char err[1024];
    const char *opts[2 * MAX_STORAGE_OPTIONS + 4];
    char *owned[MAX_STORAGE_OPTIONS] = {0};
    karet_lake lake = {0};
    json_t *summary = NULL;
    rc = storage_options(a, lake_url, opts, owned);
    if (rc == KARET_EXIT_OK && karet_lake_open(lake_url, opts, &lake, err, sizeof err) != 0)
        rc = karet_fail(a, KARET_EXIT_STORAGE, "%s", err);
    if (rc == KARET_EXIT_OK) {
        karet_run_options ro = {.full = karet_flag(a, "full"), .job_id = karet_opt(a, "job-id")};
        int status = karet_run(&lake, slug, config, &ro, &summary);
        rc = exit_code(status);
        if (karet_flag(a, "json")) {
            karet_print_json(json_incref(summary));
        } else {
            print_summary(summary);
            json_t *problems = json_object_get(summary, "problems");
            for (size_t i = 0; i < json_array_size(problems); i++) {
                json_t *p = json_array_get(problems, i);
                fprintf(stderr, "%s: %s: %s: %s\n", file,
                        json_string_value(json_object_get(p, "path")),
                        json_string_value(json_object_get(p, "kind")),
                        json_string_value(json_object_get(p, "message")));
            }
        }
        const char *error = json_string_value(json_object_get(summary, "error"));
        if (status != KARET_OK) karet_fail(a, rc, "%s", error ? error : "the run failed");
    }
    json_decref(summary);
    karet_lake_close(&lake);
    json_decref(config);
    for (int i = 0; i < MAX_STORAGE_OPTIONS; i++) free(owned[i]);
    return rc;
}
