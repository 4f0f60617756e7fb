/* A demo for a first look: a sample pipeline and files on a fresh service. */
#ifndef KARET_SERVE_DEMO_H
#define KARET_SERVE_DEMO_H

#include <stddef.h>

#include "serve.h"

/* When the control plane has no pipeline: creates the pipeline "demo", puts
 * sample CSV files under its source prefix and schedules their run (as an
 * upload does). Returns 0, or -1 with err. */
int serve_demo_seed(service *svc, char *err, size_t errlen);

#endif
