/* How a local file system makes a flush's writes durable (local_sync.c):
 * an fsync of each file and directory (any file system), one fsync of a
 * directory for all of them (an ext4 whose one journal commits every change
 * together), and then also no fsync at a barrier (such an ext4 that flushes
 * the disk before each commit record), or none (tmpfs and ramfs, where
 * nothing outlives a power loss and fsync does nothing). See local_sync_mode.c for why, and how
 * each is told; whatever cannot be told gets an fsync each. */
#ifndef TL_STORE_LOCAL_SYNC_MODE_H
#define TL_STORE_LOCAL_SYNC_MODE_H

#include <sys/types.h>

typedef enum tl_sync_mode {
    TL_SYNC_EACH,       /* an fsync of every path */
    TL_SYNC_ONE_COMMIT, /* one fsync, of a directory, after every file's writeback ended */
    TL_SYNC_IN_ORDER,   /* as ONE_COMMIT, and a barrier needs no fsync (commits in order) */
    TL_SYNC_NONE,       /* nothing to make durable: no fsync */
} tl_sync_mode;

/* The mode of the file system of device dev, on which fd (any open file or
 * directory of it) lies. Asked once per device and process (the answer is
 * kept). */
tl_sync_mode tl_local_sync_mode(dev_t dev, int fd);

/* For tests: a mode to answer for every device, or -1 (the default) to ask
 * the file system. Set it while no flush runs. */
void tl_local_sync_mode_force(int mode);

#endif
