/* Eisel-Lemire: decimal significand and exponent -> correctly rounded double
 * (Lemire, "Number Parsing at a Gigabyte per Second", 2021) using one or two
 * 64x64->128-bit multiplies by a table of powers of five. It declines (returns
 * false) whenever the truncated product cannot decide the rounding, and for
 * results that are subnormal, zero or infinite; the caller then falls back to
 * a slower exact method (strtod). */
#ifndef TL_ARROW_PARSE_FLOAT_H
#define TL_ARROW_PARSE_FLOAT_H

#include <stdbool.h>
#include <stdint.h>

/* Sets *out to the double nearest to (-1)^neg * mantissa * 10^exp10 (ties to
 * even) and returns true, or returns false when undecided. mantissa != 0. */
bool tl_eisel_lemire(uint64_t mantissa, int64_t exp10, bool neg, double *out);

#endif
