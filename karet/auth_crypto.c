#include <openssl/crypto.h>
#include <pthread.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"

#define SALT_LEN 16
#define KEY_LEN 64
#define KEY_MAX 256

int ct_equal(const char *given, const char *expected)
{
    size_t glen = strlen(given), elen = strlen(expected);
    unsigned diff = glen != elen;
    for (size_t i = 0; i < elen; i++) {
        unsigned char g = i < glen ? (unsigned char)given[i] : 0;
        diff |= (unsigned)(g ^ (unsigned char)expected[i]);
    }
    return diff == 0;
}

static int b64_encode(const unsigned char *in, size_t len, char *out, size_t outlen)
{
    if (outlen < 4 * ((len + 2) / 3) + 1) return -1;
    EVP_EncodeBlock((unsigned char *)out, in, (int)len);
    return 0;
}

/* Standard base64 with padding; returns the decoded length or -1. */
static int b64_decode(const char *in, unsigned char *out, size_t outlen)
{
    size_t n = strlen(in);
    if (n == 0 || n % 4 != 0 || n / 4 * 3 > outlen) return -1;
    int len = EVP_DecodeBlock(out, (const unsigned char *)in, (int)n);
    if (len < 0) return -1;
    if (in[n - 1] == '=') len--;
    if (in[n - 2] == '=') len--;
    return len;
}

int random_token(char out[64])
{
    unsigned char raw[32];
    if (RAND_bytes(raw, sizeof raw) != 1) return -1;
    char b64[64];
    EVP_EncodeBlock((unsigned char *)b64, raw, sizeof raw);
    size_t j = 0;
    for (size_t i = 0; b64[i] && b64[i] != '='; i++)
        out[j++] = b64[i] == '+' ? '-' : b64[i] == '/' ? '_' : b64[i];
    out[j] = 0;
    return 0;
}

void sha256_hex(const char *s, char out[65])
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)s, strlen(s), md);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) sprintf(out + 2 * i, "%02x", md[i]);
}

void random_alnum(char *out, size_t n)
{
    static const char ALPHA[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char raw[64];
    if (n > sizeof raw) n = sizeof raw;
    RAND_bytes(raw, (int)n);
    for (size_t i = 0; i < n; i++) out[i] = ALPHA[raw[i] % 36];
    out[n] = 0;
}

/* At most two derivations at once in the whole process: each takes scrypt's
 * 128 MiB. */
static sem_t slots;
static pthread_once_t slots_once = PTHREAD_ONCE_INIT;

static void slots_init(void)
{
    sem_init(&slots, 0, 2);
}

static int derive(const char *password, const unsigned char *salt, size_t saltlen, uint64_t n,
                  uint64_t r, uint64_t p, unsigned char *key, size_t keylen)
{
    /* scrypt needs 128 * N * r * p bytes; allow twice that. */
    uint64_t maxmem = 256 * n * r * p;
    pthread_once(&slots_once, slots_init);
    while (sem_wait(&slots) != 0) continue;
    int ok = EVP_PBE_scrypt(password, strlen(password), salt, saltlen, n, r, p, maxmem, key,
                            keylen) == 1;
    sem_post(&slots);
    return ok ? 0 : -1;
}

int password_hash(const char *password, char *out, size_t outlen)
{
    unsigned char salt[SALT_LEN], key[KEY_LEN];
    char salt64[32], key64[100];
    if (RAND_bytes(salt, sizeof salt) != 1) return -1;
    if (derive(password, salt, sizeof salt, SCRYPT_N, SCRYPT_R, SCRYPT_P, key, sizeof key) != 0)
        return -1;
    if (b64_encode(salt, sizeof salt, salt64, sizeof salt64) != 0 ||
        b64_encode(key, sizeof key, key64, sizeof key64) != 0)
        return -1;
    int n =
        snprintf(out, outlen, "scrypt$%d$%d$%d$%s$%s", SCRYPT_N, SCRYPT_R, SCRYPT_P, salt64, key64);
    OPENSSL_cleanse(key, sizeof key);
    return n > 0 && (size_t)n < outlen ? 0 : -1;
}

typedef struct parsed_hash {
    uint64_t n, r, p;
    unsigned char salt[KEY_MAX], key[KEY_MAX];
    int saltlen, keylen;
} parsed_hash;

static int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    if (*s < '0' || *s > '9') return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != 0 || v == 0 || v > max) return -1;
    *out = v;
    return 0;
}

static int parse_hash(const char *stored, parsed_hash *h, char *why, size_t whylen)
{
    char buf[1024], *part[6];
    if (strlen(stored) >= sizeof buf) return snprintf(why, whylen, "too long"), -1;
    strcpy(buf, stored);
    int n = 0;
    for (char *s = buf; n < 6; n++) {
        part[n] = s;
        char *d = strchr(s, '$');
        if (d == NULL) {
            n++;
            break;
        }
        *d = 0;
        s = d + 1;
    }
    if (n != 6 || strcmp(part[0], "scrypt") != 0)
        return snprintf(why, whylen, "not of the form scrypt$N$r$p$salt$hash"), -1;
    /* Bounds keep a hash from asking for gigabytes or minutes. */
    if (parse_uint(part[1], 1u << 20, &h->n) != 0 || (h->n & (h->n - 1)) != 0 || h->n < 2)
        return snprintf(why, whylen, "N must be a power of two up to 2^20"), -1;
    if (parse_uint(part[2], 32, &h->r) != 0 || parse_uint(part[3], 16, &h->p) != 0)
        return snprintf(why, whylen, "r must be 1 to 32 and p 1 to 16"), -1;
    if (h->n * h->r * h->p * 128 > (1ull << 30))
        return snprintf(why, whylen, "N, r and p ask for more than 1 GiB"), -1;
    h->saltlen = b64_decode(part[4], h->salt, sizeof h->salt);
    h->keylen = b64_decode(part[5], h->key, sizeof h->key);
    if (h->saltlen <= 0 || h->keylen < 16)
        return snprintf(why, whylen, "the salt or hash is not base64 (a hash of 16 bytes or more)"),
               -1;
    return 0;
}

int password_hash_check(const char *stored, char *why, size_t whylen)
{
    parsed_hash h;
    return parse_hash(stored, &h, why, whylen);
}

int password_verify(const char *password, const char *stored)
{
    parsed_hash h;
    char why[128];
    unsigned char key[KEY_MAX];
    if (parse_hash(stored, &h, why, sizeof why) != 0) return 0;
    if (derive(password, h.salt, (size_t)h.saltlen, h.n, h.r, h.p, key, (size_t)h.keylen) != 0)
        return 0;
    int ok = CRYPTO_memcmp(key, h.key, (size_t)h.keylen) == 0;
    OPENSSL_cleanse(key, sizeof key);
    return ok;
}
