/* Credentials: scrypt password hashes in the peer's format, random session
 * tokens stored only as hashes, constant-time comparisons, and the sign-in
 * throttle. */
#ifndef KARET_AUTH_H
#define KARET_AUTH_H

#include <stddef.h>
#include <stdint.h>

/* scrypt's cost for new hashes: N = 2^17, r = 8, p = 1 (as the peer). */
#define SCRYPT_N 131072
#define SCRYPT_R 8
#define SCRYPT_P 1

/* Writes "scrypt$N$r$p$<salt b64>$<hash b64>" (a 16-byte salt, a 64-byte
 * key) into out. Returns 0, or -1 when out is too small or OpenSSL failed. */
int password_hash(const char *password, char *out, size_t outlen);
/* 1 when password matches a hash in that format; 0 otherwise (a malformed
 * hash included). The key comparison takes constant time. */
int password_verify(const char *password, const char *stored);
/* 0 when stored is a well-formed hash; else -1 with why. */
int password_hash_check(const char *stored, char *why, size_t whylen);

/* 1 when the two strings are equal. The time taken depends only on the
 * length of `expected`, never on where the strings differ. */
int ct_equal(const char *given, const char *expected);

/* A fresh session token: 32 random bytes, base64url (43 characters). */
int random_token(char out[64]);
/* Lowercase hex SHA-256 of s. */
void sha256_hex(const char *s, char out[65]);
/* Random alphanumerics (for job ids). */
void random_alnum(char *out, size_t n);

/* Sign-in throttle: a bucket of 5 attempts a client, one back every 15 s,
 * and at most 2 password verifications in flight at once. */
typedef struct auth_throttle auth_throttle;
auth_throttle *throttle_new(void);
void throttle_free(auth_throttle *t);
/* 0: go on (call throttle_release after verifying); otherwise the seconds
 * the client should wait (Retry-After). *busy says whether the cause was the
 * global cap rather than this client's bucket. */
int throttle_acquire(auth_throttle *t, const char *client, int64_t now_ms, int *busy);
void throttle_release(auth_throttle *t);
/* Forgets a client's failures (after a successful sign-in). */
void throttle_reset(auth_throttle *t, const char *client);

#endif
