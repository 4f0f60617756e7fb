#include "unit.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/buf.h"

int unit_failures;

void unit_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    unit_failures++;
}

const char *unit_tmpdir(void)
{
    static char path[512];
    if (path[0]) return path;
    const char *base = getenv("TL_TEST_TMP");
    if (base == NULL) base = "/tmp";
    mkdir(base, 0755);
    snprintf(path, sizeof path, "%s/unit-%d", base, (int)getpid());
    mkdir(path, 0755);
    return path;
}

int unit_read_data(const char *dir, const char *name, tl_buf *out)
{
    char path[1024];
    const char *here = __FILE__, *slash = strrchr(here, '/');
    int len = slash ? (int)(slash - here) : 1;
    snprintf(path, sizeof path, "%.*s/../data/%s/%s", len, slash ? here : ".", dir, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL) return -1;
    uint8_t chunk[4096];
    size_t n;
    int rc = 0;
    while (rc == 0 && (n = fread(chunk, 1, sizeof chunk, f)) > 0) rc = tl_buf_append(out, chunk, n);
    fclose(f);
    return rc == 0 ? 0 : -1;
}

int unit_gzip(const void *data, size_t len, tl_buf *out)
{
    z_stream z = {0};
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
    size_t bound = deflateBound(&z, (uLong)len);
    uint8_t *dst = tl_buf_extend(out, bound);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    z.next_out = dst;
    z.avail_out = (uInt)bound;
    int rc = dst ? deflate(&z, Z_FINISH) : Z_MEM_ERROR;
    out->len -= dst ? z.avail_out : 0;
    deflateEnd(&z);
    return rc == Z_STREAM_END ? 0 : -1;
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0;
    for (const unit_test *t = unit_tests; t->name; t++) {
        if (argc > 1 && strstr(t->name, argv[1]) == NULL) continue;
        unit_failures = 0;
        t->fn();
        if (unit_failures) {
            fprintf(stderr, "FAIL %s\n", t->name);
            failed++;
        } else {
            passed++;
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
