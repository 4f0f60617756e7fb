#include "arrow/parse_float.h"

#include <string.h>

#include "arrow/pow5_table.h"

__extension__ typedef unsigned __int128 tl_u128;

/* The result's bits (sign clear), or UINT64_MAX when undecided. */
static uint64_t eisel_lemire_bits(uint64_t w, int64_t q)
{
    if (w == 0 || q < TL_POW5_MIN_Q || q > TL_POW5_MAX_Q) return UINT64_MAX;
    const uint64_t *pow5 = tl_pow5_128[q - TL_POW5_MIN_Q];
    int lz = __builtin_clzll(w);
    w <<= lz;
    /* floor(q * log2(10)) + 63 + bias: the biased exponent if the product's
     * top bit lands on bit 127 (217706 / 2^16 ~ log2(10); exact over the
     * table range; >> on a negative value is arithmetic in GCC and Clang). */
    int64_t exp2 = ((217706 * q) >> 16) + 64 + 1023 - lz;

    tl_u128 x = (tl_u128)w * pow5[0];
    uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;
    /* The top 55 bits may be off by the truncated low 64-bit word of the
     * power; widen with it when they could carry. */
    if ((hi & 0x1FF) == 0x1FF && lo + w < w) {
        tl_u128 y = (tl_u128)w * pow5[1];
        uint64_t y_hi = (uint64_t)(y >> 64), y_lo = (uint64_t)y;
        uint64_t merged_lo = lo + y_hi;
        uint64_t merged_hi = hi + (merged_lo < lo);
        if ((merged_hi & 0x1FF) == 0x1FF && merged_lo + 1 == 0 && y_lo + w < w) return UINT64_MAX;
        hi = merged_hi;
        lo = merged_lo;
    }
    /* Keep 54 bits: 53 plus a rounding bit. */
    uint64_t msb = hi >> 63;
    uint64_t mant = hi >> (msb + 9);
    exp2 -= (int64_t)(1 ^ msb);
    /* Exactly halfway as far as we can tell: let the exact method decide. */
    if (lo == 0 && (hi & 0x1FF) == 0 && (mant & 3) == 1) return UINT64_MAX;
    mant = (mant + (mant & 1)) >> 1;
    if (mant >> 53) {
        mant >>= 1;
        exp2++;
    }
    if (exp2 <= 0 || exp2 >= 0x7FF) return UINT64_MAX; /* subnormal, zero or infinite */
    return (uint64_t)exp2 << 52 | (mant & ((1ULL << 52) - 1));
}

bool tl_eisel_lemire(uint64_t mantissa, int64_t exp10, bool neg, double *out)
{
    uint64_t bits = eisel_lemire_bits(mantissa, exp10);
    if (bits == UINT64_MAX) return false;
    bits |= (uint64_t)neg << 63;
    memcpy(out, &bits, sizeof *out);
    return true;
}
