/* The last-value indexes that table handles keep in memory between appends,
 * under one budget per lake.
 *
 * Each append merges the parent snapshot's index with its own newest rows;
 * the parent's is most often the index the same handle built in its previous
 * commit, so the handle keeps those rows (its memo) and the next append
 * merges with them instead of decoding the file again (lvi.c decides when
 * they serve). Every memo of a lake's handles counts against the lake's
 * budget: its own when the lake was opened with timelake_index_cache_bytes,
 * else the process's, TL_LVI_MEMO_DEFAULT_BYTES shared by every lake opened
 * without the option (a server that opens a lake per table is bounded as a
 * whole). A memo that would exceed it makes room by dropping the memos kept
 * longest ago, and one larger than the whole budget is not kept; a handle
 * whose memo went reads its index file, as without the memo. Safe to use
 * from several threads, one handle per thread at a time. */
#ifndef TL_TABLE_LVI_MEMO_H
#define TL_TABLE_LVI_MEMO_H

#include <stdbool.h>
#include <stdint.h>

#include "table/append.h"

#define TL_LVI_MEMO_DEFAULT_BYTES (64LL << 20)

/* The lake's budget and its memos. Reference-counted (a table handle may be
 * closed after its lake): new gives the first reference, ref another (returns
 * p), free drops one and frees with the last. NULL from new when out of
 * memory. budget_bytes 0 keeps nothing. */
typedef struct tl_lvi_memos tl_lvi_memos;
tl_lvi_memos *tl_lvi_memos_new(int64_t budget_bytes);
tl_lvi_memos *tl_lvi_memos_ref(tl_lvi_memos *p);
/* A reference to the process's budget (made on first use, never freed);
 * NULL when out of memory. */
tl_lvi_memos *tl_lvi_memos_process(void);
void tl_lvi_memos_free(tl_lvi_memos *p);
void tl_lvi_memos_stats(tl_lvi_memos *p, tl_index_cache_counts *out);

/* One handle's memo, counted in pool p (a reference taken); NULL when out of
 * memory. Free releases its rows and the reference. */
typedef struct tl_lvi_memo tl_lvi_memo;
tl_lvi_memo *tl_lvi_memo_new(tl_lvi_memos *p);
void tl_lvi_memo_free(tl_lvi_memo *m);

/* The kept rows (*out, the caller's from now on) and *size, the size of the
 * file they were written to, when the memo holds the index kept under key for
 * schema_id with the column formats of `layout`: true then. The memo is empty
 * after either way (a handle's next commit builds on the current snapshot,
 * never an older one). */
bool tl_lvi_memo_take(tl_lvi_memo *m, const char *key, int32_t schema_id,
                      const struct ArrowSchema *layout, tl_rows *out, uint64_t *size);

/* Counts an append's parent index as served from the memo, or read from its
 * file (none kept, or what was kept found stale). */
void tl_lvi_memo_count(tl_lvi_memo *m, bool served);

/* Keeps `array` (taken over when kept: released set NULL; left to the caller
 * otherwise) with a copy of schema as the index under key, of schema_id, in
 * a file of `size` bytes, replacing what the memo held; drops the memos kept
 * longest ago when the budget needs room. */
void tl_lvi_memo_keep(tl_lvi_memo *m, const char *key, uint64_t size, int32_t schema_id,
                      const struct ArrowSchema *schema, struct ArrowArray *array);

#endif
