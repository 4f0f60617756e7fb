#include "store/local_link.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static bool fallback;

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
