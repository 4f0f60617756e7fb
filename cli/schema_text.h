/* The compact text form of a schema: NAME:TYPE[,NAME:TYPE...], a trailing '!'
 * on the type marks a required column. */
#ifndef TL_CLI_SCHEMA_TEXT_H
#define TL_CLI_SCHEMA_TEXT_H

#include "timelake.h"

/* Parses `spec` into *out (a struct schema the caller releases). A bad spec is
 * TL_ERR_INVALID naming the column or type. */
tl_status cli_schema_parse(const char *spec, struct ArrowSchema *out, tl_error *err);

#endif
