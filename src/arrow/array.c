#include "arrow/array.h"

#include "core/buf.h"
#include "core/scratch.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Owned arrays ---- */

/* Everything an owned array allocated, in one block after this header:
 * the buffer pointer array, the child pointer array and the child structs. */
typedef struct owned_array {
    int64_t n_buffers;
    int64_t n_children;
    void **buffers;
    struct ArrowArray **child_ptrs;
    struct ArrowArray *child_structs;
} owned_array;

static void release_owned_array(struct ArrowArray *array)
{
    owned_array *own = array->private_data;
    /* Kept by this thread for its next large buffer (scratch.h). */
    for (int64_t i = 0; i < own->n_buffers; i++) tl_scratch_free(own->buffers[i]);
    for (int64_t i = 0; i < own->n_children; i++) tl_array_release(&own->child_structs[i]);
    if (array->dictionary) {
        tl_array_release(array->dictionary);
        free(array->dictionary);
    }
    free(own);
    array->release = NULL;
}

tl_status tl_array_init(struct ArrowArray *out, int64_t n_buffers, int64_t n_children,
                        tl_error *err)
{
    memset(out, 0, sizeof *out);
    size_t size = sizeof(owned_array) + (size_t)n_buffers * sizeof(void *) +
                  (size_t)n_children * (sizeof(struct ArrowArray *) + sizeof(struct ArrowArray));
    owned_array *own = calloc(1, size);
    if (own == NULL) return tl_error_nomem(err);
    own->n_buffers = n_buffers;
    own->n_children = n_children;
    own->buffers = (void **)(own + 1);
    own->child_ptrs = (struct ArrowArray **)(own->buffers + n_buffers);
    own->child_structs = (struct ArrowArray *)(own->child_ptrs + n_children);
    for (int64_t i = 0; i < n_children; i++) own->child_ptrs[i] = &own->child_structs[i];
    out->n_buffers = n_buffers;
    out->n_children = n_children;
    out->buffers = (const void **)own->buffers;
    out->children = n_children ? own->child_ptrs : NULL;
    out->private_data = own;
    out->release = release_owned_array;
    return TL_OK;
}

void tl_array_set_buffer(struct ArrowArray *array, int64_t i, void *data)
{
    owned_array *own = array->private_data;
    tl_scratch_free(own->buffers[i]);
    own->buffers[i] = data;
}

/* 64-byte alignment as the Arrow spec recommends; never a zero-size alloc. */
static size_t buffer_size(size_t size)
{
    size_t rounded = (size + 63) & ~(size_t)63;
    return rounded ? rounded : 64;
}

void *tl_array_alloc_buffer_uninit(struct ArrowArray *array, int64_t i, size_t size)
{
    void *p = tl_scratch_alloc(buffer_size(size));
    if (p) tl_array_set_buffer(array, i, p);
    return p;
}

void *tl_array_alloc_buffer(struct ArrowArray *array, int64_t i, size_t size)
{
    void *p = tl_array_alloc_buffer_uninit(array, i, size);
    if (p) memset(p, 0, buffer_size(size));
    return p;
}

void tl_array_release(struct ArrowArray *array)
{
    if (array != NULL && array->release != NULL) array->release(array);
}

void tl_array_move(struct ArrowArray *src, struct ArrowArray *dst)
{
    memcpy(dst, src, sizeof *dst);
    src->release = NULL;
}

/* ---- Borrowed arrays ---- */

static void release_borrowed_array(struct ArrowArray *array)
{
    free(array->private_data); /* the buffer pointer array; the buffers are src's */
    array->release = NULL;
}

tl_status tl_array_borrow_flat(const struct ArrowArray *src, struct ArrowArray *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (src->n_children != 0 || src->dictionary != NULL || src->n_buffers < 0)
        return tl_error_set(err, TL_ERR_INTERNAL, "only a flat array can be borrowed");
    size_t n = (size_t)src->n_buffers;
    const void **buffers = malloc((n ? n : 1) * sizeof *buffers);
    if (buffers == NULL) return tl_error_nomem(err);
    if (n) memcpy(buffers, src->buffers, n * sizeof *buffers);
    out->length = src->length;
    out->null_count = src->null_count;
    out->offset = src->offset;
    out->n_buffers = src->n_buffers;
    out->buffers = buffers;
    out->private_data = buffers;
    out->release = release_borrowed_array;
    return TL_OK;
}

int64_t tl_array_memory(const struct ArrowArray *array)
{
    if (array->release != release_owned_array) return -1;
    const owned_array *own = array->private_data;
    int64_t total = (int64_t)malloc_usable_size((void *)own);
    for (int64_t i = 0; i < own->n_buffers; i++)
        if (own->buffers[i]) total += (int64_t)malloc_usable_size(own->buffers[i]);
    for (int64_t i = 0; i < own->n_children; i++) {
        int64_t child = tl_array_memory(&own->child_structs[i]);
        if (child < 0) return -1;
        total += child;
    }
    if (array->dictionary) {
        int64_t dict = tl_array_memory(array->dictionary);
        if (dict < 0) return -1;
        total += dict + (int64_t)malloc_usable_size(array->dictionary);
    }
    return total;
}

/* ---- Owned schemas ---- */

typedef struct owned_schema {
    char *format;
    char *name;
    char *metadata;
    int64_t n_children;
    struct ArrowSchema **child_ptrs;
    struct ArrowSchema *child_structs;
} owned_schema;

static void release_owned_schema(struct ArrowSchema *schema)
{
    owned_schema *own = schema->private_data;
    for (int64_t i = 0; i < own->n_children; i++) tl_schema_release(&own->child_structs[i]);
    if (schema->dictionary) {
        tl_schema_release(schema->dictionary);
        free(schema->dictionary);
    }
    free(own->format);
    free(own->name);
    free(own->metadata);
    free(own);
    schema->release = NULL;
}

static char *dup_or_null(const char *s, bool *failed)
{
    if (s == NULL) return NULL;
    char *d = strdup(s);
    if (d == NULL) *failed = true;
    return d;
}

tl_status tl_schema_init(struct ArrowSchema *out, const char *format, const char *name,
                         int64_t flags, int64_t n_children, tl_error *err)
{
    memset(out, 0, sizeof *out);
    size_t size = sizeof(owned_schema) +
                  (size_t)n_children * (sizeof(struct ArrowSchema *) + sizeof(struct ArrowSchema));
    owned_schema *own = calloc(1, size);
    if (own == NULL) return tl_error_nomem(err);
    bool failed = false;
    own->format = dup_or_null(format, &failed);
    own->name = dup_or_null(name, &failed);
    own->n_children = n_children;
    own->child_ptrs = (struct ArrowSchema **)(own + 1);
    own->child_structs = (struct ArrowSchema *)(own->child_ptrs + n_children);
    for (int64_t i = 0; i < n_children; i++) own->child_ptrs[i] = &own->child_structs[i];
    out->format = own->format;
    out->name = own->name;
    out->flags = flags;
    out->n_children = n_children;
    out->children = n_children ? own->child_ptrs : NULL;
    out->private_data = own;
    out->release = release_owned_schema;
    if (failed) {
        tl_schema_release(out);
        return tl_error_nomem(err);
    }
    return TL_OK;
}

static size_t metadata_size(const char *metadata)
{
    if (metadata == NULL) return 0;
    const uint8_t *p = (const uint8_t *)metadata;
    int32_t n = (int32_t)tl_load_le32(p);
    size_t pos = 4;
    for (int32_t i = 0; i < n; i++) {
        pos += 4 + tl_load_le32(p + pos);
        pos += 4 + tl_load_le32(p + pos);
    }
    return pos;
}

tl_status tl_schema_set_metadata(struct ArrowSchema *schema, const char *metadata, tl_error *err)
{
    owned_schema *own = schema->private_data;
    free(own->metadata);
    own->metadata = NULL;
    schema->metadata = NULL;
    if (metadata == NULL) return TL_OK;
    size_t size = metadata_size(metadata);
    own->metadata = malloc(size);
    if (own->metadata == NULL) return tl_error_nomem(err);
    memcpy(own->metadata, metadata, size);
    schema->metadata = own->metadata;
    return TL_OK;
}

tl_status tl_schema_copy(const struct ArrowSchema *src, struct ArrowSchema *out, tl_error *err)
{
    TL_TRY(tl_schema_init(out, src->format, src->name, src->flags, src->n_children, err));
    tl_status st = tl_schema_set_metadata(out, src->metadata, err);
    for (int64_t i = 0; st == TL_OK && i < src->n_children; i++)
        st = tl_schema_copy(src->children[i], out->children[i], err);
    if (st == TL_OK && src->dictionary) {
        out->dictionary = calloc(1, sizeof *out->dictionary);
        st = out->dictionary ? tl_schema_copy(src->dictionary, out->dictionary, err)
                             : tl_error_nomem(err);
    }
    if (st != TL_OK) tl_schema_release(out);
    return st;
}

void tl_schema_release(struct ArrowSchema *schema)
{
    if (schema != NULL && schema->release != NULL) schema->release(schema);
}

void tl_schema_move(struct ArrowSchema *src, struct ArrowSchema *dst)
{
    memcpy(dst, src, sizeof *dst);
    src->release = NULL;
}

char *tl_metadata_encode(const char *const *pairs)
{
    size_t n = 0, size = 4;
    for (; pairs[2 * n]; n++) size += 8 + strlen(pairs[2 * n]) + strlen(pairs[2 * n + 1]);
    uint8_t *out = malloc(size), *p = out;
    if (out == NULL) return NULL;
    tl_store_le32(p, (uint32_t)n);
    p += 4;
    for (size_t i = 0; i < 2 * n; i++) {
        size_t len = strlen(pairs[i]);
        tl_store_le32(p, (uint32_t)len);
        memcpy(p + 4, pairs[i], len);
        p += 4 + len;
    }
    return (char *)out;
}

const char *tl_metadata_find(const char *metadata, const char *key, int32_t *len)
{
    if (metadata == NULL) return NULL;
    const uint8_t *p = (const uint8_t *)metadata;
    int32_t n = (int32_t)tl_load_le32(p);
    size_t pos = 4, klen = strlen(key);
    for (int32_t i = 0; i < n; i++) {
        uint32_t kl = tl_load_le32(p + pos);
        const char *k = (const char *)p + pos + 4;
        pos += 4 + kl;
        uint32_t vl = tl_load_le32(p + pos);
        if (kl == klen && memcmp(k, key, klen) == 0) {
            *len = (int32_t)vl;
            return (const char *)p + pos + 4;
        }
        pos += 4 + vl;
    }
    return NULL;
}

/* ---- Views ---- */

/* The type is described only for an error: a view is made per column and
 * batch, and formatting costs more than the checks. */
static tl_status view_error(const tl_array_view *v, tl_error *err, const char *what)
{
    char name[96];
    tl_arrow_type_describe(&v->type, name, sizeof name);
    return tl_error_set(err, TL_ERR_INVALID, "%s array %s", name, what);
}

static tl_status expect_buffers(const tl_array_view *v, const struct ArrowArray *a, int64_t n,
                                tl_error *err)
{
    if (a->n_buffers == n) return TL_OK;
    char name[96];
    tl_arrow_type_describe(&v->type, name, sizeof name);
    return tl_error_set(err, TL_ERR_INVALID, "%s array has %lld buffers, expected %lld", name,
                        (long long)a->n_buffers, (long long)n);
}

static tl_status view_plain(tl_array_view *v, const struct ArrowArray *a, tl_error *err)
{
    if (a->length < 0 || a->offset < 0)
        return view_error(v, err, "has a negative length or offset");
    if (tl_atype_is_view(v->type.id)) {
        /* validity, views, variadic data buffers..., their sizes: checked
         * view by view when decoded (tl_arrow_views_decode). */
        if (a->n_buffers < 3) return expect_buffers(v, a, 3, err);
        v->validity = a->null_count == 0 ? NULL : a->buffers[0];
        v->values = a->buffers[1];
        if (a->length > 0 && v->values == NULL) return view_error(v, err, "has no views buffer");
        return TL_OK;
    }
    if (v->type.id == TL_ATYPE_STRUCT || v->type.id == TL_ATYPE_NULL) {
        v->validity = a->n_buffers > 0 ? a->buffers[0] : NULL;
        return TL_OK;
    }
    bool var = tl_atype_is_varbinary(v->type.id);
    TL_TRY(expect_buffers(v, a, var ? 3 : 2, err));
    v->validity = a->null_count == 0 ? NULL : a->buffers[0];
    v->values = a->buffers[1];
    if (a->length > 0 && v->values == NULL) return view_error(v, err, "has no values buffer");
    if (var) {
        v->data = a->buffers[2];
        if (a->length > 0) {
            int64_t first, last;
            if (tl_atype_is_large(v->type.id)) {
                first = ((const int64_t *)v->values)[a->offset];
                last = ((const int64_t *)v->values)[a->offset + a->length];
            } else {
                first = ((const int32_t *)v->values)[a->offset];
                last = ((const int32_t *)v->values)[a->offset + a->length];
            }
            if (first < 0 || last < first || (last > 0 && v->data == NULL))
                return view_error(v, err, "has bad offsets");
        }
    }
    return TL_OK;
}

tl_status tl_array_view_init(tl_array_view *v, const struct ArrowSchema *schema,
                             const struct ArrowArray *array, tl_error *err)
{
    memset(v, 0, sizeof *v);
    v->schema = schema;
    v->array = array;
    v->length = array->length;
    v->offset = array->offset;
    v->null_count = array->null_count;
    TL_TRY(tl_arrow_type_parse(schema->format, &v->type, err));
    if (schema->dictionary == NULL) return view_plain(v, array, err);

    /* Dictionary-encoded: the array holds indices; the dictionary is the value type. */
    if (array->dictionary == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "dictionary array without a dictionary");
    v->is_dictionary = true;
    v->index_type = v->type;
    TL_TRY(view_plain(v, array, err));
    v->dictionary = calloc(1, sizeof *v->dictionary);
    if (v->dictionary == NULL) return tl_error_nomem(err);
    tl_status st = tl_array_view_init(v->dictionary, schema->dictionary, array->dictionary, err);
    if (st != TL_OK) {
        tl_array_view_free(v);
        return st;
    }
    v->type = v->dictionary->type;
    return TL_OK;
}

void tl_array_view_free(tl_array_view *v)
{
    if (v->dictionary) {
        tl_array_view_free(v->dictionary);
        free(v->dictionary);
        v->dictionary = NULL;
    }
}

int64_t tl_view_dict_index(const tl_array_view *v, int64_t i)
{
    int64_t j = v->offset + i;
    switch (v->index_type.id) {
    case TL_ATYPE_INT8:
        return ((const int8_t *)v->values)[j];
    case TL_ATYPE_UINT8:
        return ((const uint8_t *)v->values)[j];
    case TL_ATYPE_INT16:
        return ((const int16_t *)v->values)[j];
    case TL_ATYPE_UINT16:
        return ((const uint16_t *)v->values)[j];
    case TL_ATYPE_INT32:
        return ((const int32_t *)v->values)[j];
    case TL_ATYPE_UINT32:
        return ((const uint32_t *)v->values)[j];
    case TL_ATYPE_UINT64:
    case TL_ATYPE_INT64:
        return ((const int64_t *)v->values)[j];
    default:
        return -1;
    }
}

tl_status tl_schema_set_field_id(struct ArrowSchema *schema, int32_t id, tl_error *err)
{
    char text[21];
    tl_format_i64(text, id);
    const char *pairs[] = {"PARQUET:field_id", text, NULL};
    char *md = tl_metadata_encode(pairs);
    if (md == NULL) return tl_error_nomem(err);
    tl_status st = tl_schema_set_metadata(schema, md, err);
    free(md);
    return st;
}

bool tl_schema_field_id(const struct ArrowSchema *schema, int32_t *out)
{
    int32_t len = 0;
    const char *v = tl_metadata_find(schema->metadata, "PARQUET:field_id", &len);
    if (v == NULL || len <= 0 || len > 10) return false;
    char text[12];
    memcpy(text, v, (size_t)len);
    text[len] = 0;
    char *end;
    long id = strtol(text, &end, 10);
    if (*end != 0 || id < 0 || id > INT32_MAX) return false;
    *out = (int32_t)id;
    return true;
}
