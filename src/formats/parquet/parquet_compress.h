/* Page compression codecs: UNCOMPRESSED, SNAPPY, GZIP, ZSTD, LZ4_RAW and
 * BROTLI (and the deprecated LZ4, read only). A codec context
 * keeps the zstd contexts alive across pages so they are allocated once. */
#ifndef TL_PARQUET_COMPRESS_H
#define TL_PARQUET_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "formats/parquet/parquet_meta.h"

typedef struct tl_pq_codec_ctx tl_pq_codec_ctx;

tl_pq_codec_ctx *tl_pq_codec_ctx_new(void);
void tl_pq_codec_ctx_free(tl_pq_codec_ctx *c);

/* Names a codec for messages ("ZSTD"). */
const char *tl_pq_codec_name(tl_pq_codec_id codec);
/* Whether this library can read and write the codec (LZ4 it only reads). */
int tl_pq_codec_supported(tl_pq_codec_id codec);

/* Appends the compressed form of src to out. `level` applies to ZSTD, GZIP and BROTLI
 * (0: default). */
tl_status tl_pq_compress(tl_pq_codec_ctx *c, tl_pq_codec_id codec, int level, const uint8_t *src,
                         size_t len, tl_buf *out, tl_error *err);

/* Decompresses src into exactly dst_len bytes; anything else is TL_ERR_INVALID. */
tl_status tl_pq_decompress(tl_pq_codec_ctx *c, tl_pq_codec_id codec, const uint8_t *src, size_t len,
                           uint8_t *dst, size_t dst_len, tl_error *err);

#endif
