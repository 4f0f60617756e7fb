/* The local store's commit point: a temporary file takes its final name
 * unless that name exists, atomically (EEXIST when another writer won), and
 * the lock a fenced create holds around it. */
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

/* Takes an exclusive flock of directory dir, which every process (and each
 * open of the directory within one) takes in turn and the kernel releases if
 * the holder dies: 0 with *fd_out holding it (closing it releases it), or -1
 * with errno. Where the file system has no flock (ENOLCK, EOPNOTSUPP: some
 * network and FUSE file systems), 0 with *fd_out -1: nothing is held. */
int tl_local_lock_dir(const char *dir, int *fd_out);

/* For tests: true makes tl_local_lock_dir behave as on a file system
 * without flock. Set it while no commit runs. */
void tl_local_lock_dir_fallback(bool on);

#endif
