/* Type inference for text columns: each value rules out the types it is not. */
#include <string.h>

#include "arrow/parse.h"
#include "formats/input/text_batch.h"

enum {
    CAN_INT = 1,
    CAN_BOOL = 2,
    CAN_DATE = 4,
    CAN_TS = 8,
    CAN_FLOAT = 16,
};

/* An ISO timestamp carries an offset when it ends in Z or has a sign after the date. */
static bool has_offset(const char *s, size_t len)
{
    if (len > 10 && (s[len - 1] == 'Z' || s[len - 1] == 'z')) return true;
    for (size_t i = 11; i < len; i++)
        if (s[i] == '+' || s[i] == '-') return true;
    return false;
}

static unsigned candidates(const char *s, size_t len, int kind, bool *offset)
{
    unsigned can = 0;
    int64_t i;
    double d;
    bool b;
    int32_t day;
    /* JSON literals are numbers or booleans; JSON strings are never numbers. */
    bool numeric_ok = kind == TL_TEXT_LITERAL || kind == TL_TEXT_STRING;
    if (kind == TL_TEXT_LITERAL || kind == TL_TEXT_STRING) {
        if (numeric_ok && tl_parse_int64(s, len, &i, NULL) == TL_OK) can |= CAN_INT;
        if (numeric_ok && tl_parse_double(s, len, &d, NULL) == TL_OK) can |= CAN_FLOAT;
        /* "1"/"0" stay integers: bool is only the words, as in pyarrow */
        if (!(can & CAN_INT) && tl_parse_bool(s, len, &b, NULL) == TL_OK) can |= CAN_BOOL;
    }
    if (kind == TL_TEXT_STRING && len >= 10 && s[4] == '-') {
        if (tl_parse_date32(s, len, &day, NULL) == TL_OK) can |= CAN_DATE;
        if (tl_parse_timestamp_floor(s, len, TL_UNIT_MICRO, &i, NULL) == TL_OK) {
            can |= CAN_TS;
            if (has_offset(s, len)) *offset = true;
        }
    }
    return can;
}

static tl_arrow_type infer_column(const tl_text_column *c, int64_t rows, bool csv)
{
    unsigned can = CAN_INT | CAN_BOOL | CAN_DATE | CAN_TS | CAN_FLOAT;
    bool offset = false, any = false;
    for (int64_t r = 0; r < rows && can; r++) {
        size_t len;
        int kind;
        const char *s = tl_text_value(c, r, &len, &kind);
        if (kind == TL_TEXT_NULL || (kind == TL_TEXT_STRING && len == 0)) continue;
        if (csv && tl_text_is_csv_null(s, len)) continue;
        any = true;
        /* CSV fields are untyped text: any type may fit. JSON strings only take
         * temporal types, JSON literals only numbers and booleans. */
        unsigned fit = candidates(s, len, csv ? TL_TEXT_STRING : kind, &offset);
        if (!csv && kind == TL_TEXT_STRING) fit &= CAN_DATE | CAN_TS;
        if (!csv && kind == TL_TEXT_LITERAL) fit &= CAN_INT | CAN_FLOAT | CAN_BOOL;
        can &= fit;
    }
    tl_arrow_type t = {.id = TL_ATYPE_STRING};
    if (!any) return t;
    if (can & CAN_INT)
        t.id = TL_ATYPE_INT64;
    else if (can & CAN_BOOL)
        t.id = TL_ATYPE_BOOL;
    else if (can & CAN_DATE)
        t.id = TL_ATYPE_DATE32;
    else if (can & CAN_TS) {
        t.id = TL_ATYPE_TIMESTAMP;
        t.unit = TL_UNIT_MICRO;
        if (offset) {
            t.has_tz = true;
            strcpy(t.tz, "UTC");
        }
    } else if (can & CAN_FLOAT)
        t.id = TL_ATYPE_FLOAT64;
    return t;
}

void tl_text_batch_infer(const tl_text_batch *b, const tl_text_source *src, tl_arrow_type *types)
{
    for (int i = 0; i < b->ncols; i++)
        types[i] = infer_column(&b->cols[i], b->rows, src->csv_nulls);
}
