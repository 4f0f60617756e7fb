/* Hashes and encodings the request signers need (OpenSSL underneath). */
#ifndef TL_STORE_DIGEST_H
#define TL_STORE_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

void tl_sha256(const void *data, size_t len, uint8_t out[32]);
void tl_md5(const void *data, size_t len, uint8_t out[16]);
/* An MD5 written as 32 hex digits (S3 ETag, quotes allowed around it) or as
 * base64 (GCS md5Hash, Azure Content-MD5) into out; false when text is not one. */
bool tl_md5_from_hex(const char *text, uint8_t out[16]);
bool tl_md5_from_base64(const char *text, uint8_t out[16]);
void tl_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len, uint8_t out[32]);
/* Lower-case hex of len bytes into out (2 * len + 1 bytes). */
void tl_hex(const uint8_t *data, size_t len, char *out);
int tl_base64_encode(tl_buf *out, const void *data, size_t len, int url_safe);
/* -1 on bad input or out of memory. */
int tl_base64_decode(tl_buf *out, const char *text, size_t len);

#endif
