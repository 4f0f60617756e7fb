/* karet ship: ships the new lines of a growing log file to a source prefix of
 * a lake and asks Karet for a run (seeds/004: "Reading a log file").
 *
 * One pass: load the position (state file), plan which files to read (the
 * log from its offset, or the rotated file it became followed by the files
 * rotated after it), stream their whole lines into upload files of at most
 * max_file_size bytes, save the position after each upload, then POST the run
 * URL. A failed run request stays pending in the state for the next pass. */
#ifndef KARET_SHIP_H
#define KARET_SHIP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timelake.h"

/* Exit codes of karet ship (0-3 as every karet command). */
enum {
    SHIP_OK = 0,
    SHIP_ERR_LOG = 1,   /* the log is missing or unreadable, or the state is bad */
    SHIP_ERR_USAGE = 2, /* bad options */
    SHIP_ERR_DEST = 3,  /* the destination failed: nothing moved on */
    SHIP_ERR_RUN = 4,   /* the run request failed: pending for the next pass */
    SHIP_ERR_TOKEN = 5, /* the run URL refused the token: pending too */
};

#define SHIP_FP_MAX 64 /* bytes before the offset kept to recognise the file */

/* What the user asked for; strings borrowed from argv or owned (noted). */
typedef struct ship_config {
    char *log;              /* absolute path (owned) */
    char *to;               /* destination URL, or an absolute folder (owned) */
    char **storage_options; /* NULL-terminated key, value pairs (owned) */
    const char *run_url;    /* NULL: no run request */
    const char *token;      /* KARET_WORKER_TOKEN */
    char *state_path;       /* owned */
    const char *rotated;    /* glob of rotated files; NULL: <log>.1, <log>.2, ... */
    bool csv;               /* --format csv */
    const char *header;     /* --header: the log has no header line */
    char *name;             /* the stem of upload names (owned) */
    uint64_t max_file_size; /* uncompressed bytes of one upload */
    bool gzip;
    bool quiet;
} ship_config;

/* The position and what must survive between passes (the state file). */
typedef struct ship_state {
    char *log, *to, *host;     /* owned; what this state belongs to */
    uint64_t dev, ino, offset; /* the file being read and how far it is shipped */
    unsigned char fp[SHIP_FP_MAX];
    size_t fp_len;    /* the bytes just before offset (at most SHIP_FP_MAX) */
    int64_t btime_ns; /* the birth time in ns (0: the filesystem does not say) */
    bool have_file;   /* dev/ino/offset are meaningful */
    int64_t name_first, name_last, name_seq; /* the last upload's name */
    bool have_name;
    bool run_pending; /* an upload has no accepted run request yet */
    int64_t seen_s;   /* when a pass last read the log (Unix s) */
} ship_state;

/* ship_state.c */
/* 1: loaded, 0: no file, -1: unreadable or invalid (message in err). */
int ship_state_load(const char *path, ship_state *out, char *err, size_t errlen);
/* Write to a temporary file, fsync, rename over path, fsync the folder. */
int ship_state_save(const char *path, const ship_state *st, char *err, size_t errlen);
json_t *ship_state_to_json(const ship_state *st);
int ship_state_from_json(const json_t *j, ship_state *out, char *err, size_t errlen);
void ship_state_clear(ship_state *st);
/* $HOME/.karet/ship/<log base name>-<hash of the path>.json (caller frees). */
char *ship_default_state_path(const char *log_abs);
/* The key of the state's copy in the destination: .karet-ship/<name>.state */
void ship_remote_state_key(const char *name, char *out, size_t size);

/* ship_plan.c: which files a pass reads, oldest first. */
typedef struct ship_segment {
    char *path; /* owned */
    int fd;
    uint64_t dev, ino;
    int64_t btime_ns;
    uint64_t start; /* where this pass starts reading */
    uint64_t end;   /* size when planned: the pass reads no further */
    bool rotated;   /* a finished file: its last line counts even without '\n' */
} ship_segment;

typedef struct ship_plan {
    ship_segment *segs;
    size_t len;
    bool log_missing; /* the log itself is not there (yet) */
} ship_plan;

/* Plans the pass from the state (NULL: none). Warnings (rotation, truncation,
 * a rotated file gone) go to stderr. Returns 0, or an exit code with err set. */
int ship_plan_make(const ship_config *cfg, const ship_state *st, ship_plan *out, char *err,
                   size_t errlen);
void ship_plan_free(ship_plan *plan);
/* The birth time of an open file in ns, 0 when the filesystem does not say. */
int64_t ship_btime(int fd);

/* ship_pass.c: one pass. Returns an exit code; prints its one message. */
int ship_pass(const ship_config *cfg);

/* ship_request.c: POST url with the bearer token. Returns the HTTP status,
 * or -1 when no answer came (msg says why). The job id of a 202 goes to
 * job_id (may be empty). */
long ship_request_run(const char *url, const char *token, char *job_id, size_t job_len, char *msg,
                      size_t msglen);

#endif
