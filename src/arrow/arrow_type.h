/* Arrow logical types, decoded from C data interface format strings. */
#ifndef TL_ARROW_TYPE_H
#define TL_ARROW_TYPE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"

typedef enum tl_atype {
    TL_ATYPE_NULL,
    TL_ATYPE_BOOL,
    TL_ATYPE_INT8,
    TL_ATYPE_UINT8,
    TL_ATYPE_INT16,
    TL_ATYPE_UINT16,
    TL_ATYPE_INT32,
    TL_ATYPE_UINT32,
    TL_ATYPE_INT64,
    TL_ATYPE_UINT64,
    TL_ATYPE_FLOAT16,
    TL_ATYPE_FLOAT32,
    TL_ATYPE_FLOAT64,
    TL_ATYPE_STRING,       /* "u": int32 offsets */
    TL_ATYPE_LARGE_STRING, /* "U": int64 offsets */
    TL_ATYPE_BINARY,       /* "z" */
    TL_ATYPE_LARGE_BINARY, /* "Z" */
    TL_ATYPE_FIXED_BINARY, /* "w:N" */
    TL_ATYPE_DECIMAL128,   /* "d:P,S" */
    TL_ATYPE_DATE32,       /* "tdD" days */
    TL_ATYPE_DATE64,       /* "tdm" milliseconds */
    TL_ATYPE_TIME32,       /* "tts" / "ttm" */
    TL_ATYPE_TIME64,       /* "ttu" / "ttn" */
    TL_ATYPE_TIMESTAMP,    /* "tsX:TZ" */
    TL_ATYPE_STRUCT,       /* "+s" */
    TL_ATYPE_STRING_VIEW,  /* "vu": what polars exports; decoded on input */
    TL_ATYPE_BINARY_VIEW   /* "vz" */
} tl_atype;

typedef enum tl_time_unit {
    TL_UNIT_SECOND,
    TL_UNIT_MILLI,
    TL_UNIT_MICRO,
    TL_UNIT_NANO
} tl_time_unit;

#define TL_TZ_MAX 64

typedef struct tl_arrow_type {
    tl_atype id;
    tl_time_unit unit;  /* time and timestamp types */
    int32_t byte_width; /* fixed binary; 16 for decimal128 */
    int32_t precision;  /* decimal */
    int32_t scale;      /* decimal */
    bool has_tz;        /* timestamp with a time zone */
    char tz[TL_TZ_MAX]; /* the zone string as given ("UTC", "+00:00", "Europe/Paris") */
} tl_arrow_type;

/* Parses an Arrow format string. Unsupported types are TL_ERR_INVALID naming the format. */
tl_status tl_arrow_type_parse(const char *format, tl_arrow_type *out, tl_error *err);

/* Writes the format string of `type` into buf (at least 96 bytes). */
void tl_arrow_type_format(const tl_arrow_type *type, char *buf, size_t size);

/* A human-readable name for messages ("int32", "timestamp[us, tz=UTC]"). */
void tl_arrow_type_describe(const tl_arrow_type *type, char *buf, size_t size);

/* Bits per value in the values buffer for fixed-width types (1 for bool), 0 otherwise. */
int tl_arrow_type_bit_width(const tl_arrow_type *type);

static inline bool tl_atype_is_varbinary(tl_atype id)
{
    return id == TL_ATYPE_STRING || id == TL_ATYPE_LARGE_STRING || id == TL_ATYPE_BINARY ||
           id == TL_ATYPE_LARGE_BINARY;
}

static inline bool tl_atype_is_view(tl_atype id)
{
    return id == TL_ATYPE_STRING_VIEW || id == TL_ATYPE_BINARY_VIEW;
}

static inline bool tl_atype_is_large(tl_atype id)
{
    return id == TL_ATYPE_LARGE_STRING || id == TL_ATYPE_LARGE_BINARY;
}

#endif
