/*
 * _model_access.h - every read of a libnbg structure's members that the
 * Python extension makes, in one file (_model_access.c): the rest of the
 * extension sees libnbg only through functions, JSON documents and these.
 */
#ifndef NBGPY_MODEL_ACCESS_H
#define NBGPY_MODEL_ACCESS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "nbg/nbg.h"
#include "nbg/session.h"
#include "nbg/tensor.h"

/* What quantize/dequantize need of an input (is_output 0) or output
 * record: NULL past the end. */
typedef struct nbgpy_io {
	const nbg_io *io;
	uint32_t data_format;
	uint64_t element_count;
	int byte_size_known;
	uint64_t byte_size;
} nbgpy_io;
int nbgpy_io_get(const nbg_model *m, int is_output, size_t i, nbgpy_io *out);
size_t nbgpy_io_count(const nbg_model *m, int is_output);

/* What `verify` reports of a parsed model: a dict of the header words and
 * the integrity, and the list of every checksum it carries, each a dict
 * (kind, section, offset, stored, computed, matches).  NULL with a Python
 * error set. */
PyObject *nbgpy_verify_summary(const nbg_model *m);

/* The outputs of a run as a list of (bytes, data_format), and the backend
 * and library that ran with, for the CPU backend, its details (the
 * document of nbg_cpu_run_details_json; else None); NULL with a Python
 * error set. */
PyObject *nbgpy_session_outputs(const nbg_rt_session_result *r);
PyObject *nbgpy_session_info(const nbg_rt_session_result *r, const char *cpu_details);

/* Static-linking-only structures (the file that includes this defines
 * NBG_STATIC_LINKING_ONLY first). */
#ifdef NBG_SESSION_H_STATIC_LINKING_ONLY
/* Dumped tensors' metadata as dicts (dump.json's fields), with their bytes
 * as (dict, bytes) when with_data. */
PyObject *nbgpy_dump_tensors(const nbg_model *m, const nbg_cpu_tensor *list, size_t n, int with_data);
/* A dumping run: (cpu_details, [bytes] of the outputs, [(dict, bytes)] of the tensors). */
PyObject *nbgpy_dump_result(const nbg_model *m, const nbg_rt_dump_result *r, const char *cpu_details);
/* A comparison's figures as a dict named as `nbg compare --json`'s. */
PyObject *nbgpy_stats(const nbg_tensor_stats *s);
#endif

#endif
