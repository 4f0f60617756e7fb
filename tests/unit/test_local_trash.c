/* Deletions nobody waits for (store/local_trash.h): queued files go, a file
 * replaced under the same name after it was queued stays, settle waits, and
 * destroy and exit drain; through the local store too (tl_store_remove_later;
 * a put_hint leaves nothing behind to delete). */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/local_trash.h"
#include "store/store.h"
#include "unit.h"

typedef struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int open;      /* deletions may proceed */
    int arrived;   /* the first deletion is waiting */
    int n_removed; /* deletions done */
} gate;

/* Holds the first deletion until the test opens the gate, so that the test
 * can change files while they are queued. */
static void gated_remove(void *ctx, const char *path, bool remove, bool prune)
{
    (void)prune;
    if (!remove) return;
    gate *g = ctx;
    pthread_mutex_lock(&g->lock);
    g->arrived = 1;
    pthread_cond_broadcast(&g->cond);
    while (!g->open) pthread_cond_wait(&g->cond, &g->lock);
    g->n_removed++;
    pthread_mutex_unlock(&g->lock);
    unlink(path);
}

static void gate_init(gate *g)
{
    memset(g, 0, sizeof *g);
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
}

static void gate_wait_arrived(gate *g)
{
    pthread_mutex_lock(&g->lock);
    while (!g->arrived) pthread_cond_wait(&g->cond, &g->lock);
    pthread_mutex_unlock(&g->lock);
}

static void gate_open(gate *g)
{
    pthread_mutex_lock(&g->lock);
    g->open = 1;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

static void make_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static char *tmp_dir(const char *name)
{
    const char *base = getenv("TL_TEST_TMP") ? getenv("TL_TEST_TMP") : "/tmp";
    mkdir(base, 0755);
    char *dir = malloc(4096);
    snprintf(dir, 4096, "%s/%s-%d", base, name, (int)getpid());
    mkdir(dir, 0755);
    return dir;
}

static void test_queued_files_go_and_replaced_ones_stay(void)
{
    char *dir = tmp_dir("trash");
    char a[4200], b[4200], c[4200];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/v12.metadata.json", dir);
    snprintf(c, sizeof c, "%s/c", dir);
    make_file(a, "a");
    make_file(b, "old table's version");
    make_file(c, "c");
    gate g;
    gate_init(&g);
    tl_trash t;
    tl_trash_init(&t, gated_remove, &g);
    CHECK(tl_trash_add(&t, a));
    gate_wait_arrived(&g); /* the thread holds a; b and c wait in the queue */
    CHECK(tl_trash_add(&t, b));
    CHECK(tl_trash_add(&t, c));
    CHECK(!tl_trash_add(&t, dir)); /* a folder is no object */
    /* The table is dropped and made again: b's name now holds a new file. */
    char fresh[4300];
    snprintf(fresh, sizeof fresh, "%s.new", b);
    make_file(fresh, "new table's version"); /* made while b exists: another inode */
    CHECK(rename(fresh, b) == 0);
    gate_open(&g);
    tl_trash_settle(&t);
    CHECK(!exists(a) && !exists(c));
    CHECK(exists(b)); /* not the file that was queued */
    CHECK(g.n_removed == 2);
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/never-there", dir);
    CHECK(!tl_trash_add(&t, missing));
    tl_trash_destroy(&t);
    unlink(b);
    rmdir(dir);
    free(dir);
}

static void test_destroy_drains(void)
{
    char *dir = tmp_dir("trash-drain");
    char path[64][4200];
    gate g;
    gate_init(&g);
    tl_trash t;
    tl_trash_init(&t, gated_remove, &g);
    for (int i = 0; i < 64; i++) {
        snprintf(path[i], sizeof path[i], "%s/f%d", dir, i);
        make_file(path[i], "x");
        CHECK(tl_trash_add(&t, path[i]));
    }
    gate_open(&g);
    tl_trash_destroy(&t);
    for (int i = 0; i < 64; i++) CHECK(!exists(path[i]));
    rmdir(dir);
    free(dir);
}

/* What the trash asked of each deletion, in order. */
static struct {
    char path[8][4200];
    bool remove[8], prune[8];
    int n;
} asked;

static void recorded_remove(void *ctx, const char *path, bool remove, bool prune)
{
    gated_remove(ctx, path, remove, prune);
    int i = asked.n++;
    if (i >= 8) return;
    snprintf(asked.path[i], sizeof asked.path[i], "%s", path);
    asked.remove[i] = remove;
    asked.prune[i] = prune;
}

/* Folders are pruned once per queue the thread takes, after the last of its
 * files there (a refused rmdir after every other file was a system call for
 * nothing), and also after a file that is no longer the one queued, when it
 * was that folder's last. */
static void test_folders_pruned_once_per_queue(void)
{
    char *dir = tmp_dir("trash-prune");
    char a[4200], b[4200], paths[5][4300];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    mkdir(a, 0755);
    mkdir(b, 0755);
    const char *names[5] = {"a/1", "a/2", "b/1", "a/3", "b/2"};
    for (int i = 0; i < 5; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s", dir, names[i]);
        make_file(paths[i], "x");
    }
    char first[4200];
    snprintf(first, sizeof first, "%s/first", dir);
    make_file(first, "x");
    gate g;
    gate_init(&g);
    tl_trash t;
    tl_trash_init(&t, recorded_remove, &g);
    asked.n = 0;
    CHECK(tl_trash_add(&t, first));
    gate_wait_arrived(&g); /* the thread holds `first`: the five wait in one queue */
    for (int i = 0; i < 5; i++) CHECK(tl_trash_add(&t, paths[i]));
    unlink(paths[4]); /* b/2 goes meanwhile: not the file queued, b still pruned */
    gate_open(&g);
    tl_trash_settle(&t);
    CHECK_INT(asked.n, 6);
    bool want_prune[6] = {true, false, false, false, true, true};
    bool want_remove[6] = {true, true, true, true, true, false};
    for (int i = 0; i < 6 && i < asked.n; i++) {
        CHECK(asked.prune[i] == want_prune[i]);
        CHECK(asked.remove[i] == want_remove[i]);
    }
    tl_trash_destroy(&t);
    for (int i = 0; i < 5; i++) CHECK(!exists(paths[i]));
    rmdir(a);
    rmdir(b);
    rmdir(dir);
    free(dir);
}

/* Through the store: the keys are queued, counted, gone after settle, and a
 * forked child's store queues and deletes on its own. */
static void test_local_store_remove_later(void)
{
    char *dir = tmp_dir("trash-store");
    tl_store *s = NULL;
    CHECK(tl_store_open(dir, NULL, &s, NULL) == TL_OK);
    char *keys[4] = {"t/metadata/v1.metadata.json", "t/data/x.parquet", NULL, "t/missing"};
    CHECK(tl_store_put(s, keys[0], "{}", 2, NULL) == TL_OK);
    CHECK(tl_store_put(s, keys[1], "PAR1", 4, NULL) == TL_OK);
    CHECK(tl_store_remove_later(s, keys, 4) == 2);
    tl_store_settle(s);
    uint64_t size;
    CHECK(tl_store_size(s, keys[0], &size, NULL) == TL_ERR_NOT_FOUND);
    CHECK(tl_store_size(s, keys[1], &size, NULL) == TL_ERR_NOT_FOUND);
    char data_dir[4200];
    snprintf(data_dir, sizeof data_dir, "%s/t/data", dir);
    CHECK(!exists(data_dir)); /* left empty: pruned, as tl_store_remove does */
    CHECK(tl_store_put(s, keys[1], "PAR1", 4, NULL) == TL_OK);
    pid_t pid = fork();
    if (pid == 0) {
        int ok = tl_store_remove_later(s, keys + 1, 1) == 1;
        tl_store_settle(s);
        ok = ok && tl_store_size(s, keys[1], &size, NULL) == TL_ERR_NOT_FOUND;
        tl_store_free(s);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    tl_store_free(s);
    free(dir);
}

static int count_entries(const char *path)
{
    int n = 0;
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0; /* .tmp- files too */
    if (d) closedir(d);
    return n;
}

/* A hint replaced through put_hint: the new bytes are there at once, and
 * nothing is left beside it, then or after settle: a failed commit's check
 * that the folder is unchanged must not race a deletion in the background. */
static void test_local_store_put_hint(void)
{
    char *dir = tmp_dir("trash-hint");
    tl_store *s = NULL;
    CHECK(tl_store_open(dir, NULL, &s, NULL) == TL_OK);
    const char *key = "t/metadata/version-hint.text";
    CHECK(tl_store_put_hint(s, key, "9", 1, NULL) == TL_OK);
    CHECK(tl_store_put_hint(s, key, "10", 2, NULL) == TL_OK);
    tl_buf b = {0};
    CHECK(tl_store_get(s, key, &b, NULL) == TL_OK && b.len == 2 && memcmp(b.data, "10", 2) == 0);
    char meta[4200];
    snprintf(meta, sizeof meta, "%s/t/metadata", dir);
    CHECK(count_entries(meta) == 1);
    tl_store_settle(s);
    CHECK(tl_store_get(s, key, &b, NULL) == TL_OK && b.len == 2 && memcmp(b.data, "10", 2) == 0);
    tl_buf_free(&b);
    CHECK(count_entries(meta) == 1);
    tl_store_free(s);
    free(dir);
}

/* A process that exits without freeing its store still deletes what it
 * queued (the Python package's lakes may stay open to the end). */
static void test_exit_drains_stores_never_freed(void)
{
    char *dir = tmp_dir("trash-exit");
    char path[4200];
    snprintf(path, sizeof path, "%s/t/metadata/v3.metadata.json", dir);
    pid_t pid = fork();
    if (pid == 0) {
        tl_store *s = NULL;
        char *key = "t/metadata/v3.metadata.json";
        if (tl_store_open(dir, NULL, &s, NULL) != TL_OK || tl_store_put(s, key, "{}", 2, NULL))
            _exit(2);
        tl_store_remove_later(s, &key, 1);
        exit(0); /* the store stays open: its queue drains at exit */
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 2);
    CHECK(!exists(path));
    free(dir);
}

UNIT_TESTS(UNIT(test_queued_files_go_and_replaced_ones_stay), UNIT(test_destroy_drains),
           UNIT(test_folders_pruned_once_per_queue), UNIT(test_local_store_remove_later),
           UNIT(test_local_store_put_hint), UNIT(test_exit_drains_stores_never_freed))
