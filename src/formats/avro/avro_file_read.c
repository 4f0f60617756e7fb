#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "formats/avro/avro_file.h"

typedef struct tl_avro_meta_entry {
    char *key;
    uint8_t *value; /* NUL-terminated copy */
    size_t len;
} tl_avro_meta_entry;

struct tl_avro_reader {
    tl_avro_cursor file; /* position of the next block */
    tl_avro_schema *schema;
    tl_avro_codec codec;
    uint8_t sync[TL_AVRO_SYNC_SIZE];
    tl_avro_meta_entry *meta;
    size_t n_meta;
    tl_buf inflated;      /* decompressed block */
    tl_avro_cursor block; /* position inside the current block */
    int64_t left;         /* datums left in the current block */
    size_t budget;        /* values the rest of the block may decode to */
    size_t block_no, block_at;
};

static tl_status tl_avro_read_meta_entry(tl_avro_reader *r, tl_error *err)
{
    const uint8_t *key, *value;
    size_t klen, vlen;
    TL_TRY(tl_avro_read_bytes(&r->file, &key, &klen, err));
    TL_TRY(tl_avro_read_bytes(&r->file, &value, &vlen, err));
    tl_avro_meta_entry *e = &r->meta[r->n_meta];
    e->key = strndup((const char *)key, klen);
    e->value = malloc(vlen + 1);
    if (e->key == NULL || e->value == NULL) {
        free(e->key);
        free(e->value);
        return tl_error_nomem(err);
    }
    if (vlen) memcpy(e->value, value, vlen);
    e->value[vlen] = '\0';
    e->len = vlen;
    r->n_meta++;
    return TL_OK;
}

/* The metadata map: blocks of (count[, byte size]) then key/value pairs. */
static tl_status tl_avro_read_meta(tl_avro_reader *r, tl_error *err)
{
    size_t cap = 0;
    for (;;) {
        size_t at = tl_avro_cursor_offset(&r->file);
        int64_t n = 0;
        TL_TRY(tl_avro_read_long(&r->file, &n, err));
        if (n == 0) return TL_OK;
        if (n < 0) {
            int64_t size = 0;
            if (n == INT64_MIN) return tl_error_set(err, TL_ERR_INVALID, "bad metadata count");
            n = -n;
            TL_TRY(tl_avro_read_long(&r->file, &size, err));
        }
        /* Each entry takes at least two length bytes. */
        if ((uint64_t)n > tl_avro_cursor_left(&r->file) / 2)
            return tl_error_set(err, TL_ERR_INVALID,
                                "metadata count %lld at offset %zu exceeds the file", (long long)n,
                                at);
        if (r->n_meta + (size_t)n > cap) {
            size_t cap2 = r->n_meta + (size_t)n;
            tl_avro_meta_entry *m = realloc(r->meta, cap2 * sizeof *m);
            if (m == NULL) return tl_error_nomem(err);
            r->meta = m;
            cap = cap2;
        }
        for (int64_t i = 0; i < n; i++) TL_TRY(tl_avro_read_meta_entry(r, err));
    }
}

/* The header's failures each say which part is wrong, so that a message
 * naming the file reads "<file>: not an Avro file (bad magic)". */
static tl_status tl_avro_read_header(tl_avro_reader *r, size_t len, tl_error *err)
{
    const uint8_t *magic, *sync;
    if (len == 0) return tl_error_set(err, TL_ERR_INVALID, "empty file (0 bytes), not Avro");
    if (len < 4 || tl_avro_read_fixed(&r->file, 4, &magic, err) != TL_OK ||
        memcmp(magic, "Obj\x01", 4) != 0)
        return tl_error_set(err, TL_ERR_INVALID, "not an Avro file (bad magic)");
    tl_status st = tl_avro_read_meta(r, err);
    if (st == TL_OK) st = tl_avro_read_fixed(&r->file, TL_AVRO_SYNC_SIZE, &sync, err);
    if (st != TL_OK) {
        if (st != TL_ERR_NOMEM) tl_error_prefix(err, "truncated or damaged header");
        return st;
    }
    memcpy(r->sync, sync, TL_AVRO_SYNC_SIZE);
    size_t n;
    const uint8_t *codec = tl_avro_reader_meta(r, "avro.codec", &n);
    r->codec = TL_AVRO_CODEC_NULL;
    if (codec && (st = tl_avro_codec_parse(codec, n, &r->codec, err)) != TL_OK) {
        tl_error_prefix(err, "bad header");
        return st;
    }
    const uint8_t *schema = tl_avro_reader_meta(r, "avro.schema", &n);
    if (schema == NULL) return tl_error_set(err, TL_ERR_INVALID, "bad header: no avro.schema");
    st = tl_avro_schema_shared((const char *)schema, n, &r->schema, err);
    if (st != TL_OK && st != TL_ERR_NOMEM) tl_error_prefix(err, "bad schema");
    return st;
}

tl_status tl_avro_reader_open(const uint8_t *data, size_t len, tl_avro_reader **out, tl_error *err)
{
    *out = NULL;
    tl_avro_reader *r = calloc(1, sizeof *r);
    if (r == NULL) return tl_error_nomem(err);
    r->file = tl_avro_cursor_make(data, len);
    tl_status st = tl_avro_read_header(r, len, err);
    if (st != TL_OK) {
        tl_avro_reader_free(r);
        return st;
    }
    *out = r;
    return TL_OK;
}

const tl_avro_schema *tl_avro_reader_schema(const tl_avro_reader *r)
{
    return r->schema;
}

tl_avro_codec tl_avro_reader_codec(const tl_avro_reader *r)
{
    return r->codec;
}

const uint8_t *tl_avro_reader_meta(const tl_avro_reader *r, const char *key, size_t *len)
{
    for (size_t i = 0; i < r->n_meta; i++) {
        if (strcmp(r->meta[i].key, key) == 0) {
            if (len) *len = r->meta[i].len;
            return r->meta[i].value;
        }
    }
    return NULL;
}

size_t tl_avro_reader_meta_count(const tl_avro_reader *r)
{
    return r->n_meta;
}

void tl_avro_reader_meta_at(const tl_avro_reader *r, size_t i, const char **key,
                            const uint8_t **value, size_t *len)
{
    *key = r->meta[i].key;
    *value = r->meta[i].value;
    *len = r->meta[i].len;
}

/* Reads the next block header, body and sync marker, and decompresses it. */
static tl_status tl_avro_next_block(tl_avro_reader *r, tl_error *err)
{
    int64_t count = 0;
    const uint8_t *body, *sync;
    size_t len;
    TL_TRY(tl_avro_read_long(&r->file, &count, err));
    if (count < 0)
        return tl_error_set(err, TL_ERR_INVALID, "negative object count %lld", (long long)count);
    TL_TRY(tl_avro_read_bytes(&r->file, &body, &len, err));
    TL_TRY(tl_avro_read_fixed(&r->file, TL_AVRO_SYNC_SIZE, &sync, err));
    if (memcmp(sync, r->sync, TL_AVRO_SYNC_SIZE) != 0)
        return tl_error_set(err, TL_ERR_INVALID, "sync marker mismatch");
    if (r->codec == TL_AVRO_CODEC_NULL) {
        r->block = tl_avro_cursor_make(body, len);
    } else {
        TL_TRY(tl_avro_decompress(r->codec, body, len, TL_AVRO_MAX_BLOCK, &r->inflated, err));
        r->block = tl_avro_cursor_make(r->inflated.data, r->inflated.len);
    }
    /* Every datum takes min_size bytes and one value of the budget. */
    size_t min = r->schema->root->min_size;
    size_t bytes = tl_avro_cursor_left(&r->block);
    r->budget = tl_avro_decode_budget(bytes);
    if ((uint64_t)count > (min ? bytes / min : r->budget))
        return tl_error_set(err, TL_ERR_INVALID, "%lld objects cannot fit in %zu bytes",
                            (long long)count, bytes);
    r->left = count;
    return TL_OK;
}

tl_status tl_avro_reader_next(tl_avro_reader *r, tl_arena *arena, tl_avro_value *out, bool *done,
                              tl_error *err)
{
    *done = false;
    while (r->left == 0) {
        if (tl_avro_cursor_left(&r->block) != 0)
            return tl_error_set(err, TL_ERR_INVALID,
                                "damaged block %zu at offset %zu: %zu trailing bytes", r->block_no,
                                r->block_at, tl_avro_cursor_left(&r->block));
        if (tl_avro_cursor_left(&r->file) == 0) {
            *done = true;
            return TL_OK;
        }
        r->block_no++;
        r->block_at = tl_avro_cursor_offset(&r->file);
        tl_status st = tl_avro_next_block(r, err);
        if (st != TL_OK && st != TL_ERR_NOMEM)
            tl_error_prefix(err, "truncated or damaged block %zu at offset %zu", r->block_no,
                            r->block_at);
        if (st != TL_OK) return st;
    }
    r->left--;
    tl_status st = tl_avro_decode(r->schema->root, &r->block, arena, &r->budget, out, err);
    if (st != TL_OK && st != TL_ERR_NOMEM)
        tl_error_prefix(err, "damaged block %zu at offset %zu", r->block_no, r->block_at);
    return st;
}

void tl_avro_reader_free(tl_avro_reader *r)
{
    if (r == NULL) return;
    for (size_t i = 0; i < r->n_meta; i++) {
        free(r->meta[i].key);
        free(r->meta[i].value);
    }
    free(r->meta);
    tl_avro_schema_free(r->schema);
    tl_buf_free(&r->inflated);
    free(r);
}

static tl_status read_all(tl_avro_reader *r, size_t elem_size, tl_avro_record_fn convert,
                          const char *what, void **out, size_t *n, tl_error *err)
{
    tl_arena arena = {0};
    size_t cap = 0;
    tl_status st = TL_OK;
    for (;;) {
        tl_avro_value v;
        bool done;
        tl_arena_reset(&arena);
        if ((st = tl_avro_reader_next(r, &arena, &v, &done, err)) != TL_OK || done) break;
        if (tl_grow(out, &cap, *n + 1, elem_size, 16) != 0) {
            st = tl_error_nomem(err);
            break;
        }
        void *elem = (uint8_t *)*out + *n * elem_size;
        memset(elem, 0, elem_size);
        st = convert(&v, elem, err);
        (*n)++; /* counted even on failure so the caller frees it */
        if (st != TL_OK) {
            tl_error_prefix(err, "%s %zu", what, *n - 1);
            break;
        }
    }
    tl_arena_free(&arena);
    return st;
}

tl_status tl_avro_read_records(const uint8_t *data, size_t len, size_t elem_size,
                               tl_avro_record_fn convert, const char *what, void **out, size_t *n,
                               tl_error *err)
{
    *out = NULL;
    *n = 0;
    tl_avro_reader *r;
    TL_TRY(tl_avro_reader_open(data, len, &r, err));
    tl_status st = tl_avro_reader_schema(r)->root->kind == TL_AVRO_RECORD
                       ? read_all(r, elem_size, convert, what, out, n, err)
                       : tl_error_set(err, TL_ERR_INVALID, "the file's schema is not a record");
    tl_avro_reader_free(r);
    return st;
}
