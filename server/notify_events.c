#include "notify_events.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/cli.h"
#include "../karet/json_text.h"

#define KEY_MAX 1024

static char *dup_string(json_t *v)
{
    return strndup(json_string_value(v), json_string_length(v));
}

/* One event; `i` numbers it in messages. */
static tl_status parse_event(json_t *e, int i, tl_notify_event *out, tl_error *err)
{
    if (!json_is_object(e))
        return cli_error_set(err, TL_ERR_INVALID, "events[%d] is not an object", i);
    json_t *name = json_object_get(e, "eventName"), *bucket = json_object_get(e, "bucket"),
           *obj = json_object_get(e, "object");
    if (!json_is_string(name))
        return cli_error_set(err, TL_ERR_INVALID, "events[%d].eventName is missing or not a string",
                             i);
    if (!json_is_string(bucket))
        return cli_error_set(err, TL_ERR_INVALID, "events[%d].bucket is missing or not a string",
                             i);
    if (!json_is_object(obj))
        return cli_error_set(err, TL_ERR_INVALID, "events[%d].object is missing or not an object",
                             i);
    json_t *key = json_object_get(obj, "key"), *size = json_object_get(obj, "size"),
           *etag = json_object_get(obj, "etag");
    if (!json_is_string(key))
        return cli_error_set(err, TL_ERR_INVALID,
                             "events[%d].object.key is missing or not a string", i);
    if (size && !json_is_integer(size) && !json_is_null(size))
        return cli_error_set(err, TL_ERR_INVALID, "events[%d].object.size is not an integer", i);
    if (etag && !json_is_string(etag) && !json_is_null(etag))
        return cli_error_set(err, TL_ERR_INVALID, "events[%d].object.etag is not a string", i);
    if (strlen(json_string_value(key)) != json_string_length(key) ||
        strlen(json_string_value(bucket)) != json_string_length(bucket))
        return cli_error_set(err, TL_ERR_INVALID, "events[%d]: a NUL character in a name", i);
    out->name = dup_string(name);
    out->bucket = dup_string(bucket);
    out->key = dup_string(key);
    out->size = json_is_integer(size) ? (int64_t)json_integer_value(size) : -1;
    if (!out->name || !out->bucket || !out->key) return cli_error_nomem(err);
    out->created = strncmp(out->name, "OBJECT_CREATED", 14) == 0;
    return TL_OK;
}

static tl_status parse_root(json_t *root, int max_events, tl_notify_events *out, tl_error *err)
{
    if (!json_is_object(root))
        return cli_error_set(err, TL_ERR_INVALID, "the body is not a JSON object");
    json_t *events = json_object_get(root, "events");
    if (!json_is_array(events))
        return cli_error_set(err, TL_ERR_INVALID, "the body has no \"events\" array");
    size_t n = json_array_size(events);
    if (n > (size_t)max_events)
        return cli_error_set(err, TL_ERR_INVALID, "%zu events in one request (at most %d)", n,
                             max_events);
    out->items = calloc(n ? n : 1, sizeof *out->items);
    if (out->items == NULL) return cli_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        out->n = (int)i + 1;
        CLI_TRY(parse_event(json_array_get(events, i), (int)i, &out->items[i], err));
    }
    return TL_OK;
}

tl_status tl_notify_events_parse(const char *body, size_t len, int max_events,
                                 tl_notify_events *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (len == 0)
        return cli_error_set(err, TL_ERR_INVALID,
                             "empty request body: send a JSON object with an \"events\" array");
    json_error_t je;
    json_t *root = kjson_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (root == NULL && json_error_code(&je) == json_error_out_of_memory)
        return cli_error_nomem(err);
    if (root == NULL)
        return cli_error_set(err, TL_ERR_INVALID, "malformed JSON at line %d, column %d: %s",
                             je.line, je.column, je.text);
    tl_status st = parse_root(root, max_events, out, err);
    json_decref(root);
    if (st != TL_OK) tl_notify_events_free(out);
    return st;
}

void tl_notify_events_free(tl_notify_events *ev)
{
    for (int i = 0; i < ev->n; i++) {
        free(ev->items[i].name);
        free(ev->items[i].bucket);
        free(ev->items[i].key);
    }
    free(ev->items);
    memset(ev, 0, sizeof *ev);
}

static tl_status check_bucket(const char *b, tl_error *err)
{
    size_t n = strlen(b);
    if (n < 3 || n > 63 || strspn(b, "abcdefghijklmnopqrstuvwxyz0123456789.-") != n)
        return cli_error_set(err, TL_ERR_INVALID, "bad bucket name \"%.80s\"", b);
    return TL_OK;
}

tl_status tl_notify_check_object(const char *bucket, const char *key, tl_error *err)
{
    CLI_TRY(check_bucket(bucket, err));
    size_t n = strlen(key);
    if (n == 0 || n > KEY_MAX)
        return cli_error_set(err, TL_ERR_INVALID, "object key of %zu bytes (1 to %d allowed)", n,
                             KEY_MAX);
    if (key[0] == '/')
        return cli_error_set(err, TL_ERR_INVALID, "object key \"%.200s\" is an absolute path", key);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)key[i] < 0x20 || key[i] == 0x7f || key[i] == '\\')
            return cli_error_set(err, TL_ERR_INVALID,
                                 "object key \"%.200s\" has a control character or backslash", key);
    /* Segment by segment: "." and ".." could make the request address another object. */
    for (const char *s = key;;) {
        const char *slash = strchr(s, '/');
        size_t len = slash ? (size_t)(slash - s) : strlen(s);
        if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
            return cli_error_set(err, TL_ERR_INVALID,
                                 "object key \"%.200s\" has a \"%.*s\" segment", key, (int)len, s);
        if (len == 0)
            return cli_error_set(err, TL_ERR_INVALID, "object key \"%.200s\" has an empty segment",
                                 key);
        if (slash == NULL) break;
        s = slash + 1;
    }
    return TL_OK;
}
