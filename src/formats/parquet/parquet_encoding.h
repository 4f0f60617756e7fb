/* Parquet value and level encodings: RLE/bit-packed hybrid, DELTA_BINARY_PACKED,
 * DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT and the plain
 * byte-array layout. Encoders append to a tl_buf and return 0, or -1 when out
 * of memory. Decoders treat the input as hostile: they never read past `len`
 * and fail with TL_ERR_INVALID naming the problem. */
#ifndef TL_PARQUET_ENCODING_H
#define TL_PARQUET_ENCODING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* A byte-array value that points into a page or dictionary. */
typedef struct tl_pq_view {
    const uint8_t *data;
    uint32_t len;
} tl_pq_view;

/* Bits needed for values up to max_value (0 for 0). */
int tl_pq_bit_width(uint64_t max_value);

/* ---- Bitmaps (LSB-first, as Arrow and Parquet's bit packing both use) ---- */
static inline void tl_pq_bit_on(uint8_t *bits, int64_t i)
{
    bits[i >> 3] |= (uint8_t)(1u << (i & 7));
}
static inline void tl_pq_bit_off(uint8_t *bits, int64_t i)
{
    bits[i >> 3] &= (uint8_t) ~(1u << (i & 7));
}
void tl_pq_bits_set_range(uint8_t *bits, int64_t start, int64_t n, bool value);
void tl_pq_bits_copy(uint8_t *dst, int64_t dst_off, const uint8_t *src, int64_t src_off, int64_t n);
int64_t tl_pq_bits_count(const uint8_t *bits, int64_t start, int64_t n);

/* ---- RLE / bit-packed hybrid ---- */
int tl_pq_rle_encode(tl_buf *out, const uint32_t *values, size_t n, int bit_width);
/* Encodes levels of bit width 1 straight from a bitmap of n bits starting at bit 0:
 * long runs of 0x00/0xFF bytes become RLE runs, the rest bit-packed runs. */
int tl_pq_rle_encode_bitmap(tl_buf *out, const uint8_t *bits, size_t n);
/* Decodes n values of bit_width (0..32). *consumed (may be NULL) gets the bytes used. */
tl_status tl_pq_rle_decode(const uint8_t *data, size_t len, int bit_width, uint32_t *out, size_t n,
                           size_t *consumed, tl_error *err);
/* Decodes n width-1 values into bits [dst_off, dst_off + n) of dst; *ones counts the 1s. */
tl_status tl_pq_rle_decode_bitmap(const uint8_t *data, size_t len, uint8_t *dst, int64_t dst_off,
                                  size_t n, int64_t *ones, tl_error *err);

/* ---- DELTA_BINARY_PACKED (is32: INT32 column semantics, 32-bit wrapping deltas) ---- */
int tl_pq_delta_encode(tl_buf *out, const int64_t *values, size_t n, bool is32);
int tl_pq_delta_encode_i32(tl_buf *out, const int32_t *values, size_t n);
/* Decodes the stream's values (at most `cap`) into out; *n gets how many, *consumed the bytes. */
tl_status tl_pq_delta_decode(const uint8_t *data, size_t len, bool is32, int64_t *out, size_t cap,
                             size_t *n, size_t *consumed, tl_error *err);
/* Of the values of an INT64 stream (at most `cap`: *n gets how many), how
 * many lie in [lo, hi] (*count), without storing them: even runs (a miniblock
 * of equal deltas) count whole. The same validation as the decode. */
tl_status tl_pq_delta_count64(const uint8_t *data, size_t len, size_t cap, int64_t lo, int64_t hi,
                              size_t *n, size_t *count, tl_error *err);

/* ---- Byte arrays ---- */
int tl_pq_plain_bytes_encode(tl_buf *out, const tl_pq_view *values, size_t n);
tl_status tl_pq_plain_bytes_decode(const uint8_t *data, size_t len, tl_pq_view *out, size_t n,
                                   tl_error *err);
int tl_pq_delta_length_encode(tl_buf *out, const tl_pq_view *values, size_t n);
tl_status tl_pq_delta_length_decode(const uint8_t *data, size_t len, tl_pq_view *out, size_t n,
                                    size_t *consumed, tl_error *err);
int tl_pq_delta_byte_array_encode(tl_buf *out, const tl_pq_view *values, size_t n);
/* Values are rebuilt into *storage (malloc'd; the caller frees it after using out). */
tl_status tl_pq_delta_byte_array_decode(const uint8_t *data, size_t len, tl_pq_view *out, size_t n,
                                        uint8_t **storage, tl_error *err);

/* ---- BYTE_STREAM_SPLIT: n values of `width` bytes ---- */
int tl_pq_byte_stream_split_encode(tl_buf *out, const uint8_t *values, size_t n, size_t width);
tl_status tl_pq_byte_stream_split_decode(const uint8_t *data, size_t len, size_t width, size_t n,
                                         uint8_t *out, tl_error *err);

#endif
