/* Settings a query sets for the later queries of its lake and namespace
 * (SET timelake.<setting> = value), as the reference keeps them: in memory,
 * per namespace, for as long as the lake is open. They override the tables'
 * own properties and the settings a call passes (tl_sql_options.settings). */
#ifndef TL_QUERY_SQL_SESSION_H
#define TL_QUERY_SQL_SESSION_H

#include "core/strlist.h"
#include "query/engine.h"

/* Sets (value non-NULL) or resets (value NULL: back to the default; name
 * NULL with it: every setting) a session setting of namespace ns. The name
 * is a Timelake setting a session may set, in any spelling, with its
 * "timelake." prefix; an unknown one or a bad value is TL_ERR_QUERY, as the
 * reference reports it, and changes nothing. */
tl_status tl_sql_session_set(tl_query_engine *e, const char *ns, const char *name,
                             const char *value, tl_error *err);

/* The settings in force for a query in ns: the call's (NULL-terminated
 * name, value pairs, may be NULL), then the namespace's, the last given of
 * a name winning (tl_setting_value). *out holds copies, pairs in order. */
tl_status tl_sql_session_settings(const tl_query_engine *e, const char *ns, const char *const *call,
                                  tl_strlist *out, tl_error *err);

void tl_sql_sessions_free(tl_query_engine *e);

/* Whether `name` spells a session setting. */
bool tl_sql_setting_known(const char *name);
/* The name information_schema.df_settings and SHOW give a session setting
 * ("timelake.read_dedup"; malloc'd), or NULL when `name` spells none or
 * out of memory. */
char *tl_sql_setting_show_name(const char *name);

#endif
