#include "store/digest.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/md5.h>
#include <openssl/sha.h>
#include <string.h>

/* OpenSSL registers its cleanup with atexit on its first initialisation.
 * Left to the first digest, on a pool thread that came after the pool's own
 * stop handler (core/parallel.c): at exit OpenSSL cleaned up first and the
 * pool threads that stopped after it could not free their per-thread error
 * state (904 bytes each). Initialised when the library loads, its cleanup
 * runs after the pool has stopped. Asked for no option, OpenSSL does nothing;
 * the digests are the cheapest one (50 us; its configuration, 350 us, still
 * loads on first need). */
__attribute__((constructor)) static void openssl_init(void)
{
    OPENSSL_init_crypto(OPENSSL_INIT_ADD_ALL_DIGESTS, NULL);
}

void tl_sha256(const void *data, size_t len, uint8_t out[32])
{
    SHA256(data, len, out);
}

void tl_md5(const void *data, size_t len, uint8_t out[16])
{
    /* Not for security: only to match the digest object stores list. */
    unsigned int n = 16;
    EVP_Digest(data, len, out, &n, EVP_md5(), NULL);
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool tl_md5_from_hex(const char *text, uint8_t out[16])
{
    size_t n = text ? strlen(text) : 0;
    if (n == 34 && text[0] == '"' && text[33] == '"') text++, n -= 2;
    if (n != 32) return false; /* e.g. a multipart ETag "<hex>-<parts>" */
    for (size_t i = 0; i < 16; i++) {
        int hi = hex_digit(text[2 * i]), lo = hex_digit(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

bool tl_md5_from_base64(const char *text, uint8_t out[16])
{
    tl_buf b = {0};
    bool ok = text && tl_base64_decode(&b, text, strlen(text)) == 0 && b.len == 16;
    if (ok) memcpy(out, b.data, 16);
    tl_buf_free(&b);
    return ok;
}

void tl_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len, uint8_t out[32])
{
    unsigned int n = 32;
    HMAC(EVP_sha256(), key, (int)key_len, data, len, out, &n);
}

void tl_hex(const uint8_t *data, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[data[i] >> 4];
        out[2 * i + 1] = digits[data[i] & 15];
    }
    out[2 * len] = '\0';
}

int tl_base64_encode(tl_buf *out, const void *data, size_t len, int url_safe)
{
    size_t n = 4 * ((len + 2) / 3);
    char *dst = tl_buf_extend(out, n + 1);
    if (dst == NULL) return -1;
    EVP_EncodeBlock((unsigned char *)dst, data, (int)len);
    out->len -= 1; /* EVP_EncodeBlock's NUL */
    if (url_safe) {
        /* base64url without padding, as JWTs want. */
        for (size_t i = 0; i < n; i++) {
            if (dst[i] == '+') dst[i] = '-';
            if (dst[i] == '/') dst[i] = '_';
        }
        while (n > 0 && dst[n - 1] == '=') {
            n--;
            out->len--;
        }
    }
    out->data[out->len] = '\0';
    return 0;
}

int tl_base64_decode(tl_buf *out, const char *text, size_t len)
{
    if (len % 4 != 0) return -1;
    uint8_t *dst = tl_buf_extend(out, len / 4 * 3 + 1);
    if (dst == NULL) return -1;
    int n = EVP_DecodeBlock(dst, (const unsigned char *)text, (int)len);
    if (n < 0) return -1;
    /* EVP_DecodeBlock counts the padding as zero bytes. */
    size_t pad = (len >= 1 && text[len - 1] == '=') + (len >= 2 && text[len - 2] == '=');
    out->len -= len / 4 * 3 + 1 - ((size_t)n - pad);
    out->data[out->len] = '\0';
    return 0;
}
