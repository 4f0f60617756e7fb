#include "formats/ndjson/json_pick.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/ndjson/json_token.h"

#define MAX_DEPTH 128 /* as serde_json: deeper lines are refused, not a stack overflow */

/* The paths as a tree from the top-level object: a node is a key or an index
 * step, and the columns (path numbers) whose path ends there. */
typedef struct pick_node {
    char *key; /* NULL for an index step */
    size_t key_len;
    uint64_t index;
    int first_child, next_sibling; /* -1: none */
    int first_path;                /* -1: none; then next_path[] */
} pick_node;

struct tl_json_paths {
    pick_node *nodes; /* nodes[0] is the top-level object */
    int n_nodes;
    int *next_path; /* per path: the next path ending at the same node, or -1 */
    size_t n_paths;
};

void tl_json_paths_free(tl_json_paths *p)
{
    if (p == NULL) return;
    for (int i = 0; i < p->n_nodes; i++) free(p->nodes[i].key);
    free(p->nodes);
    free(p->next_path);
    free(p);
}

/* The child of `parent` for a step, added when absent; -1 when memory runs out. */
static int child(tl_json_paths *p, int parent, const char *key, size_t key_len, uint64_t index)
{
    int last = -1;
    for (int c = p->nodes[parent].first_child; c >= 0; c = p->nodes[c].next_sibling) {
        const pick_node *n = &p->nodes[c];
        if (key ? n->key && n->key_len == key_len && memcmp(n->key, key, key_len) == 0
                : !n->key && n->index == index)
            return c;
        last = c;
    }
    pick_node *nodes = realloc(p->nodes, (size_t)(p->n_nodes + 1) * sizeof *nodes);
    if (nodes == NULL) return -1;
    p->nodes = nodes;
    pick_node *n = &nodes[p->n_nodes];
    *n = (pick_node){NULL, key_len, index, -1, -1, -1};
    if (key && (n->key = strndup(key, key_len)) == NULL) return -1;
    if (last < 0)
        nodes[parent].first_child = p->n_nodes;
    else
        nodes[last].next_sibling = p->n_nodes;
    return p->n_nodes++;
}

static tl_status bad_path(const char *path, const char *what, tl_error *err)
{
    return tl_error_set(err, TL_ERR_INVALID, "path \"%s\": %s", path, what);
}

/* Adds path number i: its steps become nodes. */
static tl_status add_path(tl_json_paths *p, const char *path, size_t i, tl_error *err)
{
    int node = 0, steps = 0;
    for (const char *s = path; *s;) {
        if (*s == '.') {
            s++;
            continue;
        }
        uint64_t index = 0;
        size_t klen = 0;
        bool is_index = *s == '[';
        if (is_index) {
            const char *d = ++s;
            for (; *s >= '0' && *s <= '9'; s++) {
                if (index > (UINT64_MAX - 9) / 10) return bad_path(path, "index too large", err);
                index = index * 10 + (uint64_t)(*s - '0');
            }
            if (s == d || *s != ']')
                return bad_path(path, "malformed array index (expected [digits])", err);
            s++;
        } else {
            klen = strcspn(s, ".[");
        }
        node = child(p, node, is_index ? NULL : s, klen, index);
        if (node < 0) return tl_error_nomem(err);
        s += klen;
        steps++;
    }
    if (steps == 0) return bad_path(path, "empty path", err);
    p->next_path[i] = p->nodes[node].first_path;
    p->nodes[node].first_path = (int)i;
    return TL_OK;
}

tl_status tl_json_paths_compile(const char *const *paths, size_t n, tl_json_paths **out,
                                tl_error *err)
{
    *out = NULL;
    tl_json_paths *p = calloc(1, sizeof *p);
    if (p == NULL) return tl_error_nomem(err);
    p->nodes = malloc(sizeof *p->nodes);
    p->next_path = malloc((n ? n : 1) * sizeof *p->next_path);
    if (p->nodes == NULL || p->next_path == NULL) {
        tl_json_paths_free(p);
        return tl_error_nomem(err);
    }
    p->nodes[0] = (pick_node){NULL, 0, 0, -1, -1, -1};
    p->n_nodes = 1;
    p->n_paths = n;
    for (size_t i = 0; i < n; i++) {
        tl_status st = add_path(p, paths[i], i, err);
        if (st != TL_OK) {
            tl_json_paths_free(p);
            return st;
        }
    }
    *out = p;
    return TL_OK;
}

typedef struct picker {
    const tl_json_paths *p;
    tl_json_cursor c;
    tl_buf *scratch;
    tl_json_value *values;
} picker;

static tl_status value(picker *k, int node, int depth, tl_error *err);

static void set(picker *k, int node, tl_json_kind kind, const char *text, size_t len)
{
    for (int i = node >= 0 ? k->p->nodes[node].first_path : -1; i >= 0; i = k->p->next_path[i])
        k->values[i] = (tl_json_value){kind, text, len};
}

/* Forgets what an earlier occurrence of a repeated key left under `node`:
 * the last occurrence is the value, as in JSON parsers that keep one. */
static void clear(picker *k, int node)
{
    set(k, node, TL_JSON_MISSING, NULL, 0);
    for (int c = k->p->nodes[node].first_child; c >= 0; c = k->p->nodes[c].next_sibling)
        clear(k, c);
}

/* The child of `node` named by the key text, trying the one after `*hint`
 * first (members tend to come in the same order line after line). */
static int key_child(const tl_json_paths *p, int node, const char *key, size_t len, int *hint)
{
    if (node < 0) return -1;
    const pick_node *nodes = p->nodes;
    int start = *hint >= 0 && nodes[*hint].next_sibling >= 0 ? nodes[*hint].next_sibling
                                                             : nodes[node].first_child;
    for (int pass = 0, c = start; pass < 2; pass++, c = nodes[node].first_child)
        for (; c >= 0; c = nodes[c].next_sibling)
            if (nodes[c].key && nodes[c].key_len == len && memcmp(nodes[c].key, key, len) == 0)
                return *hint = c;
    return -1;
}

static int index_child(const tl_json_paths *p, int node, uint64_t index)
{
    if (node < 0) return -1;
    for (int c = p->nodes[node].first_child; c >= 0; c = p->nodes[c].next_sibling)
        if (!p->nodes[c].key && p->nodes[c].index == index) return c;
    return -1;
}

static tl_status object(picker *k, int node, int depth, tl_error *err)
{
    tl_json_cursor *c = &k->c;
    c->i++;
    tl_json_skip_ws(c);
    if (c->i < c->len && c->s[c->i] == '}') return c->i++, TL_OK;
    int hint = -1;
    bool descend = node >= 0 && k->p->nodes[node].first_child >= 0;
    for (;;) {
        tl_json_skip_ws(c);
        if (c->i >= c->len || c->s[c->i] != '"') return tl_json_syntax(c, "expected a key", err);
        tl_json_text key;
        TL_TRY(tl_json_string(c, descend ? k->scratch : NULL, &key, err));
        int next =
            descend ? key_child(k->p, node, tl_json_text_ptr(c, k->scratch, &key), key.len, &hint)
                    : -1;
        if (key.unescaped) k->scratch->len -= key.len; /* keys are not values */
        if (next >= 0) clear(k, next);
        tl_json_skip_ws(c);
        if (c->i >= c->len || c->s[c->i] != ':') return tl_json_syntax(c, "expected ':'", err);
        c->i++;
        TL_TRY(value(k, next, depth, err));
        tl_json_skip_ws(c);
        if (c->i < c->len && c->s[c->i] == ',') {
            c->i++;
            continue;
        }
        if (c->i < c->len && c->s[c->i] == '}') return c->i++, TL_OK;
        return tl_json_syntax(c, "expected ',' or '}'", err);
    }
}

static tl_status array(picker *k, int node, int depth, tl_error *err)
{
    tl_json_cursor *c = &k->c;
    c->i++;
    tl_json_skip_ws(c);
    if (c->i < c->len && c->s[c->i] == ']') return c->i++, TL_OK;
    bool descend = node >= 0 && k->p->nodes[node].first_child >= 0;
    for (uint64_t i = 0;; i++) {
        TL_TRY(value(k, descend ? index_child(k->p, node, i) : -1, depth, err));
        tl_json_skip_ws(c);
        if (c->i < c->len && c->s[c->i] == ',') {
            c->i++;
            continue;
        }
        if (c->i < c->len && c->s[c->i] == ']') return c->i++, TL_OK;
        return tl_json_syntax(c, "expected ',' or ']'", err);
    }
}

/* A value at the cursor; node -1 when no path leads into it (only checked). */
static tl_status value(picker *k, int node, int depth, tl_error *err)
{
    tl_json_cursor *c = &k->c;
    tl_json_skip_ws(c);
    if (c->i >= c->len) return tl_json_syntax(c, "missing value", err);
    size_t start = c->i;
    bool wanted = node >= 0 && k->p->nodes[node].first_path >= 0;
    char ch = c->s[c->i];
    tl_json_kind kind;
    if (ch == '{' || ch == '[') {
        if (depth >= MAX_DEPTH) return tl_json_syntax(c, "nested deeper than 128 levels", err);
        TL_TRY(ch == '{' ? object(k, node, depth + 1, err) : array(k, node, depth + 1, err));
        kind = ch == '{' ? TL_JSON_OBJECT : TL_JSON_ARRAY;
    } else if (ch == '"') {
        tl_json_text t;
        TL_TRY(tl_json_string(c, wanted ? k->scratch : NULL, &t, err));
        if (wanted) set(k, node, TL_JSON_STRING, tl_json_text_ptr(c, k->scratch, &t), t.len);
        return TL_OK;
    } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
        TL_TRY(tl_json_number(c, err));
        kind = TL_JSON_NUMBER;
    } else if (tl_json_word(c, "true") || tl_json_word(c, "false")) {
        kind = TL_JSON_BOOL;
    } else if (tl_json_word(c, "null")) {
        kind = TL_JSON_NULL;
    } else {
        return tl_json_syntax(c, "unexpected character", err);
    }
    if (wanted) set(k, node, kind, c->s + start, c->i - start);
    return TL_OK;
}

tl_status tl_json_pick(const tl_json_paths *p, const char *s, size_t len, tl_buf *scratch,
                       tl_json_value *values, int *blank, tl_error *err)
{
    picker k = {p, {s, len, 0}, scratch, values};
    tl_json_skip_ws(&k.c);
    *blank = k.c.i == len;
    if (*blank) return TL_OK;
    if (s[k.c.i] != '{') return tl_json_syntax(&k.c, "not a JSON object", err);
    /* Unescaped text is never longer than its source, so with room for the
     * line the scratch never moves and values may point into it. */
    scratch->len = 0;
    if (tl_buf_reserve(scratch, len) != 0) return tl_error_nomem(err);
    memset(values, 0, p->n_paths * sizeof *values);
    TL_TRY(value(&k, 0, 0, err));
    tl_json_skip_ws(&k.c);
    if (k.c.i != len) return tl_json_syntax(&k.c, "text after the object", err);
    return TL_OK;
}
