/* The text form of expressions: examples read and written as the editor
 * shows them, random trees of every kind that must come back unchanged
 * through text, errors that say what and where, hostile input. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expr_text.h"
#include "unit.h"

static json_t *parse_json(const char *s)
{
    json_error_t je;
    json_t *j = json_loads(s, 0, &je);
    if (j == NULL) unit_fail(__FILE__, __LINE__, "bad JSON in the test: %s", je.text);
    return j;
}

/* text reads as the tree `expect`, which is written back as `canonical`. */
static void check_text(const char *text, const char *expect, const char *canonical)
{
    char err[256];
    size_t pos;
    json_t *got = kexpr_from_text(text, err, sizeof err, &pos);
    json_t *want = parse_json(expect);
    if (got == NULL) {
        unit_fail(__FILE__, __LINE__, "\"%s\" did not read: %s (at %zu)", text, err, pos);
    } else if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
        unit_fail(__FILE__, __LINE__, "\"%s\" read as %s, expected %s", text, g, expect);
        free(g);
    } else {
        char *back = kexpr_to_text(got, err, sizeof err);
        CHECK_STR(back, canonical);
        free(back);
    }
    json_decref(got);
    json_decref(want);
}

static void test_examples(void)
{
    check_text("a", "{\"kind\":\"col\",\"name\":\"a\"}", "a");
    check_text("  status >= 500  ",
               "{\"kind\":\"ge\",\"left\":{\"kind\":\"col\",\"name\":\"status\"},"
               "\"right\":{\"kind\":\"num\",\"value\":500}}",
               "status >= 500");
    check_text("a + b * c",
               "{\"kind\":\"add\",\"left\":{\"kind\":\"col\",\"name\":\"a\"},\"right\":{\"kind\":"
               "\"mul\",\"left\":{\"kind\":\"col\",\"name\":\"b\"},\"right\":{\"kind\":\"col\","
               "\"name\":\"c\"}}}",
               "a + b * c");
    check_text("(a + b) * c",
               "{\"kind\":\"mul\",\"left\":{\"kind\":\"add\",\"left\":{\"kind\":\"col\",\"name\":"
               "\"a\"},\"right\":{\"kind\":\"col\",\"name\":\"b\"}},\"right\":{\"kind\":\"col\","
               "\"name\":\"c\"}}",
               "(a + b) * c");
    check_text("a - (b - c)",
               "{\"kind\":\"sub\",\"left\":{\"kind\":\"col\",\"name\":\"a\"},\"right\":{\"kind\":"
               "\"sub\",\"left\":{\"kind\":\"col\",\"name\":\"b\"},\"right\":{\"kind\":\"col\","
               "\"name\":\"c\"}}}",
               "a - (b - c)");
    check_text("a - b - c",
               "{\"kind\":\"sub\",\"left\":{\"kind\":\"sub\",\"left\":{\"kind\":\"col\",\"name\":"
               "\"a\"},\"right\":{\"kind\":\"col\",\"name\":\"b\"}},\"right\":{\"kind\":\"col\","
               "\"name\":\"c\"}}",
               "a - b - c");
    check_text("x == 1.5 AND NOT y OR z <> 'it''s'",
               "{\"kind\":\"or\",\"left\":{\"kind\":\"and\",\"left\":{\"kind\":\"eq\",\"left\":{"
               "\"kind\":\"col\",\"name\":\"x\"},\"right\":{\"kind\":\"num\",\"value\":1.5}},"
               "\"right\":{\"kind\":\"not\",\"input\":{\"kind\":\"col\",\"name\":\"y\"}}},"
               "\"right\":{\"kind\":\"ne\",\"left\":{\"kind\":\"col\",\"name\":\"z\"},\"right\":{"
               "\"kind\":\"str\",\"value\":\"it's\"}}}",
               "x = 1.5 and not y or z != \"it's\"");
    check_text("not (a and b)",
               "{\"kind\":\"not\",\"input\":{\"kind\":\"and\",\"left\":{\"kind\":\"col\",\"name\":"
               "\"a\"},\"right\":{\"kind\":\"col\",\"name\":\"b\"}}}",
               "not (a and b)");
    check_text("-3 * -x",
               "{\"kind\":\"mul\",\"left\":{\"kind\":\"num\",\"value\":-3},\"right\":{\"kind\":"
               "\"sub\",\"left\":{\"kind\":\"num\",\"value\":0},\"right\":{\"kind\":\"col\","
               "\"name\":\"x\"}}}",
               "-3 * (0 - x)");
    check_text("2.0 / 1e3",
               "{\"kind\":\"div\",\"left\":{\"kind\":\"num\",\"value\":2.0},"
               "\"right\":{\"kind\":\"num\",\"value\":1000.0}}",
               "2.0 / 1000.0");
    check_text("substring(name, 2)",
               "{\"kind\":\"substring\",\"input\":{\"kind\":\"col\",\"name\":\"name\"},"
               "\"start\":2}",
               "substring(name, 2)");
    check_text("substring(name, -3, 2)",
               "{\"kind\":\"substring\",\"input\":{\"kind\":\"col\",\"name\":\"name\"},"
               "\"start\":-3,\"length\":2}",
               "substring(name, -3, 2)");
    check_text("concat(\" \", upper(first), last)",
               "{\"kind\":\"concat\",\"sep\":\" \",\"args\":[{\"kind\":\"upper\",\"input\":{"
               "\"kind\":\"col\",\"name\":\"first\"}},{\"kind\":\"col\",\"name\":\"last\"}]}",
               "concat(\" \", upper(first), last)");
    check_text("concat('-')", "{\"kind\":\"concat\",\"sep\":\"-\",\"args\":[]}", "concat(\"-\")");
    check_text("coalesce()", "{\"kind\":\"coalesce\",\"args\":[]}", "coalesce()");
    check_text("if(amount < 0, \"debit\", \"credit\")",
               "{\"kind\":\"if\",\"cond\":{\"kind\":\"lt\",\"left\":{\"kind\":\"col\",\"name\":"
               "\"amount\"},\"right\":{\"kind\":\"num\",\"value\":0}},\"then\":{\"kind\":\"str\","
               "\"value\":\"debit\"},\"else\":{\"kind\":\"str\",\"value\":\"credit\"}}",
               "if(amount < 0, \"debit\", \"credit\")");
    check_text("parse_date(d, \"%d/%m/%Y\")",
               "{\"kind\":\"parse_date\",\"input\":{\"kind\":\"col\",\"name\":\"d\"},"
               "\"format\":\"%d/%m/%Y\"}",
               "parse_date(d, \"%d/%m/%Y\")");
    check_text("from_unix(ts)",
               "{\"kind\":\"from_unix\",\"input\":{\"kind\":\"col\",\"name\":"
               "\"ts\"}}",
               "from_unix(ts)");
    check_text("from_unix(ts, \"ms\")",
               "{\"kind\":\"from_unix\",\"input\":{\"kind\":\"col\",\"name\":\"ts\"},"
               "\"unit\":\"ms\"}",
               "from_unix(ts, \"ms\")");
    check_text("CAST(bytes, float64)",
               "{\"kind\":\"cast\",\"input\":{\"kind\":\"col\",\"name\":\"bytes\"},"
               "\"to\":\"float64\"}",
               "cast(bytes, float64)");
    check_text("dim_ref(categories, description, \"category\")",
               "{\"kind\":\"dim_ref\",\"dim_id\":\"categories\",\"input\":{\"kind\":\"col\","
               "\"name\":\"description\"},\"value\":\"category\"}",
               "dim_ref(categories, description, \"category\")");
    check_text("dim_ref(\"my-dim\", x)",
               "{\"kind\":\"dim_ref\",\"dim_id\":\"my-dim\",\"input\":{\"kind\":\"col\","
               "\"name\":\"x\"}}",
               "dim_ref(\"my-dim\", x)");
    check_text("col(\"Wéird \\\"col\\\"; DROP\")",
               "{\"kind\":\"col\",\"name\":\"Wéird \\\"col\\\"; DROP\"}",
               "col(\"Wéird \\\"col\\\"; DROP\")");
    check_text("col(\"select\") + col(\"and\")",
               "{\"kind\":\"add\",\"left\":{\"kind\":\"col\",\"name\":\"select\"},\"right\":{"
               "\"kind\":\"col\",\"name\":\"and\"}}",
               "select + col(\"and\")");
    check_text("add(1, 2)",
               "{\"kind\":\"add\",\"left\":{\"kind\":\"num\",\"value\":1},\"right\":{\"kind\":"
               "\"num\",\"value\":2}}",
               "1 + 2");
    check_text("null = TRUE",
               "{\"kind\":\"eq\",\"left\":{\"kind\":\"null\"},\"right\":{\"kind\":"
               "\"bool\",\"value\":true}}",
               "null = true");
    check_text("\"tab\\there\\u00e9\"", "{\"kind\":\"str\",\"value\":\"tab\\there\\u00e9\"}",
               "\"tab\\there\u00e9\"");
    check_text("{\"kind\": \"col\", \"name\": \"j\"}", "{\"kind\":\"col\",\"name\":\"j\"}", "j");
}

/* text is refused with a message containing `part`, at character `at`. */
/* The real at the end of a chain of "right" fields of tree. */
static double right_most(const json_t *tree)
{
    while (json_object_get(tree, "right")) tree = json_object_get(tree, "right");
    return json_real_value(json_object_get(tree, "value"));
}

/* -0.0 is written with its sign and reads back as -0.0 (json_equal cannot
 * tell: it compares reals with ==), alone and as an operand; 0.0 stays
 * unsigned. */
static void test_negative_zero_keeps_its_sign(void)
{
    static const struct {
        const char *tree, *text;
        int negative;
    } cases[] = {
        {"{\"kind\":\"num\",\"value\":-0.0}", "-0.0", 1},
        {"{\"kind\":\"num\",\"value\":0.0}", "0.0", 0},
        {"{\"kind\":\"sub\",\"left\":{\"kind\":\"col\",\"name\":\"x\"},\"right\":{"
         "\"kind\":\"num\",\"value\":-0.0}}",
         "x - -0.0", 1},
        {"{\"kind\":\"mul\",\"left\":{\"kind\":\"col\",\"name\":\"x\"},\"right\":{"
         "\"kind\":\"num\",\"value\":-0.0}}",
         "x * -0.0", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *tree = parse_json(cases[i].tree);
        CHECK((signbit(right_most(tree)) != 0) == cases[i].negative);
        char err[256];
        size_t pos;
        char *text = kexpr_to_text(tree, err, sizeof err);
        CHECK_STR(text, cases[i].text);
        json_t *back = text ? kexpr_from_text(text, err, sizeof err, &pos) : NULL;
        CHECK(back && json_equal(back, tree) &&
              json_is_real(json_object_get(back, "value")) ==
                  json_is_real(json_object_get(tree, "value")));
        if (back && (signbit(right_most(back)) != 0) != cases[i].negative)
            unit_fail(__FILE__, __LINE__, "\"%s\" read back with the sign of %g", text,
                      right_most(back));
        json_decref(back);
        free(text);
        json_decref(tree);
    }
}

static void check_error(const char *text, const char *part, long at)
{
    char err[512] = "";
    size_t pos = 99999;
    json_t *got = kexpr_from_text(text, err, sizeof err, &pos);
    if (got) {
        char *g = json_dumps(got, JSON_COMPACT);
        unit_fail(__FILE__, __LINE__, "\"%s\" was accepted as %s", text, g);
        free(g);
        json_decref(got);
        return;
    }
    if (strstr(err, part) == NULL)
        unit_fail(__FILE__, __LINE__, "\"%s\": \"%s\" does not say \"%s\"", text, err, part);
    if (at >= 0 && (long)pos != at)
        unit_fail(__FILE__, __LINE__, "\"%s\": error at %zu, expected %ld (%s)", text, pos, at,
                  err);
}

static void test_errors(void)
{
    check_error("", "empty", 0);
    check_error("   ", "empty", -1);
    check_error("a +", "ends too soon", 3);
    check_error("upper(a", "expected ',' or ')'", 7);
    check_error("upper(a, b)", "upper takes 1 argument, not 2", 0);
    check_error("foo(x)", "unknown function foo", 0);
    check_error("a < b < c", "do not chain", 6);
    check_error("'abc", "no closing '", 0);
    check_error("\"abc", "no closing \"", 0);
    check_error("\"a\\qb\"", "bad escape", 0);
    check_error("substring(x, \"a\")", "substring's start must be a whole number", 0);
    check_error("substring(x, 1.5)", "whole number", 0);
    check_error("parse_date(x, y)", "format must be a string", 0);
    check_error("1 2", "after a complete expression", 2);
    check_error("a)", "closes nothing", 1);
    check_error("(a", "expected ')' to close the '(' at character 1", 2);
    check_error("é + #", "unexpected character 'é'", 0);
    check_error("a + #", "unexpected character '#'", 4);
    check_error("a ! b", "'!' alone", 2);
    check_error("and", "cannot start a value", 0);
    check_error("x = 99999999999999999999", "beyond the 64-bit integers", 4);
    check_error("if(a, b)", "if takes 3 arguments, not 2", 0);
    check_error("substring(x)", "substring takes 2 to 3 arguments, not 1", 0);
    check_error("concat()", "concat takes at least 1 argument, not 0", 0);
    check_error("{\"kind\": ", "not valid JSON", -1);
    check_error("[1]", "unexpected character '['", 0);
    check_error("a + ,", "expected a value, not ','", 4);
}

static void test_deep_input_is_an_error_not_a_crash(void)
{
    size_t n = 100000;
    char *s = malloc(2 * n + 2);
    memset(s, '(', n);
    s[n] = 'x';
    memset(s + n + 1, ')', n);
    s[2 * n + 1] = 0;
    check_error(s, "nested", -1);
    for (size_t i = 0; i < n; i++) s[i] = (char)(i % 2 ? ' ' : '-');
    s[n] = 'x';
    s[n + 1] = 0;
    check_error(s, "nested", -1);
    char *t = malloc(4 * n + 2);
    for (size_t i = 0; i < n; i++) memcpy(t + 4 * i, "not ", 4);
    strcpy(t + 4 * n, "x");
    check_error(t, "nested", -1);
    free(t);
    free(s);
}

static void check_tree_error(const char *tree, const char *part)
{
    json_t *j = parse_json(tree);
    char err[256] = "";
    char *text = kexpr_to_text(j, err, sizeof err);
    if (text)
        unit_fail(__FILE__, __LINE__, "%s was written as \"%s\"", tree, text);
    else if (strstr(err, part) == NULL)
        unit_fail(__FILE__, __LINE__, "%s: \"%s\" does not say \"%s\"", tree, err, part);
    free(text);
    json_decref(j);
}

static void test_trees_that_are_not_expressions(void)
{
    check_tree_error("{\"kind\":\"pow\",\"left\":{\"kind\":\"null\"}}", "unknown expression kind");
    check_tree_error("{\"name\":\"x\"}", "needs a \"kind\"");
    check_tree_error("{\"kind\":\"col\",\"name\":\"x\",\"note\":1}", "no field \"note\"");
    check_tree_error("{\"kind\":\"add\",\"left\":{\"kind\":\"null\"}}", "needs an expression");
    check_tree_error("{\"kind\":\"substring\",\"input\":{\"kind\":\"null\"},\"length\":2}",
                     "needs \"start\"");
    check_tree_error("{\"kind\":\"substring\",\"input\":{\"kind\":\"null\"},\"start\":\"1\"}",
                     "whole number");
    check_tree_error("{\"kind\":\"str\",\"value\":3}", "string");
    check_tree_error("{\"kind\":\"concat\",\"sep\":\",\",\"args\":{}}", "must be a list");
    check_tree_error("[]", "JSON object");
}

/* ---- random trees ---- */

static const char *const NAMES[] = {"a",           "status",  "ts",    "x_1", "_y",  "select",
                                    "and",         "NULL",    "True",  "Not", "a b", "é",
                                    "Wéird \"c\"", "1abc",    "a-b",   "",    "if",  "upper",
                                    "'q'",         "back\\s", "tab\t", "a.b", "日本"};
static const char *const STRS[] = {"",     "x",        "it's", "say \"hi\"", "back\\slash",
                                   "\n\t", "\x01",     "é",    "👍",          "%Y-%m-%d",
                                   "a,b",  "( ) ' \"", "null", "1",          "-"};
#define N_NAMES (sizeof NAMES / sizeof NAMES[0])
#define N_STRS (sizeof STRS / sizeof STRS[0])

static const char *pick(uint64_t *s, const char *const *list, size_t n)
{
    return list[trand(s) % n];
}

static json_t *random_tree(uint64_t *s, int depth);

static json_t *leaf(uint64_t *s)
{
    switch (trand(s) % 6) {
    case 0:
        return json_pack("{s:s,s:s}", "kind", "col", "name", pick(s, NAMES, N_NAMES));
    case 1:
        return json_pack("{s:s,s:s}", "kind", "str", "value", pick(s, STRS, N_STRS));
    case 2: {
        long long v = (long long)(trand(s) % 2001) - 1000;
        if (trand(s) % 10 == 0) v = trand(s) % 2 ? 9223372036854775807LL : -9223372036854775807LL;
        return json_pack("{s:s,s:I}", "kind", "num", "value", (json_int_t)v);
    }
    case 3: {
        static const double reals[] = {0.0, 1.5, -2.25, 1e20, 1e-7, 0.1, -1e300, 123456.789, 2.0};
        return json_pack("{s:s,s:f}", "kind", "num", "value", reals[trand(s) % 9]);
    }
    case 4:
        return json_pack("{s:s,s:b}", "kind", "bool", "value", (int)(trand(s) % 2));
    default:
        return json_pack("{s:s}", "kind", "null");
    }
}

static json_t *random_tree(uint64_t *s, int depth)
{
    if (depth > 5 || trand(s) % 4 == 0) return leaf(s);
    static const char *const bins[] = {"add", "sub", "mul", "div", "eq",  "ne",
                                       "gt",  "lt",  "ge",  "le",  "and", "or"};
    static const char *const unary[] = {"upper", "lower", "trim", "not", "year", "month", "day"};
    int k = (int)(trand(s) % 14);
    json_t *n;
    switch (k) {
    case 0:
    case 1:
    case 2:
    case 3:
        return json_pack("{s:s,s:o,s:o}", "kind", bins[trand(s) % 12], "left",
                         random_tree(s, depth + 1), "right", random_tree(s, depth + 1));
    case 4:
        return json_pack("{s:s,s:o}", "kind", unary[trand(s) % 7], "input",
                         random_tree(s, depth + 1));
    case 5:
        n = json_pack("{s:s,s:o,s:I}", "kind", "substring", "input", random_tree(s, depth + 1),
                      "start", (json_int_t)((int)(trand(s) % 21) - 10));
        if (trand(s) % 2)
            json_object_set_new(n, "length", json_integer((json_int_t)(trand(s) % 9)));
        return n;
    case 6:
        return json_pack("{s:s,s:o,s:o}", "kind", "contains", "input", random_tree(s, depth + 1),
                         "pattern", random_tree(s, depth + 1));
    case 7:
    case 8: {
        json_t *args = json_array();
        for (int i = (int)(trand(s) % 4); i > 0; i--)
            json_array_append_new(args, random_tree(s, depth + 1));
        if (k == 7)
            return json_pack("{s:s,s:s,s:o}", "kind", "concat", "sep", pick(s, STRS, N_STRS),
                             "args", args);
        return json_pack("{s:s,s:o}", "kind", "coalesce", "args", args);
    }
    case 9:
        return json_pack("{s:s,s:o,s:o,s:o}", "kind", "if", "cond", random_tree(s, depth + 1),
                         "then", random_tree(s, depth + 1), "else", random_tree(s, depth + 1));
    case 10:
        return json_pack("{s:s,s:o,s:s}", "kind", "parse_date", "input", random_tree(s, depth + 1),
                         "format", pick(s, STRS, N_STRS));
    case 11:
        n = json_pack("{s:s,s:o}", "kind", "from_unix", "input", random_tree(s, depth + 1));
        if (trand(s) % 2) json_object_set_new(n, "unit", json_string(trand(s) % 2 ? "s" : "ms"));
        return n;
    case 12:
        return json_pack("{s:s,s:o,s:s}", "kind", "cast", "input", random_tree(s, depth + 1), "to",
                         pick(s, NAMES, N_NAMES));
    default:
        n = json_pack("{s:s,s:s,s:o}", "kind", "dim_ref", "dim_id", pick(s, NAMES, N_NAMES),
                      "input", random_tree(s, depth + 1));
        if (trand(s) % 2) json_object_set_new(n, "value", json_string(pick(s, STRS, N_STRS)));
        return n;
    }
}

static void test_random_trees_come_back_unchanged(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 20000 && unit_failures < 5; i++) {
        json_t *tree = random_tree(&seed, 0);
        char err[256];
        size_t pos;
        char *text = kexpr_to_text(tree, err, sizeof err);
        if (text == NULL) {
            char *t = json_dumps(tree, JSON_COMPACT);
            unit_fail(__FILE__, __LINE__, "cannot write %s: %s", t, err);
            free(t);
            json_decref(tree);
            continue;
        }
        json_t *back = kexpr_from_text(text, err, sizeof err, &pos);
        if (back == NULL || !json_equal(back, tree)) {
            char *t = json_dumps(tree, JSON_COMPACT);
            char *b = back ? json_dumps(back, JSON_COMPACT) : NULL;
            unit_fail(__FILE__, __LINE__, "%s\n  -> \"%s\"\n  -> %s (%s at %zu)", t, text,
                      b ? b : "(error)", back ? "" : err, pos);
            free(t);
            free(b);
        } else {
            char *again = kexpr_to_text(back, err, sizeof err);
            CHECK_STR(again, text);
            free(again);
        }
        json_decref(back);
        free(text);
        json_decref(tree);
    }
}

UNIT_TESTS(UNIT(test_examples), UNIT(test_negative_zero_keeps_its_sign), UNIT(test_errors),
           UNIT(test_deep_input_is_an_error_not_a_crash), UNIT(test_trees_that_are_not_expressions),
           UNIT(test_random_trees_come_back_unchanged))
