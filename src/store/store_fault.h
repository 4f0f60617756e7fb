/* Test-only fault injection at the store interface, for torture tests that
 * fail each store call of an operation in turn. When a hook is set,
 * tl_store_open wraps every store it opens in a proxy that asks the hook
 * before each call whether to make it, fail it, or make it and then fail
 * (the write landed but its answer was lost). Unset (the default), stores
 * are opened as they are: nothing is wrapped and nothing costs. Not part of
 * the public API. */
#ifndef TL_STORE_FAULT_H
#define TL_STORE_FAULT_H

#include "store/store.h"

typedef enum tl_store_call {
    TL_CALL_GET,
    TL_CALL_GET_RANGE,
    TL_CALL_GET_FIRST,
    TL_CALL_SIZE,
    TL_CALL_STAT,
    TL_CALL_OPEN, /* tl_store_reader_open (its reads are get_range calls) */
    TL_CALL_LIST,
    TL_CALL_PUT,
    TL_CALL_PUT_HINT,
    TL_CALL_PUT_IF_ABSENT, /* also put_if_absent_unsynced */
    TL_CALL_WRITER_FINISH, /* the atomic replacement at the end of a streaming upload */
    TL_CALL_REMOVE,        /* also remove_later */
    TL_CALL_SWEEP,
    TL_CALL_SYNC,
} tl_store_call;

/* Whether the call writes (a lost answer means something for it). */
bool tl_store_call_writes(tl_store_call call);
/* "get", "put_if_absent", ... */
const char *tl_store_call_name(tl_store_call call);

typedef enum tl_store_fault {
    TL_FAULT_NONE, /* make the call */
    TL_FAULT_FAIL, /* do not make it: TL_ERR_STORAGE, "injected failure of <call> <key>" */
    TL_FAULT_LOST, /* make it, then answer as FAIL does (for a read: the same as FAIL) */
} tl_store_fault;

/* Called before each store call with its kind and key (the prefix of a
 * listing or sweep, "" for a sync); may run on several threads at once. */
typedef tl_store_fault (*tl_store_fault_fn)(tl_store_call call, const char *key, void *ctx);

/* Sets the hook (NULL: none) for the stores opened from now on; a store
 * opened with a hook keeps consulting the hook set at the time of each call. */
void tl_store_set_fault(tl_store_fault_fn fn, void *ctx);

/* tl_store_open's wrapper: *s wrapped when a hook is set (taken over). */
tl_status tl_store_fault_wrap(tl_store **s, tl_error *err);

#endif
