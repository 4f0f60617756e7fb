/* The pipeline templates of karet/templates/, built into the binary: POST
 * /api/pipelines {"template": "<file stem>"} starts a pipeline from one.
 * Their source prefixes say "{slug}" where the pipeline's slug goes. */
#ifndef KARET_SERVE_TEMPLATES_H
#define KARET_SERVE_TEMPLATES_H

typedef struct karet_template {
    const char *name; /* the file's stem */
    const char *json;
} karet_template;

/* Ended by an entry with a NULL name. */
extern const karet_template KARET_TEMPLATES[];

#endif
