#include "formats/parquet/parquet_meta.h"

#include <string.h>

#include "formats/parquet/thrift_compact.h"

/* ---- Serialization ---- */

static void write_statistics(tl_thrift_writer *w, int16_t id, const tl_pq_statistics *s)
{
    tl_thrift_field_struct(w, id);
    if (s->has_max) tl_thrift_field_binary(w, 1, s->max.data, s->max.len);
    if (s->has_min) tl_thrift_field_binary(w, 2, s->min.data, s->min.len);
    if (s->has_null_count) tl_thrift_field_i64(w, 3, s->null_count);
    if (s->has_distinct_count) tl_thrift_field_i64(w, 4, s->distinct_count);
    if (s->has_max_value) tl_thrift_field_binary(w, 5, s->max_value.data, s->max_value.len);
    if (s->has_min_value) tl_thrift_field_binary(w, 6, s->min_value.data, s->min_value.len);
    tl_thrift_struct_end(w);
}

static void write_empty_struct(tl_thrift_writer *w, int16_t id)
{
    tl_thrift_field_struct(w, id);
    tl_thrift_struct_end(w);
}

static void write_logical(tl_thrift_writer *w, const tl_pq_logical *lt)
{
    tl_thrift_field_struct(w, 10);
    tl_thrift_field_struct(w, (int16_t)lt->kind);
    switch (lt->kind) {
    case TL_PQ_LT_DECIMAL:
        tl_thrift_field_i32(w, 1, lt->scale);
        tl_thrift_field_i32(w, 2, lt->precision);
        break;
    case TL_PQ_LT_TIME:
    case TL_PQ_LT_TIMESTAMP:
        tl_thrift_field_bool(w, 1, lt->utc);
        tl_thrift_field_struct(w, 2);
        write_empty_struct(w, (int16_t)lt->unit);
        tl_thrift_struct_end(w);
        break;
    case TL_PQ_LT_INTEGER:
        tl_thrift_field_i8(w, 1, lt->bit_width);
        tl_thrift_field_bool(w, 2, lt->is_signed);
        break;
    default:
        break;
    }
    tl_thrift_struct_end(w);
    tl_thrift_struct_end(w);
}

static void write_schema_element(tl_thrift_writer *w, const tl_pq_schema_element *e)
{
    tl_thrift_struct_begin(w);
    if (e->has_type) tl_thrift_field_i32(w, 1, e->type);
    if (e->has_type && e->type == TL_PQ_FIXED_LEN_BYTE_ARRAY)
        tl_thrift_field_i32(w, 2, e->type_length);
    if (e->has_repetition) tl_thrift_field_i32(w, 3, e->repetition);
    tl_thrift_field_string(w, 4, e->name);
    if (!e->has_type) tl_thrift_field_i32(w, 5, e->num_children);
    if (e->has_converted) tl_thrift_field_i32(w, 6, e->converted);
    if (e->has_converted && e->converted == TL_PQ_CT_DECIMAL) {
        tl_thrift_field_i32(w, 7, e->scale);
        tl_thrift_field_i32(w, 8, e->precision);
    }
    if (e->has_field_id) tl_thrift_field_i32(w, 9, e->field_id);
    if (e->logical.kind != TL_PQ_LT_NONE) write_logical(w, &e->logical);
    tl_thrift_struct_end(w);
}

static void write_column_meta(tl_thrift_writer *w, const tl_pq_column_meta *m)
{
    tl_thrift_field_struct(w, 3);
    tl_thrift_field_i32(w, 1, m->type);
    tl_thrift_field_list(w, 2, TL_THRIFT_I32, m->n_encodings);
    for (size_t i = 0; i < m->n_encodings; i++) tl_thrift_elem_i32(w, m->encodings[i]);
    tl_thrift_field_list(w, 3, TL_THRIFT_BINARY, m->n_path);
    for (size_t i = 0; i < m->n_path; i++) tl_thrift_elem_binary(w, m->path[i], strlen(m->path[i]));
    tl_thrift_field_i32(w, 4, m->codec);
    tl_thrift_field_i64(w, 5, m->num_values);
    tl_thrift_field_i64(w, 6, m->total_uncompressed_size);
    tl_thrift_field_i64(w, 7, m->total_compressed_size);
    tl_thrift_field_i64(w, 9, m->data_page_offset);
    if (m->has_dictionary_page_offset) tl_thrift_field_i64(w, 11, m->dictionary_page_offset);
    if (m->has_statistics) write_statistics(w, 12, &m->statistics);
    if (m->n_encoding_stats) {
        tl_thrift_field_list(w, 13, TL_THRIFT_STRUCT, m->n_encoding_stats);
        for (size_t i = 0; i < m->n_encoding_stats; i++) {
            tl_thrift_struct_begin(w);
            tl_thrift_field_i32(w, 1, m->encoding_stats[i].page_type);
            tl_thrift_field_i32(w, 2, m->encoding_stats[i].encoding);
            tl_thrift_field_i32(w, 3, m->encoding_stats[i].count);
            tl_thrift_struct_end(w);
        }
    }
    tl_thrift_struct_end(w);
}

static void write_column_chunk(tl_thrift_writer *w, const tl_pq_column_chunk *c)
{
    tl_thrift_struct_begin(w);
    if (c->file_path) tl_thrift_field_string(w, 1, c->file_path);
    tl_thrift_field_i64(w, 2, c->file_offset);
    if (c->has_meta) write_column_meta(w, &c->meta);
    if (c->has_offset_index) {
        tl_thrift_field_i64(w, 4, c->offset_index_offset);
        tl_thrift_field_i32(w, 5, c->offset_index_length);
    }
    if (c->has_column_index) {
        tl_thrift_field_i64(w, 6, c->column_index_offset);
        tl_thrift_field_i32(w, 7, c->column_index_length);
    }
    tl_thrift_struct_end(w);
}

static void write_row_group(tl_thrift_writer *w, const tl_pq_row_group *g)
{
    tl_thrift_struct_begin(w);
    tl_thrift_field_list(w, 1, TL_THRIFT_STRUCT, g->n_columns);
    for (size_t i = 0; i < g->n_columns; i++) write_column_chunk(w, &g->columns[i]);
    tl_thrift_field_i64(w, 2, g->total_byte_size);
    tl_thrift_field_i64(w, 3, g->num_rows);
    if (g->n_sorting_columns) {
        tl_thrift_field_list(w, 4, TL_THRIFT_STRUCT, g->n_sorting_columns);
        for (size_t i = 0; i < g->n_sorting_columns; i++) {
            tl_thrift_struct_begin(w);
            tl_thrift_field_i32(w, 1, g->sorting_columns[i].column_idx);
            tl_thrift_field_bool(w, 2, g->sorting_columns[i].descending);
            tl_thrift_field_bool(w, 3, g->sorting_columns[i].nulls_first);
            tl_thrift_struct_end(w);
        }
    }
    if (g->has_file_offset) tl_thrift_field_i64(w, 5, g->file_offset);
    if (g->has_total_compressed_size) tl_thrift_field_i64(w, 6, g->total_compressed_size);
    if (g->has_ordinal) tl_thrift_field_i16(w, 7, g->ordinal);
    tl_thrift_struct_end(w);
}

tl_status tl_pq_write_file_meta(tl_buf *out, const tl_pq_file_meta *m, tl_error *err)
{
    tl_thrift_writer w;
    tl_thrift_writer_init(&w, out);
    tl_thrift_struct_begin(&w);
    tl_thrift_field_i32(&w, 1, m->version);
    tl_thrift_field_list(&w, 2, TL_THRIFT_STRUCT, m->n_schema);
    for (size_t i = 0; i < m->n_schema; i++) write_schema_element(&w, &m->schema[i]);
    tl_thrift_field_i64(&w, 3, m->num_rows);
    tl_thrift_field_list(&w, 4, TL_THRIFT_STRUCT, m->n_row_groups);
    for (size_t i = 0; i < m->n_row_groups; i++) write_row_group(&w, &m->row_groups[i]);
    if (m->n_key_value) {
        tl_thrift_field_list(&w, 5, TL_THRIFT_STRUCT, m->n_key_value);
        for (size_t i = 0; i < m->n_key_value; i++) {
            tl_thrift_struct_begin(&w);
            tl_thrift_field_string(&w, 1, m->key_value[i].key);
            if (m->key_value[i].value) tl_thrift_field_string(&w, 2, m->key_value[i].value);
            tl_thrift_struct_end(&w);
        }
    }
    if (m->created_by) tl_thrift_field_string(&w, 6, m->created_by);
    if (m->n_column_orders) {
        tl_thrift_field_list(&w, 7, TL_THRIFT_STRUCT, m->n_column_orders);
        for (size_t i = 0; i < m->n_column_orders; i++) {
            tl_thrift_struct_begin(&w);
            write_empty_struct(&w, 1);
            tl_thrift_struct_end(&w);
        }
    }
    tl_thrift_struct_end(&w);
    return tl_thrift_writer_finish(&w, err);
}

tl_status tl_pq_write_page_header(tl_buf *out, const tl_pq_page_header *h, tl_error *err)
{
    tl_thrift_writer w;
    tl_thrift_writer_init(&w, out);
    tl_thrift_struct_begin(&w);
    tl_thrift_field_i32(&w, 1, h->type);
    tl_thrift_field_i32(&w, 2, h->uncompressed_page_size);
    tl_thrift_field_i32(&w, 3, h->compressed_page_size);
    if (h->has_data) {
        tl_thrift_field_struct(&w, 5);
        tl_thrift_field_i32(&w, 1, h->data.num_values);
        tl_thrift_field_i32(&w, 2, h->data.encoding);
        tl_thrift_field_i32(&w, 3, h->data.def_encoding);
        tl_thrift_field_i32(&w, 4, h->data.rep_encoding);
        tl_thrift_struct_end(&w);
    }
    if (h->has_dictionary) {
        tl_thrift_field_struct(&w, 7);
        tl_thrift_field_i32(&w, 1, h->dictionary.num_values);
        tl_thrift_field_i32(&w, 2, h->dictionary.encoding);
        tl_thrift_struct_end(&w);
    }
    if (h->has_data_v2) {
        tl_thrift_field_struct(&w, 8);
        tl_thrift_field_i32(&w, 1, h->data_v2.num_values);
        tl_thrift_field_i32(&w, 2, h->data_v2.num_nulls);
        tl_thrift_field_i32(&w, 3, h->data_v2.num_rows);
        tl_thrift_field_i32(&w, 4, h->data_v2.encoding);
        tl_thrift_field_i32(&w, 5, h->data_v2.def_length);
        tl_thrift_field_i32(&w, 6, h->data_v2.rep_length);
        tl_thrift_field_bool(&w, 7, h->data_v2.is_compressed);
        tl_thrift_struct_end(&w);
    }
    tl_thrift_struct_end(&w);
    return tl_thrift_writer_finish(&w, err);
}

tl_status tl_pq_write_column_index(tl_buf *out, const tl_pq_column_index *ci, tl_error *err)
{
    tl_thrift_writer w;
    tl_thrift_writer_init(&w, out);
    tl_thrift_struct_begin(&w);
    tl_thrift_field_list(&w, 1, TL_THRIFT_TRUE, ci->n_pages);
    for (size_t i = 0; i < ci->n_pages; i++) tl_thrift_elem_bool(&w, ci->null_pages[i]);
    tl_thrift_field_list(&w, 2, TL_THRIFT_BINARY, ci->n_pages);
    for (size_t i = 0; i < ci->n_pages; i++)
        tl_thrift_elem_binary(&w, ci->min_values[i].data, ci->min_values[i].len);
    tl_thrift_field_list(&w, 3, TL_THRIFT_BINARY, ci->n_pages);
    for (size_t i = 0; i < ci->n_pages; i++)
        tl_thrift_elem_binary(&w, ci->max_values[i].data, ci->max_values[i].len);
    tl_thrift_field_i32(&w, 4, ci->boundary_order);
    if (ci->null_counts) {
        tl_thrift_field_list(&w, 5, TL_THRIFT_I64, ci->n_pages);
        for (size_t i = 0; i < ci->n_pages; i++) tl_thrift_elem_i64(&w, ci->null_counts[i]);
    }
    tl_thrift_struct_end(&w);
    return tl_thrift_writer_finish(&w, err);
}

tl_status tl_pq_write_offset_index(tl_buf *out, const tl_pq_offset_index *oi, tl_error *err)
{
    tl_thrift_writer w;
    tl_thrift_writer_init(&w, out);
    tl_thrift_struct_begin(&w);
    tl_thrift_field_list(&w, 1, TL_THRIFT_STRUCT, oi->n_pages);
    for (size_t i = 0; i < oi->n_pages; i++) {
        tl_thrift_struct_begin(&w);
        tl_thrift_field_i64(&w, 1, oi->pages[i].offset);
        tl_thrift_field_i32(&w, 2, oi->pages[i].compressed_page_size);
        tl_thrift_field_i64(&w, 3, oi->pages[i].first_row_index);
        tl_thrift_struct_end(&w);
    }
    tl_thrift_struct_end(&w);
    return tl_thrift_writer_finish(&w, err);
}

/* ---- Parsing ---- */

typedef struct preader {
    tl_thrift_reader t;
    tl_arena *arena;
} preader;

typedef tl_status (*field_fn)(preader *r, void *obj, int16_t id, uint8_t type);

/* Reads one struct, handing each field to fn (which skips the ones it does not know). */
static tl_status read_struct(preader *r, void *obj, field_fn fn)
{
    TL_TRY(tl_thrift_struct_enter(&r->t));
    int16_t last = 0, id = 0;
    uint8_t type = 0;
    for (;;) {
        TL_TRY(tl_thrift_read_field(&r->t, &last, &type, &id));
        if (type == TL_THRIFT_STOP) break;
        TL_TRY(fn(r, obj, id, type));
    }
    tl_thrift_struct_leave(&r->t);
    return TL_OK;
}

static tl_status read_struct_field(preader *r, uint8_t type, void *obj, field_fn fn)
{
    TL_TRY(tl_thrift_expect(&r->t, type, TL_THRIFT_STRUCT));
    return read_struct(r, obj, fn);
}

static tl_status nomem(preader *r)
{
    return tl_error_nomem(r->t.err);
}

static tl_status read_copy(preader *r, uint8_t type, tl_pq_bytes *out)
{
    const uint8_t *d;
    size_t n = 0;
    TL_TRY(tl_thrift_read_binary(&r->t, type, &d, &n));
    char *copy = tl_arena_dup(r->arena, d, n);
    if (copy == NULL) return nomem(r);
    out->data = (const uint8_t *)copy;
    out->len = n;
    return TL_OK;
}

static tl_status read_string(preader *r, uint8_t type, const char **out)
{
    tl_pq_bytes b = {0};
    TL_TRY(read_copy(r, type, &b));
    *out = (const char *)b.data;
    return TL_OK;
}

/* A list of structs: allocates n elements of `size` bytes and parses each with fn. */
static tl_status read_struct_list(preader *r, uint8_t type, size_t size, field_fn fn, void **out,
                                  size_t *n_out)
{
    uint8_t et = 0;
    size_t n = 0;
    TL_TRY(tl_thrift_read_list(&r->t, type, &et, &n));
    if (n && et != TL_THRIFT_STRUCT)
        return tl_error_set(r->t.err, TL_ERR_INVALID, "thrift list of type %d, expected structs",
                            et);
    char *items = tl_arena_calloc(r->arena, n, size);
    if (items == NULL) return nomem(r);
    for (size_t i = 0; i < n; i++) TL_TRY(read_struct(r, items + i * size, fn));
    *out = items;
    *n_out = n;
    return TL_OK;
}

static tl_status read_i32_list(preader *r, uint8_t type, int32_t **out, size_t *n_out)
{
    uint8_t et = 0;
    size_t n = 0;
    TL_TRY(tl_thrift_read_list(&r->t, type, &et, &n));
    int32_t *v = tl_arena_calloc(r->arena, n, sizeof *v);
    if (v == NULL) return nomem(r);
    for (size_t i = 0; i < n; i++) TL_TRY(tl_thrift_read_i32(&r->t, et, &v[i]));
    *out = v;
    *n_out = n;
    return TL_OK;
}

static tl_status read_i64_list(preader *r, uint8_t type, int64_t **out, size_t *n_out)
{
    uint8_t et = 0;
    size_t n = 0;
    TL_TRY(tl_thrift_read_list(&r->t, type, &et, &n));
    int64_t *v = tl_arena_calloc(r->arena, n, sizeof *v);
    if (v == NULL) return nomem(r);
    for (size_t i = 0; i < n; i++) TL_TRY(tl_thrift_read_i64(&r->t, et, &v[i]));
    *out = v;
    *n_out = n;
    return TL_OK;
}

static tl_status read_bytes_list(preader *r, uint8_t type, tl_pq_bytes **out, size_t *n_out)
{
    uint8_t et = 0;
    size_t n = 0;
    TL_TRY(tl_thrift_read_list(&r->t, type, &et, &n));
    tl_pq_bytes *v = tl_arena_calloc(r->arena, n, sizeof *v);
    if (v == NULL) return nomem(r);
    for (size_t i = 0; i < n; i++) TL_TRY(read_copy(r, et, &v[i]));
    *out = v;
    *n_out = n;
    return TL_OK;
}

static tl_status skip(preader *r, uint8_t type)
{
    return tl_thrift_skip(&r->t, type);
}

static tl_status statistics_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_statistics *s = obj;
    switch (id) {
    case 1:
        s->has_max = true;
        return read_copy(r, type, &s->max);
    case 2:
        s->has_min = true;
        return read_copy(r, type, &s->min);
    case 3:
        s->has_null_count = true;
        return tl_thrift_read_i64(&r->t, type, &s->null_count);
    case 4:
        s->has_distinct_count = true;
        return tl_thrift_read_i64(&r->t, type, &s->distinct_count);
    case 5:
        s->has_max_value = true;
        return read_copy(r, type, &s->max_value);
    case 6:
        s->has_min_value = true;
        return read_copy(r, type, &s->min_value);
    default:
        return skip(r, type);
    }
}

/* TimeUnit is a union of empty structs: the member's id is the unit. */
static tl_status time_unit_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_logical *lt = obj;
    if (id >= TL_PQ_MILLIS && id <= TL_PQ_NANOS) lt->unit = (tl_pq_time_unit)id;
    return skip(r, type);
}

static tl_status logical_member_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_logical *lt = obj;
    switch (lt->kind) {
    case TL_PQ_LT_DECIMAL:
        if (id == 1) return tl_thrift_read_i32(&r->t, type, &lt->scale);
        if (id == 2) return tl_thrift_read_i32(&r->t, type, &lt->precision);
        break;
    case TL_PQ_LT_TIME:
    case TL_PQ_LT_TIMESTAMP:
        if (id == 1) return tl_thrift_read_bool(&r->t, type, &lt->utc);
        if (id == 2) return read_struct_field(r, type, lt, time_unit_field);
        break;
    case TL_PQ_LT_INTEGER:
        if (id == 1) return tl_thrift_read_i8(&r->t, type, &lt->bit_width);
        if (id == 2) return tl_thrift_read_bool(&r->t, type, &lt->is_signed);
        break;
    default:
        break;
    }
    return skip(r, type);
}

static tl_status logical_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_logical *lt = obj;
    bool known = (id >= 1 && id <= 8) || (id >= 10 && id <= 15);
    lt->kind = known ? (tl_pq_logical_kind)id : TL_PQ_LT_OTHER;
    if (!known) return skip(r, type);
    return read_struct_field(r, type, lt, logical_member_field);
}

static tl_status schema_element_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_schema_element *e = obj;
    int32_t v = 0;
    switch (id) {
    case 1:
        TL_TRY(tl_thrift_read_i32(&r->t, type, &v));
        e->has_type = true;
        e->type = (tl_pq_type)v;
        return TL_OK;
    case 2:
        return tl_thrift_read_i32(&r->t, type, &e->type_length);
    case 3:
        e->has_repetition = true;
        return tl_thrift_read_i32(&r->t, type, &e->repetition);
    case 4:
        return read_string(r, type, &e->name);
    case 5:
        return tl_thrift_read_i32(&r->t, type, &e->num_children);
    case 6:
        TL_TRY(tl_thrift_read_i32(&r->t, type, &v));
        e->has_converted = true;
        e->converted = (tl_pq_converted)v;
        return TL_OK;
    case 7:
        return tl_thrift_read_i32(&r->t, type, &e->scale);
    case 8:
        return tl_thrift_read_i32(&r->t, type, &e->precision);
    case 9:
        e->has_field_id = true;
        return tl_thrift_read_i32(&r->t, type, &e->field_id);
    case 10:
        return read_struct_field(r, type, &e->logical, logical_field);
    default:
        return skip(r, type);
    }
}

static tl_status encoding_stats_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_encoding_stats *s = obj;
    switch (id) {
    case 1:
        return tl_thrift_read_i32(&r->t, type, &s->page_type);
    case 2:
        return tl_thrift_read_i32(&r->t, type, &s->encoding);
    case 3:
        return tl_thrift_read_i32(&r->t, type, &s->count);
    default:
        return skip(r, type);
    }
}

static tl_status path_list(preader *r, uint8_t type, tl_pq_column_meta *m)
{
    tl_pq_bytes *parts;
    TL_TRY(read_bytes_list(r, type, &parts, &m->n_path));
    m->path = tl_arena_calloc(r->arena, m->n_path, sizeof *m->path);
    if (m->path == NULL) return nomem(r);
    for (size_t i = 0; i < m->n_path; i++) m->path[i] = (const char *)parts[i].data;
    return TL_OK;
}

static tl_status column_meta_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_column_meta *m = obj;
    int32_t v = 0;
    switch (id) {
    case 1:
        TL_TRY(tl_thrift_read_i32(&r->t, type, &v));
        m->type = (tl_pq_type)v;
        return TL_OK;
    case 2:
        return read_i32_list(r, type, &m->encodings, &m->n_encodings);
    case 3:
        return path_list(r, type, m);
    case 4:
        TL_TRY(tl_thrift_read_i32(&r->t, type, &v));
        m->codec = (tl_pq_codec_id)v;
        return TL_OK;
    case 5:
        return tl_thrift_read_i64(&r->t, type, &m->num_values);
    case 6:
        return tl_thrift_read_i64(&r->t, type, &m->total_uncompressed_size);
    case 7:
        return tl_thrift_read_i64(&r->t, type, &m->total_compressed_size);
    case 9:
        return tl_thrift_read_i64(&r->t, type, &m->data_page_offset);
    case 11:
        m->has_dictionary_page_offset = true;
        return tl_thrift_read_i64(&r->t, type, &m->dictionary_page_offset);
    case 12:
        m->has_statistics = true;
        return read_struct_field(r, type, &m->statistics, statistics_field);
    case 13:
        return read_struct_list(r, type, sizeof(tl_pq_encoding_stats), encoding_stats_field,
                                (void **)&m->encoding_stats, &m->n_encoding_stats);
    default:
        return skip(r, type);
    }
}

static tl_status column_chunk_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_column_chunk *c = obj;
    switch (id) {
    case 1:
        return read_string(r, type, &c->file_path);
    case 2:
        return tl_thrift_read_i64(&r->t, type, &c->file_offset);
    case 3:
        c->has_meta = true;
        return read_struct_field(r, type, &c->meta, column_meta_field);
    case 4:
        c->has_offset_index = true;
        return tl_thrift_read_i64(&r->t, type, &c->offset_index_offset);
    case 5:
        return tl_thrift_read_i32(&r->t, type, &c->offset_index_length);
    case 6:
        c->has_column_index = true;
        return tl_thrift_read_i64(&r->t, type, &c->column_index_offset);
    case 7:
        return tl_thrift_read_i32(&r->t, type, &c->column_index_length);
    default:
        return skip(r, type);
    }
}

static tl_status sorting_column_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_sorting_column *s = obj;
    switch (id) {
    case 1:
        return tl_thrift_read_i32(&r->t, type, &s->column_idx);
    case 2:
        return tl_thrift_read_bool(&r->t, type, &s->descending);
    case 3:
        return tl_thrift_read_bool(&r->t, type, &s->nulls_first);
    default:
        return skip(r, type);
    }
}

static tl_status row_group_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_row_group *g = obj;
    switch (id) {
    case 1:
        return read_struct_list(r, type, sizeof(tl_pq_column_chunk), column_chunk_field,
                                (void **)&g->columns, &g->n_columns);
    case 2:
        return tl_thrift_read_i64(&r->t, type, &g->total_byte_size);
    case 3:
        return tl_thrift_read_i64(&r->t, type, &g->num_rows);
    case 4:
        return read_struct_list(r, type, sizeof(tl_pq_sorting_column), sorting_column_field,
                                (void **)&g->sorting_columns, &g->n_sorting_columns);
    case 5:
        g->has_file_offset = true;
        return tl_thrift_read_i64(&r->t, type, &g->file_offset);
    case 6:
        g->has_total_compressed_size = true;
        return tl_thrift_read_i64(&r->t, type, &g->total_compressed_size);
    case 7:
        g->has_ordinal = true;
        return tl_thrift_read_i16(&r->t, type, &g->ordinal);
    default:
        return skip(r, type);
    }
}

static tl_status key_value_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_key_value *kv = obj;
    switch (id) {
    case 1:
        return read_string(r, type, &kv->key);
    case 2:
        return read_string(r, type, &kv->value);
    default:
        return skip(r, type);
    }
}

static tl_status column_orders(preader *r, uint8_t type, tl_pq_file_meta *m)
{
    uint8_t et = 0;
    size_t n = 0;
    TL_TRY(tl_thrift_read_list(&r->t, type, &et, &n));
    for (size_t i = 0; i < n; i++) TL_TRY(tl_thrift_skip(&r->t, et));
    m->n_column_orders = n;
    return TL_OK;
}

static tl_status file_meta_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_file_meta *m = obj;
    switch (id) {
    case 1:
        return tl_thrift_read_i32(&r->t, type, &m->version);
    case 2:
        return read_struct_list(r, type, sizeof(tl_pq_schema_element), schema_element_field,
                                (void **)&m->schema, &m->n_schema);
    case 3:
        return tl_thrift_read_i64(&r->t, type, &m->num_rows);
    case 4:
        return read_struct_list(r, type, sizeof(tl_pq_row_group), row_group_field,
                                (void **)&m->row_groups, &m->n_row_groups);
    case 5:
        return read_struct_list(r, type, sizeof(tl_pq_key_value), key_value_field,
                                (void **)&m->key_value, &m->n_key_value);
    case 6:
        return read_string(r, type, &m->created_by);
    case 7:
        return column_orders(r, type, m);
    case 8:
        m->encrypted = true;
        return skip(r, type);
    default:
        return skip(r, type);
    }
}

tl_status tl_pq_parse_file_meta(const uint8_t *data, size_t len, tl_arena *arena,
                                tl_pq_file_meta *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    preader r = {.arena = arena};
    tl_thrift_reader_init(&r.t, data, len, err);
    tl_status st = read_struct(&r, out, file_meta_field);
    if (st != TL_OK) return tl_error_prefix(err, "parquet footer");
    for (size_t i = 0; i < out->n_schema; i++)
        if (out->schema[i].name == NULL) out->schema[i].name = "";
    return TL_OK;
}

static tl_status data_page_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_page_header *h = obj;
    switch (id) {
    case 1:
        return tl_thrift_read_i32(&r->t, type, &h->data.num_values);
    case 2:
        return tl_thrift_read_i32(&r->t, type, &h->data.encoding);
    case 3:
        return tl_thrift_read_i32(&r->t, type, &h->data.def_encoding);
    case 4:
        return tl_thrift_read_i32(&r->t, type, &h->data.rep_encoding);
    default:
        return skip(r, type);
    }
}

static tl_status dictionary_page_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_page_header *h = obj;
    switch (id) {
    case 1:
        return tl_thrift_read_i32(&r->t, type, &h->dictionary.num_values);
    case 2:
        return tl_thrift_read_i32(&r->t, type, &h->dictionary.encoding);
    case 3:
        return tl_thrift_read_bool(&r->t, type, &h->dictionary.is_sorted);
    default:
        return skip(r, type);
    }
}

static tl_status data_page_v2_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_page_header *h = obj;
    switch (id) {
    case 1:
        return tl_thrift_read_i32(&r->t, type, &h->data_v2.num_values);
    case 2:
        return tl_thrift_read_i32(&r->t, type, &h->data_v2.num_nulls);
    case 3:
        return tl_thrift_read_i32(&r->t, type, &h->data_v2.num_rows);
    case 4:
        return tl_thrift_read_i32(&r->t, type, &h->data_v2.encoding);
    case 5:
        return tl_thrift_read_i32(&r->t, type, &h->data_v2.def_length);
    case 6:
        return tl_thrift_read_i32(&r->t, type, &h->data_v2.rep_length);
    case 7:
        return tl_thrift_read_bool(&r->t, type, &h->data_v2.is_compressed);
    default:
        return skip(r, type);
    }
}

static tl_status page_header_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_page_header *h = obj;
    int32_t v = 0;
    switch (id) {
    case 1:
        TL_TRY(tl_thrift_read_i32(&r->t, type, &v));
        h->type = (tl_pq_page_type)v;
        return TL_OK;
    case 2:
        return tl_thrift_read_i32(&r->t, type, &h->uncompressed_page_size);
    case 3:
        return tl_thrift_read_i32(&r->t, type, &h->compressed_page_size);
    case 5:
        h->has_data = true;
        return read_struct_field(r, type, h, data_page_field);
    case 7:
        h->has_dictionary = true;
        return read_struct_field(r, type, h, dictionary_page_field);
    case 8:
        h->has_data_v2 = true;
        return read_struct_field(r, type, h, data_page_v2_field);
    default:
        return skip(r, type);
    }
}

tl_status tl_pq_parse_page_header(const uint8_t *data, size_t len, tl_pq_page_header *out,
                                  size_t *consumed, tl_error *err)
{
    memset(out, 0, sizeof *out);
    out->data_v2.is_compressed = true;
    preader r = {.arena = NULL};
    tl_thrift_reader_init(&r.t, data, len, err);
    TL_TRY(read_struct(&r, out, page_header_field));
    *consumed = tl_thrift_reader_offset(&r.t);
    return TL_OK;
}

static tl_status page_location_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_page_location *p = obj;
    switch (id) {
    case 1:
        return tl_thrift_read_i64(&r->t, type, &p->offset);
    case 2:
        return tl_thrift_read_i32(&r->t, type, &p->compressed_page_size);
    case 3:
        return tl_thrift_read_i64(&r->t, type, &p->first_row_index);
    default:
        return skip(r, type);
    }
}

static tl_status offset_index_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    tl_pq_offset_index *oi = obj;
    if (id == 1)
        return read_struct_list(r, type, sizeof(tl_pq_page_location), page_location_field,
                                (void **)&oi->pages, &oi->n_pages);
    return skip(r, type);
}

tl_status tl_pq_parse_offset_index(const uint8_t *data, size_t len, tl_arena *arena,
                                   tl_pq_offset_index *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    preader r = {.arena = arena};
    tl_thrift_reader_init(&r.t, data, len, err);
    return read_struct(&r, out, offset_index_field);
}

typedef struct column_index_parse {
    tl_pq_column_index *ci;
    size_t n_null_pages, n_min, n_max, n_counts;
} column_index_parse;

static tl_status null_pages_list(preader *r, uint8_t type, column_index_parse *p)
{
    uint8_t et = 0;
    size_t n = 0;
    TL_TRY(tl_thrift_read_list(&r->t, type, &et, &n));
    bool *v = tl_arena_calloc(r->arena, n, sizeof *v);
    if (v == NULL) return nomem(r);
    for (size_t i = 0; i < n; i++) TL_TRY(tl_thrift_read_elem_bool(&r->t, &v[i]));
    p->ci->null_pages = v;
    p->n_null_pages = n;
    return TL_OK;
}

static tl_status column_index_field(preader *r, void *obj, int16_t id, uint8_t type)
{
    column_index_parse *p = obj;
    switch (id) {
    case 1:
        return null_pages_list(r, type, p);
    case 2:
        return read_bytes_list(r, type, &p->ci->min_values, &p->n_min);
    case 3:
        return read_bytes_list(r, type, &p->ci->max_values, &p->n_max);
    case 4:
        return tl_thrift_read_i32(&r->t, type, &p->ci->boundary_order);
    case 5:
        return read_i64_list(r, type, &p->ci->null_counts, &p->n_counts);
    default:
        return skip(r, type);
    }
}

tl_status tl_pq_parse_column_index(const uint8_t *data, size_t len, tl_arena *arena,
                                   tl_pq_column_index *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    preader r = {.arena = arena};
    tl_thrift_reader_init(&r.t, data, len, err);
    column_index_parse p = {.ci = out};
    TL_TRY(read_struct(&r, &p, column_index_field));
    bool counts_ok = out->null_counts == NULL || p.n_counts == p.n_null_pages;
    if (p.n_min != p.n_null_pages || p.n_max != p.n_null_pages || !counts_ok)
        return tl_error_set(err, TL_ERR_INVALID, "column index lists have different lengths");
    out->n_pages = p.n_null_pages;
    return TL_OK;
}
