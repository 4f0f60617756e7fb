/* The bytes a compaction reserves for each output file
 * (tl_merge_reserve_bytes): its rows' share of the inputs' bytes and a
 * quarter more, capped, nothing without inputs. */
#include "table/maintain.h"
#include "unit.h"

static void test_share_and_headroom(void)
{
    /* 64 inputs of 9,000 rows, 9.8 MB, into one file: all of it, and 25%. */
    CHECK_INT(tl_merge_reserve_bytes(9776964, 576000, 576000), 12221205);
    /* Into three files: a third each. */
    CHECK_INT(tl_merge_reserve_bytes(30000000, 600000, 200000), 12500000);
    /* A file's rows above the inputs' (rounding up of an even split): all. */
    CHECK_INT(tl_merge_reserve_bytes(1000, 10, 11), 1250);
}

static void test_capped_and_empty(void)
{
    int64_t gib = INT64_C(1) << 30;
    CHECK_INT(tl_merge_reserve_bytes(8 * gib, 1000000, 1000000), TL_MERGE_RESERVE_MAX);
    CHECK_INT(tl_merge_reserve_bytes(0, 100, 100), 0);
    CHECK_INT(tl_merge_reserve_bytes(1000, 0, 100), 0);
    CHECK_INT(tl_merge_reserve_bytes(1000, 100, 0), 0);
}

UNIT_TESTS(UNIT(test_share_and_headroom), UNIT(test_capped_and_empty))
