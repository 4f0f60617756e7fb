/* Expressions as text and back (see expr_text.h): a table of the call
 * shapes of every kind, a writer that puts in only the parentheses the
 * operator precedence needs, and a recursive-descent reader. */
#include "expr_text.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json_text.h"
#include "strbuf.h"
#include "timelake.h"

#define MAX_DEPTH 200

/* ---- the shapes of the kinds written as calls ---- */

typedef enum arg { A_NONE, A_EXPR, A_STR, A_INT, A_NAME, A_EXPRS } arg;

typedef struct shape {
    const char *kind;
    const char *fields[3];
    arg args[3];
    int required; /* how many of the fields must be given */
} shape;

static const shape SHAPES[] = {
    {"upper", {"input"}, {A_EXPR}, 1},
    {"lower", {"input"}, {A_EXPR}, 1},
    {"trim", {"input"}, {A_EXPR}, 1},
    {"not", {"input"}, {A_EXPR}, 1},
    {"year", {"input"}, {A_EXPR}, 1},
    {"month", {"input"}, {A_EXPR}, 1},
    {"day", {"input"}, {A_EXPR}, 1},
    {"substring", {"input", "start", "length"}, {A_EXPR, A_INT, A_INT}, 2},
    {"contains", {"input", "pattern"}, {A_EXPR, A_EXPR}, 2},
    {"concat", {"sep", "args"}, {A_STR, A_EXPRS}, 1},
    {"coalesce", {"args"}, {A_EXPRS}, 0},
    {"if", {"cond", "then", "else"}, {A_EXPR, A_EXPR, A_EXPR}, 3},
    {"parse_date", {"input", "format"}, {A_EXPR, A_STR}, 2},
    {"from_unix", {"input", "unit"}, {A_EXPR, A_STR}, 1},
    {"cast", {"input", "to"}, {A_EXPR, A_NAME}, 2},
    {"dim_ref", {"dim_id", "input", "value"}, {A_NAME, A_EXPR, A_STR}, 2},
    {"col", {"name"}, {A_STR}, 1},
};
#define N_SHAPES (sizeof SHAPES / sizeof SHAPES[0])

/* Binary operators, and their precedence (higher binds tighter). */
typedef struct binop {
    const char *kind, *op;
    int prec;
} binop;

static const binop BINOPS[] = {
    {"or", "or", 1}, {"and", "and", 2}, {"eq", "=", 4},  {"ne", "!=", 4},
    {"lt", "<", 4},  {"le", "<=", 4},   {"gt", ">", 4},  {"ge", ">=", 4},
    {"add", "+", 5}, {"sub", "-", 5},   {"mul", "*", 6}, {"div", "/", 6},
};
#define N_BINOPS (sizeof BINOPS / sizeof BINOPS[0])
enum { P_OR = 1, P_AND = 2, P_NOT = 3, P_CMP = 4, P_ADD = 5, P_MUL = 6, P_ATOM = 7 };

static const char *const KEYWORDS[] = {"and", "or", "not", "true", "false", "null", NULL};

static const shape *shape_of(const char *kind)
{
    for (size_t i = 0; i < N_SHAPES; i++)
        if (strcmp(SHAPES[i].kind, kind) == 0) return &SHAPES[i];
    return NULL;
}

static const binop *binop_of(const char *kind)
{
    for (size_t i = 0; i < N_BINOPS; i++)
        if (strcmp(BINOPS[i].kind, kind) == 0) return &BINOPS[i];
    return NULL;
}

static bool is_keyword(const char *s, size_t n)
{
    for (int i = 0; KEYWORDS[i]; i++)
        if (strlen(KEYWORDS[i]) == n && strncasecmp(KEYWORDS[i], s, n) == 0) return true;
    return false;
}

/* A name that may be written bare: an identifier that is no keyword. */
static bool bare_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return false;
    return !is_keyword(s, n);
}

/* ---- writing ---- */

typedef struct writer {
    kbuf out;
    char *err;
    size_t errlen;
    bool failed;
} writer;

static void wfail(writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wfail(writer *w, const char *fmt, ...)
{
    if (w->failed) return;
    w->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, w->errlen, fmt, ap);
    va_end(ap);
}

static void write_string(writer *w, const char *s)
{
    json_t *j = json_string(s);
    char *text = j ? kjson_dumps(j, JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    if (text == NULL) return wfail(w, "a string is not valid UTF-8");
    kbuf_puts(&w->out, text);
    free(text);
}

static void write_name(writer *w, const char *s)
{
    if (bare_name(s))
        kbuf_puts(&w->out, s);
    else
        write_string(w, s);
}

static void write_number(writer *w, const json_t *v)
{
    if (json_is_integer(v)) {
        kbuf_printf(&w->out, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        /* -0.0 is "-0.0", whose minus is part of the number when read. */
        char text[TL_DOUBLE_TEXT_SIZE];
        tl_double_text(json_real_value(v), text, sizeof text);
        kbuf_puts(&w->out, text);
    } else {
        wfail(w, "a num node's value must be a number");
    }
}

static void write_node(writer *w, const json_t *node, int depth);

/* How tightly a node binds when written (a negative number too: a minus
 * before a number is part of it). */
static int node_prec(const json_t *node)
{
    const char *kind = json_string_value(json_object_get(node, "kind"));
    if (kind == NULL) return P_ATOM;
    const binop *b = binop_of(kind);
    if (b) return b->prec;
    if (strcmp(kind, "not") == 0) return P_NOT;
    return P_ATOM;
}

/* The node, in parentheses when it binds less tightly than `need`. */
static void write_operand(writer *w, const json_t *node, int need, int depth)
{
    bool paren = node_prec(node) < need;
    if (paren) kbuf_putc(&w->out, '(');
    write_node(w, node, depth + 1);
    if (paren) kbuf_putc(&w->out, ')');
}

/* Every key of node must be "kind" or one of fields. */
static bool only_fields(writer *w, const json_t *node, const char *kind, const char *const *fields,
                        size_t n)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)node, key, v)
    {
        bool known = strcmp(key, "kind") == 0;
        for (size_t i = 0; i < n && !known; i++) known = fields[i] && strcmp(fields[i], key) == 0;
        if (!known) {
            wfail(w, "a %s node has no field \"%s\"", kind, key);
            return false;
        }
    }
    return true;
}

static const json_t *need_expr(writer *w, const json_t *node, const char *kind, const char *field)
{
    const json_t *v = json_object_get(node, field);
    if (!json_is_object(v)) wfail(w, "a %s node needs an expression \"%s\"", kind, field);
    return v;
}

static void write_call(writer *w, const json_t *node, const char *kind, const shape *s, int depth)
{
    if (!only_fields(w, node, kind, s->fields, 3)) return;
    kbuf_printf(&w->out, "%s(", kind);
    int written = 0;
    for (int i = 0; i < 3 && s->fields[i]; i++) {
        const json_t *v = json_object_get(node, s->fields[i]);
        if (v == NULL) {
            if (i < s->required) return wfail(w, "a %s node needs \"%s\"", kind, s->fields[i]);
            /* an optional field left out: nothing after it may be given */
            for (int j = i + 1; j < 3 && s->fields[j]; j++)
                if (json_object_get(node, s->fields[j]))
                    return wfail(w, "a %s node with \"%s\" needs \"%s\" too", kind, s->fields[j],
                                 s->fields[i]);
            break;
        }
        if (s->args[i] == A_EXPRS) {
            if (!json_is_array(v))
                return wfail(w, "%s's \"%s\" must be a list", kind, s->fields[i]);
            size_t k;
            const json_t *a;
            json_array_foreach(v, k, a)
            {
                if (!json_is_object(a))
                    return wfail(w, "%s's \"%s\" holds a non-expression", kind, s->fields[i]);
                if (written++) kbuf_puts(&w->out, ", ");
                write_node(w, a, depth + 1);
            }
            continue;
        }
        if (written++) kbuf_puts(&w->out, ", ");
        switch (s->args[i]) {
        case A_EXPR:
            if (!json_is_object(v))
                return wfail(w, "%s's \"%s\" must be an expression", kind, s->fields[i]);
            write_node(w, v, depth + 1);
            break;
        case A_STR:
            if (!json_is_string(v))
                return wfail(w, "%s's \"%s\" must be a string", kind, s->fields[i]);
            write_string(w, json_string_value(v));
            break;
        case A_NAME:
            if (!json_is_string(v))
                return wfail(w, "%s's \"%s\" must be a string", kind, s->fields[i]);
            write_name(w, json_string_value(v));
            break;
        case A_INT:
            if (!json_is_integer(v))
                return wfail(w, "%s's \"%s\" must be a whole number", kind, s->fields[i]);
            kbuf_printf(&w->out, "%lld", (long long)json_integer_value(v));
            break;
        default:
            break;
        }
    }
    kbuf_putc(&w->out, ')');
}

static void write_node(writer *w, const json_t *node, int depth)
{
    if (w->failed) return;
    if (depth > MAX_DEPTH) return wfail(w, "the expression is nested more than %d deep", MAX_DEPTH);
    if (!json_is_object(node)) return wfail(w, "an expression must be a JSON object");
    const char *kind = json_string_value(json_object_get(node, "kind"));
    if (kind == NULL) return wfail(w, "an expression node needs a \"kind\"");
    static const char *const VALUE[] = {"value"}, *const NAME[] = {"name"},
                             *const LR[] = {"left", "right"}, *const IN[] = {"input"};
    if (strcmp(kind, "col") == 0) {
        const char *name = json_string_value(json_object_get(node, "name"));
        if (!only_fields(w, node, kind, NAME, 1)) return;
        if (name == NULL) return wfail(w, "a col node needs a string \"name\"");
        if (bare_name(name)) return kbuf_puts(&w->out, name);
        kbuf_puts(&w->out, "col(");
        write_string(w, name);
        kbuf_putc(&w->out, ')');
    } else if (strcmp(kind, "str") == 0) {
        const json_t *v = json_object_get(node, "value");
        if (!only_fields(w, node, kind, VALUE, 1)) return;
        if (!json_is_string(v)) return wfail(w, "a str node needs a string \"value\"");
        write_string(w, json_string_value(v));
    } else if (strcmp(kind, "num") == 0) {
        if (!only_fields(w, node, kind, VALUE, 1)) return;
        write_number(w, json_object_get(node, "value"));
    } else if (strcmp(kind, "bool") == 0) {
        const json_t *v = json_object_get(node, "value");
        if (!only_fields(w, node, kind, VALUE, 1)) return;
        if (!json_is_boolean(v)) return wfail(w, "a bool node needs true or false as \"value\"");
        kbuf_puts(&w->out, json_is_true(v) ? "true" : "false");
    } else if (strcmp(kind, "null") == 0) {
        if (!only_fields(w, node, kind, NULL, 0)) return;
        kbuf_puts(&w->out, "null");
    } else if (binop_of(kind)) {
        const binop *b = binop_of(kind);
        if (!only_fields(w, node, kind, LR, 2)) return;
        const json_t *l = need_expr(w, node, kind, "left"), *r = need_expr(w, node, kind, "right");
        if (w->failed) return;
        /* Comparisons do not chain: both sides bind tighter. Others are
         * left-associative: the right side must bind tighter. */
        write_operand(w, l, b->prec == P_CMP ? P_CMP + 1 : b->prec, depth);
        kbuf_printf(&w->out, " %s ", b->op);
        write_operand(w, r, b->prec + 1, depth);
    } else if (strcmp(kind, "not") == 0) {
        if (!only_fields(w, node, kind, IN, 1)) return;
        const json_t *in = need_expr(w, node, kind, "input");
        if (w->failed) return;
        kbuf_puts(&w->out, "not ");
        write_operand(w, in, P_NOT, depth);
    } else if (shape_of(kind)) {
        write_call(w, node, kind, shape_of(kind), depth);
    } else {
        wfail(w, "unknown expression kind \"%s\"", kind);
    }
}

char *kexpr_to_text(const json_t *expr, char *err, size_t errlen)
{
    writer w = {.err = err, .errlen = errlen};
    write_node(&w, expr, 0);
    if (!w.failed && w.out.oom) wfail(&w, "out of memory");
    if (w.failed) {
        kbuf_free(&w.out);
        return NULL;
    }
    return kbuf_take(&w.out);
}

/* ---- reading ---- */

typedef enum tok { T_END, T_NUM, T_STR, T_IDENT, T_OP, T_LP, T_RP, T_COMMA, T_BAD } tok;

typedef struct reader {
    const char *text, *p;
    tok t;
    const char *start; /* of the current token */
    size_t len;
    char *str; /* a T_STR's decoded value */
    char *err;
    size_t errlen;
    const char *err_at;
    bool failed;
    int depth;
} reader;

static void rfail(reader *r, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void rfail(reader *r, const char *at, const char *fmt, ...)
{
    if (r->failed) return;
    r->failed = true;
    r->err_at = at;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->errlen, fmt, ap);
    va_end(ap);
}

/* A JSON string literal at p (ending at its closing quote) decoded. */
static char *decode_json_string(const char *p, size_t n)
{
    json_error_t je;
    json_t *j = kjson_loadb(p, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    char *s = json_is_string(j) && strlen(json_string_value(j)) == json_string_length(j)
                  ? strdup(json_string_value(j))
                  : NULL;
    json_decref(j);
    return s;
}

static void next(reader *r)
{
    free(r->str);
    r->str = NULL;
    while (isspace((unsigned char)*r->p)) r->p++;
    const char *p = r->p;
    r->start = p;
    if (*p == 0) {
        r->t = T_END, r->len = 0;
    } else if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
        while (isdigit((unsigned char)*p)) p++;
        if (*p == '.') p++;
        while (isdigit((unsigned char)*p)) p++;
        if ((*p == 'e' || *p == 'E') &&
            (isdigit((unsigned char)p[1]) ||
             ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
            p += 2;
            while (isdigit((unsigned char)*p)) p++;
        }
        r->t = T_NUM;
    } else if (isalpha((unsigned char)*p) || *p == '_') {
        while (isalnum((unsigned char)*p) || *p == '_') p++;
        r->t = T_IDENT;
    } else if (*p == '"') {
        for (p++; *p && *p != '"'; p++)
            if (*p == '\\' && p[1]) p++;
        if (*p != '"')
            return rfail(r, r->start, "this string has no closing \""), (void)(r->t = T_BAD);
        p++;
        r->str = decode_json_string(r->start, (size_t)(p - r->start));
        if (r->str == NULL)
            return rfail(r, r->start,
                         "this string has a bad escape (use \\\" \\\\ \\n \\t \\uXXXX)"),
                   (void)(r->t = T_BAD);
        r->t = T_STR;
    } else if (*p == '\'') {
        kbuf s = {0};
        for (p++;; p++) {
            if (*p == 0) {
                kbuf_free(&s);
                return rfail(r, r->start, "this string has no closing '"), (void)(r->t = T_BAD);
            }
            if (*p == '\'' && p[1] == '\'') {
                kbuf_putc(&s, '\'');
                p++;
            } else if (*p == '\'') {
                break;
            } else {
                kbuf_putc(&s, *p);
            }
        }
        p++;
        r->str = strdup(kbuf_cstr(&s));
        kbuf_free(&s);
        r->t = T_STR;
    } else if (*p == '(' || *p == ')' || *p == ',') {
        r->t = *p == '(' ? T_LP : *p == ')' ? T_RP : T_COMMA;
        p++;
    } else if (strchr("=!<>+-*/", *p)) {
        static const char *const two[] = {"==", "!=", "<>", "<=", ">=", NULL};
        r->t = T_OP;
        p++;
        for (int i = 0; two[i]; i++)
            if (r->start[0] == two[i][0] && r->start[1] == two[i][1]) p = r->start + 2;
        if (p - r->start == 1 && *r->start == '!')
            return rfail(r, r->start, "'!' alone is not an operator: write != or not"),
                   (void)(r->t = T_BAD);
    } else {
        int n = 1;
        while (n < 4 && ((unsigned char)p[n] & 0xC0) == 0x80) n++;
        rfail(r, p, "unexpected character '%.*s'", n, p);
        r->t = T_BAD;
        return;
    }
    r->len = (size_t)(p - r->start);
    r->p = p;
}

static bool is_op(reader *r, const char *op)
{
    return r->t == T_OP && r->len == strlen(op) && strncmp(r->start, op, r->len) == 0;
}

static bool is_word(reader *r, const char *word)
{
    return r->t == T_IDENT && r->len == strlen(word) && strncasecmp(r->start, word, r->len) == 0;
}

static size_t chars_before(const char *text, const char *at)
{
    size_t n = 0;
    for (const char *p = text; p < at && *p; p++)
        if (((unsigned char)*p & 0xC0) != 0x80) n++;
    return n;
}

static json_t *parse_expr(reader *r);

static json_t *node2(const char *kind, const char *k1, json_t *v1, const char *k2, json_t *v2)
{
    json_t *n = json_object();
    json_object_set_new(n, "kind", json_string(kind));
    if (k1) json_object_set_new(n, k1, v1);
    if (k2) json_object_set_new(n, k2, v2);
    return n;
}

static json_t *number(reader *r, bool negative)
{
    char text[80];
    if (r->len + 2 > sizeof text) {
        rfail(r, r->start, "this number is too long");
        return NULL;
    }
    snprintf(text, sizeof text, "%s%.*s", negative ? "-" : "", (int)r->len, r->start);
    bool real = strpbrk(text, ".eE") != NULL;
    json_t *v;
    errno = 0;
    if (real) {
        v = json_real(strtod(text, NULL));
    } else {
        long long n = strtoll(text, NULL, 10);
        if (errno == ERANGE) {
            rfail(r, r->start, "%s is beyond the 64-bit integers: write it with a decimal point",
                  text);
            return NULL;
        }
        v = json_integer(n);
    }
    next(r);
    return node2("num", "value", v, NULL, NULL);
}

/* The arguments of a call, from its '(' to its ')'. Returns 0, or -1. */
static int parse_args(reader *r, const char *fn, json_t **args, int max, int *n)
{
    *n = 0;
    next(r); /* past '(' */
    if (r->t == T_RP) {
        next(r);
        return 0;
    }
    for (;;) {
        json_t *a = parse_expr(r);
        if (a == NULL) return -1;
        if (*n == max) {
            json_decref(a);
            rfail(r, r->start, "%s takes too many arguments", fn);
            return -1;
        }
        args[(*n)++] = a;
        if (r->t == T_COMMA) {
            next(r);
            continue;
        }
        if (r->t == T_RP) {
            next(r);
            return 0;
        }
        if (!r->failed) rfail(r, r->start, "expected ',' or ')' in the call of %s", fn);
        return -1;
    }
}

#define MAX_ARGS 256

static const char *kind_list(void)
{
    return "upper, lower, trim, not, year, month, day, substring, contains, concat, coalesce, if, "
           "parse_date, from_unix, cast, dim_ref, col, and the operators' add, sub, mul, div, eq, "
           "ne, gt, lt, ge, le, and, or";
}

/* A call: name(args), checked against its kind's shape. */
static json_t *call(reader *r, const char *name_at, size_t name_len)
{
    char name[40];
    snprintf(name, sizeof name, "%.*s", (int)(name_len < 39 ? name_len : 39), name_at);
    for (char *c = name; *c; c++) *c = (char)tolower((unsigned char)*c);
    const shape *s = shape_of(name);
    const binop *b = binop_of(name);
    if (s == NULL && b == NULL) {
        rfail(r, name_at, "unknown function %s (the functions are %s)", name, kind_list());
        return NULL;
    }
    json_t *args[MAX_ARGS];
    int n = 0;
    if (parse_args(r, name, args, MAX_ARGS, &n) != 0) {
        for (int i = 0; i < n; i++) json_decref(args[i]);
        return NULL;
    }
    json_t *node = node2(name, NULL, NULL, NULL, NULL);
    if (b) {
        if (n != 2) {
            rfail(r, name_at, "%s takes 2 arguments, not %d", name, n);
            goto bad;
        }
        json_object_set_new(node, "left", args[0]);
        json_object_set_new(node, "right", args[1]);
        return node;
    }
    int fixed = 0;
    while (fixed < 3 && s->fields[fixed] && s->args[fixed] != A_EXPRS) fixed++;
    bool variadic = fixed < 3 && s->fields[fixed] && s->args[fixed] == A_EXPRS;
    if (n < s->required || (!variadic && n > fixed)) {
        if (s->required == fixed || variadic)
            rfail(r, name_at, "%s takes %s%d argument%s, not %d", name, variadic ? "at least " : "",
                  s->required, s->required == 1 ? "" : "s", n);
        else
            rfail(r, name_at, "%s takes %d to %d arguments, not %d", name, s->required, fixed, n);
        goto bad;
    }
    int i = 0;
    for (; i < fixed && i < n; i++) {
        json_t *a = args[i];
        const char *k = json_string_value(json_object_get(a, "kind"));
        json_t *v = NULL;
        switch (s->args[i]) {
        case A_EXPR:
            v = json_incref(a);
            break;
        case A_STR:
            if (strcmp(k, "str") == 0) v = json_incref(json_object_get(a, "value"));
            break;
        case A_NAME:
            if (strcmp(k, "str") == 0) v = json_incref(json_object_get(a, "value"));
            if (strcmp(k, "col") == 0) v = json_incref(json_object_get(a, "name"));
            break;
        case A_INT:
            if (strcmp(k, "num") == 0 && json_is_integer(json_object_get(a, "value")))
                v = json_incref(json_object_get(a, "value"));
            break;
        default:
            break;
        }
        if (v == NULL) {
            rfail(r, name_at, "%s's %s must be %s", name, s->fields[i],
                  s->args[i] == A_STR    ? "a string in quotes"
                  : s->args[i] == A_NAME ? "a name"
                                         : "a whole number");
            goto bad;
        }
        json_object_set_new(node, s->fields[i], v);
    }
    if (variadic) {
        json_t *list = json_array();
        for (; i < n; i++) json_array_append(list, args[i]);
        json_object_set_new(node, s->fields[fixed], list);
    }
    for (int k = 0; k < n; k++) json_decref(args[k]);
    return node;
bad:
    for (int k = 0; k < n; k++) json_decref(args[k]);
    json_decref(node);
    return NULL;
}

static json_t *primary(reader *r)
{
    if (r->failed) return NULL;
    const char *at = r->start;
    switch (r->t) {
    case T_NUM:
        return number(r, false);
    case T_STR: {
        json_t *n = node2("str", "value", json_string(r->str), NULL, NULL);
        next(r);
        return n;
    }
    case T_IDENT: {
        size_t len = r->len;
        if (is_word(r, "true") || is_word(r, "false")) {
            json_t *n = node2("bool", "value", json_boolean(is_word(r, "true")), NULL, NULL);
            next(r);
            return n;
        }
        if (is_word(r, "null")) {
            next(r);
            return node2("null", NULL, NULL, NULL, NULL);
        }
        if (is_keyword(at, len)) {
            rfail(r, at, "'%.*s' cannot start a value here", (int)len, at);
            return NULL;
        }
        next(r);
        if (r->t == T_LP) return call(r, at, len);
        return node2("col", "name", json_stringn(at, len), NULL, NULL);
    }
    case T_LP: {
        next(r);
        json_t *e = parse_expr(r);
        if (e && r->t != T_RP) {
            rfail(r, r->start, "expected ')' to close the '(' at character %zu",
                  chars_before(r->text, at) + 1);
            json_decref(e);
            return NULL;
        }
        if (e) next(r);
        return e;
    }
    case T_END:
        rfail(r, at, "the expression ends too soon: a value is missing");
        return NULL;
    default:
        if (!r->failed) rfail(r, at, "expected a value, not '%.*s'", (int)r->len, at);
        return NULL;
    }
}

static json_t *unary(reader *r)
{
    if (!is_op(r, "-")) return primary(r);
    const char *at = r->start;
    next(r);
    if (r->t == T_NUM) return number(r, true);
    if (++r->depth > MAX_DEPTH) return rfail(r, at, "the expression is nested too deep"), NULL;
    json_t *x = unary(r);
    r->depth--;
    if (x == NULL) return NULL;
    return node2("sub", "left", node2("num", "value", json_integer(0), NULL, NULL), "right", x);
}

static json_t *binary_level(reader *r, int prec);

static json_t *operand(reader *r, int prec)
{
    if (prec == P_NOT) {
        if (is_word(r, "not")) {
            const char *at = r->start;
            next(r);
            if (++r->depth > MAX_DEPTH)
                return rfail(r, at, "the expression is nested too deep"), NULL;
            json_t *x = operand(r, P_NOT);
            r->depth--;
            return x ? node2("not", "input", x, NULL, NULL) : NULL;
        }
        return binary_level(r, P_CMP);
    }
    if (prec >= P_ATOM) return unary(r);
    return binary_level(r, prec);
}

/* The operator at the reader that works at this precedence, or NULL. */
static const binop *op_here(reader *r, int prec)
{
    for (size_t i = 0; i < N_BINOPS; i++) {
        const binop *b = &BINOPS[i];
        if (b->prec != prec) continue;
        if (r->t == T_IDENT ? is_word(r, b->op) : is_op(r, b->op)) return b;
    }
    if (prec == P_CMP && is_op(r, "==")) return binop_of("eq");
    if (prec == P_CMP && is_op(r, "<>")) return binop_of("ne");
    return NULL;
}

static json_t *binary_level(reader *r, int prec)
{
    if (++r->depth > MAX_DEPTH) {
        rfail(r, r->start, "the expression is nested more than %d deep", MAX_DEPTH);
        return NULL;
    }
    json_t *left = operand(r, prec + 1);
    const binop *b;
    while (left && (b = op_here(r, prec))) {
        next(r);
        json_t *right = operand(r, prec + 1);
        if (right == NULL) {
            json_decref(left);
            left = NULL;
            break;
        }
        left = node2(b->kind, "left", left, "right", right);
        if (prec == P_CMP && op_here(r, P_CMP)) {
            rfail(r, r->start, "comparisons do not chain: write (a < b) and (b < c)");
            json_decref(left);
            left = NULL;
        }
    }
    r->depth--;
    return left;
}

static json_t *parse_expr(reader *r)
{
    return binary_level(r, P_OR);
}

json_t *kexpr_from_text(const char *text, char *err, size_t errlen, size_t *pos)
{
    *pos = 0;
    const char *p = text;
    while (isspace((unsigned char)*p)) p++;
    if (*p == '{') { /* the JSON tree itself */
        json_error_t je;
        json_t *j = kjson_loads(text, JSON_REJECT_DUPLICATES, &je);
        if (j == NULL) {
            snprintf(err, errlen, "not valid JSON: %s", je.text);
            *pos = je.position > 0 ? (size_t)je.position : 0;
        } else if (!json_is_object(j)) {
            snprintf(err, errlen, "an expression must be a JSON object");
            json_decref(j);
            j = NULL;
        }
        return j;
    }
    reader r = {.text = text, .p = text, .err = err, .errlen = errlen};
    next(&r);
    if (r.t == T_END && !r.failed) {
        snprintf(err, errlen, "the expression is empty");
        return NULL;
    }
    json_t *e = r.failed ? NULL : parse_expr(&r);
    if (e && r.t != T_END) {
        if (r.t == T_RP)
            rfail(&r, r.start, "this ')' closes nothing");
        else
            rfail(&r, r.start,
                  "unexpected '%.*s' after a complete expression (an operator "
                  "or a ',' missing?)",
                  (int)(r.len ? r.len : 1), r.start);
        json_decref(e);
        e = NULL;
    }
    free(r.str);
    if (e == NULL) {
        if (!r.failed) snprintf(err, errlen, "cannot read the expression");
        *pos = chars_before(text, r.err_at ? r.err_at : r.start);
    }
    return e;
}
