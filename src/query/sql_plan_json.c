#include "query/sql_plan_json.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/strlist.h"

const char *tl_js_str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

bool tl_js_is_type(const json_t *o, const char *type)
{
    return strcmp(tl_js_str(o, "type"), type) == 0;
}

bool tl_js_is_class(const json_t *o, const char *cls)
{
    return strcmp(tl_js_str(o, "class"), cls) == 0;
}

bool tl_js_names_column(const json_t *e, const char *alias, const char *column)
{
    if (!tl_js_is_class(e, "COLUMN_REF")) return false;
    const json_t *names = json_object_get(e, "column_names");
    size_t n = json_array_size(names);
    const char *a = json_string_value(json_array_get(names, 0));
    const char *b = json_string_value(json_array_get(names, 1));
    if (n == 1) return a && strcasecmp(a, column) == 0;
    return n == 2 && a && b && alias && strcasecmp(a, alias) == 0 && strcasecmp(b, column) == 0;
}

char *tl_js_literal_text(const json_t *e)
{
    if (!tl_js_is_class(e, "CONSTANT")) return NULL;
    const json_t *v = json_object_get(e, "value");
    if (json_is_true(json_object_get(v, "is_null"))) return NULL;
    const char *type = tl_js_str(json_object_get(v, "type"), "id");
    const json_t *value = json_object_get(v, "value");
    if (strcmp(type, "VARCHAR") == 0 && json_is_string(value))
        return strdup(json_string_value(value));
    static const char *const ints[] = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", NULL};
    for (size_t i = 0; ints[i]; i++)
        if (strcmp(type, ints[i]) == 0 && json_is_integer(value))
            return tl_strdup_printf("%lld", (long long)json_integer_value(value));
    return NULL;
}

bool tl_js_is_int(const json_t *e, long long value)
{
    char *text = tl_js_literal_text(e);
    char *want = tl_strdup_printf("%lld", value);
    bool same = text && want && strcmp(text, want) == 0 &&
                strcmp(tl_js_str(json_object_get(json_object_get(e, "value"), "type"), "id"),
                       "VARCHAR") != 0;
    free(text);
    free(want);
    return same;
}

bool tl_js_same_expr(const json_t *a, const json_t *b)
{
    if (json_is_object(a) && json_is_object(b)) {
        const char *k;
        const json_t *v;
        size_t na = 0, nb = 0;
        json_object_foreach((json_t *)a, k, v)
        {
            if (strcmp(k, "query_location") == 0 || strcmp(k, "alias") == 0) continue;
            na++;
            if (!tl_js_same_expr(v, json_object_get(b, k))) return false;
        }
        json_object_foreach((json_t *)b, k, v) nb +=
            strcmp(k, "query_location") != 0 && strcmp(k, "alias") != 0;
        return na == nb;
    }
    if (json_is_array(a) && json_is_array(b)) {
        if (json_array_size(a) != json_array_size(b)) return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!tl_js_same_expr(json_array_get(a, i), json_array_get(b, i))) return false;
        return true;
    }
    return a && b && json_equal((json_t *)a, (json_t *)b);
}
