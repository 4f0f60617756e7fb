/* tl_reader (timelake.h) over any text input, for the fuzz target and tests
 * that split the input into small reads (tl_text_input_set_read_limit). */
#ifndef TL_INPUT_COLUMN_READER_H
#define TL_INPUT_COLUMN_READER_H

#include "formats/input/text_input.h"

/* As tl_reader_open, reading `in`, which the reader takes over (closed by
 * tl_reader_close, or by this call on failure). Messages name the input. */
tl_status tl_reader_open_input(tl_text_input *in, const tl_read_options *options, tl_reader **out,
                               tl_error *err);

#endif
