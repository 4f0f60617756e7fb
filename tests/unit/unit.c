#include "unit.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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
