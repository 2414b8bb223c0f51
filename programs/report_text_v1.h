/* report_text_v1.h - v1 lines of the human report. */
#ifndef NBG_REPORT_TEXT_V1_H
#define NBG_REPORT_TEXT_V1_H
#include <stdio.h>
#include "nbg.h"
void nbg_text_v1(FILE *out, const nbg_model *m);
#endif
