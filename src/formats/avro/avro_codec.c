#include "formats/avro/avro_codec.h"

#include <limits.h>
#include <stdbool.h>
#include <snappy-c.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

static const char *const tl_avro_codec_names[] = {"null", "deflate", "snappy", "zstandard"};

const char *tl_avro_codec_name(tl_avro_codec codec)
{
    return (unsigned)codec <= TL_AVRO_CODEC_ZSTD ? tl_avro_codec_names[codec] : "?";
}

tl_status tl_avro_codec_parse(const uint8_t *name, size_t len, tl_avro_codec *out, tl_error *err)
{
    for (int c = TL_AVRO_CODEC_NULL; c <= TL_AVRO_CODEC_ZSTD; c++) {
        if (strlen(tl_avro_codec_names[c]) == len &&
            memcmp(name, tl_avro_codec_names[c], len) == 0) {
            *out = (tl_avro_codec)c;
            return TL_OK;
        }
    }
    return tl_error_set(err, TL_ERR_INVALID, "unsupported avro codec \"%.*s\"",
                        (int)(len > 64 ? 64 : len), (const char *)name);
}

/* Makes room for at least one more output byte, doubling up to `limit`. */
static tl_status tl_avro_out_grow(tl_buf *out, size_t limit, tl_error *err)
{
    if (out->len >= limit)
        return tl_error_set(err, TL_ERR_INVALID, "block decompresses to more than %zu bytes",
                            limit);
    size_t want = out->cap > 4096 ? out->cap : 4096;
    if (want > limit - out->len) want = limit - out->len;
    return tl_buf_reserve(out, want) == 0 ? TL_OK : tl_error_nomem(err);
}

/* Usable room after out->len (tl_buf keeps one byte for its NUL). */
static size_t tl_avro_out_room(const tl_buf *out, size_t limit)
{
    if (out->cap == 0) return 0;
    size_t room = out->cap - out->len - 1;
    return room > limit - out->len ? limit - out->len : room;
}

static tl_status tl_avro_deflate(int level, const uint8_t *data, size_t len, tl_buf *out,
                                 tl_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return tl_error_nomem(err);
    tl_status st = TL_OK;
    int rc = Z_OK;
    size_t fed = 0;
    while (rc != Z_STREAM_END) {
        if (z.avail_in == 0 && fed < len) {
            size_t chunk = len - fed > UINT_MAX ? UINT_MAX : len - fed;
            z.next_in = (Bytef *)(data + fed);
            z.avail_in = (uInt)chunk;
            fed += chunk;
        }
        if (tl_buf_reserve(out, 65536) != 0) {
            st = tl_error_nomem(err);
            break;
        }
        z.next_out = out->data + out->len;
        z.avail_out =
            (uInt)(out->cap - out->len - 1 > UINT_MAX ? UINT_MAX : out->cap - out->len - 1);
        uInt before = z.avail_out;
        rc = deflate(&z, fed == len ? Z_FINISH : Z_NO_FLUSH);
        out->len += before - z.avail_out;
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            st = tl_error_set(err, TL_ERR_INTERNAL, "deflate failed (%d)", rc);
            break;
        }
    }
    deflateEnd(&z);
    if (out->data) out->data[out->len] = '\0';
    return st;
}

static tl_status tl_avro_inflate(const uint8_t *data, size_t len, size_t limit, tl_buf *out,
                                 tl_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -15) != Z_OK) return tl_error_nomem(err);
    tl_status st = TL_OK;
    size_t fed = 0;
    for (;;) {
        if (z.avail_in == 0 && fed < len) {
            size_t chunk = len - fed > UINT_MAX ? UINT_MAX : len - fed;
            z.next_in = (Bytef *)(data + fed);
            z.avail_in = (uInt)chunk;
            fed += chunk;
        }
        if (tl_avro_out_room(out, limit) == 0 && (st = tl_avro_out_grow(out, limit, err)) != TL_OK)
            break;
        size_t room = tl_avro_out_room(out, limit);
        z.next_out = out->data + out->len;
        z.avail_out = (uInt)(room > UINT_MAX ? UINT_MAX : room);
        uInt before = z.avail_out;
        int rc = inflate(&z, Z_NO_FLUSH);
        out->len += before - z.avail_out;
        if (rc == Z_STREAM_END) break;
        bool stalled = rc == Z_BUF_ERROR && z.avail_in == 0 && fed == len;
        if ((rc != Z_OK && rc != Z_BUF_ERROR) || stalled) {
            st = tl_error_set(err, TL_ERR_INVALID, "corrupt deflate data (%s)",
                              stalled ? "truncated"
                              : z.msg ? z.msg
                                      : "error");
            break;
        }
    }
    inflateEnd(&z);
    if (out->data) out->data[out->len] = '\0';
    return st;
}

static tl_status tl_avro_snappy(const uint8_t *data, size_t len, tl_buf *out, tl_error *err)
{
    size_t max = snappy_max_compressed_length(len);
    if (tl_buf_reserve(out, max + 4) != 0) return tl_error_nomem(err);
    size_t n = max;
    if (snappy_compress((const char *)data, len, (char *)out->data + out->len, &n) != SNAPPY_OK)
        return tl_error_set(err, TL_ERR_INTERNAL, "snappy compression failed");
    out->len += n;
    uint32_t crc = (uint32_t)crc32(0L, Z_NULL, 0);
    for (size_t done = 0; done < len;) {
        size_t chunk = len - done > UINT_MAX ? UINT_MAX : len - done;
        crc = (uint32_t)crc32(crc, data + done, (uInt)chunk);
        done += chunk;
    }
    uint8_t be[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16), (uint8_t)(crc >> 8), (uint8_t)crc};
    return tl_buf_append(out, be, 4) == 0 ? TL_OK : tl_error_nomem(err);
}

static tl_status tl_avro_unsnappy(const uint8_t *data, size_t len, size_t limit, tl_buf *out,
                                  tl_error *err)
{
    if (len < 4) return tl_error_set(err, TL_ERR_INVALID, "snappy block shorter than its CRC");
    size_t body = len - 4, n;
    if (snappy_uncompressed_length((const char *)data, body, &n) != SNAPPY_OK)
        return tl_error_set(err, TL_ERR_INVALID, "corrupt snappy block header");
    if (n > limit)
        return tl_error_set(err, TL_ERR_INVALID, "snappy block claims %zu bytes, limit %zu", n,
                            limit);
    if (tl_buf_reserve(out, n) != 0) return tl_error_nomem(err);
    size_t got = n;
    if (snappy_uncompress((const char *)data, body, (char *)out->data, &got) != SNAPPY_OK ||
        got != n)
        return tl_error_set(err, TL_ERR_INVALID, "corrupt snappy block");
    out->len = n;
    out->data[n] = '\0';
    uint32_t crc = (uint32_t)crc32(0L, Z_NULL, 0);
    for (size_t done = 0; done < n;) {
        size_t chunk = n - done > UINT_MAX ? UINT_MAX : n - done;
        crc = (uint32_t)crc32(crc, out->data + done, (uInt)chunk);
        done += chunk;
    }
    const uint8_t *be = data + body;
    uint32_t want = (uint32_t)be[0] << 24 | (uint32_t)be[1] << 16 | (uint32_t)be[2] << 8 | be[3];
    if (crc != want)
        return tl_error_set(err, TL_ERR_INVALID, "snappy block CRC mismatch (%08x, expected %08x)",
                            crc, want);
    return TL_OK;
}

static tl_status tl_avro_zstd(int level, const uint8_t *data, size_t len, tl_buf *out,
                              tl_error *err)
{
    size_t max = ZSTD_compressBound(len);
    if (tl_buf_reserve(out, max) != 0) return tl_error_nomem(err);
    size_t n = ZSTD_compress(out->data + out->len, max, data, len, level ? level : 3);
    if (ZSTD_isError(n))
        return tl_error_set(err, TL_ERR_INTERNAL, "zstd compression failed: %s",
                            ZSTD_getErrorName(n));
    out->len += n;
    out->data[out->len] = '\0';
    return TL_OK;
}

static tl_status tl_avro_unzstd(const uint8_t *data, size_t len, size_t limit, tl_buf *out,
                                tl_error *err)
{
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    if (dctx == NULL) return tl_error_nomem(err);
    ZSTD_inBuffer in = {data, len, 0};
    tl_status st = TL_OK;
    size_t rc = 1;
    while (st == TL_OK) {
        if (in.pos == in.size && rc == 0) break; /* every frame complete */
        if (tl_avro_out_room(out, limit) == 0 && (st = tl_avro_out_grow(out, limit, err)) != TL_OK)
            break;
        ZSTD_outBuffer o = {out->data + out->len, tl_avro_out_room(out, limit), 0};
        size_t in_before = in.pos;
        rc = ZSTD_decompressStream(dctx, &o, &in);
        out->len += o.pos;
        if (ZSTD_isError(rc))
            st = tl_error_set(err, TL_ERR_INVALID, "corrupt zstd data: %s", ZSTD_getErrorName(rc));
        else if (in.pos == in.size && in.pos == in_before && o.pos == 0 && rc != 0)
            st = tl_error_set(err, TL_ERR_INVALID, "truncated zstd data");
    }
    ZSTD_freeDCtx(dctx);
    if (out->data) out->data[out->len] = '\0';
    return st;
}

tl_status tl_avro_compress(tl_avro_codec codec, int level, const uint8_t *data, size_t len,
                           tl_buf *out, tl_error *err)
{
    switch (codec) {
    case TL_AVRO_CODEC_NULL:
        return tl_buf_append(out, data, len) == 0 ? TL_OK : tl_error_nomem(err);
    case TL_AVRO_CODEC_DEFLATE:
        return tl_avro_deflate(level, data, len, out, err);
    case TL_AVRO_CODEC_SNAPPY:
        return tl_avro_snappy(data, len, out, err);
    case TL_AVRO_CODEC_ZSTD:
        return tl_avro_zstd(level, data, len, out, err);
    }
    return tl_error_set(err, TL_ERR_INVALID, "unknown avro codec %d", (int)codec);
}

tl_status tl_avro_decompress(tl_avro_codec codec, const uint8_t *data, size_t len, size_t limit,
                             tl_buf *out, tl_error *err)
{
    out->len = 0;
    switch (codec) {
    case TL_AVRO_CODEC_NULL:
        if (len > limit) return tl_error_set(err, TL_ERR_INVALID, "block larger than %zu", limit);
        return tl_buf_append(out, data, len) == 0 ? TL_OK : tl_error_nomem(err);
    case TL_AVRO_CODEC_DEFLATE:
        return tl_avro_inflate(data, len, limit, out, err);
    case TL_AVRO_CODEC_SNAPPY:
        return tl_avro_unsnappy(data, len, limit, out, err);
    case TL_AVRO_CODEC_ZSTD:
        return tl_avro_unzstd(data, len, limit, out, err);
    }
    return tl_error_set(err, TL_ERR_INVALID, "unknown avro codec %d", (int)codec);
}
