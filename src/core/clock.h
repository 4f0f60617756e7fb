/* Wall and monotonic clocks, and the duration strings of table settings. */
#ifndef TL_CORE_CLOCK_H
#define TL_CORE_CLOCK_H

#include <stdint.h>

#include "core/error.h"

#define TL_MICROS_PER_SECOND INT64_C(1000000)
#define TL_MICROS_PER_DAY (INT64_C(86400) * TL_MICROS_PER_SECOND)

int64_t tl_now_micros(void);  /* wall clock, microseconds since the Unix epoch */
int64_t tl_now_millis(void);  /* wall clock, milliseconds since the Unix epoch */
double tl_monotonic_ms(void); /* monotonic clock in milliseconds, for measuring */
void tl_sleep_ms(int64_t ms);

/* Parses "<digits><unit>" into microseconds, as the reference does: unit
 * s, m, h, d, w or y (365 days), or its English name ("sec", "mins", "hrs",
 * "days", "week", "years", ...), in any case, with spaces around it allowed
 * ("90d", "12h", "90 days", "1 Week"). */
tl_status tl_duration_parse(const char *text, int64_t *out_micros, tl_error *err);

/* The shortest text of a duration in whole seconds as the reference writes
 * it: the largest of d, h, m that divides it, else s ("90d", "36h", "0s").
 * Sub-second parts are dropped. */
void tl_duration_format(int64_t micros, char *buf, size_t size);

#endif
