#include "query/sql_plan_time.h"

#include <ctype.h>

#include "arrow/parse.h"

/* n decimal digits at *p, advancing it; -1 when they are not there. */
static int digits(const char **p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (!isdigit((unsigned char)**p)) return -1;
        v = v * 10 + (**p - '0');
    }
    return v;
}

static int days_in_month(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/* The zone suffix in seconds east of UTC; false when malformed. */
static bool zone(const char *p, int64_t *offset)
{
    *offset = 0;
    if (*p == '\0') return true;
    if (*p == 'Z' || *p == 'z') return p[1] == '\0';
    if (*p != '+' && *p != '-') return false;
    int sign = *p++ == '-' ? -1 : 1;
    int h = digits(&p, 2), m = 0;
    if (h < 0 || h > 15) return false;
    if (*p == ':') p++;
    if (*p) {
        m = digits(&p, 2);
        if (m < 0 || m > 59 || *p) return false;
    }
    *offset = sign * (h * 3600 + m * 60);
    return true;
}

bool tl_sql_parse_time(const char *s, int64_t *us)
{
    const char *p = s;
    int y = digits(&p, 4);
    if (y < 1 || *p++ != '-') return false;
    int mo = digits(&p, 2);
    if (mo < 1 || mo > 12 || *p++ != '-') return false;
    int d = digits(&p, 2);
    if (d < 1 || d > days_in_month(y, mo)) return false;
    int h = 0, mi = 0, sec = 0, frac = 0;
    if (*p == ' ' || *p == 'T') {
        p++;
        h = digits(&p, 2);
        if (h < 0 || h > 23 || *p++ != ':') return false;
        mi = digits(&p, 2);
        if (mi < 0 || mi > 59) return false;
        if (*p == ':') {
            p++;
            sec = digits(&p, 2);
            if (sec < 0 || sec > 59) return false;
            if (*p == '.') {
                p++;
                int n = 0;
                for (; isdigit((unsigned char)*p) && n < 6; n++, p++) frac = frac * 10 + (*p - '0');
                if (n == 0 || isdigit((unsigned char)*p)) return false; /* beyond microseconds */
                for (; n < 6; n++) frac *= 10;
            }
        }
    }
    int64_t offset;
    if (!zone(p, &offset)) return false;
    int64_t secs = tl_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset;
    *us = secs * 1000000 + frac;
    return true;
}
