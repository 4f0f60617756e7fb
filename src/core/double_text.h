/* The shortest decimal that reads back as the same double. tl_double_text
 * (timelake.h) lays it out as Python's repr; this gives its digits to
 * writers with a layout of their own (tl_double_format's, as %g). */
#ifndef TL_CORE_DOUBLE_TEXT_H
#define TL_CORE_DOUBLE_TEXT_H

#include "timelake.h"

/* Room for the digits with their NUL. */
#define TL_DOUBLE_DIGITS 24

/* The fewest significant digits of a finite nonzero v (its sign left out)
 * that read back as v: written NUL-terminated into digits, the first not
 * zero and the last not zero, and counted in the return value (1 to 17);
 * *exp10 is the power of ten of the first: |v| reads as d1.d2d3... * 10^exp10. */
int tl_double_digits(double v, char digits[TL_DOUBLE_DIGITS], int *exp10);

#endif
