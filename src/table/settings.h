/* The registry of Timelake's settings: every timelake.<name> table property
 * and session setting, declared once with the values it takes, its default
 * and where it may be set. Table properties, a query's session settings, the
 * CLI's `timelake settings` and `timelake alter` all go through it.
 *
 * Names are kebab-case ("read-dedup"); any spelling finds a setting: with or
 * without the "timelake." prefix (the prefix in any case), dashes or
 * underscores, any case ("timelake.READ_DEDUP"), as the reference's registry
 * does. Stored properties keep the canonical key "timelake.<name>" and the
 * value as given; readers parse values leniently (booleans and choices in
 * any case, choices with '_' for '-', durations with long units). */
#ifndef TL_TABLE_SETTINGS_H
#define TL_TABLE_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "iceberg/metadata.h"
#include "timelake.h"

#define TL_SETTING_PREFIX "timelake."

/* Where a setting may be set (bits). None of them: Timelake sets it itself. */
enum {
    TL_LEVEL_CREATE = 1,  /* by the create options (time_column, chunk, ...) */
    TL_LEVEL_TABLE = 2,   /* as a table property: at create, or `timelake alter` */
    TL_LEVEL_SESSION = 4, /* for queries: tl_sql_options.settings, `sql --set` */
    TL_LEVEL_CALL = 8     /* by one call's argument (append's maintain, ...) */
};

typedef enum tl_setting_kind {
    TL_SETTING_BOOL,         /* true or false */
    TL_SETTING_COUNT,        /* a non-negative integer */
    TL_SETTING_PERCENT,      /* an integer 0..100 */
    TL_SETTING_DURATION,     /* tl_duration_parse */
    TL_SETTING_DURATION_OFF, /* a duration or "off" */
    TL_SETTING_CHOICE,       /* one of `choices` */
    TL_SETTING_TEXT          /* anything not empty (column names, ...) */
} tl_setting_kind;

typedef struct tl_setting {
    const char *key;      /* the table property: "timelake." name */
    tl_setting_info info; /* the public part (timelake.h) */
    tl_setting_kind kind;
    const char *choices; /* TL_SETTING_CHOICE: comma-separated, canonical spellings */
    unsigned levels;
} tl_setting;

/* The setting a name spells (see above), or NULL. */
const tl_setting *tl_setting_find(const char *name);

/* Checks a value for s; TL_ERR_INVALID naming "timelake.<name>" and the value. */
tl_status tl_setting_check(const tl_setting *s, const char *value, tl_error *err);

/* For a property key given by a user at `level` (TL_LEVEL_TABLE when creating
 * or altering a table): *out is its canonical key (static storage) when it is
 * a Timelake setting that level allows, or NULL when the key is not Timelake's
 * (it passes through as an Iceberg or user property). With bare_names, a key
 * without a dot also names a setting ("read_dedup", as set_properties and
 * session settings take them). TL_ERR_INVALID for an unknown timelake.* key,
 * a setting fixed at creation, one Timelake sets itself, or one this level
 * cannot set, each with the reference's message. */
tl_status tl_setting_key(const char *key, unsigned level, bool bare_names, const char **out,
                         tl_error *err);

/* Checks session settings (NULL or NULL-terminated name, value pairs): each
 * a setting allowed at the session level with a valid value. */
tl_status tl_settings_check_session(const char *const *settings, tl_error *err);

/* The value of setting `name` (canonical kebab-case) for a table: the
 * session's (NULL-terminated pairs, any spelling; may be NULL), else the
 * table property, else NULL (the default applies). */
const char *tl_setting_value(const tl_ice_metadata *md, const char *const *session,
                             const char *name);

/* Lenient readers of stored values. */
bool tl_setting_parse_bool(const char *v, bool *out);
/* Whether v spells `choice` (any case, '_' for '-'). */
bool tl_setting_is(const char *v, const char *choice);

/* A boolean setting's effective value for a table (session, property, then
 * `fallback`; an unreadable value counts as the fallback). */
bool tl_setting_flag(const tl_ice_metadata *md, const char *const *session, const char *name,
                     bool fallback);

/* A duration setting's effective value in microseconds, or `fallback`. */
int64_t tl_setting_duration(const tl_ice_metadata *md, const char *const *session, const char *name,
                            int64_t fallback);

/* The chunk interval a create option spells: "hour", "day" or "month", or
 * the reference's aliases "1h", "1 hour", "1d", "24h", "1 day", "1 month"
 * (any case, spaces around); NULL when it spells none. */
const char *tl_chunk_canonical(const char *chunk);

#endif
