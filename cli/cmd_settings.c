/* timelake settings and alter: the settings registry (tl_setting_at), a
 * table's values of it, and changes of a table's properties. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

#define PREFIX "timelake."

/* The table property of a setting's value in props, or NULL. */
static const char *value_in(char **props, const char *name)
{
    for (size_t i = 0; props && props[i]; i += 2)
        if (strncmp(props[i], PREFIX, strlen(PREFIX)) == 0 &&
            strcmp(props[i] + strlen(PREFIX), name) == 0)
            return props[i + 1];
    return NULL;
}

static bool is_setting(const char *key)
{
    if (strncmp(key, PREFIX, strlen(PREFIX)) != 0) return false;
    for (size_t i = 0; tl_setting_at(i); i++)
        if (strcmp(tl_setting_at(i)->name, key + strlen(PREFIX)) == 0) return true;
    return false;
}

/* A setting's value in a table: the property, else for one fixed at
 * creation nothing (the table has none: "-"), else the default. */
static const char *effective(const tl_setting_info *s, char **props, const char **source)
{
    const char *v = value_in(props, s->name);
    *source = v || strcmp(s->levels, "create") == 0 ? "table" : "default";
    if (v) return v;
    if (strcmp(s->levels, "create") == 0 || s->default_value[0] == '\0') return "-";
    return s->default_value;
}

static json_t *setting_json(const tl_setting_info *s)
{
    return json_pack("{s:s,s:s,s:s,s:s,s:s}", "name", s->name, "values", s->values, "default",
                     s->default_value, "levels", s->levels, "description", s->description);
}

static int print_registry(const cli_args *a)
{
    size_t n = 0;
    while (tl_setting_at(n)) n++;
    if (a->json) {
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++) json_array_append_new(arr, setting_json(tl_setting_at(i)));
        cli_print_json(arr);
        return EXIT_OK;
    }
    const char **cells = calloc((n + 1) * 5, sizeof *cells);
    if (cells == NULL) return EXIT_STORAGE;
    const char *head[] = {"SETTING", "VALUES", "DEFAULT", "SET AT", "WHAT IT DOES"};
    memcpy(cells, head, sizeof head);
    for (size_t i = 0; i < n; i++) {
        const tl_setting_info *s = tl_setting_at(i);
        const char *row[] = {s->name, s->values, s->default_value[0] ? s->default_value : "-",
                             s->levels[0] ? s->levels : "(Timelake)", s->description};
        memcpy(&cells[(i + 1) * 5], row, sizeof row);
    }
    cli_print_table(cells, (int)n + 1, 5);
    free(cells);
    return EXIT_OK;
}

/* Each setting's value in the table (or its default), then the table's
 * other properties. */
static int print_table_settings(const cli_args *a, tl_table *t, char **props)
{
    size_t n = 0, n_props = 0;
    while (tl_setting_at(n)) n++;
    while (props[2 * n_props]) n_props++;
    if (a->json) {
        json_t *set = json_array(), *other = json_object();
        for (size_t i = 0; i < n; i++) {
            const tl_setting_info *s = tl_setting_at(i);
            const char *source, *v = effective(s, props, &source);
            json_array_append_new(set, json_pack("{s:s,s:s?,s:s}", "name", s->name, "value",
                                                 strcmp(v, "-") ? v : NULL, "source", source));
        }
        for (size_t i = 0; i < n_props; i++)
            if (!is_setting(props[2 * i]))
                json_object_set_new(other, props[2 * i], json_string(props[2 * i + 1]));
        cli_print_json(json_pack("{s:s,s:I,s:o,s:o}", "table", tl_table_name(t), "version",
                                 (json_int_t)tl_table_version(t), "settings", set, "properties",
                                 other));
        return EXIT_OK;
    }
    const char **cells = calloc((n + n_props + 1) * 3, sizeof *cells);
    if (cells == NULL) return EXIT_STORAGE;
    const char *head[] = {"SETTING", "VALUE", "FROM"};
    memcpy(cells, head, sizeof head);
    size_t rows = 1;
    for (size_t i = 0; i < n; i++, rows++) {
        const tl_setting_info *s = tl_setting_at(i);
        const char *v = value_in(props, s->name);
        const char *row[] = {s->name,
                             v                     ? v
                             : s->default_value[0] ? s->default_value
                                                   : "-",
                             v ? "table" : "default"};
        memcpy(&cells[rows * 3], row, sizeof row);
    }
    for (size_t i = 0; i < n_props; i++) {
        if (is_setting(props[2 * i])) continue;
        const char *row[] = {props[2 * i], props[2 * i + 1], "property"};
        memcpy(&cells[rows++ * 3], row, sizeof row);
    }
    cli_print_table(cells, (int)rows, 3);
    free(cells);
    return EXIT_OK;
}

int cmd_settings(cli_args *a)
{
    const char *name = cli_table_name(a, true);
    if (a->npos > 0) return cli_usage(a, "unexpected argument \"%s\"", a->pos[0]);
    if (name == NULL) return print_registry(a);
    tl_lake *lake = NULL;
    tl_table *t = NULL;
    char **props = NULL;
    tl_error err;
    int rc = cli_open_lake(a, &lake);
    if (rc == EXIT_OK) rc = cli_open_table(a, lake, name, &t);
    if (rc == EXIT_OK && tl_table_properties(t, &props, &err) != TL_OK) rc = cli_fail(a, &err);
    if (rc == EXIT_OK) rc = print_table_settings(a, t, props);
    tl_strings_free(props);
    tl_table_close(t);
    tl_lake_close(lake);
    return rc;
}

int cmd_alter(cli_args *a)
{
    const char *name = cli_table_name(a, true);
    if (name == NULL) return cli_usage(a, "no table: give NAME, --table or set TIMELAKE_TABLE");
    if (a->npos > 0) return cli_usage(a, "unexpected argument \"%s\"", a->pos[0]);
    const char *const *unset;
    int n_unset = cli_opt_all(a, "unset", &unset);
    const char *changes[2 * (64 + 64) + 1];
    int rc = cli_key_values(a, "set", changes);
    if (rc >= 0) return rc;
    int n = 0;
    while (changes[2 * n]) n++;
    if (n + n_unset == 0)
        return cli_usage(a, "nothing to change: give --set KEY=VALUE or --unset KEY");
    for (int i = 0; i < n_unset; i++) {
        changes[2 * n] = unset[i];
        changes[2 * n++ + 1] = NULL;
    }
    changes[2 * n] = NULL;
    tl_lake *lake = NULL;
    tl_table *t = NULL;
    tl_error err;
    rc = cli_open_lake(a, &lake);
    if (rc == EXIT_OK) rc = cli_open_table(a, lake, name, &t);
    int64_t before = t ? tl_table_version(t) : 0;
    if (rc == EXIT_OK && tl_table_set_properties(t, changes, &err) != TL_OK) rc = cli_fail(a, &err);
    if (rc == EXIT_OK && a->json)
        cli_print_json(json_pack("{s:s,s:I,s:b}", "table", tl_table_name(t), "version",
                                 (json_int_t)tl_table_version(t), "changed",
                                 tl_table_version(t) != before));
    else if (rc == EXIT_OK)
        printf("altered %s (version %lld)\n", tl_table_name(t), (long long)tl_table_version(t));
    tl_table_close(t);
    tl_lake_close(lake);
    return rc;
}
