/*
 * export.h - a model's inputs and outputs in the forms NPU users' other
 * tools read: ACUITY's nbg_meta.json, the I/O lines vpm_run prints, and
 * JeVois tensor specifications (doc/export.md gives each grammar).
 */
#ifndef NBG_EXPORT_H
#define NBG_EXPORT_H

#include <stdio.h>

#include "nbg.h"

#endif

/* Static-linking-only: not part of the stable interface (doc/api.md). */
#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_EXPORT_H_STATIC_LINKING_ONLY)
#define NBG_EXPORT_H_STATIC_LINKING_ONLY
#ifdef __cplusplus
extern "C" {
#endif

/*
 * The ACUITY-style nbg_meta.json document: "Inputs" and "Outputs" objects
 * keyed "<name>_<index>", each with name, shape (outermost first), dtype
 * for unquantized tensors, quantizer and quantize (qtype and fl, or scale
 * and zero_point), and an empty "Recurrent_connections".  What ACUITY adds
 * that an NBG does not store is left out: the calibration statistics
 * (max_value, min_value) and the layout name ("format").  Returns a malloc'd string, NULL when memory runs
 * out or a record's format has no ACUITY name.
 */
NBG_API char *nbg_export_meta_json(const nbg_model *m);

/* vpm_run's I/O lines, one per input then per output:
 * "input 0 dim 3 224 224 1, data_format=5, quant_format=1, name=NAME, dfp=13". */
NBG_API void nbg_export_vpm(FILE *out, const nbg_model *m);

/* JeVois-Pro's intensors and outtensors as YAML lines
 * (intensors: "16S:1x128x128x3:DFP:15"), tensors separated by ", "
 * (doc/export.md). */
NBG_API void nbg_export_jevois(FILE *out, const nbg_model *m);

#ifdef __cplusplus
}
#endif
#endif
