/* The bins of the reference's date_bin (DataFusion's, of which its
 * time_bucket is an alias), for the widths the integer floor of
 * time_bucket.c does not take: widths of months, zero and negative ones, and
 * any origin. A bin is origin plus a whole number of
 * widths: the largest such at or before ts for a positive width; for a
 * negative one the distance from the origin is truncated toward it (as
 * DataFusion's remainder does). Months count calendar months from the
 * origin's, each bin keeping the origin's day and time of day (clamped to
 * the month's last day). A width of months and days or time at once, or a
 * zero width, is an error. */
#include "query/date_bin.h"

#include <stdbool.h>
#include <stdint.h>

#include "arrow/parse.h"
#include "query/time_floor.h"

#define US_PER_DAY INT64_C(86400000000)

/* Floor division of a by b > 0. */
static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return q - (a % b != 0 && a < 0);
}

/* DataFusion's distance from the origin to the bin of a point `diff` away:
 * diff less its remainder, one width further back when diff is below the
 * origin and the width positive (then a floor). */
static bool bin_distance(int64_t diff, int64_t width, int64_t *out)
{
    int64_t delta = diff - diff % width;
    if (diff < 0 && width > 0 && delta != diff) return !__builtin_sub_overflow(delta, width, out);
    *out = delta;
    return true;
}

/* A timestamp broken into a calendar month and what lies within it. */
typedef struct civil_time {
    int64_t month;  /* months since year 0 */
    int day;        /* 1..31 */
    int64_t in_day; /* microseconds since midnight */
} civil_time;

static civil_time civil_of(int64_t us)
{
    int64_t days = floor_div(us, US_PER_DAY), y;
    int m, d;
    tl_civil_from_days(days, &y, &m, &d);
    return (civil_time){y * 12 + (m - 1), d, us - days * US_PER_DAY};
}

static int days_in_month(int64_t month)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int64_t y = floor_div(month, 12);
    int m = (int)(month - y * 12);
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return days[m] + (m == 1 && leap);
}

/* The origin moved by `months`, its day clamped to that month's length. */
static int64_t add_months(civil_time origin, int64_t months)
{
    int64_t month = origin.month + months, y = floor_div(month, 12);
    int day = origin.day, last = days_in_month(month);
    if (day > last) day = last;
    int64_t days = tl_days_from_civil(y, (int)(month - y * 12) + 1, day);
    return days * US_PER_DAY + origin.in_day;
}

/* Months are far fewer than microseconds: none of this can overflow for
 * timestamps DuckDB holds. */
static int64_t bin_months(int64_t months, int64_t ts, int64_t origin)
{
    civil_time s = civil_of(ts), o = civil_of(origin);
    int64_t delta;
    bin_distance(s.month - o.month, months, &delta);
    int64_t bin = add_months(o, delta);
    return bin > ts ? add_months(o, delta - months) : bin;
}

bool tl_date_bin_row(int64_t months, int64_t width, int64_t ts, int64_t origin, int64_t *out,
                     const char **error)
{
    *out = 0;
    if (months != 0 && width != 0) {
        *error = "date_bin: a width of months cannot also have days or a time of day "
                 "(INTERVAL '1 month 1 day'): give months alone, or days and time alone";
        return false;
    }
    if (months == 0 && width == 0) {
        *error = "date_bin: the width must not be zero";
        return false;
    }
    if (ts == TL_TS_INFINITY || ts == TL_TS_NINFINITY) {
        *out = ts;
        return true;
    }
    int64_t diff, delta;
    if (months != 0) {
        *out = bin_months(months, ts, origin);
    } else if (__builtin_sub_overflow(ts, origin, &diff) || !bin_distance(diff, width, &delta) ||
               __builtin_add_overflow(origin, delta, out)) {
        *error = "date_bin: the bin is out of range";
        return false;
    }
    return true;
}
