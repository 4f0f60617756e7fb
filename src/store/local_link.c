#include "store/local_link.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

static bool fallback, no_flock;

void tl_local_move_new_fallback(bool on)
{
    fallback = on;
}

int tl_local_move_new(const char *tmp, const char *path)
{
    if (!fallback) {
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0) return 0;
        if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return -1;
    }
    if (link(tmp, path) != 0) return -1;
    unlink(tmp);
    return 0;
}

void tl_local_lock_dir_fallback(bool on)
{
    no_flock = on;
}

int tl_local_lock_dir(const char *dir, int *fd_out)
{
    *fd_out = -1;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc;
    do {
        rc = no_flock ? (errno = ENOLCK, -1) : flock(fd, LOCK_EX);
    } while (rc != 0 && errno == EINTR);
    if (rc == 0) {
        *fd_out = fd;
        return 0;
    }
    int e = errno;
    close(fd);
    errno = e;
    return e == ENOLCK || e == EOPNOTSUPP || e == ENOSYS ? 0 : -1;
}
