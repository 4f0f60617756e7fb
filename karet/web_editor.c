/* The pipeline editor: the page frame and the live config, with every
 * expression already in its text form, for the page script (editor.js),
 * which draws the graph and a panel per node, and saves through the API. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "expr_text.h"
#include "json_text.h"
#include "web.h"

/* texts[pointer] = the text of the expression at config[pointer], or its
 * JSON when it has no text form (the editor then shows the JSON). */
static void add_text(json_t *texts, const json_t *expr, const char *pointer)
{
    if (expr == NULL) return;
    char err[256];
    char *text = kexpr_to_text(expr, err, sizeof err);
    if (text == NULL) text = kjson_dumps(expr, JSON_COMPACT | JSON_ENCODE_ANY);
    if (text) json_object_set_new(texts, pointer, json_string(text));
    free(text);
}

static json_t *expression_texts(const json_t *config)
{
    json_t *texts = json_object();
    char ptr[96];
    size_t i, j;
    json_t *o, *c;
    json_array_foreach(json_object_get(config, "source_containers"), i, o)
    {
        snprintf(ptr, sizeof ptr, "/source_containers/%zu/record_filter", i);
        add_text(texts, json_object_get(o, "record_filter"), ptr);
    }
    json_array_foreach(json_object_get(config, "mappings"), i, o)
    {
        snprintf(ptr, sizeof ptr, "/mappings/%zu/where", i);
        add_text(texts, json_object_get(o, "where"), ptr);
        json_array_foreach(json_object_get(o, "columns"), j, c)
        {
            snprintf(ptr, sizeof ptr, "/mappings/%zu/columns/%zu/expr", i, j);
            add_text(texts, json_object_get(c, "expr"), ptr);
        }
    }
    return texts;
}

void web_editor(service *svc, http_req *rq, http_resp *out)
{
    const char *slug = rq->params[0];
    json_t *pipeline = web_pipeline(svc, rq, out, slug);
    if (pipeline == NULL) return;
    int64_t version = 0;
    json_t *config = api_live_config(svc, slug, &version);
    if (config == NULL) config = json_object();
    int can_edit = rq->who.role >= ROLE_EDITOR;
    json_t *data = json_pack("{s:O,s:I,s:o,s:b}", "config", config, "version", (json_int_t)version,
                             "texts", expression_texts(config), "canEdit", can_edit);
    page p = pipeline_page(svc, rq, pipeline, "Editor", "editor", "editor.js");
    page_begin(&p);
    kbuf_puts(&p.b, "<div class=\"page-head\"><h1>Editor</h1><div class=\"actions editor-actions\">"
                    "<span class=\"state-text\" id=\"save-state\" aria-live=\"polite\"></span>"
                    "<button type=\"button\" id=\"validate\">Validate</button>");
    if (can_edit)
        kbuf_puts(&p.b, "<button type=\"button\" class=\"primary\" id=\"save\">Save</button>");
    kbuf_puts(&p.b,
              "</div><p class=\"lede\">Files in a source's lake folder are read, each mapping "
              "turns their rows into rows of a table. Select a box to edit it.</p></div>"
              "<div id=\"conflict\" hidden></div><div id=\"problems\" hidden></div>");
    if (can_edit)
        kbuf_puts(&p.b,
                  "<div class=\"editor-actions\" id=\"add-bar\" aria-label=\"Add to the pipeline\" "
                  "role=\"group\"><button type=\"button\" class=\"small\" data-add=\"source\">+ "
                  "Source</button><button type=\"button\" class=\"small\" data-add=\"mapping\">+ "
                  "Mapping</button><button type=\"button\" class=\"small\" data-add=\"table\">+ "
                  "Table</button><button type=\"button\" class=\"small\" data-add=\"dimension\">+ "
                  "Dimension</button></div>");
    html_printf(&p.b,
                "<div class=\"editor-layout\"><div class=\"graph\" id=\"graph\"></div>"
                "<section class=\"panel\" id=\"panel\" aria-live=\"polite\"></section></div>"
                "<section class=\"history card\" id=\"history\" aria-labelledby=\"history-title\">"
                "<h2 id=\"history-title\">History</h2><div class=\"history-layout\">"
                "<ul class=\"versions\" id=\"versions\" aria-label=\"Saved versions\"></ul>"
                "<div id=\"version-view\"><p class=\"hint\">Select a version to see how it "
                "differs from the live config%R</p></div></div></section>"
                "<script type=\"application/json\" id=\"editor-data\">%J</script>",
                can_edit ? " and to revert to it." : ".", data);
    page_end(&p, out);
    json_decref(data);
    json_decref(config);
    json_decref(pipeline);
}
