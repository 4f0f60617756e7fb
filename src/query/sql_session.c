#include "query/sql_session.h"

#include <stdlib.h>
#include <string.h>

#include "table/settings.h"

struct tl_sql_session {
    char *ns;
    tl_strlist pairs; /* canonical key, value, ... */
};

static struct tl_sql_session *find(const tl_query_engine *e, const char *ns)
{
    for (size_t i = 0; i < e->n_sessions; i++)
        if (strcmp(e->sessions[i].ns, ns) == 0) return &e->sessions[i];
    return NULL;
}

static struct tl_sql_session *find_or_add(tl_query_engine *e, const char *ns)
{
    struct tl_sql_session *s = find(e, ns);
    if (s) return s;
    s = realloc(e->sessions, (e->n_sessions + 1) * sizeof *s);
    if (s == NULL) return NULL;
    e->sessions = s;
    s = &s[e->n_sessions];
    *s = (struct tl_sql_session){strdup(ns), {0}};
    if (s->ns == NULL) return NULL;
    e->n_sessions++;
    return s;
}

/* Removes key's pair from the list. */
static void drop(tl_strlist *pairs, const char *key)
{
    for (size_t i = 0; i + 1 < pairs->len; i += 2) {
        if (strcmp(pairs->items[i], key) != 0) continue;
        free(pairs->items[i]);
        free(pairs->items[i + 1]);
        memmove(&pairs->items[i], &pairs->items[i + 2], (pairs->len - i - 2) * sizeof(char *));
        pairs->len -= 2;
        return;
    }
}

/* Sets key's value, the list as it was when out of memory (a failed SET
 * keeps the value before it). */
static int put(tl_strlist *pairs, const char *key, const char *value)
{
    char *copy = strdup(value);
    if (copy == NULL) return -1;
    for (size_t i = 0; i + 1 < pairs->len; i += 2) {
        if (strcmp(pairs->items[i], key) != 0) continue;
        free(pairs->items[i + 1]);
        pairs->items[i + 1] = copy;
        return 0;
    }
    if (tl_strlist_push(pairs, key) == 0) {
        if (tl_strlist_push_owned(pairs, copy) == 0) return 0;
        free(pairs->items[--pairs->len]);
        pairs->items[pairs->len] = NULL;
    }
    free(copy);
    return -1;
}

static tl_status as_query_error(tl_status st, tl_error *err)
{
    if (st == TL_ERR_INVALID && err) err->code = TL_ERR_QUERY; /* the reference's class */
    return st == TL_ERR_INVALID ? TL_ERR_QUERY : st;
}

tl_status tl_sql_session_set(tl_query_engine *e, const char *ns, const char *name,
                             const char *value, tl_error *err)
{
    const char *key = NULL;
    if (name) {
        tl_status st = tl_setting_key(name, TL_LEVEL_SESSION, false, &key, err);
        if (st == TL_OK && key == NULL)
            st = tl_error_set(err, TL_ERR_QUERY,
                              "SET statements are refused but for Timelake's own settings (SET "
                              "timelake.<setting> = value; `timelake settings` lists them), and "
                              "\"%s\" is none: SQL over the lake runs one SELECT query over the "
                              "lake's tables and changes nothing else",
                              name);
        if (st == TL_OK && value) st = tl_setting_check(tl_setting_find(key), value, err);
        TL_TRY(as_query_error(st, err));
    }
    struct tl_sql_session *s = value ? find_or_add(e, ns) : find(e, ns);
    if (value && s == NULL) return tl_error_nomem(err);
    if (s == NULL) return TL_OK;
    if (name == NULL) {
        tl_strlist_free(&s->pairs);
        return TL_OK;
    }
    if (value == NULL) {
        drop(&s->pairs, key);
        return TL_OK;
    }
    bool flag; /* SHOW gives a boolean as the reference does: true or false */
    if (tl_setting_find(key)->kind == TL_SETTING_BOOL && tl_setting_parse_bool(value, &flag))
        value = flag ? "true" : "false";
    return put(&s->pairs, key, value) == 0 ? TL_OK : tl_error_nomem(err);
}

tl_status tl_sql_session_settings(const tl_query_engine *e, const char *ns, const char *const *call,
                                  tl_strlist *out, tl_error *err)
{
    *out = (tl_strlist){0};
    const struct tl_sql_session *s = find(e, ns);
    bool ok = true;
    for (const char *const *kv = call; ok && kv && kv[0] && kv[1]; kv += 2)
        ok = tl_strlist_push(out, kv[0]) == 0 && tl_strlist_push(out, kv[1]) == 0;
    for (size_t i = 0; ok && s && i < s->pairs.len; i++)
        ok = tl_strlist_push(out, s->pairs.items[i]) == 0;
    if (ok) return TL_OK;
    tl_strlist_free(out);
    return tl_error_nomem(err);
}

void tl_sql_sessions_free(tl_query_engine *e)
{
    for (size_t i = 0; i < e->n_sessions; i++) {
        free(e->sessions[i].ns);
        tl_strlist_free(&e->sessions[i].pairs);
    }
    free(e->sessions);
    e->sessions = NULL;
    e->n_sessions = 0;
}

bool tl_sql_setting_known(const char *name)
{
    const tl_setting *s = tl_setting_find(name);
    return s != NULL && (s->levels & TL_LEVEL_SESSION);
}

char *tl_sql_setting_show_name(const char *name)
{
    if (!tl_sql_setting_known(name)) return NULL;
    const tl_setting *s = tl_setting_find(name);
    char *shown = tl_strdup_printf(TL_SETTING_PREFIX "%s", s->info.name);
    for (char *c = shown ? shown + strlen(TL_SETTING_PREFIX) : NULL; c && *c; c++)
        if (*c == '-') *c = '_';
    return shown;
}
