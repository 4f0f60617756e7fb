#include "formats/parquet/parquet_encoding.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <stdlib.h>
#include <string.h>

#include "formats/parquet/thrift_compact.h"

/* Decoded byte arrays are rebuilt only below this size: it bounds the memory a
 * hostile DELTA_BYTE_ARRAY page (huge shared prefixes) can make us allocate. */
#define TL_PQ_MAX_REBUILT_BYTES ((size_t)1 << 31)

int tl_pq_bit_width(uint64_t v)
{
    return v ? 64 - __builtin_clzll(v) : 0;
}

/* ---- Bitmaps ---- */

void tl_pq_bits_set_range(uint8_t *bits, int64_t start, int64_t n, bool value)
{
    int64_t i = start, end = start + n;
    for (; i < end && (i & 7); i++) value ? tl_pq_bit_on(bits, i) : tl_pq_bit_off(bits, i);
    int64_t bytes = (end - i) / 8;
    if (bytes > 0) {
        memset(bits + i / 8, value ? 0xFF : 0, (size_t)bytes);
        i += bytes * 8;
    }
    for (; i < end; i++) value ? tl_pq_bit_on(bits, i) : tl_pq_bit_off(bits, i);
}

static inline bool bit_at(const uint8_t *bits, int64_t i)
{
    return (bits[i >> 3] >> (i & 7)) & 1;
}

static inline void bit_put(uint8_t *bits, int64_t i, bool v)
{
    v ? tl_pq_bit_on(bits, i) : tl_pq_bit_off(bits, i);
}

void tl_pq_bits_copy(uint8_t *dst, int64_t dst_off, const uint8_t *src, int64_t src_off, int64_t n)
{
    int64_t i = 0;
    for (; i < n && ((dst_off + i) & 7); i++) bit_put(dst, dst_off + i, bit_at(src, src_off + i));
    int64_t bytes = (n - i) / 8;
    uint8_t *d = dst + (dst_off + i) / 8;
    int64_t s = src_off + i;
    if ((s & 7) == 0) {
        if (bytes > 0) memcpy(d, src + s / 8, (size_t)bytes);
    } else {
        /* Each output byte straddles two source bytes, both within the copied range. */
        int sh = (int)(s & 7);
        const uint8_t *p = src + s / 8;
        for (int64_t k = 0; k < bytes; k++) d[k] = (uint8_t)((p[k] >> sh) | (p[k + 1] << (8 - sh)));
    }
    i += bytes * 8;
    for (; i < n; i++) bit_put(dst, dst_off + i, bit_at(src, src_off + i));
}

int64_t tl_pq_bits_count(const uint8_t *bits, int64_t start, int64_t n)
{
    int64_t i = start, end = start + n, count = 0;
    for (; i < end && (i & 7); i++) count += bit_at(bits, i);
    for (; i + 64 <= end; i += 64) count += __builtin_popcountll(tl_load_le64(bits + i / 8));
    for (; i + 8 <= end; i += 8) count += __builtin_popcount(bits[i / 8]);
    for (; i < end; i++) count += bit_at(bits, i);
    return count;
}

/* ---- Bit packing ---- */

typedef struct bit_writer {
    uint8_t *dst;
    size_t pos;
    uint64_t acc;
    int nbits;
} bit_writer;

static inline void bw_put32(bit_writer *b, uint64_t v, int w)
{
    b->acc |= v << b->nbits;
    b->nbits += w;
    while (b->nbits >= 8) {
        b->dst[b->pos++] = (uint8_t)b->acc;
        b->acc >>= 8;
        b->nbits -= 8;
    }
}

static inline void bw_flush(bit_writer *b)
{
    if (b->nbits > 0) b->dst[b->pos++] = (uint8_t)b->acc;
    b->acc = 0;
    b->nbits = 0;
}

/* Eight bytes at `byte`, zero-padded past nbytes. */
static inline uint64_t load_word(const uint8_t *src, size_t nbytes, size_t byte)
{
    if (byte + 8 <= nbytes) return tl_load_le64(src + byte);
    uint64_t x = 0;
    for (size_t k = 0; k < 8 && byte + k < nbytes; k++) x |= (uint64_t)src[byte + k] << (8 * k);
    return x;
}

/* Unpacks n values of w <= 32 bits; the caller checked n * w bits fit in nbytes. */
static void unpack32(const uint8_t *src, size_t nbytes, int w, uint32_t *out, size_t n)
{
    if (w == 0) {
        memset(out, 0, n * sizeof *out);
        return;
    }
    uint64_t mask = (1ull << w) - 1;
    size_t i = 0, bit = 0;
    size_t safe = nbytes >= 8 ? (nbytes - 8) * 8 : 0; /* bit positions with 8 readable bytes */
    for (; i < n && bit < safe; i++, bit += (size_t)w)
        out[i] = (uint32_t)((tl_load_le64(src + bit / 8) >> (bit & 7)) & mask);
    for (; i < n; i++, bit += (size_t)w)
        out[i] = (uint32_t)((load_word(src, nbytes, bit / 8) >> (bit & 7)) & mask);
}

static uint64_t unpack_one64(const uint8_t *src, size_t nbytes, size_t bit, int w)
{
    size_t byte = bit / 8;
    int sh = (int)(bit & 7);
    uint64_t v = load_word(src, nbytes, byte) >> sh;
    if (sh && w + sh > 64 && byte + 8 < nbytes) v |= (uint64_t)src[byte + 8] << (64 - sh);
    return w == 64 ? v : v & ((1ull << w) - 1);
}

/* ---- RLE / bit-packed hybrid ---- */

static int put_uvarint(tl_buf *out, uint64_t v)
{
    uint8_t tmp[10];
    return tl_buf_append(out, tmp, tl_thrift_put_uvarint(tmp, v));
}

static int rle_flush_literals(tl_buf *out, const uint32_t *v, size_t n, int w)
{
    if (n == 0) return 0;
    size_t groups = (n + 7) / 8;
    if (put_uvarint(out, groups << 1 | 1) != 0) return -1;
    uint8_t *dst = tl_buf_extend(out, groups * (size_t)w);
    if (dst == NULL) return -1;
    bit_writer b = {.dst = dst};
    for (size_t i = 0; i < groups * 8; i++) bw_put32(&b, i < n ? v[i] : 0, w);
    bw_flush(&b);
    return 0;
}

static int rle_put_run(tl_buf *out, uint32_t value, size_t count, int w)
{
    if (put_uvarint(out, (uint64_t)count << 1) != 0) return -1;
    uint8_t tmp[4];
    tl_store_le32(tmp, value);
    return tl_buf_append(out, tmp, (size_t)(w + 7) / 8);
}

int tl_pq_rle_encode(tl_buf *out, const uint32_t *v, size_t n, int w)
{
    size_t lit_start = 0, lit_n = 0, i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && v[j] == v[i]) j++;
        size_t run = j - i;
        if (run >= 8 && lit_n % 8) {
            /* Literal runs hold whole groups of 8: top the open group up first. */
            size_t k = 8 - lit_n % 8;
            lit_n += k;
            i += k;
            run -= k;
        }
        if (run >= 8) {
            if (rle_flush_literals(out, v + lit_start, lit_n, w) != 0) return -1;
            if (rle_put_run(out, v[i], run, w) != 0) return -1;
            i += run;
            lit_start = i;
            lit_n = 0;
        } else {
            lit_n += run;
            i += run;
        }
    }
    return rle_flush_literals(out, v + lit_start, lit_n, w);
}

int tl_pq_rle_encode_bitmap(tl_buf *out, const uint8_t *bits, size_t n)
{
    enum { MIN_RUN_BYTES = 4 };
    size_t full = n / 8, nbytes = (n + 7) / 8, lit = 0, i = 0;
    while (i < full) {
        size_t j = i;
        if (bits[i] == 0 || bits[i] == 0xFF)
            while (j < full && bits[j] == bits[i]) j++;
        if (j - i >= MIN_RUN_BYTES) {
            if (i > lit) {
                if (put_uvarint(out, (uint64_t)(i - lit) << 1 | 1) != 0) return -1;
                if (tl_buf_append(out, bits + lit, i - lit) != 0) return -1;
            }
            if (rle_put_run(out, bits[i] ? 1 : 0, (j - i) * 8, 1) != 0) return -1;
            i = lit = j;
        } else {
            i = j > i ? j : i + 1;
        }
    }
    if (nbytes > lit) {
        if (put_uvarint(out, (uint64_t)(nbytes - lit) << 1 | 1) != 0) return -1;
        if (tl_buf_append(out, bits + lit, nbytes - lit) != 0) return -1;
        if (n % 8) out->data[out->len - 1] &= (uint8_t)((1u << (n % 8)) - 1);
    }
    return 0;
}

typedef struct rle_run {
    bool packed;
    const uint8_t *data; /* packed: the bit-packed bytes */
    size_t avail;        /* packed: bytes present (a last run may be cut short) */
    size_t count;        /* values in the run */
    uint32_t value;      /* RLE: the repeated value */
} rle_run;

static tl_status rle_next_run(const uint8_t **p, const uint8_t *end, int w, rle_run *run,
                              tl_error *err)
{
    uint64_t h = 0;
    if (tl_thrift_get_uvarint(p, end, &h) != 0)
        return tl_error_set(err, TL_ERR_INVALID, "RLE data truncated");
    size_t left = (size_t)(end - *p);
    if (h & 1) {
        uint64_t groups = h >> 1;
        if (groups > (uint64_t)(SIZE_MAX / 64))
            return tl_error_set(err, TL_ERR_INVALID, "RLE run too long");
        size_t bytes = (size_t)groups * (size_t)w;
        run->packed = true;
        run->data = *p;
        run->avail = bytes < left ? bytes : left;
        run->count = (size_t)groups * 8;
        *p += run->avail;
        return TL_OK;
    }
    size_t vbytes = (size_t)(w + 7) / 8;
    if (left < vbytes) return tl_error_set(err, TL_ERR_INVALID, "RLE data truncated");
    uint32_t value = 0;
    for (size_t k = 0; k < vbytes; k++) value |= (uint32_t)(*p)[k] << (8 * k);
    if (w < 32 && (value >> w) != 0)
        return tl_error_set(err, TL_ERR_INVALID, "RLE value %u exceeds bit width %d", value, w);
    *p += vbytes;
    run->packed = false;
    run->count = (size_t)(h >> 1);
    run->value = value;
    return TL_OK;
}

tl_status tl_pq_rle_decode(const uint8_t *data, size_t len, int w, uint32_t *out, size_t n,
                           size_t *consumed, tl_error *err)
{
    if (w < 0 || w > 32) return tl_error_set(err, TL_ERR_INVALID, "bad RLE bit width %d", w);
    const uint8_t *p = data, *end = data + len;
    size_t got = 0;
    while (got < n) {
        rle_run run = {0};
        tl_status st = rle_next_run(&p, end, w, &run, err);
        if (st != TL_OK) return tl_error_prefix(err, "after %zu of %zu values", got, n);
        size_t take = run.count < n - got ? run.count : n - got;
        if (run.packed) {
            if (w > 0 && take > run.avail * 8 / (size_t)w)
                return tl_error_set(err, TL_ERR_INVALID,
                                    "bit-packed run truncated after %zu of %zu values", got, n);
            unpack32(run.data, run.avail, w, out + got, take);
        } else {
            for (size_t k = 0; k < take; k++) out[got + k] = run.value;
        }
        got += take;
    }
    if (consumed) *consumed = (size_t)(p - data);
    return TL_OK;
}

tl_status tl_pq_rle_decode_bitmap(const uint8_t *data, size_t len, uint8_t *dst, int64_t dst_off,
                                  size_t n, int64_t *ones, tl_error *err)
{
    const uint8_t *p = data, *end = data + len;
    size_t got = 0;
    int64_t count = 0;
    while (got < n) {
        rle_run run = {0};
        tl_status st = rle_next_run(&p, end, 1, &run, err);
        if (st != TL_OK) return tl_error_prefix(err, "levels after %zu of %zu values", got, n);
        size_t take = run.count < n - got ? run.count : n - got;
        if (run.packed) {
            if (take > run.avail * 8)
                return tl_error_set(err, TL_ERR_INVALID,
                                    "bit-packed levels truncated after %zu of %zu values", got, n);
            tl_pq_bits_copy(dst, dst_off + (int64_t)got, run.data, 0, (int64_t)take);
            count += tl_pq_bits_count(run.data, 0, (int64_t)take);
        } else {
            tl_pq_bits_set_range(dst, dst_off + (int64_t)got, (int64_t)take, run.value != 0);
            if (run.value) count += (int64_t)take;
        }
        got += take;
    }
    *ones = count;
    return TL_OK;
}

/* ---- DELTA_BINARY_PACKED ---- */

enum { DELTA_BLOCK = 128, DELTA_MINIBLOCKS = 4, DELTA_MB_VALUES = DELTA_BLOCK / DELTA_MINIBLOCKS };

/* Packs a miniblock's values of w bits (each below 2^w) into its 4 * w
 * bytes, LSB first, a 64-bit word at a time: a byte at a time cost about a
 * hundred instructions a value, a fifth of writing a timestamp column. */
static uint8_t *pack_miniblock(uint8_t *dst, const uint64_t *v, int w)
{
    uint64_t acc = 0;
    int nbits = 0;
    for (size_t k = 0; k < DELTA_MB_VALUES && w > 0; k++) {
        acc |= v[k] << nbits;
        nbits += w;
        if (nbits >= 64) {
            tl_store_le64(dst, acc);
            dst += 8;
            nbits -= 64;
            /* The bits of v[k] that did not fit (none when it ended the word). */
            acc = nbits ? v[k] >> (w - nbits) : 0;
        }
    }
    /* 32 values of w bits are 4 * w bytes: what is left is whole bytes. */
    for (; nbits > 0; nbits -= 8, acc >>= 8) *dst++ = (uint8_t)acc;
    return dst;
}

static int delta_block(tl_buf *out, const uint64_t *deltas, size_t cnt)
{
    uint64_t min = deltas[0];
    for (size_t k = 1; k < cnt; k++)
        if ((int64_t)deltas[k] < (int64_t)min) min = deltas[k];
    if (put_uvarint(out, tl_zigzag64((int64_t)min)) != 0) return -1;
    uint8_t widths[DELTA_MINIBLOCKS] = {0};
    size_t bytes = 0;
    for (size_t m = 0; m < DELTA_MINIBLOCKS && m * DELTA_MB_VALUES < cnt; m++) {
        uint64_t max = 0;
        for (size_t k = m * DELTA_MB_VALUES; k < cnt && k < (m + 1) * DELTA_MB_VALUES; k++)
            max |= deltas[k] - min;
        widths[m] = (uint8_t)tl_pq_bit_width(max);
        bytes += (size_t)widths[m] * DELTA_MB_VALUES / 8;
    }
    if (tl_buf_append(out, widths, DELTA_MINIBLOCKS) != 0) return -1;
    uint8_t *dst = tl_buf_extend(out, bytes);
    if (dst == NULL) return -1;
    for (size_t m = 0; m < DELTA_MINIBLOCKS && m * DELTA_MB_VALUES < cnt; m++) {
        uint64_t mb[DELTA_MB_VALUES];
        for (size_t k = 0; k < DELTA_MB_VALUES; k++) {
            size_t at = m * DELTA_MB_VALUES + k;
            mb[k] = at < cnt ? deltas[at] - min : 0;
        }
        dst = pack_miniblock(dst, mb, widths[m]);
    }
    return 0;
}

static int delta_header(tl_buf *out, size_t n, int64_t first)
{
    if (put_uvarint(out, DELTA_BLOCK) != 0 || put_uvarint(out, DELTA_MINIBLOCKS) != 0) return -1;
    if (put_uvarint(out, n) != 0) return -1;
    return put_uvarint(out, tl_zigzag64(first));
}

int tl_pq_delta_encode(tl_buf *out, const int64_t *v, size_t n, bool is32)
{
    if (delta_header(out, n, n ? v[0] : 0) != 0) return -1;
    uint64_t deltas[DELTA_BLOCK];
    for (size_t i = 1; i < n; i += DELTA_BLOCK) {
        size_t cnt = n - i < DELTA_BLOCK ? n - i : DELTA_BLOCK;
        for (size_t k = 0; k < cnt; k++) {
            uint64_t d = (uint64_t)v[i + k] - (uint64_t)v[i + k - 1];
            /* INT32 columns wrap at 32 bits so every delta fits 32 bits. */
            deltas[k] = is32 ? (uint64_t)(int64_t)(int32_t)(uint32_t)d : d;
        }
        if (delta_block(out, deltas, cnt) != 0) return -1;
    }
    return 0;
}

int tl_pq_delta_encode_i32(tl_buf *out, const int32_t *v, size_t n)
{
    if (delta_header(out, n, n ? v[0] : 0) != 0) return -1;
    uint64_t deltas[DELTA_BLOCK];
    for (size_t i = 1; i < n; i += DELTA_BLOCK) {
        size_t cnt = n - i < DELTA_BLOCK ? n - i : DELTA_BLOCK;
        for (size_t k = 0; k < cnt; k++) {
            uint32_t d = (uint32_t)v[i + k] - (uint32_t)v[i + k - 1];
            deltas[k] = (uint64_t)(int64_t)(int32_t)d;
        }
        if (delta_block(out, deltas, cnt) != 0) return -1;
    }
    return 0;
}

static tl_status delta_bad(tl_error *err, const char *what)
{
    return tl_error_set(err, TL_ERR_INVALID, "DELTA_BINARY_PACKED: %s", what);
}

/* Of last + j * step (j = 1..take, INT64 arithmetic), how many lie in
 * [lo, hi] when the run neither wraps nor straddles a bound: *count, true. */
static bool run_count(int64_t last, int64_t step, size_t take, int64_t lo, int64_t hi,
                      size_t *count)
{
    int64_t span, first, end;
    if (__builtin_mul_overflow(step, (int64_t)take, &span) ||
        __builtin_add_overflow(last, span, &end) || __builtin_add_overflow(last, step, &first))
        return false;
    int64_t a = step >= 0 ? first : end, b = step >= 0 ? end : first;
    if (b < lo || a > hi) {
        *count = 0;
        return true;
    }
    if (a >= lo && b <= hi) {
        *count = take;
        return true;
    }
    return false;
}

/* One stream walked: its values into out, or (out NULL, INT64 only) the
 * number of them in [range[0], range[1]] into *count. */
static tl_status delta_walk(const uint8_t *data, size_t len, bool is32, int64_t *out, size_t cap,
                            const int64_t *range, size_t *count, size_t *n_out, size_t *consumed,
                            tl_error *err)
{
    const uint8_t *p = data, *end = data + len;
    uint64_t block = 0, mbs = 0, total = 0, zfirst = 0;
    if (tl_thrift_get_uvarint(&p, end, &block) || tl_thrift_get_uvarint(&p, end, &mbs) ||
        tl_thrift_get_uvarint(&p, end, &total) || tl_thrift_get_uvarint(&p, end, &zfirst))
        return delta_bad(err, "header truncated");
    if (block == 0 || block % 128 || block > (1u << 20) || mbs == 0 || block % mbs ||
        (block / mbs) % 32)
        return delta_bad(err, "bad block layout");
    if (total > cap) return delta_bad(err, "more values than the page holds");
    size_t per_mb = (size_t)(block / mbs), got = 0, in = 0;
    uint64_t last = (uint64_t)tl_unzigzag64(zfirst);
    int64_t lo = range ? range[0] : 0, hi = range ? range[1] : 0;
    int max_w = 64; /* DuckDB computes INT32 deltas in 64 bits: wider widths occur */
    if (total > 0) {
        if (out)
            out[got] = is32 ? (int32_t)(uint32_t)last : (int64_t)last;
        else
            in += (int64_t)last >= lo && (int64_t)last <= hi;
        got++;
    }
    while (got < total) {
        uint64_t zmin = 0;
        if (tl_thrift_get_uvarint(&p, end, &zmin)) return delta_bad(err, "block truncated");
        uint64_t min = (uint64_t)tl_unzigzag64(zmin);
        if ((uint64_t)(end - p) < mbs) return delta_bad(err, "block truncated");
        const uint8_t *widths = p;
        p += mbs;
        for (size_t m = 0; m < mbs && got < total; m++) {
            int w = widths[m];
            if (w > max_w) return delta_bad(err, "bit width too large");
            size_t take = per_mb < total - got ? per_mb : (size_t)(total - got);
            size_t mb_bytes = per_mb * (size_t)w / 8, left = (size_t)(end - p);
            if ((take * (size_t)w + 7) / 8 > left) return delta_bad(err, "miniblock truncated");
            size_t avail = mb_bytes < left ? mb_bytes : left, whole = 0;
            if (out && w == 0 && !is32) { /* even steps (steady readings) */
                for (size_t k = 0; k < take; k++) out[got + k] = (int64_t)(last += min);
                got += take;
            } else if (out && !is32 && w <= 56 && left >= mb_bytes + 8) {
                /* a whole miniblock with bytes to spare after it: each value
                 * from one unchecked 8-byte load (w + 7 bits fit in it) */
                uint64_t mask = (1ull << w) - 1;
                for (size_t k = 0; k < take; k++) {
                    size_t bit = k * (size_t)w;
                    last += min + ((tl_load_le64(p + bit / 8) >> (bit & 7)) & mask);
                    out[got++] = (int64_t)last;
                }
            } else if (out) {
                for (size_t k = 0; k < take; k++) {
                    last += min + (w ? unpack_one64(p, avail, k * (size_t)w, w) : 0);
                    out[got++] = is32 ? (int32_t)(uint32_t)last : (int64_t)last;
                }
            } else if (w == 0 && run_count((int64_t)last, (int64_t)min, take, lo, hi, &whole)) {
                in += whole; /* an even run (steady readings): counted whole */
                last += min * take;
                got += take;
            } else {
                for (size_t k = 0; k < take; k++) {
                    last += min + (w ? unpack_one64(p, avail, k * (size_t)w, w) : 0);
                    in += (int64_t)last >= lo && (int64_t)last <= hi;
                }
                got += take;
            }
            p += avail;
        }
    }
    if (count) *count = in;
    *n_out = (size_t)total;
    *consumed = (size_t)(p - data);
    return TL_OK;
}

tl_status tl_pq_delta_decode(const uint8_t *data, size_t len, bool is32, int64_t *out, size_t cap,
                             size_t *n_out, size_t *consumed, tl_error *err)
{
    return delta_walk(data, len, is32, out, cap, NULL, NULL, n_out, consumed, err);
}

tl_status tl_pq_delta_count64(const uint8_t *data, size_t len, size_t cap, int64_t lo, int64_t hi,
                              size_t *n, size_t *count, tl_error *err)
{
    int64_t range[2] = {lo, hi};
    size_t consumed = 0;
    return delta_walk(data, len, false, NULL, cap, range, count, n, &consumed, err);
}

/* ---- Byte arrays ---- */

int tl_pq_plain_bytes_encode(tl_buf *out, const tl_pq_view *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tl_buf_append_le32(out, v[i].len) != 0 || tl_buf_append(out, v[i].data, v[i].len) != 0)
            return -1;
    return 0;
}

tl_status tl_pq_plain_bytes_decode(const uint8_t *data, size_t len, tl_pq_view *out, size_t n,
                                   tl_error *err)
{
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        if (len - pos < 4)
            return tl_error_set(err, TL_ERR_INVALID, "PLAIN byte array %zu of %zu truncated", i, n);
        uint32_t l = tl_load_le32(data + pos);
        pos += 4;
        if (l > len - pos)
            return tl_error_set(err, TL_ERR_INVALID,
                                "PLAIN byte array %zu has length %u past the page end", i, l);
        out[i].data = data + pos;
        out[i].len = l;
        pos += l;
    }
    return TL_OK;
}

static int delta_lengths(tl_buf *out, const tl_pq_view *v, size_t n)
{
    int64_t *lens = calloc(n ? n : 1, sizeof *lens);
    if (lens == NULL) return -1;
    for (size_t i = 0; i < n; i++) lens[i] = v[i].len;
    int rc = tl_pq_delta_encode(out, lens, n, true);
    free(lens);
    return rc;
}

int tl_pq_delta_length_encode(tl_buf *out, const tl_pq_view *v, size_t n)
{
    if (delta_lengths(out, v, n) != 0) return -1;
    for (size_t i = 0; i < n; i++)
        if (tl_buf_append(out, v[i].data, v[i].len) != 0) return -1;
    return 0;
}

/* Decodes n lengths with a DELTA_BINARY_PACKED stream into a new array. */
static tl_status decode_lengths(const uint8_t *data, size_t len, size_t n, int64_t **lens,
                                size_t *consumed, const char *what, tl_error *err)
{
    *lens = malloc((n ? n : 1) * sizeof **lens);
    if (*lens == NULL) return tl_error_nomem(err);
    size_t got = 0;
    tl_status st = tl_pq_delta_decode(data, len, true, *lens, n, &got, consumed, err);
    if (st == TL_OK && got != n)
        st = tl_error_set(err, TL_ERR_INVALID, "%s: %zu lengths for %zu values", what, got, n);
    for (size_t i = 0; st == TL_OK && i < n; i++)
        if ((*lens)[i] < 0)
            st = tl_error_set(err, TL_ERR_INVALID, "%s: negative length at value %zu", what, i);
    if (st != TL_OK) {
        free(*lens);
        *lens = NULL;
    }
    return st;
}

tl_status tl_pq_delta_length_decode(const uint8_t *data, size_t len, tl_pq_view *out, size_t n,
                                    size_t *consumed, tl_error *err)
{
    int64_t *lens;
    size_t pos = 0;
    TL_TRY(decode_lengths(data, len, n, &lens, &pos, "DELTA_LENGTH_BYTE_ARRAY", err));
    tl_status st = TL_OK;
    for (size_t i = 0; i < n; i++) {
        if ((uint64_t)lens[i] > len - pos) {
            st = tl_error_set(err, TL_ERR_INVALID,
                              "DELTA_LENGTH_BYTE_ARRAY value %zu runs past the page end", i);
            break;
        }
        out[i].data = data + pos;
        out[i].len = (uint32_t)lens[i];
        pos += (size_t)lens[i];
    }
    free(lens);
    if (st == TL_OK && consumed) *consumed = pos;
    return st;
}

int tl_pq_delta_byte_array_encode(tl_buf *out, const tl_pq_view *v, size_t n)
{
    int64_t *prefix = malloc((n ? n : 1) * sizeof *prefix);
    tl_pq_view *suffix = malloc((n ? n : 1) * sizeof *suffix);
    int rc = -1;
    if (prefix == NULL || suffix == NULL) goto done;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = 0;
        if (i > 0) {
            uint32_t max = v[i].len < v[i - 1].len ? v[i].len : v[i - 1].len;
            while (k < max && v[i].data[k] == v[i - 1].data[k]) k++;
        }
        prefix[i] = k;
        suffix[i].data = v[i].data + k;
        suffix[i].len = v[i].len - k;
    }
    if (tl_pq_delta_encode(out, prefix, n, true) != 0) goto done;
    rc = tl_pq_delta_length_encode(out, suffix, n);
done:
    free(prefix);
    free(suffix);
    return rc;
}

tl_status tl_pq_delta_byte_array_decode(const uint8_t *data, size_t len, tl_pq_view *out, size_t n,
                                        uint8_t **storage, tl_error *err)
{
    *storage = NULL;
    int64_t *prefix;
    size_t pos = 0;
    TL_TRY(decode_lengths(data, len, n, &prefix, &pos, "DELTA_BYTE_ARRAY prefixes", err));
    tl_status st = tl_pq_delta_length_decode(data + pos, len - pos, out, n, NULL, err);
    size_t total = 0, prev = 0;
    for (size_t i = 0; st == TL_OK && i < n; i++) {
        if ((uint64_t)prefix[i] > prev)
            st = tl_error_set(
                err, TL_ERR_INVALID,
                "DELTA_BYTE_ARRAY value %zu has a prefix longer than the value before", i);
        prev = (size_t)prefix[i] + out[i].len;
        total += prev;
        if (prev > UINT32_MAX || total > TL_PQ_MAX_REBUILT_BYTES)
            st = tl_error_set(err, TL_ERR_INVALID, "DELTA_BYTE_ARRAY values too large");
    }
    uint8_t *buf = st == TL_OK ? malloc(total ? total : 1) : NULL;
    if (st == TL_OK && buf == NULL) st = tl_error_nomem(err);
    if (st == TL_OK) {
        size_t at = 0;
        const uint8_t *prev_data = NULL;
        for (size_t i = 0; i < n; i++) {
            size_t pl = (size_t)prefix[i];
            if (pl) memcpy(buf + at, prev_data, pl);
            if (out[i].len) memcpy(buf + at + pl, out[i].data, out[i].len);
            out[i].data = buf + at;
            out[i].len = (uint32_t)(pl + out[i].len);
            prev_data = buf + at;
            at += out[i].len;
        }
        *storage = buf;
    }
    free(prefix);
    return st;
}

/* ---- BYTE_STREAM_SPLIT ---- */

int tl_pq_byte_stream_split_encode(tl_buf *out, const uint8_t *values, size_t n, size_t width)
{
    uint8_t *dst = tl_buf_extend(out, n * width);
    if (dst == NULL) return -1;
    for (size_t b = 0; b < width; b++)
        for (size_t i = 0; i < n; i++) dst[b * n + i] = values[i * width + b];
    return 0;
}

#if defined(__SSE2__)
/* Values [0, 16k) of eight split streams of n bytes into out, 16 at a time:
 * the 8 x 16 bytes transposed by interleaving bytes, then pairs, then
 * quads. Returns how many values it decoded. */
static size_t split8_blocks(const uint8_t *data, size_t n, uint8_t *out)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i a[8], t[8], u[4], w[4];
        for (int k = 0; k < 8; k++) a[k] = _mm_loadu_si128((const __m128i *)(data + k * n + i));
        for (int k = 0; k < 4; k++) {                             /* bytes 2k, 2k+1 of each value */
            t[2 * k] = _mm_unpacklo_epi8(a[2 * k], a[2 * k + 1]); /* values 0-7 */
            t[2 * k + 1] = _mm_unpackhi_epi8(a[2 * k], a[2 * k + 1]); /* values 8-15 */
        }
        for (int h = 0; h < 2; h++) { /* bytes 0-3 (h 0) and 4-7 (h 1) of each value */
            __m128i *q = h ? w : u;
            q[0] = _mm_unpacklo_epi16(t[4 * h], t[4 * h + 2]);     /* values 0-3 */
            q[1] = _mm_unpackhi_epi16(t[4 * h], t[4 * h + 2]);     /* 4-7 */
            q[2] = _mm_unpacklo_epi16(t[4 * h + 1], t[4 * h + 3]); /* 8-11 */
            q[3] = _mm_unpackhi_epi16(t[4 * h + 1], t[4 * h + 3]); /* 12-15 */
        }
        __m128i *o = (__m128i *)(void *)(out + i * 8);
        for (int k = 0; k < 4; k++) {
            _mm_storeu_si128(o + 2 * k, _mm_unpacklo_epi32(u[k], w[k]));
            _mm_storeu_si128(o + 2 * k + 1, _mm_unpackhi_epi32(u[k], w[k]));
        }
    }
    return i;
}
#else
static size_t split8_blocks(const uint8_t *data, size_t n, uint8_t *out)
{
    (void)data, (void)n, (void)out;
    return 0;
}
#endif

tl_status tl_pq_byte_stream_split_decode(const uint8_t *data, size_t len, size_t width, size_t n,
                                         uint8_t *out, tl_error *err)
{
    if (width == 0 || n > len / width)
        return tl_error_set(err, TL_ERR_INVALID,
                            "BYTE_STREAM_SPLIT page has %zu bytes for %zu values of %zu bytes", len,
                            n, width);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (width == 8) { /* doubles and int64: a value from its eight streams at once */
        const uint8_t *s0 = data, *s1 = s0 + n, *s2 = s1 + n, *s3 = s2 + n, *s4 = s3 + n,
                      *s5 = s4 + n, *s6 = s5 + n, *s7 = s6 + n;
        size_t i = split8_blocks(data, n, out);
        for (; i < n; i++) {
            uint64_t v = (uint64_t)s0[i] | (uint64_t)s1[i] << 8 | (uint64_t)s2[i] << 16 |
                         (uint64_t)s3[i] << 24 | (uint64_t)s4[i] << 32 | (uint64_t)s5[i] << 40 |
                         (uint64_t)s6[i] << 48 | (uint64_t)s7[i] << 56;
            memcpy(out + i * 8, &v, 8);
        }
        return TL_OK;
    }
    if (width == 4) {
        const uint8_t *s0 = data, *s1 = s0 + n, *s2 = s1 + n, *s3 = s2 + n;
        for (size_t i = 0; i < n; i++) {
            uint32_t v = (uint32_t)s0[i] | (uint32_t)s1[i] << 8 | (uint32_t)s2[i] << 16 |
                         (uint32_t)s3[i] << 24;
            memcpy(out + i * 4, &v, 4);
        }
        return TL_OK;
    }
#endif
    for (size_t b = 0; b < width; b++) {
        const uint8_t *src = data + b * n;
        for (size_t i = 0; i < n; i++) out[i * width + b] = src[i];
    }
    return TL_OK;
}
