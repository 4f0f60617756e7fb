#include <string.h>

#include "core/random.h"
#include "formats/avro/avro_file.h"

static const uint8_t tl_avro_magic[4] = {'O', 'b', 'j', 1};

static tl_status tl_avro_write_meta(tl_buf *out, const char *key, const void *value, size_t len,
                                    tl_error *err)
{
    if (tl_avro_write_string(out, key) != 0 || tl_avro_write_bytes(out, value, len) != 0)
        return tl_error_nomem(err);
    return TL_OK;
}

static tl_status tl_avro_write_header(tl_avro_writer *w, const char *const *metadata, tl_error *err)
{
    size_t n_user = 0;
    for (const char *const *kv = metadata; kv && kv[0]; kv += 2) {
        if (kv[1] == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "metadata key \"%s\" has no value", kv[0]);
        if (strncmp(kv[0], "avro.", 5) == 0)
            return tl_error_set(err, TL_ERR_INVALID, "metadata key \"%s\" is reserved", kv[0]);
        n_user++;
    }
    tl_buf schema = {0};
    if (w->schema->printed) {
        if (tl_buf_append(&schema, w->schema->printed, w->schema->printed_len) != 0)
            return tl_error_nomem(err);
    } else {
        TL_TRY(tl_avro_schema_print(w->schema, &schema, err));
    }
    tl_buf *out = w->out;
    const char *codec = tl_avro_codec_name(w->codec);
    tl_status st = TL_OK;
    if (tl_buf_append(out, tl_avro_magic, 4) != 0 || tl_avro_write_long(out, (int64_t)n_user + 2))
        st = tl_error_nomem(err);
    if (st == TL_OK) st = tl_avro_write_meta(out, "avro.schema", schema.data, schema.len, err);
    if (st == TL_OK) st = tl_avro_write_meta(out, "avro.codec", codec, strlen(codec), err);
    for (const char *const *kv = metadata; st == TL_OK && kv && kv[0]; kv += 2)
        st = tl_avro_write_meta(out, kv[0], kv[1], strlen(kv[1]), err);
    tl_buf_free(&schema);
    if (st != TL_OK) return st;
    if (tl_avro_write_long(out, 0) != 0 || tl_buf_append(out, w->sync, TL_AVRO_SYNC_SIZE) != 0)
        return tl_error_nomem(err);
    return TL_OK;
}

tl_status tl_avro_writer_begin(tl_avro_writer *w, const tl_avro_schema *schema,
                               const char *const *metadata, const tl_avro_writer_options *opts,
                               tl_buf *out, tl_error *err)
{
    memset(w, 0, sizeof *w);
    w->schema = schema;
    w->out = out;
    w->codec = opts ? opts->codec : TL_AVRO_CODEC_NULL;
    w->level = opts ? opts->level : 0;
    w->block_size = opts && opts->block_size ? opts->block_size : 65536;
    if ((unsigned)w->codec > TL_AVRO_CODEC_ZSTD)
        return tl_error_set(err, TL_ERR_INVALID, "unknown avro codec %d", (int)w->codec);
    if (opts && opts->sync)
        memcpy(w->sync, opts->sync, TL_AVRO_SYNC_SIZE);
    else
        tl_random_bytes(w->sync, TL_AVRO_SYNC_SIZE);
    size_t mark = out->len;
    tl_status st = tl_avro_write_header(w, metadata, err);
    if (st != TL_OK && out->data) {
        out->len = mark;
        out->data[mark] = '\0';
    }
    return st;
}

static tl_status tl_avro_flush(tl_avro_writer *w, tl_error *err)
{
    if (w->count == 0) return TL_OK;
    const tl_buf *body = &w->block;
    if (w->codec != TL_AVRO_CODEC_NULL) {
        w->packed.len = 0;
        TL_TRY(tl_avro_compress(w->codec, w->level, w->block.data, w->block.len, &w->packed, err));
        body = &w->packed;
    }
    if (tl_avro_write_long(w->out, w->count) != 0 ||
        tl_avro_write_bytes(w->out, body->data, body->len) != 0 ||
        tl_buf_append(w->out, w->sync, TL_AVRO_SYNC_SIZE) != 0)
        return tl_error_nomem(err);
    w->count = 0;
    w->block.len = 0;
    return TL_OK;
}

tl_buf *tl_avro_writer_block(tl_avro_writer *w)
{
    return &w->block;
}

tl_status tl_avro_writer_end_datum(tl_avro_writer *w, tl_error *err)
{
    w->count++;
    return w->block.len >= w->block_size ? tl_avro_flush(w, err) : TL_OK;
}

tl_status tl_avro_writer_append(tl_avro_writer *w, const tl_avro_value *v, tl_error *err)
{
    TL_TRY(tl_avro_encode(w->schema->root, v, &w->block, err));
    return tl_avro_writer_end_datum(w, err);
}

tl_status tl_avro_writer_finish(tl_avro_writer *w, tl_error *err)
{
    tl_status st = tl_avro_flush(w, err);
    tl_avro_writer_discard(w);
    return st;
}

void tl_avro_writer_discard(tl_avro_writer *w)
{
    tl_buf_free(&w->block);
    tl_buf_free(&w->packed);
    w->count = 0;
}
