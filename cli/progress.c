/* The progress line on stderr, shown only when stderr is a terminal and the
 * input is large enough to wait for. */
#include <time.h>
#include <unistd.h>

#include "load.h"

#define PROGRESS_MIN_BYTES (32u << 20)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_progress_start(cli_progress *p, uint64_t total, int files, bool wanted)
{
    p->enabled = wanted && isatty(STDERR_FILENO) && total >= PROGRESS_MIN_BYTES;
    p->total = total;
    p->done = p->current = 0;
    p->files_done = 0;
    p->files_total = files;
    p->started = now();
    p->last_draw = 0;
}

void cli_progress_draw(cli_progress *p, bool force)
{
    if (!p->enabled) return;
    double t = now();
    if (!force && t - p->last_draw < 0.2) return;
    p->last_draw = t;
    uint64_t done = p->done + p->current;
    double frac = p->total ? (double)done / (double)p->total : 0;
    if (frac > 1) frac = 1;
    char bar[31];
    int fill = (int)(frac * 30);
    for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
    bar[30] = 0;
    char got[32], all[32], rate[32];
    cli_format_bytes((double)done, got, sizeof got);
    cli_format_bytes((double)p->total, all, sizeof all);
    double secs = t - p->started;
    cli_format_bytes(secs > 0 ? (double)done / secs : 0, rate, sizeof rate);
    fprintf(stderr, "\r[%s] %3.0f%%  %s / %s  %s/s  file %d/%d\033[K", bar, frac * 100, got, all,
            rate, p->files_done < p->files_total ? p->files_done + 1 : p->files_total,
            p->files_total);
}

void cli_progress_end(cli_progress *p)
{
    if (p->enabled) fprintf(stderr, "\r\033[K");
}
