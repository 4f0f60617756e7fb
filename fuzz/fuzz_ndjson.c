/* libFuzzer target: the NDJSON reader, inferring types and with a target
 * schema, over inputs split into small reads. The first byte picks the options. */
#include <stddef.h>
#include <stdint.h>

#include "formats/ndjson/ndjson_reader.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t mode = data[0];
    tl_text_input *in;
    if (tl_text_input_open_memory(data + 1, size - 1, "fuzz.ndjson", &in, NULL) != TL_OK) return 0;
    tl_text_input_set_read_limit(in, 1 + (mode >> 4));
    struct ArrowSchema target = {0};
    bool typed = mode & 1;
    if (typed) {
        static const char *const formats[] = {"tsu:UTC", "u", "g", "l", "b", "tdD", "i"};
        static const char *const names[] = {"time", "a", "b", "c", "d", "e", "f"};
        tl_schema_init(&target, "+s", "", 0, 7, NULL);
        for (int i = 0; i < 7; i++)
            tl_schema_init(target.children[i], formats[i], names[i], ARROW_FLAG_NULLABLE, 0, NULL);
    }
    tl_ndjson_options o = {.batch_rows = 1 + (mode >> 1 & 3)};
    struct ArrowArrayStream s;
    if (tl_ndjson_stream_open(in, &o, typed ? &target : NULL, &s, NULL) == TL_OK) fuzz_drain(&s);
    tl_schema_release(&target);
    return 0;
}
