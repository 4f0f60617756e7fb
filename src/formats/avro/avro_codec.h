/* The block codecs of Avro object container files. */
#ifndef TL_FORMATS_AVRO_CODEC_H
#define TL_FORMATS_AVRO_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"

typedef enum tl_avro_codec {
    TL_AVRO_CODEC_NULL,
    TL_AVRO_CODEC_DEFLATE, /* raw RFC 1951 data, no zlib header */
    TL_AVRO_CODEC_SNAPPY,  /* snappy data then the big-endian CRC-32 of the uncompressed bytes */
    TL_AVRO_CODEC_ZSTD
} tl_avro_codec;

/* The name stored in "avro.codec". */
const char *tl_avro_codec_name(tl_avro_codec codec);
/* Parses an "avro.codec" value (len bytes). */
tl_status tl_avro_codec_parse(const uint8_t *name, size_t len, tl_avro_codec *out, tl_error *err);

/* Appends the compressed form of data to out. level 0 means the codec's default. */
tl_status tl_avro_compress(tl_avro_codec codec, int level, const uint8_t *data, size_t len,
                           tl_buf *out, tl_error *err);

/* Replaces out's contents with the decompressed data, refusing to produce
 * more than `limit` bytes (hostile blocks can claim any size). */
tl_status tl_avro_decompress(tl_avro_codec codec, const uint8_t *data, size_t len, size_t limit,
                             tl_buf *out, tl_error *err);

#endif
