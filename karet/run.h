/*
 * run.h -- Karet's engine entry point, shared by `karet run` and `karet serve`.
 *
 * A pipeline (pipeline.json, parsed by jansson) maps the CSV and NDJSON files
 * under its sources' key prefixes in a lake into Timelake tables
 * "<slug>.<table id>" in the lake's warehouse (the folder "warehouse/" of the
 * lake). A run reads only the files no earlier run has read, unless a full run
 * is needed; see karet_run.
 *
 * Summaries and problems travel as jansson JSON values, which the service
 * stores as they are and serves through its API.
 */
#ifndef KARET_RUN_H
#define KARET_RUN_H

#include <jansson.h>
#include <stddef.h>

#include "timelake.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What karet_run returns. */
enum {
    KARET_OK = 0,
    KARET_ERR_CONFIG = 1,    /* the config does not validate: nothing was read */
    KARET_ERR_TRANSIENT = 2, /* storage failed or runs collided: retrying may succeed */
    KARET_ERR_FAILED = 3,    /* anything else (the summary's "error" says what) */
    KARET_ERR_CANCELLED = 4  /* *opts->cancel was set: nothing more was committed */
};

/* The two handles a run needs: open once per worker thread (a handle is used
 * by one thread at a time). */
#define KARET_READERS 2 /* files a run fetches, reads and maps at once */

typedef struct karet_lake {
    tl_lake *objects;   /* the lake root: sources, uploads, dimension files */
    tl_lake *warehouse; /* <lake>/warehouse: tables <slug>.<table id> */
    /* More handles of the root, so that KARET_READERS files are read and
     * mapped side by side (each handle has its own query engine, started
     * when first used). */
    tl_lake *readers[KARET_READERS - 1];
} karet_lake;

/* Opens the handles of the lake at `url` (a local folder, file://, s3://,
 * gs:// or az:// URL). `storage_options` is NULL or a NULL-terminated array of
 * key, value pairs as tl_lake_open takes them (the environment fills in the
 * rest as it does for timelake). Returns 0, or -1 with a message in err
 * (errlen bytes, always terminated). Close with karet_lake_close. */
int karet_lake_open(const char *url, const char *const *storage_options, karet_lake *out, char *err,
                    size_t errlen);
/* Closes the handles; the struct is zeroed. A zeroed struct is a no-op. */
void karet_lake_close(karet_lake *lake);

typedef struct karet_progress {
    const char *stage; /* "listing", "reading", "mapping", "writing", "done" */
    int files_done, files_total, mappings_done, mappings_total;
} karet_progress;

typedef struct karet_run_options {
    int full;           /* 1: a full run of every table (reason "requested") */
    const char *job_id; /* recorded in the snapshot summaries; may be NULL */
    /* Called as the run advances; may be NULL. Called on the thread that runs
     * karet_run; `progress` is valid during the call only. */
    void (*on_progress)(void *ctx, const karet_progress *progress);
    void *ctx;
    /* May be NULL. Non-zero: the run stops before its next commit and returns
     * KARET_ERR_CANCELLED (what was committed before stays, consistently). */
    const volatile int *cancel;
} karet_run_options;

/*
 * Runs one pipeline against the lake. `config` is the parsed pipeline.json
 * (borrowed; validated here again: a config with problems returns
 * KARET_ERR_CONFIG before anything is read). `slug` names the tables'
 * namespace ([A-Za-z0-9_-]). `opts` may be NULL.
 *
 * On return *summary (the caller owns it: json_decref) is the job summary, set
 * whatever the outcome:
 *   {"files_processed", "rows_read", "rows_written", "rows_deduped",
 *    "partitions_written", "run_kind": "incremental"|"full",
 *    "full_reason": null|"...", "tables": {"<table id>": {...}},
 *    "skipped": [{"file", "line", "reason"}...],
 *    "errors": [{"file", "line", "message"}...],
 *    "error": "..." (only when the run failed or was cancelled),
 *    "problems": [...] (only for KARET_ERR_CONFIG: karet_validate's array)}
 */
int karet_run(karet_lake *lake, const char *slug, const json_t *config,
              const karet_run_options *opts, json_t **summary);

/*
 * Checks a pipeline config, as `karet validate`, the API's PUT config and the
 * editor do. Returns a new array (the caller owns it: json_decref) with one
 * object per problem, empty when the config is good:
 *   {"path": "<JSON Pointer>", "kind": "duplicate_id" | "dangling_reference" |
 *    "missing_field" | "unknown_field" | "schema" | "expression",
 *    "message": "..."}
 * Returns NULL only when out of memory.
 */
json_t *karet_validate(const json_t *config);

#ifdef __cplusplus
}
#endif

#endif /* KARET_RUN_H */
