#include "formats/input/text_schema.h"

#include <string.h>

#include "arrow/array.h"
#include "core/buf.h"
#include "formats/input/text_batch.h"

int tl_text_target_find(const struct ArrowSchema *target, const char *name)
{
    for (int64_t i = 0; i < target->n_children; i++)
        if (target->children[i]->name && strcmp(target->children[i]->name, name) == 0)
            return (int)i;
    return -1;
}

tl_status tl_text_target_type(const struct ArrowSchema *target, int i, tl_arrow_type *out,
                              tl_error *err)
{
    const struct ArrowSchema *f = target->children[i];
    TL_TRY(tl_arrow_type_parse(f->format, out, err));
    return tl_text_type_supported(out, f->name, err);
}

tl_status tl_target_required_present(const struct ArrowSchema *target, const char *const *names,
                                     int n, const char *source, tl_error *err)
{
    for (int64_t f = 0; f < target->n_children; f++) {
        const struct ArrowSchema *field = target->children[f];
        if ((field->flags & ARROW_FLAG_NULLABLE) || field->name == NULL) continue;
        int i = 0;
        while (i < n && strcmp(names[i], field->name) != 0) i++;
        if (i < n) continue;
        tl_buf has = {0};
        for (i = 0; i < n && has.len < 512; i++)
            if (tl_buf_printf(&has, "%s\"%s\"", i ? ", " : "", names[i]) != 0) break;
        tl_status st = tl_error_set(err, TL_ERR_INVALID,
                                    "%s: required column \"%s\" is missing (the file has %s%s); "
                                    "the table needs a value for it in every row",
                                    source, field->name, n ? "" : "no columns",
                                    has.data ? (const char *)has.data : "");
        tl_buf_free(&has);
        return st;
    }
    return TL_OK;
}

tl_status tl_text_schema_make(const char *const *names, const tl_arrow_type *types, int n,
                              struct ArrowSchema *out, tl_error *err)
{
    TL_TRY(tl_schema_init(out, "+s", "", 0, n, err));
    for (int i = 0; i < n; i++) {
        char format[128];
        tl_arrow_type_format(&types[i], format, sizeof format);
        tl_status st =
            tl_schema_init(out->children[i], format, names[i], ARROW_FLAG_NULLABLE, 0, err);
        if (st != TL_OK) {
            tl_schema_release(out);
            return st;
        }
    }
    return TL_OK;
}
