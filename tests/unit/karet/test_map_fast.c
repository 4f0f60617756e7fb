/* Mappings evaluated in C (map_fast.c) against the same mappings compiled to
 * SQL and run by DuckDB (compile.c), value for value, over rows the library's
 * reader makes from NDJSON full of edge cases; and the files it must hand
 * back to DuckDB. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "compile.h"
#include "config.h"
#include "map_fast.h"
#include "strbuf.h"
#include "unit.h"

#define SOURCE_SCHEMA                                                                              \
    "[{\"name\": \"s\", \"type\": \"string\"}, {\"name\": \"t\", \"type\": \"string\"},"           \
    " {\"name\": \"i\", \"type\": \"int64\"}, {\"name\": \"j\", \"type\": \"int64\"},"             \
    " {\"name\": \"f\", \"type\": \"float64\"}, {\"name\": \"g\", \"type\": \"number\"},"          \
    " {\"name\": \"b\", \"type\": \"bool\"}, {\"name\": \"d\", \"type\": \"date\"}]"

/* Edge cases: nulls, int64's ends, negative fractions, -0.0, prefixes. */
static const char *const ROWS =
    "{\"s\": \"abc\", \"t\": \"ab\", \"i\": 1, \"j\": 2, \"f\": 1.5, \"g\": -0.0, \"b\": true, "
    "\"d\": \"2024-02-29\"}\n"
    "{\"s\": null, \"t\": \"\", \"i\": 9223372036854775807, \"j\": 1, \"f\": -2.75, \"g\": 3, "
    "\"b\": false, \"d\": \"1970-01-01\"}\n"
    "{\"s\": \"GeT\", \"t\": \"get\", \"i\": -9223372036854775808, \"j\": -1, \"f\": null, "
    "\"g\": 1e300, \"b\": null, \"d\": null}\n"
    "{\"s\": \"\", \"t\": null, \"i\": null, \"j\": 0, \"f\": 0.0, \"g\": -1.5e-7, \"b\": true}\n"
    "{\"s\": \"Zz 09_-\", \"t\": \"Zz 09_-\", \"i\": -1, \"j\": null, \"f\": -0.001, "
    "\"g\": 253402300799.9, \"b\": false, \"d\": \"0001-01-01\"}\n"
    "{\"s\": \"x\", \"t\": \"xy\", \"i\": 253402300799, \"j\": 253402300800, \"f\": "
    "-62135596800.5, "
    "\"g\": 1700000000.25, \"b\": true, \"d\": \"9999-12-31\"}\n"
    "{\"s\": \"OPTIONS\", \"t\": \"options\", \"i\": -62135596800, \"j\": -62135596801, "
    "\"f\": 1e-300, \"g\": -1e15, \"b\": false, \"d\": \"1969-12-31\"}\n"
    "{\"s\": \"a\\u0000b\", \"t\": \"a\", \"i\": 4611686018427387904, \"j\": 2, \"f\": 3.0, "
    "\"g\": 7, \"b\": null, \"d\": \"2000-03-01\"}\n";

static const char *col(const char *n, char *buf, size_t size)
{
    snprintf(buf, size, "{\"kind\": \"col\", \"name\": \"%s\"}", n);
    return buf;
}

typedef struct fixture {
    json_t *root;
    kconfig c;
} fixture;

static bool parse(fixture *fx, const char *config)
{
    json_error_t je;
    fx->root = json_loads(config, 0, &je);
    if (fx->root == NULL) {
        unit_fail(__FILE__, __LINE__, "config: %s", je.text);
        return false;
    }
    kproblems ps = {0};
    memset(&fx->c, 0, sizeof fx->c);
    bool ok = kconfig_parse(fx->root, &fx->c, &ps) && json_array_size(ps.list) == 0;
    if (!ok) {
        char *t = json_dumps(ps.list, 0);
        unit_fail(__FILE__, __LINE__, "config problems: %s", t ? t : "?");
        free(t);
    }
    json_decref(ps.list);
    return ok;
}

static void fixture_free(fixture *fx)
{
    kconfig_free(&fx->c);
    json_decref(fx->root);
}

/* The rows (NDJSON, or CSV when they start with a header line "f") read as
 * karet reads a file (3 rows a batch), numbered. */
static bool read_source(const ksource *s, const char *rows, kbatches *out, tl_reader **reader)
{
    tl_read_column cols[16];
    for (size_t i = 0; i < s->ncolumns; i++)
        cols[i] = (tl_read_column){s->columns[i].name, s->columns[i].path,
                                   ktype_name(s->columns[i].type)};
    bool csv = strncmp(rows, "f\n", 2) == 0;
    if (csv) cols[0] = cols[4]; /* f, the one column of the CSV */
    tl_read_options ro = {.format = csv ? "csv" : "ndjson",
                          .name = "rows.ndjson",
                          .columns = cols,
                          .columns_len = csv ? 1 : s->ncolumns,
                          .lenient = 1,
                          .batch_rows = 3};
    tl_error err = {0};
    struct ArrowArrayStream st;
    if (tl_reader_open(rows, strlen(rows), &ro, reader, &err) != TL_OK ||
        tl_reader_stream(*reader, &st, &err) != TL_OK) {
        unit_fail(__FILE__, __LINE__, "reader: %s", err.message);
        return false;
    }
    char msg[256];
    if (kbatches_drain(&st, out, msg, sizeof msg) != 0) {
        unit_fail(__FILE__, __LINE__, "reading: %s", msg);
        return false;
    }
    int64_t next = 0;
    for (size_t i = 0; i < out->len; i++)
        if (!kbatch_add_row_numbers(&out->items[i], KARET_COL_ROW, &next)) return false;
    return true;
}

/* The mapping query run by DuckDB over the rows (consumed). */
static bool run_sql(tl_lake *lake, const fixture *fx, kbatches *rows, kbatches *out)
{
    const ktable *t = &fx->c.tables[0];
    const ksource *s = &fx->c.sources[0];
    kbuf sql = {0};
    kcompile_table(&fx->c, t, s, NULL, true, &sql);
    struct ArrowArrayStream in, res;
    CHECK(kbatches_stream(rows, &rows->items[0].schema, &in));
    tl_sql_input input = {KARET_SRC, &in};
    tl_sql_options so = {.inputs = &input, .inputs_len = 1, .only_namespace = 1};
    tl_error err = {0};
    tl_status st = tl_lake_query(lake, kbuf_cstr(&sql), &so, &res, NULL, &err);
    kbuf_free(&sql);
    if (st != TL_OK) {
        unit_fail(__FILE__, __LINE__, "query: %s", err.message);
        return false;
    }
    char msg[256];
    return kbatches_drain(&res, out, msg, sizeof msg) == 0;
}

/* Row r of a list of batches: the batch and its row. */
static const kbatch *row_at(const kbatches *l, int64_t r, int64_t *in)
{
    for (size_t i = 0; i < l->len; i++) {
        if (r < l->items[i].array.length) {
            *in = r;
            return &l->items[i];
        }
        r -= l->items[i].array.length;
    }
    return NULL;
}

static int64_t total_rows(const kbatches *l)
{
    int64_t n = 0;
    for (size_t i = 0; i < l->len; i++) n += l->items[i].array.length;
    return n;
}

/* Every column of the DuckDB result against the C one, cell by cell. */
static void same_rows(const kbatches *want, const kbatches *got, const char *what)
{
    if (total_rows(want) != total_rows(got)) {
        unit_fail(__FILE__, __LINE__, "%s: %lld rows from DuckDB, %lld in C", what,
                  (long long)total_rows(want), (long long)total_rows(got));
        return;
    }
    kbuf a = {0}, b = {0};
    for (int64_t r = 0; r < total_rows(want); r++) {
        int64_t wr = 0, gr = 0;
        const kbatch *w = row_at(want, r, &wr), *g = row_at(got, r, &gr);
        for (int64_t c = 0; c < w->schema.n_children; c++) {
            const char *name = w->schema.children[c]->name;
            int gc = kbatch_column(&g->schema, name);
            if (gc < 0) {
                unit_fail(__FILE__, __LINE__, "%s: no column %s in C", what, name);
                continue;
            }
            kbuf_truncate(&a, 0);
            kbuf_truncate(&b, 0);
            kcol_key(kbatch_col(w, (int)c), wr, &a);
            kcol_key(kbatch_col(g, gc), gr, &b);
            if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
                unit_fail(__FILE__, __LINE__, "%s: row %lld column %s differs", what, (long long)r,
                          name);
        }
    }
    kbuf_free(&a);
    kbuf_free(&b);
}

static tl_lake *open_lake(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/lake", unit_tmpdir());
    tl_lake *lake = NULL;
    tl_error err = {0};
    if (tl_lake_open(path, NULL, &lake, &err) != TL_OK)
        unit_fail(__FILE__, __LINE__, "lake: %s", err.message);
    return lake;
}

/* Maps ROWS (or `rows`) through `config` both ways; returns what C said. */
static int compare(tl_lake *lake, const char *config, const char *rows, const char *what)
{
    fixture fx;
    if (!parse(&fx, config)) return -2;
    const ktable *t = &fx.c.tables[0];
    const ksource *s = &fx.c.sources[0];
    bool oom = true;
    kfast *p = kfast_plan(&fx.c, t, s, &oom);
    CHECK(p != NULL && !oom);
    kbatches src1 = {0}, src2 = {0}, want = {0}, got = {0};
    tl_reader *r1 = NULL, *r2 = NULL;
    int rc = -2;
    if (p && read_source(s, rows, &src1, &r1) && read_source(s, rows, &src2, &r2)) {
        rc = kfast_map(p, &src1, &got);
        if (rc == 0 && run_sql(lake, &fx, &src2, &want)) same_rows(&want, &got, what);
        if (rc == 1) CHECK(got.len == 0);
    }
    kbatches_free(&src1);
    kbatches_free(&src2);
    kbatches_free(&want);
    kbatches_free(&got);
    tl_reader_close(r1);
    tl_reader_close(r2);
    kfast_free(p);
    fixture_free(&fx);
    return rc;
}

/* A config of one source, one table of `types` and one mapping of `exprs`
 * (JSON texts), with `where` and `filter` (or NULL). */
static char *config_of(const char *const *names, const char *const *types, const char *const *exprs,
                       size_t n, const char *where, const char *filter)
{
    kbuf b = {0};
    kbuf_printf(&b,
                "{\"version\": 1, \"source_containers\": [{\"id\": \"src\", \"name\": \"src\", "
                "\"path_prefix\": \"p/\", \"format\": \"ndjson\", \"schema\": %s",
                SOURCE_SCHEMA);
    if (filter) kbuf_printf(&b, ", \"record_filter\": %s", filter);
    kbuf_puts(&b, "}], \"dimensions\": [], \"mappings\": [");
    for (int m = 0; m < 2; m++) { /* two mappings into one table: a union, in mapping order */
        kbuf_printf(&b,
                    "%s{\"id\": \"m%d\", \"name\": \"m\", \"source_container_id\": \"src\", "
                    "\"analytic_table_id\": \"t\", \"columns\": [",
                    m ? ", " : "", m);
        for (size_t i = 0; i < n; i++)
            if (m == 0 || i % 2 == 0) /* the second fills only some columns */
                kbuf_printf(&b, "%s{\"name\": \"%s\", \"expr\": %s}", i ? ", " : "", names[i],
                            exprs[i]);
        kbuf_puts(&b, "]");
        if (where && m == 0) kbuf_printf(&b, ", \"where\": %s", where);
        kbuf_puts(&b, "}");
    }
    kbuf_puts(&b, "], \"analytic_tables\": [{\"id\": \"t\", \"name\": \"t\", \"schema\": [");
    for (size_t i = 0; i < n; i++)
        kbuf_printf(&b, "%s{\"name\": \"%s\", \"type\": \"%s\"}", i ? ", " : "", names[i],
                    types[i]);
    kbuf_puts(&b, "]}]}");
    return kbuf_take(&b);
}

#define N_EXPRS 34

static const char *const NAMES[N_EXPRS] = {
    "c_s",   "c_i",  "c_f",   "c_g",  "c_b",  "c_d",   "up",  "low",  "add",
    "sub",   "mul",  "divi",  "addf", "subf", "mulf",  "i2f", "eq_s", "lt_s",
    "ge_s",  "ne_i", "gt_if", "le_b", "eq_d", "and_",  "or_", "not_", "fu_s",
    "fu_ms", "fu_f", "fu_fm", "nul",  "cmpn", "lit_s", "none"};
static const char *const TYPES[N_EXPRS] = {
    "string", "int64", "float64", "float64", "bool",    "date",    "string",  "string", "int64",
    "int64",  "int64", "float64", "float64", "float64", "float64", "float64", "bool",   "bool",
    "bool",   "bool",  "bool",    "bool",    "bool",    "bool",    "bool",    "bool",   "date",
    "date",   "date",  "date",    "string",  "bool",    "string",  "int64"};

static void exprs_of(const char **e, char bufs[][128])
{
    size_t k = 0;
    e[k++] = col("s", bufs[0], 128);
    e[k++] = col("i", bufs[1], 128);
    e[k++] = col("f", bufs[2], 128);
    e[k++] = col("g", bufs[3], 128);
    e[k++] = col("b", bufs[4], 128);
    e[k++] = col("d", bufs[5], 128);
#define C(n) "{\"kind\": \"col\", \"name\": \"" n "\"}"
#define BIN(k, l, r) "{\"kind\": \"" k "\", \"left\": " l ", \"right\": " r "}"
#define UN(k, x) "{\"kind\": \"" k "\", \"input\": " x "}"
    e[k++] = UN("upper", C("s"));
    e[k++] = UN("lower", C("t"));
    e[k++] = BIN("add", C("i"), C("j"));
    e[k++] = BIN("sub", C("i"), C("j"));
    e[k++] = BIN("mul", C("i"), C("j"));
    e[k++] = BIN("div", C("i"), "{\"kind\": \"num\", \"value\": 1024}");
    e[k++] = BIN("add", C("f"), C("i"));
    e[k++] = BIN("sub", C("g"), "{\"kind\": \"num\", \"value\": 0.5}");
    e[k++] = BIN("mul", C("f"), C("j"));
    e[k++] = C("j"); /* int64 into a float64 column */
    e[k++] = BIN("eq", C("s"), C("t"));
    e[k++] = BIN("lt", C("s"), C("t"));
    e[k++] = BIN("ge", C("t"), "{\"kind\": \"str\", \"value\": \"ab\"}");
    e[k++] = BIN("ne", C("i"), C("j"));
    e[k++] = BIN("gt", C("i"), C("g"));
    e[k++] = BIN("le", C("b"), "{\"kind\": \"bool\", \"value\": false}");
    e[k++] = BIN("eq", C("d"), C("d"));
    e[k++] = BIN("and", C("b"), BIN("gt", C("j"), "{\"kind\": \"num\", \"value\": 0}"));
    e[k++] = BIN("or", C("b"), BIN("lt", C("j"), "{\"kind\": \"num\", \"value\": 1}"));
    e[k++] = UN("not", C("b"));
    e[k++] = "{\"kind\": \"from_unix\", \"input\": " C("i") "}";
    e[k++] = "{\"kind\": \"from_unix\", \"input\": " C("j") ", \"unit\": \"ms\"}";
    e[k++] = "{\"kind\": \"from_unix\", \"input\": " C("g") "}";
    e[k++] = "{\"kind\": \"from_unix\", \"input\": " C("f") ", \"unit\": \"ms\"}";
    e[k++] = "{\"kind\": \"null\"}";
    e[k++] = BIN("eq", C("s"), "{\"kind\": \"null\"}");
    e[k++] = "{\"kind\": \"str\", \"value\": \"it's \\u00e9\"}";
    e[k++] = "{\"kind\": \"null\"}";
#undef C
#undef BIN
#undef UN
}

static void test_same_as_duckdb(void)
{
    tl_lake *lake = open_lake();
    const char *e[N_EXPRS];
    char bufs[6][128];
    exprs_of(e, bufs);
    char *plain = config_of(NAMES, TYPES, e, N_EXPRS, NULL, NULL);
    CHECK(compare(lake, plain, ROWS, "no filter") == 0);
    /* where names output columns (converted), the record filter source ones */
    char *filtered = config_of(
        NAMES, TYPES, e, N_EXPRS,
        "{\"kind\": \"ne\", \"left\": {\"kind\": \"col\", \"name\": \"up\"}, \"right\": "
        "{\"kind\": \"str\", \"value\": \"OPTIONS\"}}",
        "{\"kind\": \"or\", \"left\": {\"kind\": \"col\", \"name\": \"b\"}, \"right\": {\"kind\": "
        "\"ge\", \"left\": {\"kind\": \"col\", \"name\": \"f\"}, \"right\": {\"kind\": \"num\", "
        "\"value\": 0}}}");
    CHECK(compare(lake, filtered, ROWS, "filters") == 0);
    free(plain);
    free(filtered);
    tl_lake_close(lake);
}

/* Values whose result C does not give as DuckDB would: the file goes to
 * DuckDB. */
static void test_handed_back(void)
{
    tl_lake *lake = open_lake();
    static const struct {
        const char *expr, *type, *row;
    } cases[] = {
        {"{\"kind\": \"upper\", \"input\": {\"kind\": \"col\", \"name\": \"s\"}}", "string",
         "{\"s\": \"caf\\u00e9\"}\n"},
        {"{\"kind\": \"div\", \"left\": {\"kind\": \"col\", \"name\": \"i\"}, \"right\": "
         "{\"kind\": \"col\", \"name\": \"j\"}}",
         "float64", "{\"i\": 1, \"j\": 0}\n"},
        {"{\"kind\": \"mul\", \"left\": {\"kind\": \"col\", \"name\": \"f\"}, \"right\": "
         "{\"kind\": \"num\", \"value\": 1e300}}",
         "float64", "{\"f\": 1e10}\n"},
        {"{\"kind\": \"from_unix\", \"input\": {\"kind\": \"col\", \"name\": \"f\"}}", "date",
         "{\"f\": 1e306}\n"},
        {"{\"kind\": \"gt\", \"left\": {\"kind\": \"col\", \"name\": \"f\"}, \"right\": "
         "{\"kind\": \"num\", \"value\": 0}}",
         "bool", "f\n1.5\nnan\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *names[] = {"x"}, *types[] = {cases[i].type}, *exprs[] = {cases[i].expr};
        char *config = config_of(names, types, exprs, 1, NULL, NULL);
        int rc = compare(lake, config, cases[i].row, cases[i].expr);
        if (rc != 1) unit_fail(__FILE__, __LINE__, "case %zu: %d, not handed back", i, rc);
        /* the same expression over plain values stays in C */
        CHECK(compare(lake, config, "{\"s\": \"cafe\", \"i\": 1, \"j\": 2, \"f\": 2.5}\n",
                      "plain") == 0);
        free(config);
    }
    tl_lake_close(lake);
}

/* What the plan leaves to DuckDB entirely. */
static void test_no_plan(void)
{
    static const char *const exprs[] = {
        "{\"kind\": \"trim\", \"input\": {\"kind\": \"col\", \"name\": \"s\"}}",
        "{\"kind\": \"upper\", \"input\": {\"kind\": \"col\", \"name\": \"i\"}}",
        "{\"kind\": \"cast\", \"input\": {\"kind\": \"col\", \"name\": \"s\"}, \"to\": \"int64\"}",
        "{\"kind\": \"col\", \"name\": \"i\"}", /* into a string column */
    };
    static const char *const types[] = {"string", "string", "int64", "string"};
    for (size_t i = 0; i < sizeof exprs / sizeof *exprs; i++) {
        const char *names[] = {"x"}, *ty[] = {types[i]}, *ex[] = {exprs[i]};
        char *config = config_of(names, ty, ex, 1, NULL, NULL);
        fixture fx;
        if (parse(&fx, config)) {
            bool oom = true;
            kfast *p = kfast_plan(&fx.c, &fx.c.tables[0], &fx.c.sources[0], &oom);
            if (p != NULL) unit_fail(__FILE__, __LINE__, "%s has a plan", exprs[i]);
            CHECK(!oom);
            kfast_free(p);
            fixture_free(&fx);
        }
        free(config);
    }
    /* an assertion stays SQL */
    const char *names[] = {"x"}, *ty[] = {"int64"},
               *ex[] = {"{\"kind\": \"col\", \"name\": \"i\"}"};
    char *config = config_of(names, ty, ex, 1, NULL, NULL);
    char *at = strstr(config, "\"type\": \"int64\"}]}]");
    CHECK(at != NULL);
    kbuf b = {0};
    kbuf_printf(&b, "%.*s\"type\": \"int64\", \"assertions\": {\"min\": 0}}]}]}",
                (int)(at - config), config);
    fixture fx;
    if (parse(&fx, kbuf_cstr(&b))) {
        bool oom = true;
        kfast *p = kfast_plan(&fx.c, &fx.c.tables[0], &fx.c.sources[0], &oom);
        CHECK(p == NULL && !oom);
        kfast_free(p);
        fixture_free(&fx);
    }
    kbuf_free(&b);
    free(config);
}

UNIT_TESTS(UNIT(test_same_as_duckdb), UNIT(test_handed_back), UNIT(test_no_plan))
