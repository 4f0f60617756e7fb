#include "formats/parquet/parquet_compress.h"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <limits.h>
#include <lz4.h>
#include <pthread.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

struct tl_pq_codec_ctx {
    ZSTD_CCtx *zc;
    ZSTD_DCtx *zd;
};

/* zstd contexts outlive the writers and readers that used them: creating
 * one runs cpuid (a trap to the hypervisor on a VM), and its first frame
 * faults in and clears a fresh workspace. A writer makes one per column, so
 * a small append made a dozen or more per commit (a few percent of its CPU).
 * Up to POOL_MAX of each kind wait here for the next user, reset. They stay
 * reachable until exit (zstd itself shrinks a workspace that stays far
 * larger than its frames need). */
#define POOL_MAX 32

static struct {
    pthread_mutex_t lock;
    ZSTD_CCtx *c[POOL_MAX];
    ZSTD_DCtx *d[POOL_MAX];
    size_t n_c, n_d;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

/* A fork while another thread holds the lock must not leave it held in the
 * child (the pooled contexts are the child's too). */
static void pool_before_fork(void)
{
    pthread_mutex_lock(&pool.lock);
}

static void pool_after_fork(void)
{
    pthread_mutex_unlock(&pool.lock);
}

static void pool_after_fork_child(void)
{
    pthread_mutex_init(&pool.lock, NULL);
}

static void pool_register(void)
{
    pthread_atfork(pool_before_fork, pool_after_fork, pool_after_fork_child);
}

static ZSTD_CCtx *take_cctx(void)
{
    ZSTD_CCtx *z = NULL;
    pthread_once(&pool_once, pool_register);
    pthread_mutex_lock(&pool.lock);
    if (pool.n_c > 0) z = pool.c[--pool.n_c];
    pthread_mutex_unlock(&pool.lock);
    return z ? z : ZSTD_createCCtx();
}

static ZSTD_DCtx *take_dctx(void)
{
    ZSTD_DCtx *z = NULL;
    pthread_once(&pool_once, pool_register);
    pthread_mutex_lock(&pool.lock);
    if (pool.n_d > 0) z = pool.d[--pool.n_d];
    pthread_mutex_unlock(&pool.lock);
    return z ? z : ZSTD_createDCtx();
}

static void give_back(ZSTD_CCtx *zc, ZSTD_DCtx *zd)
{
    if (zc) ZSTD_CCtx_reset(zc, ZSTD_reset_session_and_parameters);
    if (zd) ZSTD_DCtx_reset(zd, ZSTD_reset_session_and_parameters);
    pthread_mutex_lock(&pool.lock);
    if (zc && pool.n_c < POOL_MAX) {
        pool.c[pool.n_c++] = zc;
        zc = NULL;
    }
    if (zd && pool.n_d < POOL_MAX) {
        pool.d[pool.n_d++] = zd;
        zd = NULL;
    }
    pthread_mutex_unlock(&pool.lock);
    ZSTD_freeCCtx(zc); /* the pool is full */
    ZSTD_freeDCtx(zd);
}

tl_pq_codec_ctx *tl_pq_codec_ctx_new(void)
{
    return calloc(1, sizeof(tl_pq_codec_ctx));
}

void tl_pq_codec_ctx_free(tl_pq_codec_ctx *c)
{
    if (c == NULL) return;
    if (c->zc || c->zd) give_back(c->zc, c->zd);
    free(c);
}

const char *tl_pq_codec_name(tl_pq_codec_id codec)
{
    static const char *const names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
                                        "BROTLI",       "LZ4",    "ZSTD", "LZ4_RAW"};
    return (unsigned)codec < sizeof names / sizeof names[0] ? names[codec] : "unknown codec";
}

int tl_pq_codec_supported(tl_pq_codec_id codec)
{
    return codec == TL_PQ_CODEC_UNCOMPRESSED || codec == TL_PQ_CODEC_SNAPPY ||
           codec == TL_PQ_CODEC_GZIP || codec == TL_PQ_CODEC_ZSTD || codec == TL_PQ_CODEC_LZ4_RAW ||
           codec == TL_PQ_CODEC_BROTLI || codec == TL_PQ_CODEC_LZ4;
}

/* LZ4_RAW: one LZ4 block, no framing (what pyarrow and arrow-rs write for "lz4"). */
static tl_status lz4_compress(const uint8_t *src, size_t len, tl_buf *out, tl_error *err)
{
    if (len > LZ4_MAX_INPUT_SIZE)
        return tl_error_set(err, TL_ERR_INVALID, "page too large for LZ4");
    int bound = LZ4_compressBound((int)len);
    if (tl_buf_reserve(out, (size_t)bound) != 0) return tl_error_nomem(err);
    int n = LZ4_compress_default((const char *)src, (char *)out->data + out->len, (int)len, bound);
    if (n <= 0) return tl_error_set(err, TL_ERR_INTERNAL, "LZ4 compression failed");
    out->len += (size_t)n;
    return TL_OK;
}

static tl_status brotli_compress(int level, const uint8_t *src, size_t len, tl_buf *out,
                                 tl_error *err)
{
    size_t bound = BrotliEncoderMaxCompressedSize(len);
    if (bound == 0) return tl_error_set(err, TL_ERR_INVALID, "page too large for Brotli");
    if (tl_buf_reserve(out, bound) != 0) return tl_error_nomem(err);
    int quality = level > 0 && level <= BROTLI_MAX_QUALITY ? level : 1;
    if (!BrotliEncoderCompress(quality, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, len, src,
                               &bound, out->data + out->len))
        return tl_error_set(err, TL_ERR_INTERNAL, "Brotli compression failed");
    out->len += bound;
    return TL_OK;
}

static tl_status gzip_compress(int level, const uint8_t *src, size_t len, tl_buf *out,
                               tl_error *err)
{
    if (len > UINT_MAX / 2) return tl_error_set(err, TL_ERR_INVALID, "page too large for gzip");
    z_stream z = {0};
    if (deflateInit2(&z, level ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return tl_error_nomem(err);
    uLong bound = deflateBound(&z, (uLong)len);
    if (tl_buf_reserve(out, bound) != 0) {
        deflateEnd(&z);
        return tl_error_nomem(err);
    }
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)len;
    z.next_out = out->data + out->len;
    z.avail_out = (uInt)bound;
    int rc = deflate(&z, Z_FINISH);
    size_t produced = bound - z.avail_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) return tl_error_set(err, TL_ERR_INTERNAL, "gzip compression failed");
    out->len += produced;
    return TL_OK;
}

tl_status tl_pq_compress(tl_pq_codec_ctx *c, tl_pq_codec_id codec, int level, const uint8_t *src,
                         size_t len, tl_buf *out, tl_error *err)
{
    switch (codec) {
    case TL_PQ_CODEC_UNCOMPRESSED:
        return tl_buf_append(out, src, len) == 0 ? TL_OK : tl_error_nomem(err);
    case TL_PQ_CODEC_SNAPPY: {
        size_t bound = snappy_max_compressed_length(len);
        if (tl_buf_reserve(out, bound) != 0) return tl_error_nomem(err);
        if (snappy_compress((const char *)src, len, (char *)out->data + out->len, &bound) !=
            SNAPPY_OK)
            return tl_error_set(err, TL_ERR_INTERNAL, "snappy compression failed");
        out->len += bound;
        return TL_OK;
    }
    case TL_PQ_CODEC_GZIP:
        return gzip_compress(level, src, len, out, err);
    case TL_PQ_CODEC_LZ4_RAW:
        return lz4_compress(src, len, out, err);
    case TL_PQ_CODEC_BROTLI:
        return brotli_compress(level, src, len, out, err);
    case TL_PQ_CODEC_ZSTD: {
        if (c->zc == NULL && (c->zc = take_cctx()) == NULL) return tl_error_nomem(err);
        size_t bound = ZSTD_compressBound(len);
        if (tl_buf_reserve(out, bound) != 0) return tl_error_nomem(err);
        size_t n = ZSTD_compressCCtx(c->zc, out->data + out->len, bound, src, len,
                                     level ? level : ZSTD_CLEVEL_DEFAULT);
        if (ZSTD_isError(n))
            return tl_error_set(err, TL_ERR_INTERNAL, "zstd compression failed: %s",
                                ZSTD_getErrorName(n));
        out->len += n;
        return TL_OK;
    }
    default:
        return tl_error_set(err, TL_ERR_INVALID, "unsupported compression codec %s",
                            tl_pq_codec_name(codec));
    }
}

static tl_status size_mismatch(tl_pq_codec_id codec, size_t got, size_t want, tl_error *err)
{
    return tl_error_set(err, TL_ERR_INVALID, "%s data decompressed to %zu bytes, expected %zu",
                        tl_pq_codec_name(codec), got, want);
}

/* Inflates gzip or zlib data; concatenated gzip members (as Hadoop writes) are allowed. */
static tl_status gzip_decompress(const uint8_t *src, size_t len, uint8_t *dst, size_t dst_len,
                                 tl_error *err)
{
    if (len > UINT_MAX || dst_len > UINT_MAX)
        return tl_error_set(err, TL_ERR_INVALID, "gzip page too large");
    z_stream z = {0};
    if (inflateInit2(&z, 15 + 32) != Z_OK) return tl_error_nomem(err);
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)len;
    z.next_out = dst;
    z.avail_out = (uInt)dst_len;
    int rc;
    for (;;) {
        rc = inflate(&z, Z_FINISH);
        if (rc == Z_STREAM_END && z.avail_in > 0 && z.avail_out > 0) {
            if (inflateReset(&z) != Z_OK) break;
            continue;
        }
        break;
    }
    size_t produced = dst_len - z.avail_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END && !(rc == Z_BUF_ERROR && produced == dst_len && z.avail_in == 0))
        return tl_error_set(err, TL_ERR_INVALID, "corrupt GZIP data (zlib error %d)", rc);
    if (produced != dst_len) return size_mismatch(TL_PQ_CODEC_GZIP, produced, dst_len, err);
    return TL_OK;
}

static tl_status lz4_block(tl_pq_codec_id codec, const uint8_t *src, size_t len, uint8_t *dst,
                           size_t dst_len, tl_error *err)
{
    if (len > INT_MAX || dst_len > INT_MAX)
        return tl_error_set(err, TL_ERR_INVALID, "%s page too large", tl_pq_codec_name(codec));
    int n = LZ4_decompress_safe((const char *)src, (char *)dst, (int)len, (int)dst_len);
    if (n < 0) return tl_error_set(err, TL_ERR_INVALID, "corrupt %s data", tl_pq_codec_name(codec));
    if ((size_t)n != dst_len) return size_mismatch(codec, (size_t)n, dst_len, err);
    return TL_OK;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The deprecated LZ4 codec: Hadoop's framing (blocks each led by their
 * decompressed and compressed sizes, big-endian), or, as older writers made
 * it, one raw block; read as Arrow does, the framing first. */
static tl_status lz4_hadoop(const uint8_t *src, size_t len, uint8_t *dst, size_t dst_len,
                            tl_error *err)
{
    size_t in = 0, outp = 0;
    while (in + 8 <= len) {
        uint32_t raw = be32(src + in), packed = be32(src + in + 4);
        if (packed > len - in - 8 || raw > dst_len - outp) break;
        if (lz4_block(TL_PQ_CODEC_LZ4, src + in + 8, packed, dst + outp, raw, NULL) != TL_OK) break;
        in += 8 + (size_t)packed;
        outp += raw;
        if (in == len && outp == dst_len) return TL_OK;
    }
    return lz4_block(TL_PQ_CODEC_LZ4, src, len, dst, dst_len, err);
}

static tl_status brotli_decompress(const uint8_t *src, size_t len, uint8_t *dst, size_t dst_len,
                                   tl_error *err)
{
    size_t n = dst_len;
    BrotliDecoderResult r = BrotliDecoderDecompress(len, src, &n, dst);
    if (r != BROTLI_DECODER_RESULT_SUCCESS)
        return tl_error_set(err, TL_ERR_INVALID, "corrupt BROTLI data");
    if (n != dst_len) return size_mismatch(TL_PQ_CODEC_BROTLI, n, dst_len, err);
    return TL_OK;
}

tl_status tl_pq_decompress(tl_pq_codec_ctx *c, tl_pq_codec_id codec, const uint8_t *src, size_t len,
                           uint8_t *dst, size_t dst_len, tl_error *err)
{
    switch (codec) {
    case TL_PQ_CODEC_UNCOMPRESSED:
        if (len != dst_len) return size_mismatch(codec, len, dst_len, err);
        if (len) memcpy(dst, src, len);
        return TL_OK;
    case TL_PQ_CODEC_SNAPPY: {
        size_t n = 0;
        if (snappy_uncompressed_length((const char *)src, len, &n) != SNAPPY_OK)
            return tl_error_set(err, TL_ERR_INVALID, "corrupt SNAPPY data");
        if (n != dst_len) return size_mismatch(codec, n, dst_len, err);
        if (snappy_uncompress((const char *)src, len, (char *)dst, &n) != SNAPPY_OK || n != dst_len)
            return tl_error_set(err, TL_ERR_INVALID, "corrupt SNAPPY data");
        return TL_OK;
    }
    case TL_PQ_CODEC_GZIP:
        return gzip_decompress(src, len, dst, dst_len, err);
    case TL_PQ_CODEC_LZ4_RAW:
        return lz4_block(codec, src, len, dst, dst_len, err);
    case TL_PQ_CODEC_LZ4:
        return lz4_hadoop(src, len, dst, dst_len, err);
    case TL_PQ_CODEC_BROTLI:
        return brotli_decompress(src, len, dst, dst_len, err);
    case TL_PQ_CODEC_ZSTD: {
        if (c->zd == NULL && (c->zd = take_dctx()) == NULL) return tl_error_nomem(err);
        size_t n = ZSTD_decompressDCtx(c->zd, dst, dst_len, src, len);
        if (ZSTD_isError(n))
            return tl_error_set(err, TL_ERR_INVALID, "corrupt ZSTD data: %s", ZSTD_getErrorName(n));
        if (n != dst_len) return size_mismatch(codec, n, dst_len, err);
        return TL_OK;
    }
    default:
        return tl_error_set(err, TL_ERR_INVALID, "unsupported compression codec %s",
                            tl_pq_codec_name(codec));
    }
}
