/* Shared by the cast_*.c files: the cast being done and its error messages. */
#ifndef TL_ARROW_CAST_INTERNAL_H
#define TL_ARROW_CAST_INTERNAL_H

#include "arrow/array.h"
#include "arrow/cast.h"

/* Kernels process values in chunks that stay in L1 and check them in bulk. */
#define TL_CAST_CHUNK 1024

typedef struct tl_cast {
    const tl_array_view *src; /* plain, not dictionary-encoded */
    const tl_arrow_type *to;
    const char *column;
} tl_cast;

/* column "x": value V (row R) out of range for T */
tl_status tl_cast_range_error(const tl_cast *c, int64_t row, const char *value, tl_error *err);
/* column "x": cannot cast V (row R) to T[: reason] */
tl_status tl_cast_value_error(const tl_cast *c, int64_t row, const char *value, const char *reason,
                              tl_error *err);

/* Starts the output: an owned array of a fixed-width target with src's length
 * and validity, and *values, its values buffer of `value_bytes` bytes. On
 * failure *out is left released. */
tl_status tl_cast_begin(const tl_cast *c, size_t value_bytes, struct ArrowArray *out, void **values,
                        tl_error *err);

tl_status tl_cast_numeric(const tl_cast *c, struct ArrowArray *out, tl_error *err);
tl_status tl_cast_temporal(const tl_cast *c, struct ArrowArray *out, tl_error *err);
tl_status tl_cast_parse(const tl_cast *c, struct ArrowArray *out, tl_error *err);
tl_status tl_cast_varwidth(const tl_cast *c, struct ArrowArray *out, tl_error *err);

static inline bool tl_atype_is_integer(tl_atype id)
{
    return id >= TL_ATYPE_INT8 && id <= TL_ATYPE_UINT64;
}

static inline bool tl_atype_is_float(tl_atype id)
{
    return id == TL_ATYPE_FLOAT16 || id == TL_ATYPE_FLOAT32 || id == TL_ATYPE_FLOAT64;
}

static inline bool tl_atype_is_string(tl_atype id)
{
    return id == TL_ATYPE_STRING || id == TL_ATYPE_LARGE_STRING || id == TL_ATYPE_STRING_VIEW;
}

#endif
