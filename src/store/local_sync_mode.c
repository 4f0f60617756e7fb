/* How a local file system makes a flush's writes durable.
 *
 * tmpfs and ramfs keep files in memory: nothing there outlives a power loss,
 * and their fsync returns at once having done nothing, so a flush makes no
 * fsync there (and waits for no writeback: there is none).
 *
 * Why one fsync of a directory can stand for the fsyncs of a commit's files
 * there. A commit must make durable, before it links vN, every file vN names
 * (data blocks, inode, extents, size) and their directory entries. On ext4
 * with a journal every metadata change (a create, a rename, an extent
 * allocated at writeback or converted from unwritten when its write
 * completes, a new i_disksize) is made inside a jbd2 handle that joins the
 * one running transaction; transactions commit one at a time in order, so
 * once transaction T has committed, every handle that ended before T began
 * committing is durable. fsync of a directory forces a commit of the running
 * transaction (and waits for the one committing): ext4_sync_file has long
 * treated a non-regular file as journalled data and called ext4_force_commit
 * for it (4.x, 5.x); a 6.4 development kernel lost that for a few weeks and
 * Jan Kara's fix (May 2023) gave non-regular files that commit back, as the
 * fsync of a directory must commit the transaction. So after
 * the flush has waited for the writeback of every file (sync_file_range
 * WAIT_AFTER returns once each page's write completed, and with
 * dioread_nolock the unwritten-to-written conversion ends before the page
 * leaves writeback), all their metadata is in a transaction at most the
 * running one, which the directory fsync commits.
 *
 * The data blocks: they were written (completed) before that commit began.
 * jbd2 writes a commit record with REQ_PREFLUSH (and FUA), or with
 * journal_async_commit issues a flush after it, so the device's volatile
 * cache holding them is flushed before the commit counts, provided the
 * journal is on the same device as the data: with an external journal the
 * data device is flushed only when the transaction carried ordered data, so
 * such a file system does not qualify. Delayed allocation changes none of
 * this: the blocks are allocated when writeback starts (the puts start it),
 * before the wait, and the handle allocating them is one of those committed.
 * What data=writeback changes: without dioread_nolock the new size can be
 * logged in a transaction whose commit began before the data write
 * completed; should no transaction run when the directory fsync comes, it
 * only waits for that one, with no flush after the data (a file fsync would
 * add one, ext4_sync_file's needs_barrier): so only data=ordered (the data
 * of blocks a transaction allocated is written before it commits) and
 * data=journal qualify. Without a journal (mke2fs -O ^has_journal) a
 * directory fsync writes that directory's inode alone.
 *
 * Why a barrier (local_sync.h) needs no fsync there. A commit point waits for
 * the writeback of every file it will name, then links vN: the link's
 * handle begins after every handle of those files ended, so it joins their
 * transaction or a later one, and a crash leaves a prefix of the committed
 * transactions: the link is never durable without them. Their data blocks
 * were written (completed) before the link was made, so before the link's
 * transaction began committing, and its commit record goes with
 * REQ_PREFLUSH, which flushes them from the device's cache first. Both hold
 * only with barriers on (`nobarrier` never flushes) and without
 * journal_async_commit, which writes the commit record unflushed and flushes
 * after it: a crash between the two could keep the record and lose the data
 * it depends on. Such a file system keeps an fsync at each barrier
 * (TL_SYNC_ONE_COMMIT).
 *
 * How it is told, all read once per device: statfs says ext4 (0xEF53, which
 * ext2 and ext3 share: they fail the next tests unless they are ext4 by
 * another name); /proc/fs/jbd2/<dev>-8 exists only for a journal inside the
 * file system (inode 8); /proc/fs/ext4/<dev>/options lists data=ordered or
 * data=journal only when there is a journal, and `barrier` and
 * `journal_async_commit` as mounted. <dev> is the kernel's name of
 * the block device, the last part of /sys/dev/block/<major>:<minor>. Any
 * read that fails (no /proc, no /sys, a container) answers TL_SYNC_EACH: each file
 * is then fsynced, as on every other file system. */
#include "store/local_sync_mode.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define EXT4_MAGIC 0xEF53
#define TMPFS_MAGIC 0x01021994
#define RAMFS_MAGIC 0x858458f6
#define KEPT_DEVICES 16

static int forced = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
typedef struct known {
    dev_t dev;
    tl_sync_mode mode;
} known;
static known kept[KEPT_DEVICES];
static size_t n_kept;

void tl_local_sync_mode_force(int mode)
{
    forced = mode;
}

/* The kernel's name of the block device dev ("loop0", "nvme0n1p2") into
 * name, or false. */
static bool device_name(dev_t dev, char *name, size_t size)
{
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof link, "/sys/dev/block/%u:%u", major(dev), minor(dev));
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return false;
    target[n] = '\0';
    const char *base = strrchr(target, '/');
    base = base ? base + 1 : target;
    if (strlen(base) + 1 > size) return false;
    strcpy(name, base);
    return name[0] != '\0';
}

/* What /proc/fs/ext4/<name>/options says of the ways a flush may take:
 * TL_SYNC_EACH unless data=ordered or data=journal; TL_SYNC_IN_ORDER when
 * also barriers are on without journal_async_commit. */
static tl_sync_mode mounted_mode(const char *name)
{
    char path[128], line[128];
    snprintf(path, sizeof path, "/proc/fs/ext4/%s/options", name);
    FILE *f = fopen(path, "re");
    if (f == NULL) return TL_SYNC_EACH;
    bool ordered = false, barrier = false, async_commit = false;
    while (fgets(line, sizeof line, f) != NULL) {
        ordered |= strcmp(line, "data=ordered\n") == 0 || strcmp(line, "data=journal\n") == 0;
        barrier |= strcmp(line, "barrier\n") == 0;
        async_commit |= strcmp(line, "journal_async_commit\n") == 0;
    }
    fclose(f);
    if (!ordered) return TL_SYNC_EACH;
    return barrier && !async_commit ? TL_SYNC_IN_ORDER : TL_SYNC_ONE_COMMIT;
}

static tl_sync_mode ask(dev_t dev, int fd)
{
    struct statfs sf;
    if (fstatfs(fd, &sf) != 0) return TL_SYNC_EACH;
    if (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC) return TL_SYNC_NONE;
    if (sf.f_type != EXT4_MAGIC) return TL_SYNC_EACH;
    char name[NAME_MAX + 1], journal[NAME_MAX + 32];
    if (!device_name(dev, name, sizeof name)) return TL_SYNC_EACH;
    snprintf(journal, sizeof journal, "/proc/fs/jbd2/%s-8", name);
    struct stat sb;
    if (stat(journal, &sb) != 0 || !S_ISDIR(sb.st_mode)) return TL_SYNC_EACH;
    return mounted_mode(name);
}

tl_sync_mode tl_local_sync_mode(dev_t dev, int fd)
{
    if (forced >= 0) return (tl_sync_mode)forced;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_kept; i++)
        if (kept[i].dev == dev) {
            tl_sync_mode mode = kept[i].mode;
            pthread_mutex_unlock(&lock);
            return mode;
        }
    pthread_mutex_unlock(&lock);
    tl_sync_mode mode = ask(dev, fd);
    pthread_mutex_lock(&lock);
    if (n_kept < KEPT_DEVICES) kept[n_kept++] = (known){dev, mode};
    pthread_mutex_unlock(&lock);
    return mode;
}
