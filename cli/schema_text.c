#include "schema_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_own.h"
#include "cli.h"

/* The Arrow format of a type name, written into buf; NULL when unknown. */
static const char *type_format(const char *type, char *buf, size_t size)
{
    static const char *const names[][2] = {
        {"timestamptz", "tsu:UTC"},
        {"timestamp", "tsu:"},
        {"date", "tdD"},
        {"string", "u"},
        {"str", "u"},
        {"utf8", "u"},
        {"binary", "z"},
        {"bool", "b"},
        {"boolean", "b"},
        {"int8", "c"},
        {"int16", "s"},
        {"int32", "i"},
        {"int", "i"},
        {"int64", "l"},
        {"long", "l"},
        {"uint8", "C"},
        {"uint16", "S"},
        {"uint32", "I"},
        {"uint64", "L"},
        {"float32", "f"},
        {"float", "f"},
        {"float64", "g"},
        {"double", "g"},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(type, names[i][0]) == 0) return names[i][1];
    int p, s, n = 0;
    if (sscanf(type, "decimal(%d,%d)%n", &p, &s, &n) == 2 && type[n] == 0 && p >= 1 && p <= 38 &&
        s >= 0 && s <= p) {
        snprintf(buf, size, "d:%d,%d", p, s);
        return buf;
    }
    return NULL;
}

/* Splits on commas that are not inside parentheses (decimal(10,2)). */
static int split(char *spec, char **parts, int max)
{
    int n = 0, depth = 0;
    parts[n++] = spec;
    for (char *p = spec; *p; p++) {
        if (*p == '(') depth++;
        if (*p == ')') depth--;
        if (*p == ',' && depth == 0) {
            if (n == max) return -1;
            *p = 0;
            parts[n++] = p + 1;
        }
    }
    return n;
}

static char *trim(char *s)
{
    while (*s == ' ') s++;
    size_t n = strlen(s);
    while (n && s[n - 1] == ' ') s[--n] = 0;
    return s;
}

static tl_status parse_column(char *part, struct ArrowSchema *child, tl_error *err)
{
    char *colon = strrchr(part, ':');
    if (colon == NULL || colon == part)
        return cli_error_set(err, TL_ERR_INVALID, "schema: \"%s\" is not NAME:TYPE", trim(part));
    *colon = 0;
    char *name = trim(part), *type = trim(colon + 1);
    size_t tl = strlen(type);
    bool required = tl && type[tl - 1] == '!';
    if (required) type[tl - 1] = 0;
    char buf[32];
    const char *format = type_format(type, buf, sizeof buf);
    if (format == NULL)
        return cli_error_set(err, TL_ERR_INVALID,
                             "schema: column \"%s\": unknown type \"%s\" (timestamptz, timestamp, "
                             "date, string, binary, bool, int8..int64, uint8..uint64, float32, "
                             "float64, decimal(P,S))",
                             name, type);
    if (name[0] == 0) return cli_error_set(err, TL_ERR_INVALID, "schema: a column has no name");
    if (cli_schema_new(child, format, name, required ? 0 : ARROW_FLAG_NULLABLE, 0) != 0)
        return cli_error_nomem(err);
    return TL_OK;
}

tl_status cli_schema_parse(const char *spec, struct ArrowSchema *out, tl_error *err)
{
    char *copy = strdup(spec);
    char **parts = calloc(strlen(spec) + 2, sizeof *parts);
    tl_status st = copy && parts ? TL_OK : cli_error_nomem(err);
    int n = st == TL_OK ? split(copy, parts, (int)strlen(spec) + 1) : 0;
    if (st == TL_OK && cli_schema_new(out, "+s", "", 0, n) != 0) st = cli_error_nomem(err);
    for (int i = 0; st == TL_OK && i < n; i++) {
        st = parse_column(parts[i], out->children[i], err);
        for (int j = 0; st == TL_OK && j < i; j++)
            if (strcmp(out->children[j]->name, out->children[i]->name) == 0)
                st = cli_error_set(err, TL_ERR_INVALID, "schema: column \"%s\" appears twice",
                                   out->children[i]->name);
        if (st != TL_OK) cli_schema_release(out);
    }
    free(copy);
    free(parts);
    return st;
}
