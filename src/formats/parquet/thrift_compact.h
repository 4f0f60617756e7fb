/* Thrift compact protocol: the encoding of every Parquet metadata structure
 * (footer, page headers, page index). The writer appends to a tl_buf and
 * records failure in a flag checked once at the end; the reader is a bounded
 * cursor that treats every count and length as hostile. */
#ifndef TL_PARQUET_THRIFT_COMPACT_H
#define TL_PARQUET_THRIFT_COMPACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

enum {
    TL_THRIFT_STOP = 0,
    TL_THRIFT_TRUE = 1,
    TL_THRIFT_FALSE = 2,
    TL_THRIFT_BYTE = 3,
    TL_THRIFT_I16 = 4,
    TL_THRIFT_I32 = 5,
    TL_THRIFT_I64 = 6,
    TL_THRIFT_DOUBLE = 7,
    TL_THRIFT_BINARY = 8,
    TL_THRIFT_LIST = 9,
    TL_THRIFT_SET = 10,
    TL_THRIFT_MAP = 11,
    TL_THRIFT_STRUCT = 12
};

/* Deeper nesting than any Parquet structure needs; bounds hostile input. */
#define TL_THRIFT_MAX_DEPTH 24

/* ---- Writer ---- */

typedef struct tl_thrift_writer {
    tl_buf *out;
    int16_t last_id[TL_THRIFT_MAX_DEPTH];
    int depth;
    bool failed; /* out of memory; reported by tl_thrift_writer_finish */
    bool misuse; /* nesting too deep or unbalanced */
} tl_thrift_writer;

void tl_thrift_writer_init(tl_thrift_writer *w, tl_buf *out);
tl_status tl_thrift_writer_finish(tl_thrift_writer *w, tl_error *err);

/* Fields of the current struct (ids must ascend, as Thrift writes them). */
void tl_thrift_field_header(tl_thrift_writer *w, uint8_t type, int16_t id);
void tl_thrift_field_bool(tl_thrift_writer *w, int16_t id, bool v);
void tl_thrift_field_i8(tl_thrift_writer *w, int16_t id, int8_t v);
void tl_thrift_field_i16(tl_thrift_writer *w, int16_t id, int16_t v);
void tl_thrift_field_i32(tl_thrift_writer *w, int16_t id, int32_t v);
void tl_thrift_field_i64(tl_thrift_writer *w, int16_t id, int64_t v);
void tl_thrift_field_binary(tl_thrift_writer *w, int16_t id, const void *data, size_t len);
void tl_thrift_field_string(tl_thrift_writer *w, int16_t id, const char *s);
/* A struct-valued field; close it with tl_thrift_struct_end. */
void tl_thrift_field_struct(tl_thrift_writer *w, int16_t id);
/* A list-valued field; then write n elements with the tl_thrift_elem_* calls. */
void tl_thrift_field_list(tl_thrift_writer *w, int16_t id, uint8_t elem_type, size_t n);

/* A struct that is a list element or the top-level value. */
void tl_thrift_struct_begin(tl_thrift_writer *w);
void tl_thrift_struct_end(tl_thrift_writer *w);

void tl_thrift_elem_bool(tl_thrift_writer *w, bool v);
void tl_thrift_elem_i32(tl_thrift_writer *w, int32_t v);
void tl_thrift_elem_i64(tl_thrift_writer *w, int64_t v);
void tl_thrift_elem_binary(tl_thrift_writer *w, const void *data, size_t len);

/* Raw varint helpers, also used by the encodings. Return bytes written (max 10). */
size_t tl_thrift_put_uvarint(uint8_t *dst, uint64_t v);
static inline uint64_t tl_zigzag64(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t tl_unzigzag64(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* ---- Reader ---- */

typedef struct tl_thrift_reader {
    const uint8_t *start, *p, *end;
    int depth;
    tl_error *err;
} tl_thrift_reader;

void tl_thrift_reader_init(tl_thrift_reader *r, const void *data, size_t len, tl_error *err);
static inline size_t tl_thrift_reader_offset(const tl_thrift_reader *r)
{
    return (size_t)(r->p - r->start);
}

/* Reads an unsigned varint from [*p, end); advances *p. -1 when truncated or over 64 bits. */
int tl_thrift_get_uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v);

/* Enter/leave a struct: bounds the nesting depth. */
tl_status tl_thrift_struct_enter(tl_thrift_reader *r);
void tl_thrift_struct_leave(tl_thrift_reader *r);

/* Next field header of the current struct; *type is TL_THRIFT_STOP at its end.
 * `last_id` is the struct's running field id (start it at 0). */
tl_status tl_thrift_read_field(tl_thrift_reader *r, int16_t *last_id, uint8_t *type, int16_t *id);

/* Value readers. `type` is the field's wire type, checked against the reader. */
tl_status tl_thrift_read_bool(tl_thrift_reader *r, uint8_t type, bool *v);
/* A bool list element: one byte (1 is true). */
tl_status tl_thrift_read_elem_bool(tl_thrift_reader *r, bool *v);
tl_status tl_thrift_read_i8(tl_thrift_reader *r, uint8_t type, int8_t *v);
tl_status tl_thrift_read_i16(tl_thrift_reader *r, uint8_t type, int16_t *v);
tl_status tl_thrift_read_i32(tl_thrift_reader *r, uint8_t type, int32_t *v);
tl_status tl_thrift_read_i64(tl_thrift_reader *r, uint8_t type, int64_t *v);
tl_status tl_thrift_read_binary(tl_thrift_reader *r, uint8_t type, const uint8_t **data,
                                size_t *len);
/* A list header; *n is bounded by the bytes left (every element takes at least one). */
tl_status tl_thrift_read_list(tl_thrift_reader *r, uint8_t type, uint8_t *elem_type, size_t *n);
/* Checks a field's wire type is `want` (so callers can enter a struct field). */
tl_status tl_thrift_expect(tl_thrift_reader *r, uint8_t type, uint8_t want);
/* Skips one value of the given wire type. */
tl_status tl_thrift_skip(tl_thrift_reader *r, uint8_t type);

#endif
