#include "formats/ndjson/json_nested.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/buffers.h"
#include "arrow/builder.h"
#include "arrow/cast.h"
#include "arrow/nested.h"
#include "arrow/parse.h"
#include "arrow/take.h"
#include "core/json_text.h"

#define PATH_LEN 512
#define MAX_DEPTH 64

typedef struct values {
    json_t **v; /* borrowed from the parsed rows; NULL: null */
    int64_t *row;
    int64_t n;
} values;

static const char *kind_of(const json_t *j)
{
    return json_is_object(j)    ? "an object"
           : json_is_array(j)   ? "an array"
           : json_is_string(j)  ? "a string"
           : json_is_boolean(j) ? "a boolean"
                                : "a number";
}

static tl_status wrong(const values *in, int64_t i, const char *path, const char *want,
                       int64_t *bad_row, tl_error *err)
{
    *bad_row = in->row[i];
    return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": %s where %s is due", path,
                        kind_of(in->v[i]), want);
}

static tl_status values_init(values *out, int64_t n, tl_error *err)
{
    out->n = 0;
    out->v = malloc((size_t)(n ? n : 1) * sizeof *out->v);
    out->row = malloc((size_t)(n ? n : 1) * sizeof *out->row);
    return out->v && out->row ? TL_OK : tl_error_nomem(err);
}

static void values_free(values *v)
{
    free(v->v);
    free(v->row);
}

static tl_status build(const struct ArrowSchema *f, const values *in, const char *path, int depth,
                       struct ArrowArray *out, int64_t *bad_row, tl_error *err);

/* The source row of the first value that does not cast (for the message's line). */
static int64_t first_failing(const tl_array_view *v, const tl_arrow_type *target, const values *in)
{
    for (int64_t i = 0; i < in->n; i++) {
        tl_array_view one;
        struct ArrowArray out;
        if (tl_arrow_view_slice(v, i, 1, &one, NULL) != TL_OK) break;
        tl_status st = tl_arrow_cast(&one, target, "", &out, NULL);
        if (st == TL_OK) tl_array_release(&out);
        if (st == TL_ERR_INVALID) return in->row[i];
    }
    return -1;
}

/* A real in the fewest digits that read back (0.1, not 0.10000000000000001);
 * whole ones without a fraction (2), which an integer leaf reads. */
static size_t real_text(double v, char *num, size_t size)
{
    tl_double_format(v, num, size);
    return strlen(num);
}

/* Scalars as text, then cast to the leaf's type. */
static tl_status build_leaf(const struct ArrowSchema *f, const values *in, const char *path,
                            struct ArrowArray *out, int64_t *bad_row, tl_error *err)
{
    tl_arrow_type text, target;
    TL_TRY(tl_arrow_type_parse("U", &text, err));
    TL_TRY(tl_arrow_type_parse(f->format, &target, err));
    tl_builder b;
    TL_TRY(tl_builder_init(&b, &text, err));
    tl_status st = TL_OK;
    char num[64];
    for (int64_t i = 0; st == TL_OK && i < in->n; i++) {
        const json_t *j = in->v[i];
        if (j == NULL || json_is_null(j))
            st = tl_builder_append_null(&b, err);
        else if (json_is_string(j))
            st = tl_builder_append_bytes(&b, json_string_value(j), json_string_length(j), err);
        else if (json_is_boolean(j))
            st = tl_builder_append_bytes(&b, json_is_true(j) ? "true" : "false",
                                         json_is_true(j) ? 4 : 5, err);
        else if (json_is_integer(j))
            st = tl_builder_append_bytes(
                &b, num,
                (size_t)snprintf(num, sizeof num, "%lld", (long long)json_integer_value(j)), err);
        else if (json_is_real(j))
            st = tl_builder_append_bytes(&b, num, real_text(json_real_value(j), num, sizeof num),
                                         err);
        else
            st = wrong(in, i, path, "a single value", bad_row, err);
    }
    struct ArrowArray strings = {0};
    if (st == TL_OK) st = tl_builder_finish(&b, &strings, err);
    tl_builder_free(&b);
    if (st != TL_OK) return st;
    tl_array_view v;
    tl_view_of_owned(&text, &strings, &v);
    st = tl_arrow_cast(&v, &target, path, out, err);
    if (st == TL_ERR_INVALID) *bad_row = first_failing(&v, &target, in);
    tl_array_release(&strings);
    return st; /* a null under a required field: the append's cast says where */
}

static tl_status validity(const values *in, struct ArrowArray *out, tl_error *err)
{
    uint8_t *bits = tl_array_alloc_buffer(out, 0, (size_t)(in->n + 7) / 8);
    if (bits == NULL) return tl_error_nomem(err);
    for (int64_t i = 0; i < in->n; i++) {
        if (in->v[i] && !json_is_null(in->v[i]))
            tl_bit_set(bits, i);
        else
            out->null_count++;
    }
    out->length = in->n;
    if (out->null_count == 0) tl_array_set_buffer(out, 0, NULL);
    return TL_OK;
}

static bool present(const json_t *j)
{
    return j && !json_is_null(j);
}

static tl_status build_struct(const struct ArrowSchema *f, const values *in, const char *path,
                              int depth, struct ArrowArray *out, int64_t *bad_row, tl_error *err)
{
    char kid[PATH_LEN];
    for (int64_t i = 0; i < in->n; i++) {
        if (!present(in->v[i])) continue;
        if (!json_is_object(in->v[i])) return wrong(in, i, path, "an object", bad_row, err);
        const char *key;
        json_t *val;
        json_object_foreach(in->v[i], key, val)
        {
            bool known = false;
            for (int64_t c = 0; !known && c < f->n_children; c++)
                known = strcmp(f->children[c]->name, key) == 0;
            if (!known) {
                *bad_row = in->row[i];
                snprintf(kid, sizeof kid, "%s.%s", path, key);
                return tl_error_set(err, TL_ERR_INVALID, "column \"%s\" is not in the table schema",
                                    kid);
            }
        }
    }
    TL_TRY(tl_array_init(out, 1, f->n_children, err));
    TL_TRY(validity(in, out, err));
    values sub;
    TL_TRY(values_init(&sub, in->n, err));
    tl_status st = TL_OK;
    for (int64_t c = 0; st == TL_OK && c < f->n_children; c++) {
        sub.n = in->n;
        for (int64_t i = 0; i < in->n; i++) {
            sub.v[i] = present(in->v[i]) ? json_object_get(in->v[i], f->children[c]->name) : NULL;
            sub.row[i] = in->row[i];
        }
        snprintf(kid, sizeof kid, "%s.%s", path, f->children[c]->name);
        st = build(f->children[c], &sub, kid, depth + 1, out->children[c], bad_row, err);
    }
    values_free(&sub);
    return st;
}

/* Entry k of a map written as an array of [key, value] pairs. */
static bool map_pair(const json_t *j, size_t k, json_t **key, json_t **value)
{
    const json_t *pair = json_array_get(j, k);
    if (!json_is_array(pair) || json_array_size(pair) != 2) return false;
    *key = json_array_get(pair, 0);
    *value = json_array_get(pair, 1);
    return true;
}

static tl_status build_list(const struct ArrowSchema *f, bool map, const values *in,
                            const char *path, int depth, struct ArrowArray *out, int64_t *bad_row,
                            tl_error *err)
{
    int64_t total = 0;
    for (int64_t i = 0; i < in->n; i++) {
        const json_t *j = in->v[i];
        if (!present(j)) continue;
        if (!json_is_array(j) && !(map && json_is_object(j)))
            return wrong(in, i, path, map ? "an object" : "an array", bad_row, err);
        total += json_is_array(j) ? (int64_t)json_array_size(j) : (int64_t)json_object_size(j);
    }
    if (total > INT32_MAX)
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": too many elements", path);
    TL_TRY(tl_array_init(out, 2, 1, err));
    TL_TRY(validity(in, out, err));
    int32_t *offs = tl_array_alloc_buffer(out, 1, (size_t)(in->n + 1) * sizeof *offs);
    values a, b;
    tl_status st = offs ? values_init(&a, total, err) : tl_error_nomem(err);
    if (st != TL_OK) return st;
    if ((st = values_init(&b, total, err)) != TL_OK) {
        values_free(&a);
        return st;
    }
    char kid[PATH_LEN];
    for (int64_t i = 0; st == TL_OK && i < in->n; i++) {
        offs[i] = (int32_t)a.n;
        json_t *j = in->v[i];
        if (!present(j)) continue;
        if (json_is_object(j)) {
            const char *key;
            json_t *val;
            json_object_foreach(j, key, val)
            {
                a.v[a.n] = json_string(key); /* freed below */
                b.v[b.n] = val;
                a.row[a.n++] = b.row[b.n++] = in->row[i];
            }
            continue;
        }
        for (size_t k = 0; st == TL_OK && k < json_array_size(j); k++) {
            if (!map) {
                a.v[a.n] = json_array_get(j, k);
                a.row[a.n++] = in->row[i];
                continue;
            }
            json_t *key = NULL, *val = NULL;
            if (!map_pair(j, k, &key, &val)) {
                *bad_row = in->row[i];
                st = tl_error_set(err, TL_ERR_INVALID,
                                  "column \"%s\": a map is an object, or an array of [key, value] "
                                  "pairs",
                                  path);
                break;
            }
            a.v[a.n] = json_incref(key);
            b.v[b.n] = val;
            a.row[a.n++] = b.row[b.n++] = in->row[i];
        }
    }
    offs[in->n] = (int32_t)a.n;
    if (st == TL_OK && !map) {
        snprintf(kid, sizeof kid, "%s.element", path);
        st = build(f->children[0], &a, kid, depth + 1, out->children[0], bad_row, err);
    } else if (st == TL_OK) {
        const struct ArrowSchema *e = f->children[0];
        struct ArrowArray *entries = out->children[0];
        st = tl_array_init(entries, 1, 2, err);
        if (st == TL_OK) entries->length = a.n;
        for (int64_t k = 0; st == TL_OK && k < a.n; k++)
            if (!present(a.v[k])) {
                *bad_row = a.row[k];
                st =
                    tl_error_set(err, TL_ERR_INVALID, "column \"%s.key\": a map key is null", path);
            }
        snprintf(kid, sizeof kid, "%s.key", path);
        if (st == TL_OK)
            st = build(e->children[0], &a, kid, depth + 1, entries->children[0], bad_row, err);
        snprintf(kid, sizeof kid, "%s.value", path);
        if (st == TL_OK)
            st = build(e->children[1], &b, kid, depth + 1, entries->children[1], bad_row, err);
    }
    if (map)
        for (int64_t k = 0; k < a.n; k++) json_decref(a.v[k]);
    values_free(&a);
    values_free(&b);
    return st;
}

static tl_status build(const struct ArrowSchema *f, const values *in, const char *path, int depth,
                       struct ArrowArray *out, int64_t *bad_row, tl_error *err)
{
    if (depth > MAX_DEPTH)
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": nested more than %d deep", path,
                            MAX_DEPTH);
    const char *fmt = f->format ? f->format : "";
    if (!tl_arrow_is_nested(f)) return build_leaf(f, in, path, out, bad_row, err);
    if (strcmp(fmt, "+s") == 0) return build_struct(f, in, path, depth, out, bad_row, err);
    if (strcmp(fmt, "+l") == 0 || strcmp(fmt, "+m") == 0)
        return build_list(f, fmt[1] == 'm', in, path, depth, out, bad_row, err);
    return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": type %s is not read from JSON", path,
                        fmt);
}

tl_status tl_json_nested_column(const struct ArrowSchema *field, const struct ArrowArray *texts,
                                const char *column, struct ArrowArray *out, int64_t *bad_row,
                                tl_error *err)
{
    memset(out, 0, sizeof *out);
    *bad_row = -1;
    values in;
    TL_TRY(values_init(&in, texts->length, err));
    const int64_t *offs = (const int64_t *)texts->buffers[1] + texts->offset;
    const char *data = texts->buffers[2];
    tl_status st = TL_OK;
    for (int64_t i = 0; st == TL_OK && i < texts->length; i++) {
        bool valid = texts->null_count == 0 || texts->buffers[0] == NULL ||
                     tl_bit_get(texts->buffers[0], texts->offset + i);
        in.row[i] = i;
        in.v[i] = NULL;
        in.n++;
        if (!valid) continue;
        json_error_t je;
        bool nomem;
        in.v[i] = tl_json_loadb(data + offs[i], (size_t)(offs[i + 1] - offs[i]), JSON_DECODE_ANY,
                                &je, &nomem);
        if (nomem) {
            st = tl_error_nomem(err);
        } else if (in.v[i] == NULL) {
            *bad_row = i;
            st = tl_error_set(err, TL_ERR_INVALID, "column \"%s\": bad JSON: %s", column, je.text);
        }
    }
    if (st == TL_OK) st = build(field, &in, column, 0, out, bad_row, err);
    for (int64_t i = 0; i < in.n; i++) json_decref(in.v[i]);
    values_free(&in);
    if (st != TL_OK) tl_array_release(out);
    return st;
}
