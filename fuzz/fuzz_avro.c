/* libFuzzer target: the Avro object container reader over a file in memory
 * (header, schema, every datum of every block), then the Iceberg manifest and
 * manifest list readers on the same bytes. Whatever the bytes, a failure is
 * an error about the file, never an allocation error: a damaged manifest
 * must not read as "out of memory". */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/arena.h"
#include "formats/avro/avro_file.h"
#include "iceberg/manifest.h"
#include "iceberg/manifest_list.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failure is TL_ERR_INVALID with a message saying what is wrong: never
 * "out of memory", never an internal error, never silence. */
static void check(tl_status st, const tl_error *err)
{
    if (st == TL_OK) return;
    if (st != TL_ERR_INVALID || err->code != TL_ERR_INVALID || err->message[0] == 0) abort();
}

static void read_datums(const uint8_t *data, size_t size)
{
    tl_error err;
    tl_avro_reader *r;
    tl_status st = tl_avro_reader_open(data, size, &r, &err);
    check(st, &err);
    if (st != TL_OK) return;
    tl_arena arena = {0};
    for (int i = 0; i < 100000; i++) {
        tl_avro_value v;
        bool done;
        tl_arena_reset(&arena);
        st = tl_avro_reader_next(r, &arena, &v, &done, &err);
        check(st, &err);
        if (st != TL_OK || done) break;
    }
    tl_arena_free(&arena);
    tl_avro_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_datums(data, size);
    tl_error err;
    tl_ice_manifest_entry *entries;
    size_t n;
    tl_status st = tl_ice_manifest_read(data, size, &entries, &n, &err);
    check(st, &err);
    if (st == TL_OK) tl_ice_manifest_entries_free(entries, n);
    tl_ice_manifest_file *files;
    st = tl_ice_manifest_list_read(data, size, &files, &n, &err);
    check(st, &err);
    if (st == TL_OK) tl_ice_manifest_files_free(files, n);
    return 0;
}
