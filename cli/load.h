/* Loading files into a table: the files of one commit read as one Arrow stream,
 * parsed straight into the table's column types, with a progress bar. Shared
 * by append and import. */
#ifndef TL_CLI_LOAD_H
#define TL_CLI_LOAD_H

#include "cli.h"

typedef struct cli_progress {
    bool enabled;
    uint64_t total;   /* bytes of all the files of the command */
    uint64_t done;    /* bytes of the files finished before the current one */
    uint64_t current; /* bytes read of the current file */
    double started, last_draw;
    int files_done, files_total;
} cli_progress;

typedef struct cli_loader {
    tl_table *table;
    struct ArrowSchema columns; /* the table's schema (tl_table_schema) */
    /* The table's columns without the ingest-time column: borrows columns'. */
    struct ArrowSchema target;
    const char *format; /* tl_data_format's names; NULL: by extension */
    int maintain;       /* as tl_append_options.maintain; -1 after init */
    cli_progress progress;
} cli_loader;

/* Prepares loading into `table` (borrowed). Returns a tl_status. */
tl_status cli_loader_init(cli_loader *l, tl_table *table, const char *format, tl_error *err);
void cli_loader_free(cli_loader *l);

/* Appends `n` files as one commit with `batch_id` (may be NULL). */
tl_status cli_loader_append(cli_loader *l, const char *const *files, int n, const char *batch_id,
                            tl_append_result *out, tl_error *err);

/* The same with several batch ids (tl_append_options.batch_ids; none: 0). */
tl_status cli_loader_append_ids(cli_loader *l, const char *const *files, int n,
                                const char *const *batch_ids, size_t n_batch_ids,
                                tl_append_result *out, tl_error *err);

/* Called after each commit of cli_loader_append_chunked: its number (from 1)
 * and result. */
typedef void (*cli_commit_fn)(void *ctx, int commit, const tl_append_result *r);

/* Appends `n` files as commits of at most rows_per_commit rows each, in
 * order; with batch_id, commit k carries the batch id "<batch_id>#<k>", so
 * that running it again commits nothing twice. Stops at the first failure
 * (the commits before it stay). */
tl_status cli_loader_append_chunked(cli_loader *l, const char *const *files, int n,
                                    const char *batch_id, int64_t rows_per_commit,
                                    cli_commit_fn on_commit, void *ctx, tl_error *err);

/* Size of a file (0 for stdin or when unknown). */
uint64_t cli_file_size(const char *path);

/* The progress line on stderr: shown when stderr is a terminal and `enabled`. */
void cli_progress_start(cli_progress *p, uint64_t total, int files, bool wanted);
void cli_progress_draw(cli_progress *p, bool force);
void cli_progress_end(cli_progress *p);

/* The append result as JSON (a json_t *), with the file (or group) it was for. */
void *cli_append_json(const char *what, const tl_append_result *r);
void cli_append_print(const char *what, const tl_append_result *r);

#endif
