/* The CLI's JSON lines: a result it cannot print is a failed command, never
 * an empty line or silence with exit status 0 (a script reading the line
 * would take the missing result for none). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc_fail.h"
#include "cli.h"
#include "core/buf.h"
#include "core/json_text.h"
#include "unit.h"

enum { FIRED = 1, LOST = 2 };

/* Runs print in a child with stdout sent to a scratch file and allocation
 * `fail` failed (0: none): *text gets what it wrote; returns FIRED when the
 * failure was reached and LOST when the CLI would fail the command. A child
 * each, so one case's lost output does not leak into the next. */
static int run_print(void (*print)(void), long fail, tl_buf *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/stdout", unit_tmpdir());
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (freopen(path, "w", stdout) == NULL || freopen("/dev/null", "w", stderr) == NULL)
            _exit(100);
        alloc_fail_arm(fail);
        print();
        alloc_fail_disarm();
        fflush(stdout);
        _exit((alloc_fail_fired() ? FIRED : 0) | (cli_output_lost() ? LOST : 0));
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char chunk[4096];
    size_t n;
    while (f && (n = fread(chunk, 1, sizeof chunk, f)) > 0) tl_buf_append(text, chunk, n);
    if (f) fclose(f);
    return WEXITSTATUS(status);
}

static void print_fresh_object(void)
{
    json_t *o = json_pack("{s:s,s:I,s:[s,s]}", "table", "metrics.cpu", "version", (json_int_t)7,
                          "files", "a.parquet", "b.parquet");
    cli_print_json(o);
}

static void print_null(void)
{
    cli_print_json(NULL);
}

/* A value jansson could not build (json_pack gives NULL) is reported. */
static void test_unbuilt_value_fails_the_command(void)
{
    tl_buf out = {0};
    CHECK(run_print(print_null, 0, &out) == LOST);
    CHECK(out.len == 0);
    tl_buf_free(&out);
}

/* Each allocation of building and printing the line failed in turn: the
 * whole line was printed and the command succeeds, or nothing was and it
 * fails. */
static void test_line_whole_or_failed(void)
{
    json_error_t je;
    bool nomem;
    json_decref(tl_json_loadb("{}", 2, 0, &je, &nomem)); /* installs the counted allocator */
    tl_buf full = {0};
    CHECK(run_print(print_fresh_object, 0, &full) == 0);
    CHECK(full.len > 0 && full.data[full.len - 1] == '\n');
    long failed = 0;
    for (long n = 1;; n++) {
        tl_buf out = {0};
        int r = run_print(print_fresh_object, n, &out);
        bool whole = out.len == full.len && memcmp(out.data, full.data, out.len) == 0;
        CHECK(r & LOST ? out.len == 0 : whole);
        tl_buf_free(&out);
        if (!(r & FIRED)) break;
        failed += (r & LOST) != 0;
    }
    CHECK(failed > 3);
    tl_buf_free(&full);
}

UNIT_TESTS(UNIT(test_unbuilt_value_fails_the_command), UNIT(test_line_whole_or_failed))
