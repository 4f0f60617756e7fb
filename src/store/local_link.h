/* The local store's commit point: a temporary file takes its final name
 * unless that name exists, atomically (EEXIST when another writer won). */
#ifndef TL_STORE_LOCAL_LINK_H
#define TL_STORE_LOCAL_LINK_H

#include <stdbool.h>

/* Moves tmp to path unless path exists: 0, or -1 with errno (EEXIST: path
 * exists; tmp is left for the caller to remove on any failure). One
 * renameat2(RENAME_NOREPLACE); where the file system refuses it (EINVAL,
 * ENOSYS, ENOTSUP: some network and FUSE file systems), link then unlink. */
int tl_local_move_new(const char *tmp, const char *path);

/* For tests: true takes the link-and-unlink way as if the file system
 * refused renameat2. Set it while no commit runs. */
void tl_local_move_new_fallback(bool on);

#endif
