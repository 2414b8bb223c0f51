/*
 * report.h - helpers the JSON report writers share (v2 in report_json.c,
 * v1 in report_json_v1.c).  Private to libnbg.
 */
#ifndef NBG_REPORT_H
#define NBG_REPORT_H

#include <jansson.h>

#include "common/internal.h"

/* Sets obj[dotted.key] = v, creating nested objects; steals v. */
NBG_INTERNAL void nbg_json_set_path(json_t *obj, const char *key, json_t *v);
/* Emits fields first..last (inclusive) of the field map read at `base`
 * (+shift bytes for fields after a variable-width part) under their keys. */
NBG_INTERNAL void nbg_json_emit_fields(json_t *obj, const uint8_t *base, enum nbg_fid first,
				       enum nbg_fid last, uint32_t shift_after,
				       enum nbg_fid shift_from);
NBG_INTERNAL json_t *nbg_json_sha(const uint8_t d[32]);
NBG_INTERNAL json_t *nbg_json_text(const char *s, size_t max);
/* A JSON string for any C string of any length (paths): kept as is when it
 * is valid UTF-8, else every byte >= 0x80 becomes \xNN.  NULL -> null. */
NBG_INTERNAL json_t *nbg_json_str(const char *s);
NBG_INTERNAL json_t *nbg_json_io(const nbg_io *io);
NBG_INTERNAL json_t *nbg_json_section(const nbg_model *m, const nbg_section *s);
/* Adds the v1 part of the report (report_json_v1.c). */
NBG_INTERNAL void nbg_json_v1(json_t *root, const nbg_model *m);

#endif
