#include "json_text.h"

#include "strbuf.h"

/* A kbuf fails every append after its first failure: a key jansson could
 * not write fails the dump. */
static int write_text(const char *data, size_t size, void *b)
{
    kbuf_putn(b, data, size);
    return ((kbuf *)b)->oom ? -1 : 0;
}

char *kjson_dumps(const json_t *j, size_t flags)
{
    kbuf b = {0};
    if (json_dump_callback(j, write_text, &b, flags) != 0) b.oom = true;
    return kbuf_take(&b);
}
