/* Type-checking and compiling expression trees to DuckDB SQL. Each node's
 * SQL is built in its own buffer and wrapped by its parent, with explicit
 * casts wherever types meet. */
#include "expr.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64
/* Milliseconds of 0001-01-01 and of 9999-12-31 23:59:59.999 since 1970. */
#define MIN_MILLIS "-62135596800000"
#define MAX_MILLIS "253402300799999"

typedef ktype (*node_fn)(kexpr_ctx *x, const json_t *node, kbuf *out);

static void problem(kexpr_ctx *x, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void problem(kexpr_ctx *x, const char *kind, const char *fmt, ...)
{
    x->failed = true;
    if (x->ps == NULL) return;
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kproblem(x->ps, &x->path, kind, "%s", msg);
}

/* ---- conversions ---- */

bool kexpr_can_convert(ktype from, ktype to)
{
    if (from == to || from == KT_NULL || to == KT_STRING) return true;
    switch (to) {
    case KT_INT64:
    case KT_FLOAT64:
    case KT_BOOL:
        return from == KT_STRING || from == KT_INT64 || from == KT_FLOAT64 || from == KT_BOOL;
    case KT_DATE:
        return from == KT_STRING;
    default:
        return false;
    }
}

static void trimmed(kbuf *out, const char *sql)
{
    kbuf_printf(out, "trim(%s, %s)", sql, KARET_SQL_WS);
}

static void string_to(kbuf *out, const char *s, ktype to)
{
    switch (to) {
    case KT_INT64:
        kbuf_puts(out, "(CASE WHEN regexp_full_match(");
        trimmed(out, s);
        kbuf_puts(out, ", '[+-]?[0-9]+') THEN TRY_CAST(");
        trimmed(out, s);
        kbuf_puts(out, " AS BIGINT) END)");
        break;
    case KT_FLOAT64: /* decimal text (overflow: null), or inf, infinity, nan */
        kbuf_puts(out, "(CASE WHEN regexp_full_match(");
        trimmed(out, s);
        kbuf_puts(out, ", '[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)?') THEN "
                       "nullif(nullif(TRY_CAST(");
        trimmed(out, s);
        kbuf_puts(out, " AS DOUBLE), CAST('inf' AS DOUBLE)), CAST('-inf' AS DOUBLE)) WHEN "
                       "regexp_full_match(");
        trimmed(out, s);
        kbuf_puts(out, ", '(?i)[+-]?(inf|infinity|nan)') THEN TRY_CAST(");
        trimmed(out, s);
        kbuf_puts(out, " AS DOUBLE) END)");
        break;
    case KT_BOOL:
        kbuf_puts(out, "(CASE lower(");
        trimmed(out, s);
        kbuf_puts(out, ") WHEN 'true' THEN true WHEN '1' THEN true WHEN 'false' THEN false "
                       "WHEN '0' THEN false END)");
        break;
    case KT_DATE:
        kbuf_puts(out, "(CASE WHEN regexp_full_match(");
        trimmed(out, s);
        kbuf_puts(out, ", '[0-9]{4}-[0-9]{2}-[0-9]{2}') AND NOT starts_with(");
        trimmed(out, s);
        kbuf_puts(out, ", '0000') THEN TRY_CAST(");
        trimmed(out, s);
        kbuf_puts(out, " AS DATE) END)");
        break;
    default:
        break;
    }
}

static void to_string(kbuf *out, const char *s, ktype from)
{
    switch (from) {
    case KT_BOOL:
        kbuf_printf(out, "(CASE %s WHEN true THEN 'true' WHEN false THEN 'false' END)", s);
        break;
    case KT_DATE:
        kbuf_printf(out, "strftime(%s, '%%Y-%%m-%%d')", s);
        break;
    case KT_FLOAT64: /* the shortest text that reads back; NaN, inf, -inf; zero unsigned */
        kbuf_printf(out,
                    "(CASE WHEN isnan(%s) THEN 'NaN' WHEN %s = 0 THEN '0.0' ELSE CAST(%s AS "
                    "VARCHAR) END)",
                    s, s, s);
        break;
    default:
        kbuf_printf(out, "CAST(%s AS VARCHAR)", s);
        break;
    }
}

void kexpr_convert(kbuf *out, const char *sql, ktype from, ktype to)
{
    if (from == to) {
        kbuf_puts(out, sql);
    } else if (from == KT_NULL) {
        kbuf_printf(out, "CAST(NULL AS %s)", ktype_sql(to));
    } else if (to == KT_STRING) {
        to_string(out, sql, from);
    } else if (from == KT_STRING) {
        string_to(out, sql, to);
    } else if (to == KT_INT64 && from == KT_FLOAT64) {
        kbuf_printf(
            out,
            "(CASE WHEN isfinite(%s) AND %s >= CAST('-9223372036854775808' AS DOUBLE) AND "
            "%s < CAST('9223372036854775808' AS DOUBLE) THEN CAST(trunc(%s) AS BIGINT) END)",
            sql, sql, sql, sql);
    } else if (to == KT_BOOL && from == KT_FLOAT64) {
        kbuf_printf(out, "(CASE WHEN isnan(%s) THEN NULL ELSE %s <> 0 END)", sql, sql);
    } else if (to == KT_BOOL && from == KT_INT64) {
        kbuf_printf(out, "(%s <> 0)", sql);
    } else {
        kbuf_printf(out, "CAST(%s AS %s)", sql, ktype_sql(to));
    }
}

/* ---- helpers ---- */

static const char *kind_of(const json_t *node)
{
    return json_string_value(json_object_get(node, "kind"));
}

static bool check_fields(kexpr_ctx *x, const json_t *node, const char *const *fields)
{
    const char *key;
    json_t *v;
    bool ok = true;
    json_object_foreach((json_t *)node, key, v)
    {
        (void)v;
        bool known = strcmp(key, "kind") == 0;
        for (const char *const *f = fields; *f && !known; f++) known = strcmp(key, *f) == 0;
        if (!known) {
            x->failed = true;
            if (x->ps) {
                const char *kind = kind_of(node);
                kproblem_at(x->ps, &x->path, key, KP_UNKNOWN, "unknown field \"%s\" in a %s node",
                            key, kind);
            }
            ok = false;
        }
    }
    return ok;
}

/* Compiles child `field` of node (an object member, or with index >= 0 an
 * element of the array member). */
static ktype child(kexpr_ctx *x, const json_t *node, const char *field, long index, kbuf *out)
{
    const json_t *c = json_object_get(node, field);
    size_t old = kpath_push(&x->path, field);
    if (index >= 0) {
        c = json_array_get(c, (size_t)index);
        kpath_push_index(&x->path, (size_t)index);
    }
    ktype t = KT_NULL;
    if (c == NULL) {
        problem(x, KP_MISSING, "a %s node needs \"%s\"", kind_of(node), field);
        kbuf_puts(out, "NULL");
    } else {
        t = kexpr_compile(x, c, out);
    }
    kpath_pop(&x->path, old);
    return t;
}

/* Compiles child `field` and converts it to `to`. */
static ktype child_as(kexpr_ctx *x, const json_t *node, const char *field, long index, ktype to,
                      kbuf *out)
{
    kbuf tmp = {0};
    ktype t = child(x, node, field, index, &tmp);
    kexpr_convert(out, kbuf_cstr(&tmp), t, to);
    kbuf_free(&tmp);
    return t;
}

static bool numeric(ktype t)
{
    return t == KT_INT64 || t == KT_FLOAT64 || t == KT_NULL;
}

/* The common type of two branches, or -1. */
static int unify(ktype a, ktype b)
{
    if (a == b || b == KT_NULL) return (int)a;
    if (a == KT_NULL) return (int)b;
    if (numeric(a) && numeric(b)) return KT_FLOAT64;
    return -1;
}

/* A required field that must be a JSON value of a given shape. */
static const json_t *field(kexpr_ctx *x, const json_t *node, const char *name, bool required)
{
    const json_t *v = json_object_get(node, name);
    if (v == NULL && required) {
        x->failed = true;
        if (x->ps)
            kproblem_at(x->ps, &x->path, name, KP_MISSING, "a %s node needs \"%s\"", kind_of(node),
                        name);
    }
    return v;
}

static void field_problem(kexpr_ctx *x, const char *name, const char *fmt, const char *arg)
{
    size_t old = kpath_push(&x->path, name);
    problem(x, KP_EXPRESSION, fmt, arg);
    kpath_pop(&x->path, old);
}

/* ---- leaves ---- */

static ktype n_col(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    static const char *const f[] = {"name", NULL};
    check_fields(x, node, f);
    const json_t *name = field(x, node, "name", true);
    if (name == NULL) return KT_NULL;
    if (!json_is_string(name)) {
        field_problem(x, "name", "a column name must be a string%s", "");
        return KT_NULL;
    }
    const char *s = json_string_value(name);
    int i = x->scope ? kcolumns_find(x->scope->columns, x->scope->ncolumns, s) : -1;
    if (i < 0) {
        size_t old = kpath_push(&x->path, "name");
        problem(x, KP_DANGLING, "no column \"%s\" in %s", s,
                x->scope ? x->scope->what : "this scope");
        kpath_pop(&x->path, old);
        kbuf_puts(out, "NULL");
        return KT_NULL;
    }
    if (x->scope->relation) {
        ksql_ident(out, x->scope->relation);
        kbuf_putc(out, '.');
    }
    ksql_ident(out, s);
    return x->scope->columns[i].type;
}

static ktype n_str(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    static const char *const f[] = {"value", NULL};
    check_fields(x, node, f);
    const json_t *v = field(x, node, "value", true);
    if (v && !json_is_string(v)) field_problem(x, "value", "a str value must be a string%s", "");
    kbuf_puts(out, "CAST(");
    ksql_string(out, json_is_string(v) ? json_string_value(v) : "");
    kbuf_puts(out, " AS VARCHAR)");
    return KT_STRING;
}

static ktype n_num(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    static const char *const f[] = {"value", NULL};
    check_fields(x, node, f);
    const json_t *v = field(x, node, "value", true);
    if (json_is_integer(v)) {
        ksql_int(out, (long long)json_integer_value(v));
        return KT_INT64;
    }
    if (v && !json_is_real(v)) field_problem(x, "value", "a num value must be a number%s", "");
    ksql_double(out, json_is_real(v) ? json_real_value(v) : 0);
    return KT_FLOAT64;
}

static ktype n_bool(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    static const char *const f[] = {"value", NULL};
    check_fields(x, node, f);
    const json_t *v = field(x, node, "value", true);
    if (v && !json_is_boolean(v))
        field_problem(x, "value", "a bool value must be true or false%s", "");
    kbuf_puts(out, json_is_true(v) ? "true" : "false");
    return KT_BOOL;
}

static ktype n_null(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    static const char *const f[] = {NULL};
    check_fields(x, node, f);
    kbuf_puts(out, "NULL");
    return KT_NULL;
}

/* ---- operators ---- */

static const char *const LR[] = {"left", "right", NULL};
static const char *const INPUT[] = {"input", NULL};

/* A HUGEINT value as BIGINT, null when out of range. */
static void in_int64(kbuf *out, const char *sql)
{
    kbuf_printf(out,
                "(CASE WHEN %s BETWEEN -9223372036854775808 AND 9223372036854775807 THEN CAST(%s "
                "AS BIGINT) END)",
                sql, sql);
}

static ktype n_arith(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    check_fields(x, node, LR);
    const char *kind = kind_of(node);
    kbuf l = {0}, r = {0};
    ktype lt = child(x, node, "left", -1, &l), rt = child(x, node, "right", -1, &r);
    ktype t = KT_FLOAT64;
    if (!numeric(lt) || !numeric(rt)) {
        problem(x, KP_EXPRESSION, "%s needs numbers, not %s and %s (use cast)", kind,
                ktype_name(lt), ktype_name(rt));
    } else if (strcmp(kind, "div") != 0 && lt != KT_FLOAT64 && rt != KT_FLOAT64) {
        t = KT_INT64;
    }
    kbuf a = {0}, b = {0}, e = {0};
    kexpr_convert(&a, kbuf_cstr(&l), lt, t);
    kexpr_convert(&b, kbuf_cstr(&r), rt, t);
    if (strcmp(kind, "div") == 0) {
        kbuf_printf(&e, "(%s / %s)", kbuf_cstr(&a), kbuf_cstr(&b));
    } else {
        const char *op = strcmp(kind, "add") == 0 ? "+" : strcmp(kind, "sub") == 0 ? "-" : "*";
        if (t == KT_INT64) /* exact in 128 bits, then checked (DuckDB's try() is unreliable) */
            kbuf_printf(&e, "(CAST(%s AS HUGEINT) %s CAST(%s AS HUGEINT))", kbuf_cstr(&a), op,
                        kbuf_cstr(&b));
        else
            kbuf_printf(&e, "(%s %s %s)", kbuf_cstr(&a), op, kbuf_cstr(&b));
    }
    if (t == KT_INT64)
        in_int64(out, kbuf_cstr(&e)); /* overflow: null */
    else                              /* IEEE: x/0 is inf or -inf, 0/0 NaN, as the peer's Polars */
        kbuf_puts(out, kbuf_cstr(&e));
    kbuf_free(&l), kbuf_free(&r), kbuf_free(&a), kbuf_free(&b), kbuf_free(&e);
    return t;
}

/* A string literal compared with a date becomes a date, checked here. */
static bool iso_date(const char *s)
{
    int y, m, d;
    char tail;
    if (strlen(s) != 10 || sscanf(s, "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3) return false;
    for (int i = 0; i < 10; i++)
        if (i == 4 || i == 7 ? s[i] != '-' : !isdigit((unsigned char)s[i])) return false;
    static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return y >= 1 && m >= 1 && m <= 12 && d >= 1 && d <= days[m - 1] && (m != 2 || d <= 28 || leap);
}

static ktype n_compare(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    check_fields(x, node, LR);
    const char *kind = kind_of(node);
    kbuf l = {0}, r = {0};
    ktype lt = child(x, node, "left", -1, &l), rt = child(x, node, "right", -1, &r);
    const json_t *ln = json_object_get(node, "left"), *rn = json_object_get(node, "right");
    /* A date against a "YYYY-MM-DD" literal compares as dates. */
    for (int side = 0; side < 2; side++) {
        ktype *me = side ? &rt : &lt, other = side ? lt : rt;
        const json_t *n = side ? rn : ln;
        const char *k = kind_of(n);
        if (*me == KT_STRING && other == KT_DATE && k && strcmp(k, "str") == 0) {
            const char *v = json_string_value(json_object_get(n, "value"));
            if (v && iso_date(v)) {
                *me = KT_DATE;
                kbuf_truncate(side ? &r : &l, 0);
                kbuf_puts(side ? &r : &l, "CAST(");
                ksql_string(side ? &r : &l, v);
                kbuf_puts(side ? &r : &l, " AS DATE)");
            } else {
                problem(x, KP_EXPRESSION, "\"%s\" is not a date (YYYY-MM-DD)", v ? v : "");
            }
        }
    }
    int t = unify(lt, rt);
    bool ok = t >= 0;
    if (numeric(lt) && numeric(rt)) t = lt == KT_INT64 && rt == KT_INT64 ? KT_INT64 : KT_FLOAT64;
    if (!ok)
        problem(x, KP_EXPRESSION, "%s cannot compare %s with %s (use cast)", kind, ktype_name(lt),
                ktype_name(rt));
    if (lt == KT_NULL || rt == KT_NULL || !ok) {
        kbuf_puts(out, "CAST(NULL AS BOOLEAN)");
    } else {
        static const struct {
            const char *kind, *op;
        } ops[] = {{"eq", "="}, {"ne", "<>"}, {"gt", ">"}, {"lt", "<"}, {"ge", ">="}, {"le", "<="}};
        const char *op = "=";
        for (size_t i = 0; i < 6; i++)
            if (strcmp(kind, ops[i].kind) == 0) op = ops[i].op;
        kbuf a = {0}, b = {0};
        kexpr_convert(&a, kbuf_cstr(&l), lt, (ktype)t);
        kexpr_convert(&b, kbuf_cstr(&r), rt, (ktype)t);
        kbuf_printf(out, "(%s %s %s)", kbuf_cstr(&a), op, kbuf_cstr(&b));
        kbuf_free(&a), kbuf_free(&b);
    }
    kbuf_free(&l), kbuf_free(&r);
    return KT_BOOL;
}

static void need_bool(kexpr_ctx *x, const char *kind, const char *what, ktype t)
{
    if (t != KT_BOOL && t != KT_NULL)
        problem(x, KP_EXPRESSION, "%s needs a true/false %s, not %s", kind, what, ktype_name(t));
}

static ktype n_logic(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    check_fields(x, node, LR);
    const char *kind = kind_of(node);
    kbuf l = {0}, r = {0};
    ktype lt = child_as(x, node, "left", -1, KT_BOOL, &l);
    ktype rt = child_as(x, node, "right", -1, KT_BOOL, &r);
    need_bool(x, kind, "left", lt);
    need_bool(x, kind, "right", rt);
    kbuf_printf(out, "(%s %s %s)", kbuf_cstr(&l), strcmp(kind, "and") == 0 ? "AND" : "OR",
                kbuf_cstr(&r));
    kbuf_free(&l), kbuf_free(&r);
    return KT_BOOL;
}

static ktype n_not(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    check_fields(x, node, INPUT);
    kbuf in = {0};
    need_bool(x, "not", "input", child_as(x, node, "input", -1, KT_BOOL, &in));
    kbuf_printf(out, "(NOT %s)", kbuf_cstr(&in));
    kbuf_free(&in);
    return KT_BOOL;
}

static ktype n_text(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    check_fields(x, node, INPUT);
    const char *kind = kind_of(node);
    kbuf in = {0};
    child_as(x, node, "input", -1, KT_STRING, &in);
    if (strcmp(kind, "trim") == 0)
        trimmed(out, kbuf_cstr(&in));
    else
        kbuf_printf(out, "%s(%s)", kind, kbuf_cstr(&in));
    kbuf_free(&in);
    return KT_STRING;
}

static ktype n_contains(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    static const char *const f[] = {"input", "pattern", NULL};
    check_fields(x, node, f);
    kbuf in = {0}, pat = {0};
    child_as(x, node, "input", -1, KT_STRING, &in);
    child_as(x, node, "pattern", -1, KT_STRING, &pat);
    kbuf_printf(out, "contains(%s, %s)", kbuf_cstr(&in), kbuf_cstr(&pat));
    kbuf_free(&in), kbuf_free(&pat);
    return KT_BOOL;
}

/* An integer field within +-2^31 (NULL/absent allowed when optional). */
static bool int_field(kexpr_ctx *x, const json_t *node, const char *name, bool required,
                      long long min, long long *out, bool *present)
{
    const json_t *v = field(x, node, name, required);
    *present = v != NULL && !json_is_null(v);
    if (!*present) return v != NULL || !required;
    double d = json_is_number(v) ? json_number_value(v) : NAN;
    if (!json_is_number(v) || d != floor(d) || d < (double)min || d > 2147483647.0) {
        field_problem(x, name, "%s must be a whole number in range", name);
        return false;
    }
    *out = (long long)d;
    return true;
}

static ktype n_substring(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    static const char *const f[] = {"input", "start", "length", NULL};
    check_fields(x, node, f);
    kbuf s = {0};
    child_as(x, node, "input", -1, KT_STRING, &s);
    long long start = 0, length = 0;
    bool has_start, has_len;
    int_field(x, node, "start", true, -2147483648LL, &start, &has_start);
    int_field(x, node, "length", false, 0, &length, &has_len);
    /* Characters [begin, begin + length) counted from 0 (as Polars' slice);
     * a negative start counts from the end; the window is clipped to the
     * string, so a start before the beginning shortens it. */
    if (start >= 0 && has_len)
        kbuf_printf(out, "substring(%s, %lld, %lld)", kbuf_cstr(&s), start + 1, length);
    else if (start >= 0)
        kbuf_printf(out, "substring(%s, %lld)", kbuf_cstr(&s), start + 1);
    else if (has_len)
        kbuf_printf(out,
                    "substring(%s, greatest(length(%s) + (%lld), 0) + 1, greatest(length(%s) + "
                    "(%lld) + %lld - greatest(length(%s) + (%lld), 0), 0))",
                    kbuf_cstr(&s), kbuf_cstr(&s), start, kbuf_cstr(&s), start, length,
                    kbuf_cstr(&s), start);
    else
        kbuf_printf(out, "substring(%s, greatest(length(%s) + (%lld), 0) + 1)", kbuf_cstr(&s),
                    kbuf_cstr(&s), start);
    kbuf_free(&s);
    return KT_STRING;
}

/* Children of an array member, all converted to one common type. */
static ktype unified_args(kexpr_ctx *x, const json_t *node, const char *name, kbuf *out,
                          const char *sep)
{
    const json_t *args = json_object_get(node, name);
    size_t n = json_array_size(args);
    ktype *types = calloc(n ? n : 1, sizeof *types);
    kbuf *sql = calloc(n ? n : 1, sizeof *sql);
    int t = KT_NULL;
    for (size_t i = 0; types && sql && i < n; i++) {
        types[i] = child(x, node, name, (long)i, &sql[i]);
        int u = unify((ktype)t, types[i]);
        if (u < 0) {
            size_t old = kpath_push(&x->path, name);
            kpath_push_index(&x->path, i);
            problem(x, KP_EXPRESSION, "%s mixes %s with %s (use cast)", kind_of(node),
                    ktype_name((ktype)t), ktype_name(types[i]));
            kpath_pop(&x->path, old);
        } else {
            t = u;
        }
    }
    for (size_t i = 0; types && sql && i < n; i++) {
        if (i) kbuf_puts(out, sep);
        kexpr_convert(out, kbuf_cstr(&sql[i]),
                      kexpr_can_convert(types[i], (ktype)t) ? types[i] : KT_NULL, (ktype)t);
        kbuf_free(&sql[i]);
    }
    if (types == NULL || sql == NULL) out->oom = true;
    free(types);
    free(sql);
    return (ktype)t;
}

static ktype n_if(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    static const char *const f[] = {"cond", "then", "else", NULL};
    check_fields(x, node, f);
    kbuf c = {0}, a = {0}, b = {0};
    need_bool(x, "if", "cond", child_as(x, node, "cond", -1, KT_BOOL, &c));
    ktype at = child(x, node, "then", -1, &a), bt = child(x, node, "else", -1, &b);
    int t = unify(at, bt);
    if (t < 0) {
        problem(x, KP_EXPRESSION, "if gives %s in then but %s in else (use cast)", ktype_name(at),
                ktype_name(bt));
        t = KT_NULL, at = bt = KT_NULL;
    }
    kbuf_printf(out, "(CASE WHEN %s THEN ", kbuf_cstr(&c));
    kexpr_convert(out, kbuf_cstr(&a), at, (ktype)t);
    kbuf_puts(out, " ELSE ");
    kexpr_convert(out, kbuf_cstr(&b), bt, (ktype)t);
    kbuf_puts(out, " END)");
    kbuf_free(&c), kbuf_free(&a), kbuf_free(&b);
    return (ktype)t;
}

static bool array_field(kexpr_ctx *x, const json_t *node, const char *name)
{
    const json_t *v = field(x, node, name, true);
    if (v && !json_is_array(v)) {
        field_problem(x, name, "%s must be an array", name);
        return false;
    }
    return v != NULL;
}

static ktype n_coalesce(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    static const char *const f[] = {"args", NULL};
    check_fields(x, node, f);
    if (!array_field(x, node, "args") || json_array_size(json_object_get(node, "args")) == 0) {
        kbuf_puts(out, "NULL");
        return KT_NULL;
    }
    kbuf args = {0};
    ktype t = unified_args(x, node, "args", &args, ", ");
    kbuf_printf(out, "coalesce(%s)", kbuf_cstr(&args));
    kbuf_free(&args);
    return t;
}

static ktype n_concat(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    static const char *const f[] = {"sep", "args", NULL};
    check_fields(x, node, f);
    const json_t *sep = field(x, node, "sep", true);
    if (sep && !json_is_string(sep)) field_problem(x, "sep", "sep must be a string%s", "");
    bool ok = array_field(x, node, "args");
    size_t n = ok ? json_array_size(json_object_get(node, "args")) : 0;
    if (n == 0) {
        kbuf_puts(out, "CAST('' AS VARCHAR)");
        return KT_STRING;
    }
    kbuf_puts(out, "concat_ws(");
    ksql_string(out, json_is_string(sep) ? json_string_value(sep) : "");
    for (size_t i = 0; i < n; i++) {
        kbuf_puts(out, ", ");
        child_as(x, node, "args", (long)i, KT_STRING, out);
    }
    kbuf_puts(out, ")");
    return KT_STRING;
}

/* strftime directives parse_date accepts: those DuckDB and C agree on. */
static bool valid_date_format(const char *f, char *bad)
{
    static const char ok[] = "YmdyHMSIpbBfj%";
    bool any = false;
    for (; *f; f++) {
        if (*f != '%') continue;
        f++;
        if (*f == '\0' || strchr(ok, *f) == NULL) {
            bad[0] = '%', bad[1] = *f, bad[2] = '\0';
            return false;
        }
        any |= *f != '%';
    }
    if (!any) strcpy(bad, "(none)");
    return any;
}

/* The regular expression a value must match for `format`, as strict as
 * C and Python's strptime: %Y four digits, %m and %d one or two, names of
 * months in any case, a run of spaces matching any whitespace. */
static void date_format_regex(kbuf *out, const char *f)
{
    static const struct {
        char d;
        const char *re;
    } dirs[] = {
        {'Y', "[0-9]{4}"},
        {'m', "(1[0-2]|0[1-9]|[1-9])"},
        {'d', "(3[01]|[12][0-9]|0[1-9]|[1-9]| [1-9])"},
        {'y', "[0-9]{2}"},
        {'H', "(2[0-3]|[0-1][0-9]|[0-9])"},
        {'M', "([0-5][0-9]|[0-9])"},
        {'S', "(6[0-1]|[0-5][0-9]|[0-9])"},
        {'I', "(1[0-2]|0[1-9]|[1-9])"},
        {'p', "(am|pm)"},
        {'b', "(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"},
        {'B', "(january|february|march|april|may|june|july|august|september|october|november|"
              "december)"},
        {'f', "[0-9]{1,6}"},
        {'j', "(36[0-6]|3[0-5][0-9]|[12][0-9][0-9]|0[1-9][0-9]|00[1-9]|[1-9][0-9]|0[1-9]|[1-9])"},
        {'%', "%"},
    };
    kbuf_puts(out, "(?i)");
    for (; *f; f++) {
        if (*f == '%' && f[1]) {
            f++;
            for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
                if (dirs[i].d == *f) kbuf_puts(out, dirs[i].re);
        } else if (isspace((unsigned char)*f)) {
            while (isspace((unsigned char)f[1])) f++;
            kbuf_puts(out, "\\s+");
        } else if ((unsigned char)*f < 0x80 && !isalnum((unsigned char)*f)) {
            kbuf_putc(out, '\\');
            kbuf_putc(out, *f);
        } else {
            kbuf_putc(out, *f);
        }
    }
}

static ktype n_parse_date(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    static const char *const f[] = {"input", "format", NULL};
    check_fields(x, node, f);
    kbuf in = {0};
    ktype t = child(x, node, "input", -1, &in);
    const json_t *fmt = field(x, node, "format", true);
    char bad[8];
    if (fmt && !json_is_string(fmt))
        field_problem(x, "format", "format must be a string%s", "");
    else if (fmt && !valid_date_format(json_string_value(fmt), bad))
        field_problem(x, "format",
                      "format directive %s is not supported (use %%Y %%m %%d %%y %%H %%M %%S %%I "
                      "%%p %%b %%B %%f %%j)",
                      bad);
    if (t == KT_STRING) { /* the strict shape first; years 1 to 9999 only, as everywhere */
        const char *format = json_is_string(fmt) ? json_string_value(fmt) : "%Y-%m-%d";
        kbuf p = {0}, v = {0}, re = {0};
        trimmed(&v, kbuf_cstr(&in));
        date_format_regex(&re, format);
        kbuf_printf(&p, "try_strptime(%s, ", kbuf_cstr(&v));
        ksql_string(&p, format);
        kbuf_puts(&p, ")");
        kbuf_printf(out, "CAST(CASE WHEN regexp_full_match(%s, ", kbuf_cstr(&v));
        ksql_string(out, kbuf_cstr(&re));
        kbuf_printf(out,
                    ") AND %s BETWEEN TIMESTAMP '0001-01-01' AND TIMESTAMP '9999-12-31 "
                    "23:59:59.999999' THEN %s END AS DATE)",
                    kbuf_cstr(&p), kbuf_cstr(&p));
        kbuf_free(&p), kbuf_free(&v), kbuf_free(&re);
    } else if (t == KT_DATE || t == KT_NULL) {
        kexpr_convert(out, kbuf_cstr(&in), t, KT_DATE);
    } else {
        problem(x, KP_EXPRESSION, "parse_date reads text, not %s", ktype_name(t));
        kbuf_puts(out, "CAST(NULL AS DATE)");
    }
    kbuf_free(&in);
    return KT_DATE;
}

static ktype n_from_unix(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    static const char *const f[] = {"input", "unit", NULL};
    check_fields(x, node, f);
    kbuf in = {0};
    ktype t = child(x, node, "input", -1, &in);
    const json_t *unit = json_object_get(node, "unit");
    const char *u = json_is_string(unit) ? json_string_value(unit) : unit ? "?" : "s";
    if (strcmp(u, "s") != 0 && strcmp(u, "ms") != 0)
        field_problem(x, "unit", "unit must be \"s\" or \"ms\"%s", "");
    bool ms = strcmp(u, "ms") == 0;
    /* Whole milliseconds since the epoch (a fraction cut toward zero, as
     * the peer), then the UTC date; outside years 1 to 9999: null. */
    kbuf millis = {0}, h = {0};
    if (t == KT_INT64) {
        kbuf_printf(&h, "(CAST(%s AS HUGEINT) * %d)", kbuf_cstr(&in), ms ? 1 : 1000);
        in_int64(&millis, kbuf_cstr(&h));
    } else if (t == KT_FLOAT64) {
        kbuf_printf(&h, "trunc(%s * %s)", kbuf_cstr(&in), ms ? "1.0" : "1000.0");
        kbuf_printf(&millis,
                    "(CASE WHEN %s >= CAST('-9223372036854775808' AS DOUBLE) AND %s < "
                    "CAST('9223372036854775808' AS DOUBLE) THEN CAST(%s AS BIGINT) END)",
                    kbuf_cstr(&h), kbuf_cstr(&h), kbuf_cstr(&h));
    } else if (t != KT_NULL) {
        problem(x, KP_EXPRESSION, "from_unix needs a number of %s, not %s (cast it first)",
                ms ? "milliseconds" : "seconds", ktype_name(t));
    }
    if (millis.len)
        kbuf_printf(out,
                    "(CASE WHEN %s BETWEEN " MIN_MILLIS " AND " MAX_MILLIS
                    " THEN CAST(make_timestamp(%s * 1000) AS DATE) END)",
                    kbuf_cstr(&millis), kbuf_cstr(&millis));
    else
        kbuf_puts(out, "CAST(NULL AS DATE)");
    kbuf_free(&in), kbuf_free(&millis), kbuf_free(&h);
    return KT_DATE;
}

static ktype n_datepart(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    check_fields(x, node, INPUT);
    const char *kind = kind_of(node);
    kbuf in = {0};
    ktype t = child(x, node, "input", -1, &in);
    if (t == KT_DATE) {
        kbuf_printf(out, "CAST(%s(%s) AS BIGINT)", kind, kbuf_cstr(&in));
    } else {
        if (t != KT_NULL)
            problem(x, KP_EXPRESSION, "%s needs a date, not %s (use parse_date)", kind,
                    ktype_name(t));
        kbuf_puts(out, "CAST(NULL AS BIGINT)");
    }
    kbuf_free(&in);
    return KT_INT64;
}

static ktype n_cast(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    static const char *const f[] = {"input", "to", NULL};
    static const struct {
        const char *name;
        ktype t;
    } targets[] = {{"string", KT_STRING},  {"int64", KT_INT64}, {"float64", KT_FLOAT64},
                   {"number", KT_FLOAT64}, {"bool", KT_BOOL},   {"date", KT_DATE}};
    check_fields(x, node, f);
    kbuf in = {0};
    ktype from = child(x, node, "input", -1, &in);
    const json_t *to = field(x, node, "to", true);
    int t = -1;
    for (size_t i = 0; json_is_string(to) && i < sizeof targets / sizeof *targets; i++)
        if (strcmp(json_string_value(to), targets[i].name) == 0) t = (int)targets[i].t;
    if (to && t < 0) {
        field_problem(x, "to", "cast to must be string, int64, float64, bool or date%s", "");
    } else if (t >= 0 && !kexpr_can_convert(from, (ktype)t)) {
        problem(x, KP_EXPRESSION, "cannot cast %s to %s", ktype_name(from), ktype_name((ktype)t));
        from = KT_NULL;
    }
    if (t < 0) t = KT_NULL;
    kexpr_convert(out, kbuf_cstr(&in), from, (ktype)t);
    kbuf_free(&in);
    return (ktype)t;
}

void kexpr_dim_relation(kbuf *out, const kdimension *d)
{
    kbuf_printf(out, "\"__karet_dim_%zu\"", d->index);
}

static ktype n_dim_ref(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    static const char *const f[] = {"dim_id", "input", "value", NULL};
    check_fields(x, node, f);
    const json_t *id = field(x, node, "dim_id", true);
    const kdimension *d = json_is_string(id) ? kconfig_dim(x->config, json_string_value(id)) : NULL;
    if (id && !json_is_string(id)) {
        field_problem(x, "dim_id", "dim_id must be a string%s", "");
    } else if (id && d == NULL) {
        size_t old = kpath_push(&x->path, "dim_id");
        problem(x, KP_DANGLING, "no dimension \"%s\"", json_string_value(id));
        kpath_pop(&x->path, old);
    }
    const json_t *value = json_object_get(node, "value");
    size_t vi = 0;
    if (value && !json_is_string(value)) {
        field_problem(x, "value", "value must name a value column of the dimension%s", "");
    } else if (value && d) {
        for (vi = 0; vi < d->nvalues; vi++)
            if (strcmp(d->value_columns[vi], json_string_value(value)) == 0) break;
        if (vi == d->nvalues) {
            size_t old = kpath_push(&x->path, "value");
            problem(x, KP_DANGLING, "dimension \"%s\" has no value column \"%s\"", d->id,
                    json_string_value(value));
            kpath_pop(&x->path, old);
            vi = 0;
        }
    }
    kbuf in = {0};
    child_as(x, node, "input", -1, KT_STRING, &in);
    if (d == NULL) {
        kbuf_puts(out, "CAST(NULL AS VARCHAR)");
        kbuf_free(&in);
        return KT_STRING;
    }
    if (x->dims_used) x->dims_used[d->index] = true;
    int alias = ++x->subqueries;
    const char *s = kbuf_cstr(&in);
    kbuf key = {0}, miss = {0};
    if (d->case_insensitive)
        kbuf_printf(&key, "lower(%s)", s);
    else
        kbuf_puts(&key, s);
    if (d->on_miss == KMISS_PASSTHROUGH) {
        kbuf_puts(&miss, s);
    } else if (d->on_miss == KMISS_LITERAL && d->literal) {
        kbuf_puts(&miss, "CAST(");
        ksql_string(&miss, d->literal);
        kbuf_puts(&miss, " AS VARCHAR)");
    } else {
        kbuf_puts(&miss, "CAST(NULL AS VARCHAR)");
    }
    /* A null input gives null; otherwise the winning row: highest priority,
     * then first defined. Names inside the subquery are reserved ones, so the
     * outer row's columns stay visible. */
    kbuf_printf(out,
                "(CASE WHEN %s IS NULL THEN CAST(NULL AS VARCHAR) ELSE (SELECT CASE WHEN count(*) "
                "= 0 THEN %s ELSE first(__karet_d%d.__karet_v%zu ORDER BY __karet_d%d.__karet_p "
                "DESC, __karet_d%d.__karet_o) END FROM ",
                s, kbuf_cstr(&miss), alias, vi, alias, alias);
    kexpr_dim_relation(out, d);
    if (d->match == KM_EXACT)
        kbuf_printf(out, " AS __karet_d%d WHERE __karet_d%d.__karet_k = %s) END)", alias, alias,
                    kbuf_cstr(&key));
    else
        kbuf_printf(out, " AS __karet_d%d WHERE contains(%s, __karet_d%d.__karet_k)) END)", alias,
                    kbuf_cstr(&key), alias);
    kbuf_free(&in), kbuf_free(&key), kbuf_free(&miss);
    return KT_STRING;
}

static const struct {
    const char *kind;
    node_fn fn;
} NODES[] = {
    {"col", n_col},
    {"str", n_str},
    {"num", n_num},
    {"bool", n_bool},
    {"null", n_null},
    {"add", n_arith},
    {"sub", n_arith},
    {"mul", n_arith},
    {"div", n_arith},
    {"eq", n_compare},
    {"ne", n_compare},
    {"gt", n_compare},
    {"lt", n_compare},
    {"ge", n_compare},
    {"le", n_compare},
    {"and", n_logic},
    {"or", n_logic},
    {"not", n_not},
    {"upper", n_text},
    {"lower", n_text},
    {"trim", n_text},
    {"substring", n_substring},
    {"contains", n_contains},
    {"concat", n_concat},
    {"if", n_if},
    {"coalesce", n_coalesce},
    {"parse_date", n_parse_date},
    {"from_unix", n_from_unix},
    {"year", n_datepart},
    {"month", n_datepart},
    {"day", n_datepart},
    {"cast", n_cast},
    {"dim_ref", n_dim_ref},
};

ktype kexpr_compile(kexpr_ctx *x, const json_t *node, kbuf *out)
{
    if (!json_is_object(node)) {
        problem(x, KP_EXPRESSION, "an expression must be an object with a \"kind\"");
        kbuf_puts(out, "NULL");
        return KT_NULL;
    }
    const json_t *kind = json_object_get(node, "kind");
    if (kind == NULL) {
        x->failed = true;
        if (x->ps) kproblem_at(x->ps, &x->path, "kind", KP_MISSING, "an expression needs \"kind\"");
        kbuf_puts(out, "NULL");
        return KT_NULL;
    }
    if (x->depth >= MAX_DEPTH) {
        problem(x, KP_EXPRESSION, "expression nested deeper than %d levels", MAX_DEPTH);
        kbuf_puts(out, "NULL");
        return KT_NULL;
    }
    for (size_t i = 0; json_is_string(kind) && i < sizeof NODES / sizeof *NODES; i++)
        if (strcmp(json_string_value(kind), NODES[i].kind) == 0) {
            x->depth++;
            ktype t = NODES[i].fn(x, node, out);
            x->depth--;
            return t;
        }
    size_t old = kpath_push(&x->path, "kind");
    problem(x, KP_EXPRESSION, "unknown expression kind \"%s\"",
            json_is_string(kind) ? json_string_value(kind) : "(not a string)");
    kpath_pop(&x->path, old);
    kbuf_puts(out, "NULL");
    return KT_NULL;
}
