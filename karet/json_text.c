#include "json_text.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json_write.h"
#include "strbuf.h"

/* A kbuf fails every append after its first failure: a key jansson could
 * not write fails the dump. */
static int write_text(const char *data, size_t size, void *b)
{
    kbuf_putn(b, data, size);
    return ((kbuf *)b)->oom ? -1 : 0;
}

char *kjson_dumps(const json_t *j, size_t flags)
{
    kbuf b = {0};
    if (kjson_dump_callback(j, write_text, &b, flags) != 0) b.oom = true;
    return kbuf_take(&b);
}

char *kjson_dumps_jansson(const json_t *j, size_t flags)
{
    kbuf b = {0};
    if (json_dump_callback(j, write_text, &b, flags) != 0) b.oom = true;
    return kbuf_take(&b);
}

/* While this thread parses, once an allocation failed every later one
 * fails too, so jansson's lexer stops instead of unescaping a string whose
 * saved text lost its closing quote. The hook wraps whatever allocator was
 * there (the library's own guard, installed on its first parse, wraps
 * whichever came first in turn): each guard sees the parses it started. */
static _Thread_local bool parsing, parse_failed;
static json_malloc_t outer_malloc; /* NULL: jansson's default, malloc itself */
static json_free_t outer_free;

static void *guarded_malloc(size_t n)
{
    void *p = parsing && parse_failed ? NULL : outer_malloc ? outer_malloc(n) : malloc(n);
    if (p == NULL && parsing) parse_failed = true;
    return p;
}

static void guarded_free(void *p)
{
    if (outer_free)
        outer_free(p);
    else
        free(p);
}

/* Whether fn is the process's `name`: jansson's default allocator, even
 * where this object's own calls are redirected (a test's ld --wrap). */
static bool is_default(void (*fn)(void), const char *name)
{
    void *sym = dlsym(RTLD_DEFAULT, name);
    void (*def)(void) = NULL;
    memcpy(&def, &sym, sizeof def);
    return def != NULL && fn == def;
}

static pthread_once_t install_once = PTHREAD_ONCE_INIT;

static void install(void)
{
    json_malloc_t m;
    json_free_t f;
    json_get_alloc_funcs(&m, &f);
    if (!(m == malloc || is_default((void (*)(void))m, "malloc")) ||
        !(f == free || is_default((void (*)(void))f, "free"))) {
        outer_malloc = m;
        outer_free = f;
    }
    json_set_alloc_funcs(guarded_malloc, guarded_free);
}

json_t *kjson_loadb(const char *text, size_t len, size_t flags, json_error_t *e)
{
    pthread_once(&install_once, install);
    json_error_t ignored;
    if (e == NULL) e = &ignored;
    errno = 0;
    parsing = true;
    parse_failed = false;
    json_t *j = json_loadb(text, len, flags, e);
    parsing = false;
    /* jansson resets errno around numbers: the flag is the sure sign. */
    if (parse_failed || errno == ENOMEM) {
        json_decref(j);
        memset(e, 0, sizeof *e);
        e->line = e->column = e->position = -1;
        snprintf(e->text, sizeof e->text, "out of memory");
        e->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)json_error_out_of_memory;
        return NULL;
    }
    return j;
}

json_t *kjson_loads(const char *text, size_t flags, json_error_t *e)
{
    if (text == NULL) {
        if (e) {
            memset(e, 0, sizeof *e);
            e->line = e->column = e->position = -1;
            snprintf(e->text, sizeof e->text, "no JSON text");
            e->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)json_error_invalid_argument;
        }
        return NULL;
    }
    return kjson_loadb(text, strlen(text), flags, e);
}
