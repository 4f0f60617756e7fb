/* The public calls that open a data file, or bytes in memory, as an Arrow
 * stream: format names resolved, then tl_input_open does the reading. */
#include <string.h>

#include "formats/input/input_open.h"

tl_status tl_data_format(const char *format, const char *path, const char **out, tl_error *err)
{
    tl_input_format f;
    if (format)
        TL_TRY(tl_input_format_parse(format, &f, err));
    else if (path)
        TL_TRY(tl_input_format_of_path(path, &f, err));
    else
        return tl_error_set(err, TL_ERR_INVALID, "no format: give a format or a file name");
    *out = tl_input_format_name(f);
    return TL_OK;
}

/* The internal options of public ones (NULL: the defaults). */
static tl_status input_options(const tl_data_read_options *o, tl_input_options *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (o == NULL) return TL_OK;
    if (o->batch_rows < 0)
        return tl_error_set(err, TL_ERR_INVALID, "batch_rows must be 0 or more, not %lld",
                            (long long)o->batch_rows);
    if (o->columns && (o->columns->format == NULL || strcmp(o->columns->format, "+s") != 0))
        return tl_error_set(err, TL_ERR_INVALID, "the columns must be a struct schema (\"+s\")");
    if (o->format) TL_TRY(tl_input_format_parse(o->format, &out->format, err));
    out->target = o->columns;
    out->batch_rows = o->batch_rows;
    out->progress = o->progress;
    out->progress_ctx = o->progress_ctx;
    return TL_OK;
}

tl_status tl_data_read_file(const char *path, const tl_data_read_options *options,
                            struct ArrowArrayStream *out, tl_error *err)
{
    if (path == NULL) return tl_error_set(err, TL_ERR_INVALID, "no file name");
    tl_input_options o;
    TL_TRY(input_options(options, &o, err));
    return tl_input_open(path, &o, out, err);
}

tl_status tl_data_read_memory(const void *data, size_t len, const char *name,
                              const tl_data_read_options *options, struct ArrowArrayStream *out,
                              tl_error *err)
{
    if (data == NULL && len > 0) return tl_error_set(err, TL_ERR_INVALID, "no data");
    tl_input_options o;
    TL_TRY(input_options(options, &o, err));
    return tl_input_open_memory(data ? data : (const void *)"", len, name ? name : "memory", &o,
                                out, err);
}
