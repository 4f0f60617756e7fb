/* Collecting config problems, each with its JSON Pointer path and kind, in
 * the form karet_validate returns. */
#ifndef KARET_PROBLEMS_H
#define KARET_PROBLEMS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The JSON Pointer of the value being checked: pushed and popped as the
 * checks descend. Segments are escaped (~0, ~1) as RFC 6901 says. */
typedef struct kpath {
    char buf[2048];
    size_t len;
} kpath;

/* Each push returns the length to pop back to. */
size_t kpath_push(kpath *p, const char *segment);
size_t kpath_push_index(kpath *p, size_t index);
void kpath_pop(kpath *p, size_t len);

typedef struct kproblems {
    json_t *list; /* array of {"path", "kind", "message"} */
    bool oom;
} kproblems;

/* Kinds (the strings of the API). */
#define KP_DUPLICATE_ID "duplicate_id"
#define KP_DANGLING "dangling_reference"
#define KP_MISSING "missing_field"
#define KP_UNKNOWN "unknown_field"
#define KP_SCHEMA "schema"
#define KP_EXPRESSION "expression"

void kproblem(kproblems *ps, const kpath *path, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Same, at path + "/" + segment. */
void kproblem_at(kproblems *ps, kpath *path, const char *segment, const char *kind, const char *fmt,
                 ...) __attribute__((format(printf, 5, 6)));

#endif
