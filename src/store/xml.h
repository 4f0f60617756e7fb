/* Just enough XML for the S3 and Azure answers: the text of a simple element. */
#ifndef TL_STORE_XML_H
#define TL_STORE_XML_H

/* The text of the first <tag>…</tag> in doc (entities decoded), malloc'd, or
 * NULL when there is none (or doc is NULL). *end, when given, points past it. */
char *tl_xml_text(const char *doc, const char *tag, const char **end);
/* The raw inner XML of the first <tag>…</tag> in doc (entities kept, for
 * reading its own elements with tl_xml_text), malloc'd, or NULL. */
char *tl_xml_element(const char *doc, const char *tag, const char **end);

#endif
