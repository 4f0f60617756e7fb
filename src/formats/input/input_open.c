#include "formats/input/input_open.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "formats/csv/csv_reader.h"
#include "formats/input/parquet_stream.h"
#include "formats/ndjson/ndjson_reader.h"

tl_status tl_input_format_parse(const char *name, tl_input_format *out, tl_error *err)
{
    static const struct {
        const char *name;
        tl_input_format format;
    } names[] = {{"csv", TL_INPUT_CSV},       {"tsv", TL_INPUT_TSV},
                 {"ndjson", TL_INPUT_NDJSON}, {"jsonl", TL_INPUT_NDJSON},
                 {"json", TL_INPUT_NDJSON},   {"parquet", TL_INPUT_PARQUET}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i].name) == 0) return *out = names[i].format, TL_OK;
    return tl_error_set(err, TL_ERR_INVALID,
                        "unknown input format \"%s\" (csv, tsv, ndjson, jsonl, parquet)", name);
}

const char *tl_input_format_name(tl_input_format format)
{
    static const char *const names[] = {
        [TL_INPUT_AUTO] = NULL,       [TL_INPUT_CSV] = "csv",         [TL_INPUT_TSV] = "tsv",
        [TL_INPUT_NDJSON] = "ndjson", [TL_INPUT_PARQUET] = "parquet",
    };
    return names[format];
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && strncasecmp(s + len - n, suffix, n) == 0;
}

tl_status tl_input_format_of_path(const char *path, tl_input_format *out, tl_error *err)
{
    size_t len = strlen(path);
    if (ends_with(path, len, ".gz")) len -= 3; /* text formats are read through zlib anyway */
    if (ends_with(path, len, ".csv")) return *out = TL_INPUT_CSV, TL_OK;
    if (ends_with(path, len, ".tsv") || ends_with(path, len, ".tab"))
        return *out = TL_INPUT_TSV, TL_OK;
    if (ends_with(path, len, ".ndjson") || ends_with(path, len, ".jsonl") ||
        ends_with(path, len, ".json"))
        return *out = TL_INPUT_NDJSON, TL_OK;
    if (len == strlen(path) && (ends_with(path, len, ".parquet") || ends_with(path, len, ".pq")))
        return *out = TL_INPUT_PARQUET, TL_OK;
    return tl_error_set(err, TL_ERR_INVALID,
                        "%s: unknown file type (expected .csv, .tsv, .csv.gz, .tsv.gz, .ndjson, "
                        ".jsonl or .parquet; or give --format)",
                        path);
}

/* Takes over `in`, read as o->format (a text format). */
static tl_status open_text(tl_text_input *in, const tl_input_options *o,
                           struct ArrowArrayStream *out, tl_error *err)
{
    if (o->format == TL_INPUT_NDJSON) {
        tl_ndjson_options no = {o->batch_rows, o->progress, o->progress_ctx};
        return tl_ndjson_stream_open(in, &no, o->target, out, err);
    }
    tl_csv_options co = {o->format == TL_INPUT_TSV ? '\t' : ',', o->batch_rows, o->progress,
                         o->progress_ctx};
    return tl_csv_stream_open(in, &co, o->target, out, err);
}

tl_status tl_input_open(const char *path, const tl_input_options *options,
                        struct ArrowArrayStream *out, tl_error *err)
{
    tl_input_options o = {0};
    if (options) o = *options;
    if (o.format == TL_INPUT_AUTO) {
        if (strcmp(path, "-") == 0)
            return tl_error_set(err, TL_ERR_INVALID, "stdin needs a format (--format csv, ...)");
        TL_TRY(tl_input_format_of_path(path, &o.format, err));
    }
    if (o.format == TL_INPUT_PARQUET)
        return tl_parquet_stream_open(path, o.target, o.progress, o.progress_ctx, out, err);
    tl_text_input *in;
    TL_TRY(tl_text_input_open_file(path, &in, err));
    return open_text(in, &o, out, err);
}

tl_status tl_input_open_memory(const uint8_t *data, size_t len, const char *name,
                               const tl_input_options *options, struct ArrowArrayStream *out,
                               tl_error *err)
{
    tl_input_options o = {0};
    if (options) o = *options;
    if (o.format == TL_INPUT_AUTO || o.format == TL_INPUT_PARQUET)
        return tl_error_set(err, TL_ERR_INVALID,
                            "%s: only CSV, TSV and NDJSON are read from memory", name);
    tl_text_input *in;
    TL_TRY(tl_text_input_open_memory(data, len, name, &in, err));
    return open_text(in, &o, out, err);
}
