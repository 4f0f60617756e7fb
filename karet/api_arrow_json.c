/* Query results as JSON: an Arrow stream read through the C data interface
 * into {"columns": [names], "types": [Arrow formats], "rows": [{name: value}]}.
 * Integers beyond 2^53 stay exact (JSON integers); dates and timestamps
 * become ISO 8601 text; a type this does not know becomes null. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_arrow_json.h"

static int is_valid(const struct ArrowArray *a, int64_t i)
{
    const uint8_t *bits = a->n_buffers > 0 ? a->buffers[0] : NULL;
    int64_t j = i + a->offset;
    return bits == NULL || (bits[j >> 3] >> (j & 7)) & 1;
}

static json_t *iso_from(int64_t secs, int64_t frac, int digits, int date_only)
{
    time_t t = (time_t)secs;
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL) return json_null();
    char buf[64], out[96];
    strftime(buf, sizeof buf, date_only ? "%Y-%m-%d" : "%Y-%m-%dT%H:%M:%S", &tm);
    if (date_only || digits == 0)
        snprintf(out, sizeof out, "%s%s", buf, date_only ? "" : "Z");
    else
        snprintf(out, sizeof out, "%s.%0*" PRId64 "Z", buf, digits, frac);
    return json_string(out);
}

static int64_t floor_div(int64_t a, int64_t b, int64_t *rem)
{
    int64_t q = a / b, r = a % b;
    if (r < 0) r += b, q--;
    *rem = r;
    return q;
}

static json_t *timestamp(const char *fmt, int64_t v)
{
    int64_t per = fmt[2] == 's' ? 1 : fmt[2] == 'm' ? 1000 : fmt[2] == 'u' ? 1000000 : 1000000000;
    int digits = fmt[2] == 's' ? 0 : fmt[2] == 'm' ? 3 : fmt[2] == 'u' ? 6 : 9;
    int64_t rem, secs = floor_div(v, per, &rem);
    return iso_from(secs, rem, digits, 0);
}

static json_t *string_at(const struct ArrowArray *a, int64_t i, int large)
{
    const char *data = a->buffers[2];
    int64_t start, end, j = i + a->offset;
    if (large) {
        start = ((const int64_t *)a->buffers[1])[j];
        end = ((const int64_t *)a->buffers[1])[j + 1];
    } else {
        start = ((const int32_t *)a->buffers[1])[j];
        end = ((const int32_t *)a->buffers[1])[j + 1];
    }
    json_t *s = json_stringn(data + start, (size_t)(end - start));
    return s ? s : json_string("\xef\xbf\xbd"); /* not UTF-8 */
}

static json_t *decimal_at(const char *fmt, const struct ArrowArray *a, int64_t i)
{
    int precision = 0, scale = 0, bits = 128;
    /* "d:P,S" or "d:P,S,128" (DuckDB names the width); only 128-bit decimals */
    if (sscanf(fmt, "d:%d,%d,%d", &precision, &scale, &bits) < 2 || bits != 128 || scale < 0 ||
        scale > 38)
        return json_null();
    const uint64_t *w = (const uint64_t *)a->buffers[1] + 2 * (i + a->offset);
    __int128 v = (__int128)(((unsigned __int128)w[1] << 64) | w[0]);
    int neg = v < 0;
    unsigned __int128 u = neg ? (unsigned __int128)(-v) : (unsigned __int128)v;
    char digits[64];
    int n = 0;
    do {
        digits[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    while (n <= scale) digits[n++] = '0';
    char out[80];
    int k = 0;
    if (neg) out[k++] = '-';
    for (int d = n - 1; d >= 0; d--) {
        out[k++] = digits[d];
        if (d == scale && scale > 0) out[k++] = '.';
    }
    out[k] = 0;
    return json_string(out);
}

/* JSON has no NaN or infinity: null, as JavaScript writes them. */
static json_t *real(double d)
{
    return isfinite(d) ? json_real(d) : json_null();
}

/* A float32 as the double of its shortest text (0.1f as 0.1, not as
 * 0.10000000149011612), as DuckDB prints it; it reads back as the same
 * float32. */
static json_t *real32(float f)
{
    if (!isfinite(f)) return json_null();
    char text[32];
    for (int p = 1; p <= 9; p++) {
        snprintf(text, sizeof text, "%.*g", p, (double)f);
        if (strtof(text, NULL) == f) break;
    }
    return json_real(strtod(text, NULL));
}

/* One value of a column; fmt is the column's Arrow format. */
static json_t *value_at(const char *fmt, const struct ArrowArray *a, int64_t i)
{
    if (strcmp(fmt, "n") == 0 || !is_valid(a, i)) return json_null();
    int64_t j = i + a->offset;
    const void *b = a->n_buffers > 1 ? a->buffers[1] : NULL;
    if (fmt[1] == 0) switch (fmt[0]) {
        case 'b':
            return json_boolean((((const uint8_t *)b)[j >> 3] >> (j & 7)) & 1);
        case 'c':
            return json_integer(((const int8_t *)b)[j]);
        case 'C':
            return json_integer(((const uint8_t *)b)[j]);
        case 's':
            return json_integer(((const int16_t *)b)[j]);
        case 'S':
            return json_integer(((const uint16_t *)b)[j]);
        case 'i':
            return json_integer(((const int32_t *)b)[j]);
        case 'I':
            return json_integer(((const uint32_t *)b)[j]);
        case 'l':
            return json_integer(((const int64_t *)b)[j]);
        case 'L': {
            uint64_t u = ((const uint64_t *)b)[j];
            if (u <= INT64_MAX) return json_integer((json_int_t)u);
            char s[24];
            snprintf(s, sizeof s, "%" PRIu64, u);
            return json_string(s);
        }
        case 'f':
            return real32(((const float *)b)[j]);
        case 'g':
            return real(((const double *)b)[j]);
        case 'u':
            return string_at(a, i, 0);
        case 'U':
            return string_at(a, i, 1);
        }
    if (strcmp(fmt, "tdD") == 0) return iso_from((int64_t)((const int32_t *)b)[j] * 86400, 0, 0, 1);
    if (strcmp(fmt, "tdm") == 0) {
        int64_t rem, s = floor_div(((const int64_t *)b)[j], 1000, &rem);
        return iso_from(s, 0, 0, 1);
    }
    if (strncmp(fmt, "ts", 2) == 0 && fmt[2] && fmt[3] == ':')
        return timestamp(fmt, ((const int64_t *)b)[j]);
    if (strncmp(fmt, "d:", 2) == 0) return decimal_at(fmt, a, i);
    return json_null();
}

int arrow_stream_to_json(struct ArrowArrayStream *stream, int64_t max_rows, json_t **out, char *err,
                         size_t errlen)
{
    *out = NULL;
    struct ArrowSchema schema = {0};
    if (stream->get_schema(stream, &schema) != 0) {
        const char *m = stream->get_last_error ? stream->get_last_error(stream) : NULL;
        snprintf(err, errlen, "%s", m ? m : "cannot read the result's schema");
        return -1;
    }
    json_t *columns = json_array(), *types = json_array(), *rows = json_array();
    for (int64_t c = 0; c < schema.n_children; c++) {
        json_array_append_new(
            columns, json_string(schema.children[c]->name ? schema.children[c]->name : ""));
        json_array_append_new(types, json_string(schema.children[c]->format));
    }
    int truncated = 0, status = 0;
    for (;;) {
        struct ArrowArray batch = {0};
        if (stream->get_next(stream, &batch) != 0) {
            const char *m = stream->get_last_error ? stream->get_last_error(stream) : NULL;
            snprintf(err, errlen, "%s", m ? m : "the query failed while reading its result");
            status = -1;
            break;
        }
        if (batch.release == NULL) break;
        for (int64_t r = 0; r < batch.length; r++) {
            if (max_rows > 0 && (int64_t)json_array_size(rows) >= max_rows) {
                truncated = 1;
                break;
            }
            json_t *row = json_object();
            for (int64_t c = 0; c < schema.n_children && c < batch.n_children; c++) {
                const struct ArrowArray *col = batch.children[c];
                json_object_set_new(row, json_string_value(json_array_get(columns, (size_t)c)),
                                    value_at(schema.children[c]->format, col, r + batch.offset));
            }
            json_array_append_new(rows, row);
        }
        batch.release(&batch);
        if (truncated) break;
    }
    schema.release(&schema);
    if (status != 0) {
        json_decref(columns), json_decref(types), json_decref(rows);
        return -1;
    }
    *out = json_pack("{s:o,s:o,s:o,s:I,s:b}", "columns", columns, "types", types, "rows", rows,
                     "rowCount", (json_int_t)json_array_size(rows), "truncated", truncated);
    return 0;
}
