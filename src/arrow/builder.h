/* Column builders: append values or nulls one at a time (amortized growth, no
 * allocation per value), then finish into an owned ArrowArray. Used by the
 * text readers and by tests.
 *
 *     tl_builder b;
 *     tl_builder_init(&b, &type, err);
 *     tl_builder_append_int(&b, 42, err); tl_builder_append_null(&b, err); ...
 *     tl_builder_finish(&b, &array, err);   (b is empty again and can be reused)
 *     tl_builder_free(&b);
 *
 * Supported types: bool, integers, float32/64, decimal128, date32/64, time32/64,
 * timestamp, fixed_size_binary and the four var-width types. Appending a value
 * of the wrong kind (a string to an int32 builder) or out of range (300 to
 * int8) is TL_ERR_INVALID; callers add the column and row to the message. */
#ifndef TL_ARROW_BUILDER_H
#define TL_ARROW_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/parse.h"
#include "core/buf.h"

typedef struct tl_builder {
    tl_arrow_type type;
    int width; /* bytes per value of fixed-width types, 0 for bool and var-width */
    int64_t length;
    int64_t null_count;
    tl_buf validity; /* empty until the first null */
    tl_buf values;   /* values, value bits (bool) or offsets (var-width) */
    tl_buf data;     /* bytes of var-width values */
} tl_builder;

tl_status tl_builder_init(tl_builder *b, const tl_arrow_type *type, tl_error *err);
void tl_builder_free(tl_builder *b);

/* Makes room for `values` more values and `bytes` more var-width bytes. */
tl_status tl_builder_reserve(tl_builder *b, int64_t values, int64_t bytes, tl_error *err);

tl_status tl_builder_append_null(tl_builder *b, tl_error *err);
tl_status tl_builder_append_nulls(tl_builder *b, int64_t n, tl_error *err);
/* Integers, date32 (days), date64 (ms), time and timestamp (in the type's unit),
 * and decimal128 (the unscaled value). Range-checked. */
tl_status tl_builder_append_int(tl_builder *b, int64_t value, tl_error *err);
/* Unsigned integers (any width, range-checked). */
tl_status tl_builder_append_uint(tl_builder *b, uint64_t value, tl_error *err);
/* float32 / float64 (a finite double beyond the float32 range is an error). */
tl_status tl_builder_append_double(tl_builder *b, double value, tl_error *err);
tl_status tl_builder_append_bool(tl_builder *b, bool value, tl_error *err);
/* decimal128: the unscaled value, checked against the precision. */
tl_status tl_builder_append_decimal(tl_builder *b, tl_i128 value, tl_error *err);
/* Var-width types, and fixed_size_binary (len must equal the width). */
tl_status tl_builder_append_bytes(tl_builder *b, const void *data, size_t len, tl_error *err);

/* Appends n var-width values at once (string, binary and their large
 * types, while no null has come): value i is data[offsets[i], offsets[i + 1])
 * (increasing 64-bit offsets). The caller checked the values (UTF-8). */
tl_status tl_builder_append_var_run(tl_builder *b, const uint8_t *data, const int64_t *offsets,
                                    int64_t n, tl_error *err);

/* Moves what was appended into *out (offset 0, validity NULL when no null) and
 * empties the builder. On failure the builder is unchanged. */
tl_status tl_builder_finish(tl_builder *b, struct ArrowArray *out, tl_error *err);

/* The appends' fast path, inline for the text readers' per-value loops: a
 * valid 8-byte value (int64, timestamp, float64: the caller checked the
 * type) while no null has come and tl_builder_reserve made room. False
 * otherwise, nothing appended: the caller appends it the usual way. */
static inline bool tl_builder_push8(tl_builder *b, const void *value)
{
    if (b->width != 8 || b->null_count != 0 || b->values.cap - b->values.len < 8) return false;
    memcpy(b->values.data + b->values.len, value, 8);
    b->values.len += 8;
    b->length++;
    return true;
}

/* n 8-byte values at once, as n tl_builder_push8 calls would append them;
 * false (nothing appended) where one would fail. */
static inline bool tl_builder_push8_many(tl_builder *b, const void *values, int64_t n)
{
    size_t bytes = (size_t)n * 8;
    if (b->width != 8 || b->null_count != 0 || b->values.cap - b->values.len < bytes) return false;
    if (bytes) memcpy(b->values.data + b->values.len, values, bytes);
    b->values.len += bytes;
    b->length += n;
    return true;
}

/* An owned array of `length` nulls of `type` (0 buffers for the null type). */
tl_status tl_arrow_nulls(const tl_arrow_type *type, int64_t length, struct ArrowArray *out,
                         tl_error *err);

#endif
