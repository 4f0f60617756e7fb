#include "notify_auth.h"

#include <string.h>

bool tl_notify_auth_ok(const char *header, const char *token)
{
    static const char scheme[] = "Bearer ";
    const size_t slen = sizeof scheme - 1, tlen = strlen(token);
    if (header == NULL) header = "";
    const size_t hlen = strlen(header);
    /* Compare over the expected length whatever the header's length; a
     * length mismatch is folded into the result rather than returned early. */
    unsigned diff = hlen != slen + tlen;
    for (size_t i = 0; i < slen + tlen; i++) {
        unsigned char want = i < slen ? (unsigned char)scheme[i] : (unsigned char)token[i - slen];
        unsigned char got = i < hlen ? (unsigned char)header[i] : 0;
        diff |= (unsigned)(want ^ got);
    }
    return diff == 0 && tlen > 0;
}
