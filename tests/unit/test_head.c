/* The head object's encoding (table/head.h): round trips, and every
 * truncation, bit flip and forged-but-malformed body decodes to a clean
 * TL_ERR_INVALID with nothing left allocated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/random.h"
#include "store/digest.h"
#include "table/head.h"
#include "unit.h"

static const char MD[] = "{\"format-version\":2,\"location\":\"s3://b/t\"}";

static void sample(tl_head *h)
{
    memset(h, 0, sizeof *h);
    h->version = 42;
    CHECK(tl_buf_append(&h->metadata, MD, strlen(MD)) == 0);
    CHECK_OK(tl_head_objects_add(&h->objects, "s3://b/t/metadata/snap-1.avro", "LIST", 4, NULL),
             &(tl_error){0});
    CHECK_OK(tl_head_objects_add(&h->objects, "s3://b/t/metadata/m0.avro", "", 0, NULL),
             &(tl_error){0});
    CHECK_OK(
        tl_head_objects_add(&h->objects, "s3://b/t/metadata/lvi-1.parquet", "PAR1\0PAR1", 9, NULL),
        &(tl_error){0});
}

static void encoded(tl_buf *out)
{
    tl_head h;
    sample(&h);
    tl_error err = {0};
    CHECK_OK(tl_head_encode(&h, out, &err), &err);
    tl_head_clear(&h);
}

static void test_round_trip(void)
{
    tl_buf b = {0};
    encoded(&b);
    CHECK(memcmp(b.data, "TLHD\x01", 5) == 0);
    tl_head h;
    tl_error err = {0};
    CHECK_OK(tl_head_decode(b.data, b.len, &h, &err), &err);
    CHECK_INT(h.version, 42);
    CHECK_INT(h.metadata.len, strlen(MD));
    CHECK(memcmp(h.metadata.data, MD, strlen(MD)) == 0);
    CHECK_INT(h.objects.n, 3);
    const tl_buf *lvi = tl_head_objects_find(&h.objects, "s3://b/t/metadata/lvi-1.parquet");
    CHECK(lvi && lvi->len == 9 && memcmp(lvi->data, "PAR1\0PAR1", 9) == 0);
    const tl_buf *empty = tl_head_objects_find(&h.objects, "s3://b/t/metadata/m0.avro");
    CHECK(empty && empty->len == 0);
    CHECK(tl_head_objects_find(&h.objects, "s3://b/t/metadata/other") == NULL);
    CHECK(tl_head_objects_find(NULL, "x") == NULL);
    tl_head_clear(&h);
    tl_buf_free(&b);
}

/* Copies of the objects o lacks, by URL: the rest of o stays as it was. */
static void test_add_all(void)
{
    tl_head a, b;
    sample(&a);
    memset(&b, 0, sizeof b);
    tl_error err = {0};
    CHECK_OK(tl_head_objects_add(&b.objects, "s3://b/t/metadata/m0.avro", "OURS", 4, &err), &err);
    CHECK_OK(tl_head_objects_add_all(&b.objects, &a.objects, &err), &err);
    CHECK_INT(b.objects.n, 3);
    const tl_buf *m0 = tl_head_objects_find(&b.objects, "s3://b/t/metadata/m0.avro");
    CHECK(m0 && m0->len == 4 && memcmp(m0->data, "OURS", 4) == 0);
    const tl_buf *list = tl_head_objects_find(&b.objects, "s3://b/t/metadata/snap-1.avro");
    CHECK(list && list->len == 4 &&
          list != tl_head_objects_find(&a.objects, "s3://b/t/metadata/snap-1.avro"));
    tl_head_clear(&a); /* b holds copies */
    CHECK(memcmp(list->data, "LIST", 4) == 0);
    CHECK_OK(tl_head_objects_add_all(&b.objects, &a.objects, &err), &err);
    CHECK_INT(b.objects.n, 3);
    tl_head_clear(&b);
}

static void check_rejected(const uint8_t *data, size_t len)
{
    tl_head h;
    tl_error err = {0};
    CHECK_INT(tl_head_decode(data, len, &h, &err), TL_ERR_INVALID);
    CHECK(h.metadata.data == NULL && h.objects.items == NULL && h.objects.n == 0);
    CHECK(strstr(err.message, "head") != NULL);
}

static void test_every_truncation_is_rejected(void)
{
    tl_buf b = {0};
    encoded(&b);
    check_rejected(NULL, 0);
    for (size_t n = 0; n < b.len; n++) {
        uint8_t *copy = malloc(n + 1); /* exactly n bytes visible to the decoder */
        memcpy(copy, b.data, n);
        check_rejected(copy, n);
        free(copy);
    }
    tl_buf_free(&b);
}

static void test_every_bit_flip_is_rejected(void)
{
    tl_buf b = {0};
    encoded(&b);
    for (size_t i = 0; i < b.len; i++)
        for (int bit = 0; bit < 8; bit++) {
            b.data[i] ^= (uint8_t)(1u << bit);
            check_rejected(b.data, b.len);
            b.data[i] ^= (uint8_t)(1u << bit);
        }
    tl_buf_free(&b);
}

/* Re-seals a damaged body with a valid digest: the structure checks alone must hold. */
static void reseal(tl_buf *b)
{
    tl_sha256(b->data, b->len - 32, b->data + b->len - 32);
}

static void test_forged_bodies_are_rejected(void)
{
    tl_buf b = {0};
    encoded(&b);
    size_t md_len_at = 4 + 1 + 8 + 1 + strlen(TL_HEAD_CODEC);
    uint64_t lengths[] = {0, 1, 1u << 20, UINT64_MAX, UINT64_MAX - 8, b.len};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        tl_buf c = {0};
        CHECK(tl_buf_append(&c, b.data, b.len) == 0);
        tl_store_le64(c.data + md_len_at, lengths[k]);
        reseal(&c);
        check_rejected(c.data, c.len);
        tl_buf_free(&c);
    }
    /* Version 0, a wrong format byte, another codec, an object count too high. */
    size_t at[] = {5, 4, 14, md_len_at + 8 + strlen(MD)};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        tl_buf c = {0};
        CHECK(tl_buf_append(&c, b.data, b.len) == 0);
        if (k == 0) memset(c.data + 5, 0, 8);
        if (k == 1) c.data[4] = 2;
        if (k == 2) c.data[14] = 'X';
        if (k == 3) tl_store_le32(c.data + at[k], 1000000);
        reseal(&c);
        check_rejected(c.data, c.len);
        tl_buf_free(&c);
    }
    tl_buf_free(&b);
}

/* Random bytes behind a valid magic, sealed with a valid digest: no crash. */
static void test_random_sealed_bodies(void)
{
    for (int round = 0; round < 2000; round++) {
        size_t n = 33 + (size_t)(tl_random_u64() % 300);
        uint8_t *p = malloc(n);
        for (size_t i = 0; i < n; i++) p[i] = (uint8_t)tl_random_u64();
        if (n > 60) memcpy(p, "TLHD\x01", 5);
        tl_sha256(p, n - 32, p + n - 32);
        tl_head h;
        if (tl_head_decode(p, n, &h, NULL) == TL_OK) tl_head_clear(&h);
        free(p);
    }
}

/* ---- Validity against the listing (over the local store, wrapped so that
 * its listing gives sizes and MD5s as object stores' do, or none: the rule
 * is store-independent; the table layer asks for it on object stores only) ---- */

typedef struct digest_store {
    tl_store base;
    tl_store *inner;
} digest_store;

#define INNER(s) (((digest_store *)(s))->inner)

static tl_status ds_get(tl_store *s, const char *k, tl_buf *o, tl_error *e)
{
    return tl_store_get(INNER(s), k, o, e);
}
static tl_status ds_get_range(tl_store *s, const char *k, uint64_t off, size_t n, uint8_t *d,
                              tl_error *e)
{
    return tl_store_get_range(INNER(s), k, off, n, d, e);
}
static tl_status ds_size(tl_store *s, const char *k, uint64_t *o, tl_error *e)
{
    return tl_store_size(INNER(s), k, o, e);
}
static tl_status ds_put(tl_store *s, const char *k, const void *d, size_t n, tl_error *e)
{
    return tl_store_put(INNER(s), k, d, n, e);
}
static tl_status ds_put_if_absent(tl_store *s, const char *k, const void *d, size_t n, tl_error *e)
{
    return tl_store_put_if_absent(INNER(s), k, d, n, e);
}
static tl_status ds_list(tl_store *s, const char *p, tl_strlist *o, tl_error *e)
{
    return tl_store_list(INNER(s), p, o, e);
}
static tl_status ds_remove(tl_store *s, const char *k, tl_error *e)
{
    return tl_store_remove(INNER(s), k, e);
}
static void ds_free(tl_store *s)
{
    tl_store_free(INNER(s));
    free(s);
}
/* What an object store's listing says: each object's size and MD5. */
static tl_status ds_list_detailed(tl_store *s, const char *p, tl_store_listing *o, tl_error *e)
{
    tl_strlist keys = {0};
    tl_status st = tl_store_list(INNER(s), p, &keys, e);
    for (size_t i = 0; st == TL_OK && i < keys.len; i++) {
        tl_buf b = {0};
        uint8_t md5[16];
        st = tl_store_get(INNER(s), keys.items[i], &b, e);
        tl_md5(b.data, b.len, md5);
        if (st == TL_OK) CHECK(tl_store_listing_push(o, keys.items[i], b.len, md5) == 0);
        tl_buf_free(&b);
    }
    tl_strlist_free(&keys);
    return st;
}

#define DS_OPS                                                                                     \
    .get = ds_get, .get_range = ds_get_range, .size = ds_size, .put = ds_put,                      \
    .put_if_absent = ds_put_if_absent, .list = ds_list, .remove = ds_remove, .free = ds_free
static const tl_store_ops digest_ops = {DS_OPS, .list_detailed = ds_list_detailed};
static const tl_store_ops no_digest_ops = {DS_OPS};

/* Wraps inner (taken over): with a digest listing or without one. */
static tl_store *digest_store_wrap(tl_store *inner, bool digests)
{
    digest_store *s = calloc(1, sizeof *s);
    CHECK(s != NULL);
    s->base.ops = digests ? &digest_ops : &no_digest_ops;
    s->base.url = inner->url;
    s->inner = inner;
    return &s->base;
}

static void put_text(tl_store *st, const char *key, const char *text)
{
    CHECK_OK(tl_store_put(st, key, text, strlen(text), NULL), &(tl_error){0});
}

/* A metadata file of a table located at `location`. */
static void metadata_json(const char *location, int64_t ms, tl_buf *out)
{
    tl_ice_field f = {1, "a", false, {.id = TL_ICE_INT}, NULL, NULL, 0};
    tl_ice_schema schema = {0, &f, 1, NULL, 0};
    tl_ice_metadata *md = NULL;
    tl_error err = {0};
    CHECK_OK(tl_ice_metadata_new("u", location, &schema, NULL, NULL, NULL, ms, &md, &err), &err);
    CHECK_OK(tl_ice_metadata_serialize(md, out, &err), &err);
    tl_ice_metadata_free(md);
}

static void put_head(tl_store *st, const tl_qname *name, int64_t version, const tl_buf *md)
{
    tl_head h = {.version = version};
    CHECK(tl_buf_append(&h.metadata, md->data, md->len) == 0);
    CHECK_OK(tl_head_objects_add(&h.objects, "file:///x/metadata/snap-1.avro", "L", 1, NULL),
             &(tl_error){0});
    tl_buf b = {0};
    CHECK_OK(tl_head_encode(&h, &b, NULL), &(tl_error){0});
    char key[256];
    tl_head_key(name, key, sizeof key);
    CHECK_OK(tl_store_put(st, key, b.data, b.len, NULL), &(tl_error){0});
    tl_buf_free(&b);
    tl_head_clear(&h);
}

/* Loads through the head: 1 when it was trusted, 0 when not, -1 on error. */
static int load(tl_store *st, const tl_qname *name, int64_t want_version)
{
    int64_t v = 0;
    tl_ice_metadata *md = NULL;
    tl_head_objects *o = NULL;
    tl_error err = {0};
    if (tl_head_load_latest(st, name, &v, &md, &o, NULL, &err) != TL_OK) return -1;
    CHECK_INT(v, want_version);
    CHECK((md == NULL) == (o == NULL));
    int trusted = md != NULL;
    if (o) CHECK(tl_head_objects_find(o, "file:///x/metadata/snap-1.avro") != NULL);
    tl_ice_metadata_free(md);
    tl_head_objects_free(o);
    return trusted;
}

static tl_store *open_store(const char *name, bool digests)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", unit_tmpdir(), name);
    tl_store *st = NULL;
    tl_error err = {0};
    CHECK_OK(tl_store_local_open(dir, &st, &err), &err);
    return st ? digest_store_wrap(st, digests) : NULL;
}

static void test_head_validity(void)
{
    tl_store *st = open_store("head-lake", true);
    tl_error err = {0};
    if (st == NULL) return;
    tl_qname name, other;
    CHECK_OK(tl_qname_parse("ns.t", "default", &name, &err), &err);
    CHECK_OK(tl_qname_parse("ns.u", "default", &other, &err), &err);
    char *loc = tl_store_url_of(st, "ns/t"), *other_loc = tl_store_url_of(st, "ns/u");
    tl_buf md = {0}, md_other = {0};
    metadata_json(loc, 1, &md);
    metadata_json(other_loc, 1, &md_other);

    CHECK_INT(load(st, &name, 0), -1); /* no table */
    put_text(st, "ns/t/metadata/v1.metadata.json", (const char *)md.data);
    put_text(st, "ns/t/metadata/v2.metadata.json", (const char *)md.data);
    CHECK_INT(load(st, &name, 2), 0); /* no head */
    put_head(st, &name, 2, &md);
    CHECK_INT(load(st, &name, 2), 1); /* the newest version's */
    put_text(st, "ns/t/metadata/v3.metadata.json", (const char *)md.data);
    CHECK_INT(load(st, &name, 3), 0); /* stale: v3 was committed after it */
    put_head(st, &name, 4, &md);
    CHECK_INT(load(st, &name, 3), 0); /* ahead of the listing: not trusted either */
    put_head(st, &name, 3, &md_other);
    CHECK_INT(load(st, &name, 3), 0); /* another table's metadata */
    put_text(st, "ns/t/metadata/" TL_HEAD_NAME, "TLHD garbage");
    CHECK_INT(load(st, &name, 3), 0); /* corrupt */
    put_head(st, &name, 3, &md);
    CHECK_INT(load(st, &name, 3), 1);

    /* A head of v4 written by a writer that then lost the race for v4: the
     * same version number, metadata bytes other than the committed v4's. */
    tl_buf winner = {0}, loser = {0};
    metadata_json(loc, 7, &winner);
    metadata_json(loc, 8, &loser);
    CHECK_INT((int64_t)winner.len, (int64_t)loser.len); /* only the content tells them apart */
    put_text(st, "ns/t/metadata/v4.metadata.json", (const char *)winner.data);
    put_head(st, &name, 4, &loser);
    CHECK_INT(load(st, &name, 4), 0);
    put_head(st, &name, 4, &winner);
    CHECK_INT(load(st, &name, 4), 1);
    /* The table dropped and created again up to the same version: the old
     * table's head (same location, same N) does not describe the new v4. */
    put_head(st, &name, 4, &md);
    CHECK_INT(load(st, &name, 4), 0);

    tl_buf_free(&winner);
    tl_buf_free(&loser);
    tl_buf_free(&md);
    tl_buf_free(&md_other);
    free(loc);
    free(other_loc);
    tl_store_free(st);
}

/* The listed digests are read as stores write them. */
static void test_listed_digests(void)
{
    uint8_t want[16], got[16];
    tl_md5("hello", 5, want);
    CHECK(tl_md5_from_hex("5d41402abc4b2a76b9719d911017c592", got) && !memcmp(got, want, 16));
    CHECK(tl_md5_from_hex("\"5D41402ABC4B2A76B9719D911017C592\"", got) && !memcmp(got, want, 16));
    CHECK(tl_md5_from_base64("XUFAKrxLKna5cZ2REBfFkg==", got) && !memcmp(got, want, 16));
    CHECK(!tl_md5_from_hex("\"5d41402abc4b2a76b9719d911017c592-2\"", got)); /* multipart */
    CHECK(!tl_md5_from_hex("5d41402abc4b2a76b9719d911017c59z", got));
    CHECK(!tl_md5_from_hex(NULL, got));
    CHECK(!tl_md5_from_base64("aGVsbG8=", got)); /* not 16 bytes */
    CHECK(!tl_md5_from_base64(NULL, got));
}

/* A store whose listing gives no digests never has its head trusted. */
static void test_no_digest_no_trust(void)
{
    tl_store *st = open_store("head-lake-nodigest", false);
    tl_error err = {0};
    if (st == NULL) return;
    tl_qname name;
    CHECK_OK(tl_qname_parse("ns.t", "default", &name, &err), &err);
    char *loc = tl_store_url_of(st, "ns/t");
    tl_buf md = {0};
    metadata_json(loc, 1, &md);
    put_text(st, "ns/t/metadata/v1.metadata.json", (const char *)md.data);
    put_head(st, &name, 1, &md);
    CHECK_INT(load(st, &name, 1), 0);
    tl_buf_free(&md);
    free(loc);
    tl_store_free(st);
}

UNIT_TESTS(UNIT(test_round_trip), UNIT(test_add_all), UNIT(test_no_digest_no_trust),
           UNIT(test_listed_digests), UNIT(test_every_truncation_is_rejected),
           UNIT(test_every_bit_flip_is_rejected), UNIT(test_forged_bodies_are_rejected),
           UNIT(test_random_sealed_bodies), UNIT(test_head_validity))
