/* karet_validate: the structural checks of config.c, then every expression
 * type-checked against the columns it can see. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "expr.h"
#include "run.h"

/* Compiles `expr` at `path` in `scope` (checking only) and returns its type. */
static ktype check_expr(const kconfig *c, kproblems *ps, const char *path, const kscope *scope,
                        const json_t *expr, bool *failed)
{
    kexpr_ctx x = {.config = c, .ps = ps, .scope = scope};
    snprintf(x.path.buf, sizeof x.path.buf, "%s", path);
    x.path.len = strlen(x.path.buf);
    kbuf sql = {0};
    ktype t = kexpr_compile(&x, expr, &sql);
    kbuf_free(&sql);
    *failed = x.failed;
    return t;
}

static void check_predicate(const kconfig *c, kproblems *ps, const char *path, const kscope *scope,
                            const json_t *expr, const char *what)
{
    bool failed;
    ktype t = check_expr(c, ps, path, scope, expr, &failed);
    if (!failed && t != KT_BOOL && t != KT_NULL) {
        kpath p = {0};
        snprintf(p.buf, sizeof p.buf, "%s", path);
        p.len = strlen(p.buf);
        kproblem(ps, &p, KP_EXPRESSION, "%s must be true/false, not %s", what, ktype_name(t));
    }
}

static void check_mapping(const kconfig *c, kproblems *ps, const kmapping *m)
{
    char path[128], what_s[300], what_t[300];
    kscope src = {0}, out = {0};
    if (m->source) {
        snprintf(what_s, sizeof what_s, "source \"%s\"", m->source->id ? m->source->id : "?");
        src = (kscope){m->source->columns, m->source->ncolumns, what_s, NULL};
    }
    for (size_t i = 0; i < m->ncolumns && m->source; i++) {
        const kmapcol *mc = &m->columns[i];
        if (mc->expr == NULL) continue;
        snprintf(path, sizeof path, "/mappings/%zu/columns/%zu/expr", m->index, i);
        bool failed;
        ktype t = check_expr(c, ps, path, &src, mc->expr, &failed);
        if (failed || mc->table_column < 0) continue;
        const kcolumn *col = &m->table->columns[mc->table_column];
        if (!kexpr_can_convert(t, col->type)) {
            kpath p = {0};
            snprintf(p.buf, sizeof p.buf, "%s", path);
            p.len = strlen(p.buf);
            kproblem(ps, &p, KP_EXPRESSION,
                     "the expression gives %s, which column \"%s\" (%s) cannot hold (use cast)",
                     ktype_name(t), col->name, ktype_name(col->type));
        }
    }
    if (m->where && m->table) { /* where names the mapping's output columns */
        kcolumn *cols = calloc(m->ncolumns + 1, sizeof *cols);
        snprintf(what_t, sizeof what_t, "the output of mapping \"%s\"", m->id ? m->id : "?");
        out = (kscope){cols, cols ? kmapping_outputs(m, cols) : 0, what_t, NULL};
        snprintf(path, sizeof path, "/mappings/%zu/where", m->index);
        check_predicate(c, ps, path, &out, m->where, "where");
        free(cols);
    }
}

json_t *karet_validate(const json_t *config)
{
    kproblems ps = {0};
    kconfig c;
    if (!kconfig_parse(config, &c, &ps)) {
        kconfig_free(&c);
        json_decref(ps.list);
        return NULL;
    }
    for (size_t i = 0; i < c.nsources; i++) {
        const ksource *s = &c.sources[i];
        if (s->record_filter == NULL || s->format != KF_NDJSON) continue;
        char path[128], what[300];
        snprintf(path, sizeof path, "/source_containers/%zu/record_filter", i);
        snprintf(what, sizeof what, "source \"%s\"", s->id ? s->id : "?");
        kscope scope = {s->columns, s->ncolumns, what, NULL};
        check_predicate(&c, &ps, path, &scope, s->record_filter, "record_filter");
    }
    for (size_t i = 0; i < c.nmappings; i++) check_mapping(&c, &ps, &c.mappings[i]);
    kconfig_free(&c);
    if (ps.oom) {
        json_decref(ps.list);
        return NULL;
    }
    return ps.list ? ps.list : json_array();
}
