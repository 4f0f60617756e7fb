/* Mappings evaluated in C (map_fast.h): each node of expr.c it knows, with
 * the SQL it compiles to read as C. Values are evaluated a batch at a time
 * into vectors, then the rows the filters keep are built into Arrow arrays
 * of the table's types. */
#include "map_fast.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "feed.h"

#define MAX_DEPTH 64
/* Milliseconds of 0001-01-01 and of 9999-12-31 23:59:59.999 since 1970 (expr.c). */
#define MIN_MILLIS (-62135596800000LL)
#define MAX_MILLIS 253402300799999LL
#define MILLIS_PER_DAY 86400000LL

typedef enum {
    F_SRC,
    F_OUT,
    F_LIT,
    F_ARITH,
    F_CMP,
    F_AND,
    F_OR,
    F_NOT,
    F_CASE,
    F_UNIX,
    F_FLOAT
} fop;

enum { CMP_EQ, CMP_NE, CMP_GT, CMP_LT, CMP_GE, CMP_LE };

typedef struct fnode {
    fop op;
    ktype type;
    /* F_SRC: source column; F_OUT: table column; F_ARITH: '+' '-' '*' '/';
     * F_CMP: CMP_*; F_CASE: 1 upper, 0 lower; F_UNIX: 1000 (s) or 1 (ms). */
    int arg;
    struct fnode *a, *b;
    bool null; /* F_LIT: the null of its type */
    int64_t li;
    double ld;
    char *ls;
    size_t lslen;
} fnode;

typedef struct fmapping {
    int32_t index;
    fnode **cols; /* per table column, converted to its type */
    fnode *where; /* NULL: none */
} fmapping;

struct kfast {
    const ktable *t;
    const ksource *s;
    fnode *filter; /* the source's record filter; NULL: none */
    fmapping *maps;
    size_t nmaps;
};

/* ---- the plan ---- */

typedef struct fscope {
    const kcolumn *cols;
    size_t n;
    const ktable *out; /* the table, when the columns are a mapping's outputs */
} fscope;

typedef struct fctx {
    const fscope *sc;
    bool oom;
    int depth;
} fctx;

static void node_free(fnode *n)
{
    if (n == NULL) return;
    node_free(n->a);
    node_free(n->b);
    free(n->ls);
    free(n);
}

static fnode *node_new(fctx *x, fop op, ktype type, fnode *a, fnode *b)
{
    fnode *n = calloc(1, sizeof *n);
    if (n == NULL) {
        x->oom = true;
        node_free(a);
        node_free(b);
        return NULL;
    }
    *n = (fnode){.op = op, .type = type, .a = a, .b = b};
    return n;
}

static fnode *null_of(fctx *x, ktype type)
{
    fnode *n = node_new(x, F_LIT, type, NULL, NULL);
    if (n) n->null = true;
    return n;
}

/* n converted to `to` as kexpr_convert does, where that is one of the
 * conversions evaluated here; else NULL (n is freed). */
static fnode *convert(fctx *x, fnode *n, ktype to)
{
    if (n == NULL || n->type == to) return n;
    if (n->type == KT_NULL) {
        node_free(n);
        return null_of(x, to);
    }
    if (n->type == KT_INT64 && to == KT_FLOAT64) return node_new(x, F_FLOAT, to, n, NULL);
    node_free(n);
    return NULL;
}

static bool numeric(ktype t)
{
    return t == KT_INT64 || t == KT_FLOAT64 || t == KT_NULL;
}

static fnode *compile(fctx *x, const json_t *e);

static fnode *child(fctx *x, const json_t *e, const char *name)
{
    const json_t *c = json_object_get(e, name);
    return c ? compile(x, c) : NULL;
}

static fnode *c_col(fctx *x, const json_t *e)
{
    const char *name = json_string_value(json_object_get(e, "name"));
    int i = name ? kcolumns_find(x->sc->cols, x->sc->n, name) : -1;
    if (i < 0) return NULL;
    fnode *n = node_new(x, x->sc->out ? F_OUT : F_SRC, x->sc->cols[i].type, NULL, NULL);
    if (n && x->sc->out) n->arg = kcolumns_find(x->sc->out->columns, x->sc->out->ncolumns, name);
    if (n && !x->sc->out) n->arg = i;
    if (n && n->arg < 0) {
        node_free(n);
        return NULL;
    }
    return n;
}

static fnode *c_literal(fctx *x, const json_t *e, const char *kind)
{
    const json_t *v = json_object_get(e, "value");
    fnode *n = NULL;
    if (strcmp(kind, "null") == 0) return null_of(x, KT_NULL);
    if (strcmp(kind, "str") == 0 && json_is_string(v)) {
        n = node_new(x, F_LIT, KT_STRING, NULL, NULL);
        if (n == NULL) return NULL;
        n->lslen = json_string_length(v);
        if ((n->ls = malloc(n->lslen + 1)) == NULL) {
            x->oom = true;
            node_free(n);
            return NULL;
        }
        memcpy(n->ls, json_string_value(v), n->lslen + 1);
    } else if (strcmp(kind, "num") == 0 && json_is_integer(v)) {
        if ((n = node_new(x, F_LIT, KT_INT64, NULL, NULL))) n->li = json_integer_value(v);
    } else if (strcmp(kind, "num") == 0 && json_is_real(v)) {
        if ((n = node_new(x, F_LIT, KT_FLOAT64, NULL, NULL))) n->ld = json_real_value(v);
    } else if (strcmp(kind, "bool") == 0 && json_is_boolean(v)) {
        if ((n = node_new(x, F_LIT, KT_BOOL, NULL, NULL))) n->li = json_is_true(v);
    }
    return n;
}

/* add, sub, mul: int64 when both sides are (overflow: null), else float64;
 * div: float64 (n_arith). */
static fnode *c_arith(fctx *x, const json_t *e, const char *kind)
{
    fnode *l = child(x, e, "left"), *r = child(x, e, "right");
    if (l == NULL || r == NULL || !numeric(l->type) || !numeric(r->type)) {
        node_free(l);
        node_free(r);
        return NULL;
    }
    bool div = strcmp(kind, "div") == 0;
    ktype t = div || l->type == KT_FLOAT64 || r->type == KT_FLOAT64 ? KT_FLOAT64 : KT_INT64;
    l = convert(x, l, t);
    r = convert(x, r, t);
    if (l == NULL || r == NULL) {
        node_free(l);
        node_free(r);
        return NULL;
    }
    fnode *n = node_new(x, F_ARITH, t, l, r);
    if (n) n->arg = div ? '/' : kind[0] == 'a' ? '+' : kind[0] == 's' ? '-' : '*';
    return n;
}

/* Both sides in one type (n_compare); a null side makes a null. A date
 * against a string literal (compared as dates there) is left to DuckDB. */
static fnode *c_compare(fctx *x, const json_t *e, const char *kind)
{
    static const char *const kinds[] = {"eq", "ne", "gt", "lt", "ge", "le"};
    fnode *l = child(x, e, "left"), *r = child(x, e, "right");
    ktype t = KT_NULL;
    bool ok = l && r;
    if (ok && (l->type == KT_NULL || r->type == KT_NULL)) {
        node_free(l);
        node_free(r);
        return null_of(x, KT_BOOL);
    }
    if (ok && numeric(l->type) && numeric(r->type))
        t = l->type == KT_INT64 && r->type == KT_INT64 ? KT_INT64 : KT_FLOAT64;
    else if (ok && l->type == r->type && l->type != KT_TIMESTAMP)
        t = l->type;
    else
        ok = false;
    if (ok) {
        l = convert(x, l, t);
        r = convert(x, r, t);
    }
    if (!ok || l == NULL || r == NULL) {
        node_free(l);
        node_free(r);
        return NULL;
    }
    fnode *n = node_new(x, F_CMP, KT_BOOL, l, r);
    for (int i = 0; n && i < 6; i++)
        if (strcmp(kind, kinds[i]) == 0) n->arg = i;
    return n;
}

/* A child that is a bool already (or null): other inputs are converted by
 * SQL that is left to DuckDB. */
static fnode *bool_child(fctx *x, const json_t *e, const char *name)
{
    fnode *c = child(x, e, name);
    if (c && c->type != KT_BOOL && c->type != KT_NULL) {
        node_free(c);
        return NULL;
    }
    return convert(x, c, KT_BOOL);
}

static fnode *c_logic(fctx *x, const json_t *e, const char *kind)
{
    if (strcmp(kind, "not") == 0) {
        fnode *in = bool_child(x, e, "input");
        return in ? node_new(x, F_NOT, KT_BOOL, in, NULL) : NULL;
    }
    fnode *l = bool_child(x, e, "left"), *r = bool_child(x, e, "right");
    if (l == NULL || r == NULL) {
        node_free(l);
        node_free(r);
        return NULL;
    }
    return node_new(x, strcmp(kind, "and") == 0 ? F_AND : F_OR, KT_BOOL, l, r);
}

static fnode *c_case(fctx *x, const json_t *e, const char *kind)
{
    fnode *in = child(x, e, "input");
    if (in && in->type != KT_STRING && in->type != KT_NULL) {
        node_free(in);
        return NULL;
    }
    in = convert(x, in, KT_STRING);
    fnode *n = in ? node_new(x, F_CASE, KT_STRING, in, NULL) : NULL;
    if (n) n->arg = strcmp(kind, "upper") == 0;
    return n;
}

static fnode *c_from_unix(fctx *x, const json_t *e)
{
    const json_t *unit = json_object_get(e, "unit");
    const char *u = unit ? json_string_value(unit) : "s";
    fnode *in = child(x, e, "input");
    if (u == NULL || (strcmp(u, "s") != 0 && strcmp(u, "ms") != 0) || in == NULL ||
        (in->type != KT_INT64 && in->type != KT_FLOAT64 && in->type != KT_NULL)) {
        node_free(in);
        return NULL;
    }
    if (in->type == KT_NULL) {
        node_free(in);
        return null_of(x, KT_DATE);
    }
    fnode *n = node_new(x, F_UNIX, KT_DATE, in, NULL);
    if (n) n->arg = strcmp(u, "ms") == 0 ? 1 : 1000;
    return n;
}

static fnode *compile(fctx *x, const json_t *e)
{
    const char *kind = json_string_value(json_object_get(e, "kind"));
    if (kind == NULL || x->oom || x->depth >= MAX_DEPTH) return NULL;
    x->depth++;
    fnode *n = NULL;
    if (strcmp(kind, "col") == 0)
        n = c_col(x, e);
    else if (!strcmp(kind, "str") || !strcmp(kind, "num") || !strcmp(kind, "bool") ||
             !strcmp(kind, "null"))
        n = c_literal(x, e, kind);
    else if (!strcmp(kind, "add") || !strcmp(kind, "sub") || !strcmp(kind, "mul") ||
             !strcmp(kind, "div"))
        n = c_arith(x, e, kind);
    else if (!strcmp(kind, "eq") || !strcmp(kind, "ne") || !strcmp(kind, "gt") ||
             !strcmp(kind, "lt") || !strcmp(kind, "ge") || !strcmp(kind, "le"))
        n = c_compare(x, e, kind);
    else if (!strcmp(kind, "and") || !strcmp(kind, "or") || !strcmp(kind, "not"))
        n = c_logic(x, e, kind);
    else if (!strcmp(kind, "upper") || !strcmp(kind, "lower"))
        n = c_case(x, e, kind);
    else if (strcmp(kind, "from_unix") == 0)
        n = c_from_unix(x, e);
    x->depth--;
    return n;
}

static bool checked(const kcolumn *cols, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cols[i].not_null || cols[i].has_min || cols[i].has_max) return true;
    return false;
}

void kfast_free(kfast *p)
{
    if (p == NULL) return;
    node_free(p->filter);
    for (size_t m = 0; p->maps && m < p->nmaps; m++) {
        for (size_t i = 0; p->maps[m].cols && i < p->t->ncolumns; i++)
            node_free(p->maps[m].cols[i]);
        free(p->maps[m].cols);
        node_free(p->maps[m].where);
    }
    free(p->maps);
    free(p);
}

/* The mapping's column expressions (each converted to its table column's
 * type) and its where, or false. */
static bool plan_mapping(fctx *x, const kmapping *m, fmapping *out)
{
    const ktable *t = m->table;
    fscope src = {m->source->columns, m->source->ncolumns, NULL};
    out->index = (int32_t)m->index;
    if ((out->cols = calloc(t->ncolumns + 1, sizeof *out->cols)) == NULL) {
        x->oom = true;
        return false;
    }
    for (size_t i = 0; i < t->ncolumns; i++) {
        const kmapcol *mc = NULL;
        for (size_t j = 0; j < m->ncolumns; j++)
            if (m->columns[j].table_column == (int)i) mc = &m->columns[j];
        x->sc = &src;
        out->cols[i] = mc ? convert(x, compile(x, mc->expr), t->columns[i].type)
                          : null_of(x, t->columns[i].type);
        if (out->cols[i] == NULL) return false;
    }
    if (m->where == NULL) return true;
    kcolumn *outs = calloc(m->ncolumns + 1, sizeof *outs);
    if (outs == NULL) {
        x->oom = true;
        return false;
    }
    fscope tab = {outs, kmapping_outputs(m, outs), t};
    x->sc = &tab;
    fnode *w = compile(x, m->where);
    free(outs);
    if (w && w->type != KT_BOOL && w->type != KT_NULL) {
        node_free(w);
        return false;
    }
    out->where = convert(x, w, KT_BOOL);
    return out->where != NULL;
}

kfast *kfast_plan(const kconfig *c, const ktable *t, const ksource *s, bool *oom)
{
    *oom = false;
    if (checked(t->columns, t->ncolumns) || checked(s->columns, s->ncolumns)) return NULL;
    kfast *p = calloc(1, sizeof *p);
    fctx x = {0};
    if (p == NULL || (p->maps = calloc(c->nmappings + 1, sizeof *p->maps)) == NULL) {
        free(p);
        *oom = true;
        return NULL;
    }
    p->t = t;
    p->s = s;
    bool ok = true;
    for (size_t i = 0; ok && i < c->nmappings; i++) {
        const kmapping *m = &c->mappings[i];
        if (m->table != t || m->source != s) continue;
        ok = plan_mapping(&x, m, &p->maps[p->nmaps++]);
    }
    if (ok && s->record_filter) {
        fscope src = {s->columns, s->ncolumns, NULL};
        x.sc = &src;
        p->filter = compile(&x, s->record_filter);
        if (p->filter && p->filter->type != KT_BOOL && p->filter->type != KT_NULL) ok = false;
        p->filter = convert(&x, p->filter, KT_BOOL);
        ok = ok && p->filter != NULL;
    }
    if (!ok || p->nmaps == 0 || x.oom) {
        *oom = x.oom;
        kfast_free(p);
        return NULL;
    }
    return p;
}

/* ---- evaluating a batch ---- */

typedef struct kstr {
    const char *p;
    int64_t n;
} kstr;

typedef struct fvec {
    uint8_t *nul; /* 1: null */
    int64_t *i;   /* int64, bool (0, 1), date (days) */
    double *d;    /* float64 */
    kstr *s;      /* strings */
    char *heap;   /* the bytes of strings made here */
    bool borrowed;
} fvec;

typedef struct fenv {
    const kbatch *b;
    const int *src; /* the batch column of each source column */
    fvec *outs;     /* per table column: the mapping's values (for where) */
    int64_t n;
    int status; /* 0; 1: to DuckDB; -1: out of memory */
} fenv;

static void vec_free(fvec *v)
{
    if (!v->borrowed) {
        free(v->nul);
        free(v->i);
        free(v->d);
        free(v->s);
        free(v->heap);
    }
    memset(v, 0, sizeof *v);
}

static bool vec_alloc(fenv *e, fvec *v, ktype t)
{
    memset(v, 0, sizeof *v);
    size_t n = (size_t)e->n + 1;
    v->nul = calloc(n, 1);
    bool ok = v->nul != NULL;
    if (ok && t == KT_FLOAT64)
        ok = (v->d = malloc(n * sizeof *v->d)) != NULL;
    else if (ok && t == KT_STRING)
        ok = (v->s = malloc(n * sizeof *v->s)) != NULL;
    else if (ok)
        ok = (v->i = malloc(n * sizeof *v->i)) != NULL;
    if (!ok) {
        vec_free(v);
        e->status = -1;
    }
    return ok;
}

/* Column bc of the batch, which must be of the Arrow type the reader gives
 * values of type t. */
static void eval_src(fenv *e, int bc, ktype t, fvec *v)
{
    const struct ArrowSchema *sch = bc >= 0 ? e->b->schema.children[bc] : NULL;
    const char *f = sch ? sch->format : "";
    bool fits = t == KT_STRING    ? !strcmp(f, "u") || !strcmp(f, "U")
                : t == KT_INT64   ? !strcmp(f, "l")
                : t == KT_FLOAT64 ? !strcmp(f, "g")
                : t == KT_BOOL    ? !strcmp(f, "b")
                : t == KT_DATE    ? !strcmp(f, "tdD")
                                  : false;
    if (!fits) {
        e->status = 1;
        return;
    }
    if (!vec_alloc(e, v, t)) return;
    const struct ArrowArray *a = e->b->array.children[bc];
    int64_t at = e->b->array.offset + a->offset, n = e->n;
    const uint8_t *bits = a->null_count != 0 && a->n_buffers > 0 ? a->buffers[0] : NULL;
    for (int64_t r = 0; bits && r < n; r++)
        v->nul[r] = !((bits[(at + r) >> 3] >> ((at + r) & 7)) & 1);
    const void *d = a->buffers[1];
    const char *bytes = t == KT_STRING ? a->buffers[2] : NULL;
    if (t == KT_STRING && f[0] == 'u') {
        const int32_t *off = (const int32_t *)d + at;
        for (int64_t r = 0; r < n; r++) v->s[r] = (kstr){bytes + off[r], off[r + 1] - off[r]};
    } else if (t == KT_STRING) {
        const int64_t *off = (const int64_t *)d + at;
        for (int64_t r = 0; r < n; r++) v->s[r] = (kstr){bytes + off[r], off[r + 1] - off[r]};
    } else if (t == KT_INT64) {
        memcpy(v->i, (const int64_t *)d + at, (size_t)n * sizeof *v->i);
    } else if (t == KT_FLOAT64) {
        memcpy(v->d, (const double *)d + at, (size_t)n * sizeof *v->d);
    } else if (t == KT_BOOL) {
        const uint8_t *vb = d;
        for (int64_t r = 0; r < n; r++) v->i[r] = (vb[(at + r) >> 3] >> ((at + r) & 7)) & 1;
    } else {
        const int32_t *days = (const int32_t *)d + at;
        for (int64_t r = 0; r < n; r++) v->i[r] = days[r];
    }
}

static void eval_lit(fenv *e, const fnode *nd, fvec *v)
{
    ktype t = nd->type == KT_NULL ? KT_INT64 : nd->type;
    if (!vec_alloc(e, v, t)) return;
    for (int64_t r = 0; r < e->n; r++) {
        v->nul[r] = nd->null;
        if (t == KT_STRING)
            v->s[r] = (kstr){nd->ls ? nd->ls : "", (int64_t)nd->lslen};
        else if (t == KT_FLOAT64)
            v->d[r] = nd->ld;
        else
            v->i[r] = nd->li;
    }
}

static void eval(fenv *e, const fnode *nd, fvec *v);

/* Evaluates both children; false when that failed (both freed). */
static bool eval2(fenv *e, const fnode *nd, fvec *a, fvec *b)
{
    eval(e, nd->a, a);
    if (e->status == 0) eval(e, nd->b, b);
    if (e->status == 0) return true;
    vec_free(a);
    vec_free(b);
    return false;
}

static void eval_arith(fenv *e, const fnode *nd, fvec *v)
{
    fvec a = {0}, b = {0};
    if (!eval2(e, nd, &a, &b) || !vec_alloc(e, v, nd->type)) goto done;
    for (int64_t r = 0; r < e->n && e->status == 0; r++) {
        v->nul[r] = a.nul[r] || b.nul[r];
        if (v->nul[r]) continue;
        if (nd->type == KT_INT64) { /* exact, then checked: overflow is null */
            int64_t x = a.i[r], y = b.i[r];
            bool over = nd->arg == '+'   ? __builtin_add_overflow(x, y, &v->i[r])
                        : nd->arg == '-' ? __builtin_sub_overflow(x, y, &v->i[r])
                                         : __builtin_mul_overflow(x, y, &v->i[r]);
            v->nul[r] = over;
            continue;
        }
        double x = a.d[r], y = b.d[r];
        double z = nd->arg == '+' ? x + y : nd->arg == '-' ? x - y : nd->arg == '*' ? x * y : x / y;
        if (!isfinite(z)) e->status = 1; /* inf, NaN: DuckDB's own rules */
        v->d[r] = z;
    }
    if (e->status != 0) vec_free(v);
done:
    vec_free(&a);
    vec_free(&b);
}

static int cmp_str(kstr a, kstr b)
{
    int64_t n = a.n < b.n ? a.n : b.n;
    int c = n ? memcmp(a.p, b.p, (size_t)n) : 0;
    return c ? (c > 0) - (c < 0) : (a.n > b.n) - (a.n < b.n);
}

/* Whether each comparison holds for a three-way result of -1, 0, 1 (+1). */
static const int8_t WANT[6][3] = {{0, 1, 0}, {1, 0, 1}, {0, 0, 1}, {1, 0, 0}, {0, 1, 1}, {1, 1, 0}};

static void eval_cmp(fenv *e, const fnode *nd, fvec *v)
{
    fvec a = {0}, b = {0};
    ktype t = nd->a->type;
    if (!eval2(e, nd, &a, &b) || !vec_alloc(e, v, KT_BOOL)) goto done;
    const int8_t *want = WANT[nd->arg];
    for (int64_t r = 0; r < e->n; r++) v->nul[r] = a.nul[r] | b.nul[r];
    if (t == KT_STRING) {
        for (int64_t r = 0; r < e->n; r++)
            v->i[r] = v->nul[r] ? 0 : want[cmp_str(a.s[r], b.s[r]) + 1];
    } else if (t == KT_FLOAT64) {
        for (int64_t r = 0; r < e->n; r++) {
            double x = a.d[r], y = b.d[r];
            if (!v->nul[r] && (isnan(x) || isnan(y))) e->status = 1; /* DuckDB orders NaN last */
            v->i[r] = want[(x > y) - (x < y) + 1];
        }
    } else {
        for (int64_t r = 0; r < e->n; r++)
            v->i[r] = want[(a.i[r] > b.i[r]) - (a.i[r] < b.i[r]) + 1];
    }
    if (e->status != 0) vec_free(v);
done:
    vec_free(&a);
    vec_free(&b);
}

/* SQL's three-valued and, or and not. */
static void eval_logic(fenv *e, const fnode *nd, fvec *v)
{
    fvec a = {0}, b = {0};
    if (nd->op == F_NOT) {
        eval(e, nd->a, &a);
        if (e->status == 0 && vec_alloc(e, v, KT_BOOL))
            for (int64_t r = 0; r < e->n; r++) {
                v->nul[r] = a.nul[r];
                v->i[r] = !a.i[r];
            }
        vec_free(&a);
        return;
    }
    if (!eval2(e, nd, &a, &b) || !vec_alloc(e, v, KT_BOOL)) goto done;
    bool and = nd->op == F_AND;
    for (int64_t r = 0; r < e->n; r++) {
        bool x = !a.nul[r] && a.i[r], y = !b.nul[r] && b.i[r];
        bool xf = !a.nul[r] && !a.i[r], yf = !b.nul[r] && !b.i[r];
        if (and) {
            v->nul[r] = !(xf || yf) && (a.nul[r] || b.nul[r]);
            v->i[r] = x && y;
        } else {
            v->nul[r] = !(x || y) && (a.nul[r] || b.nul[r]);
            v->i[r] = x || y;
        }
    }
done:
    vec_free(&a);
    vec_free(&b);
}

/* upper and lower of ASCII text; other text goes to DuckDB (Unicode rules). */
static void eval_case(fenv *e, const fnode *nd, fvec *v)
{
    fvec a = {0};
    eval(e, nd->a, &a);
    if (e->status != 0 || !vec_alloc(e, v, KT_STRING)) goto done;
    size_t total = 1;
    for (int64_t r = 0; r < e->n; r++)
        if (!a.nul[r]) total += (size_t)a.s[r].n;
    if ((v->heap = malloc(total)) == NULL) {
        e->status = -1;
        goto done;
    }
    char *at = v->heap;
    for (int64_t r = 0; r < e->n && e->status == 0; r++) {
        v->nul[r] = a.nul[r];
        v->s[r] = (kstr){at, 0};
        if (a.nul[r]) continue;
        const unsigned char *p = (const unsigned char *)a.s[r].p;
        for (int64_t k = 0; k < a.s[r].n; k++) {
            unsigned char ch = p[k];
            if (ch >= 0x80) {
                e->status = 1;
                break;
            }
            if (nd->arg && ch >= 'a' && ch <= 'z') ch = (unsigned char)(ch - 32);
            if (!nd->arg && ch >= 'A' && ch <= 'Z') ch = (unsigned char)(ch + 32);
            at[k] = (char)ch;
        }
        v->s[r].n = a.s[r].n;
        at += a.s[r].n;
    }
done:
    if (e->status != 0) vec_free(v);
    vec_free(&a);
}

/* Whole milliseconds (a fraction cut toward zero), then the UTC day; out of
 * int64 or of years 1 to 9999: null (n_from_unix). */
static void eval_unix(fenv *e, const fnode *nd, fvec *v)
{
    fvec a = {0};
    eval(e, nd->a, &a);
    if (e->status != 0 || !vec_alloc(e, v, KT_DATE)) goto done;
    for (int64_t r = 0; r < e->n && e->status == 0; r++) {
        int64_t ms = 0;
        bool null = a.nul[r];
        if (!null && nd->a->type == KT_INT64) {
            null = __builtin_mul_overflow(a.i[r], (int64_t)nd->arg, &ms);
        } else if (!null) {
            double x = a.d[r] * (double)nd->arg;
            if (!isfinite(a.d[r]) || !isfinite(x)) e->status = 1;
            x = trunc(x);
            null = !(x >= -9223372036854775808.0 && x < 9223372036854775808.0);
            if (!null) ms = (int64_t)x;
        }
        null = null || ms < MIN_MILLIS || ms > MAX_MILLIS;
        v->nul[r] = null;
        v->i[r] = null ? 0 : ms / MILLIS_PER_DAY - (ms % MILLIS_PER_DAY < 0);
    }
    if (e->status != 0) vec_free(v);
done:
    vec_free(&a);
}

static void eval(fenv *e, const fnode *nd, fvec *v)
{
    memset(v, 0, sizeof *v);
    switch (nd->op) {
    case F_SRC:
        eval_src(e, e->src[nd->arg], nd->type, v);
        break;
    case F_OUT:
        *v = e->outs[nd->arg];
        v->borrowed = true;
        break;
    case F_LIT:
        eval_lit(e, nd, v);
        break;
    case F_ARITH:
        eval_arith(e, nd, v);
        break;
    case F_CMP:
        eval_cmp(e, nd, v);
        break;
    case F_AND:
    case F_OR:
    case F_NOT:
        eval_logic(e, nd, v);
        break;
    case F_CASE:
        eval_case(e, nd, v);
        break;
    case F_UNIX:
        eval_unix(e, nd, v);
        break;
    case F_FLOAT: {
        fvec a = {0};
        eval(e, nd->a, &a);
        if (e->status == 0 && vec_alloc(e, v, KT_FLOAT64))
            for (int64_t r = 0; r < e->n; r++) {
                v->nul[r] = a.nul[r];
                v->d[r] = (double)a.i[r];
            }
        vec_free(&a);
        break;
    }
    }
}

/* ---- building the rows kept ---- */

static uint8_t *validity(const fvec *v, const int64_t *sel, int64_t k, int64_t *nulls)
{
    *nulls = 0;
    for (int64_t j = 0; j < k; j++) *nulls += v->nul[sel[j]];
    if (*nulls == 0) return NULL;
    uint8_t *bits = calloc((size_t)(k + 7) / 8 + 1, 1);
    for (int64_t j = 0; bits && j < k; j++)
        if (!v->nul[sel[j]]) bits[j >> 3] |= (uint8_t)(1u << (j & 7));
    return bits;
}

/* Rows sel[0..k) of v as an Arrow array of type t (text as large utf8, the
 * table's storage type); -1 when out of memory. */
static int build(const fvec *v, ktype t, const int64_t *sel, int64_t k, struct ArrowArray *out)
{
    int64_t nulls;
    uint8_t *bits = validity(v, sel, k, &nulls);
    if (nulls && bits == NULL) return -1;
    if (!karray_new(out, k, t == KT_STRING ? 3 : 2, 0)) {
        free(bits);
        return -1;
    }
    out->null_count = nulls;
    karray_set_buffer(out, 0, bits);
    void *data = NULL;
    if (t == KT_STRING) {
        int64_t total = 0;
        for (int64_t j = 0; j < k; j++) total += v->nul[sel[j]] ? 0 : v->s[sel[j]].n;
        int64_t *off = malloc((size_t)(k + 1) * sizeof *off);
        char *bytes = malloc((size_t)total + 1);
        karray_set_buffer(out, 1, off);
        karray_set_buffer(out, 2, bytes);
        if (off == NULL || bytes == NULL) return -1;
        int64_t at = 0;
        for (int64_t j = 0; j < k; j++) {
            off[j] = at;
            if (v->nul[sel[j]]) continue;
            memcpy(bytes + at, v->s[sel[j]].p, (size_t)v->s[sel[j]].n);
            at += v->s[sel[j]].n;
        }
        off[k] = at;
        return 0;
    }
    if (t == KT_BOOL) {
        uint8_t *b = calloc((size_t)(k + 7) / 8 + 1, 1);
        for (int64_t j = 0; b && j < k; j++)
            if (v->i[sel[j]]) b[j >> 3] |= (uint8_t)(1u << (j & 7));
        data = b;
    } else if (t == KT_DATE) {
        int32_t *d = malloc((size_t)(k + 1) * sizeof *d);
        for (int64_t j = 0; d && j < k; j++) d[j] = (int32_t)v->i[sel[j]];
        data = d;
    } else if (t == KT_FLOAT64) {
        double *d = malloc((size_t)(k + 1) * sizeof *d);
        for (int64_t j = 0; d && j < k; j++) d[j] = v->d[sel[j]];
        data = d;
    } else {
        int64_t *d = malloc((size_t)(k + 1) * sizeof *d);
        for (int64_t j = 0; d && j < k; j++) d[j] = v->i[sel[j]];
        data = d;
    }
    karray_set_buffer(out, 1, data);
    return data ? 0 : -1;
}

/* The columns around the table's: the mapping, the row number, and the
 * violation (none: no column here has an assertion). */
static int build_extra(const fmapping *fm, const fvec *rows, const int64_t *sel, int64_t k,
                       struct ArrowArray **ch, size_t ncols)
{
    int32_t *m = malloc((size_t)(k + 1) * sizeof *m);
    if (!karray_new(ch[0], k, 2, 0)) {
        free(m);
        return -1;
    }
    karray_set_buffer(ch[0], 1, m);
    for (int64_t j = 0; m && j < k; j++) m[j] = fm->index;
    int rc = m ? build(rows, KT_INT64, sel, k, ch[1]) : -1;
    struct ArrowArray *viol = ch[ncols - 1];
    if (rc != 0 || !karray_new(viol, k, 3, 0)) return rc ? rc : -1;
    uint8_t *bits = calloc((size_t)(k + 7) / 8 + 1, 1);
    int32_t *off = calloc((size_t)(k + 1), sizeof *off);
    karray_set_buffer(viol, 0, bits);
    karray_set_buffer(viol, 1, off);
    karray_set_buffer(viol, 2, calloc(1, 1));
    viol->null_count = k;
    return bits && off ? 0 : -1;
}

static bool output_schema(const ktable *t, struct ArrowSchema *out)
{
    size_t n = t->ncolumns + 3;
    const char **formats = calloc(n, sizeof *formats), **names = calloc(n, sizeof *names);
    bool ok = formats && names;
    if (ok) {
        formats[0] = "i", names[0] = KARET_COL_MAPPING;
        formats[1] = "l", names[1] = KARET_COL_ROW;
        for (size_t i = 0; i < t->ncolumns; i++) {
            formats[i + 2] = ktype_arrow_as(t->columns[i].type, true);
            names[i + 2] = t->columns[i].name;
        }
        formats[n - 1] = "u", names[n - 1] = KARET_COL_VIOLATION;
        ok = kschema_struct(out, formats, names, n);
    }
    free(formats);
    free(names);
    return ok;
}

/* The batch of the rows of one mapping that its where and the record
 * filter keep (an empty one: no batch). */
static int map_batch(const kfast *p, const fmapping *fm, fenv *e, const fvec *keep,
                     const fvec *rows, kbatches *out)
{
    const ktable *t = p->t;
    fvec where = {0};
    int64_t *sel = malloc((size_t)(e->n + 1) * sizeof *sel), k = 0;
    if (sel == NULL) return -1;
    for (size_t i = 0; i < t->ncolumns && e->status == 0; i++) eval(e, fm->cols[i], &e->outs[i]);
    if (e->status == 0 && fm->where) eval(e, fm->where, &where);
    for (int64_t r = 0; e->status == 0 && r < e->n; r++)
        if ((keep == NULL || (!keep->nul[r] && keep->i[r])) &&
            (fm->where == NULL || (!where.nul[r] && where.i[r])))
            sel[k++] = r;
    int rc = e->status;
    kbatch b = {0};
    if (rc == 0 && k > 0) {
        size_t ncols = t->ncolumns + 3;
        if (!output_schema(t, &b.schema) || !karray_new(&b.array, k, 1, (int64_t)ncols)) rc = -1;
        if (rc == 0) rc = build_extra(fm, rows, sel, k, b.array.children, ncols);
        for (size_t i = 0; rc == 0 && i < t->ncolumns; i++)
            rc = build(&e->outs[i], t->columns[i].type, sel, k, b.array.children[i + 2]);
        if (rc == 0 && !kbatches_push(out, &b)) rc = -1;
    }
    kbatch_release(&b);
    vec_free(&where);
    for (size_t i = 0; i < t->ncolumns; i++) vec_free(&e->outs[i]);
    free(sel);
    return rc;
}

int kfast_map(const kfast *p, const kbatches *rows, kbatches *out)
{
    const ksource *s = p->s;
    int *src = calloc(s->ncolumns + 1, sizeof *src);
    fvec *outs = calloc(p->t->ncolumns + 1, sizeof *outs);
    kbatches done = {0};
    int rc = src && outs ? 0 : -1;
    /* Mapping by mapping, each over the whole file: the order of the
     * mapping query's ORDER BY (mapping, row). */
    for (size_t m = 0; rc == 0 && m < p->nmaps; m++)
        for (size_t i = 0; rc == 0 && i < rows->len; i++) {
            const kbatch *b = &rows->items[i];
            fenv e = {.b = b, .src = src, .outs = outs, .n = b->array.length};
            for (size_t c = 0; c < s->ncolumns; c++)
                src[c] = kbatch_column(&b->schema, s->columns[c].name);
            fvec keep = {0}, num = {0};
            int rc_col = kbatch_column(&b->schema, KARET_COL_ROW);
            eval_src(&e, rc_col, KT_INT64, &num);
            if (e.status == 0 && p->filter) eval(&e, p->filter, &keep);
            rc = e.status ? e.status
                          : map_batch(p, &p->maps[m], &e, p->filter ? &keep : NULL, &num, &done);
            vec_free(&keep);
            vec_free(&num);
        }
    for (size_t i = 0; rc == 0 && i < done.len; i++)
        if (!kbatches_push(out, &done.items[i])) rc = -1;
    if (rc == 0) done.len = 0;
    kbatches_free(&done);
    free(src);
    free(outs);
    return rc;
}
