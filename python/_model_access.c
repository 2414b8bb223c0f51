/*
 * _model_access.c - the Python extension's only direct reads of libnbg
 * structure members (nbg_model, nbg_io, nbg_rt_session_result).  Kept in
 * one small file so that moving to accessor functions touches nothing else.
 */
/* nbg_cpu_tensor, nbg_rt_dump_result, nbg_tensor_stats */
#define NBG_STATIC_LINKING_ONLY

#include "_model_access.h"

size_t nbgpy_io_count(const nbg_model *m, int is_output)
{
	return is_output ? nbg_model_output_count(m) : nbg_model_input_count(m);
}

int nbgpy_io_get(const nbg_model *m, int is_output, size_t i, nbgpy_io *out)
{
	const nbg_io *io = is_output ? nbg_model_output_at(m, i) : nbg_model_input_at(m, i);

	if (!io)
		return 0;
	out->io = io;
	out->data_format = io->data_format;
	out->element_count = io->element_count;
	out->byte_size_known = io->byte_size_known;
	out->byte_size = io->byte_size;
	return 1;
}

static PyObject *checksum(const char *kind, const char *section, uint64_t offset,
			  uint32_t stored, uint32_t computed)
{
	return Py_BuildValue("{s:s,s:s,s:K,s:k,s:k,s:O}", "kind", kind, "section", section,
			     "offset", (unsigned long long)offset, "stored", (unsigned long)stored,
			     "computed", (unsigned long)computed, "matches",
			     stored == computed ? Py_True : Py_False);
}

/* Appends item (a new reference, may be NULL) to list; -1 on failure. */
static int append(PyObject *list, PyObject *item)
{
	int rc;

	if (!item)
		return -1;
	rc = PyList_Append(list, item);
	Py_DECREF(item);
	return rc;
}

PyObject *nbgpy_verify_summary(const nbg_model *m)
{
	char why[200];
	PyObject *list = PyList_New(0), *out;
	const nbg_file_checksum *fc = nbg_model_file_checksum(m);
	const nbg_v1_info *v1 = nbg_model_v1(m);

	if (!list)
		return NULL;
	for (size_t i = 0; i < nbg_model_checksum_record_count(m); i++) {
		const nbg_checksum_record *r = nbg_model_checksum_record_at(m, i);
		const char *name = nbg_section_type_name(r->section_type);
		if (append(list, checksum("section", name ? name : "?", r->offset, r->stored,
					  r->computed)))
			goto fail;
	}
	if (fc && append(list, checksum("file", "", 0, fc->recorded, fc->computed)))
		goto fail;
	/* v1 nbg_crc_sum: compared only where the version's rule is known */
	if (nbg_model_family(m) == 1 && v1 && v1->has_crc_sum && v1->crc_sum_enforced &&
	    append(list, checksum("v1-crc-sum", "", 108, v1->crc_sum, v1->crc_sum_computed)))
		goto fail;
	nbg_integrity_describe(m, why, sizeof(why));
	out = Py_BuildValue("{s:I,s:k,s:k,s:n,s:s,s:s,s:N}", "family",
			    (unsigned)nbg_model_family(m), "version",
			    (unsigned long)nbg_model_version(m), "target",
			    (unsigned long)nbg_model_target(m), "sections",
			    (Py_ssize_t)nbg_model_section_count(m), "integrity",
			    nbg_integrity_name(nbg_model_integrity(m)), "integrity_detail", why,
			    "checksums", list);
	return out;
fail:
	Py_DECREF(list);
	return NULL;
}

PyObject *nbgpy_session_outputs(const nbg_rt_session_result *r)
{
	PyObject *list = PyList_New(0);

	if (!list)
		return NULL;
	for (size_t i = 0; i < nbg_rt_session_output_count(r); i++) {
		const nbg_rt_session_output *o = nbg_rt_session_output_at(r, i);
		if (append(list, Py_BuildValue("(y#k)", (const char *)o->data, (Py_ssize_t)o->size,
					       (unsigned long)o->data_format))) {
			Py_DECREF(list);
			return NULL;
		}
	}
	return list;
}

PyObject *nbgpy_session_info(const nbg_rt_session_result *r, const char *cpu_details)
{
	const nbg_rt_session_info *info = nbg_rt_session_info_of(r);
	const char *b = nbg_rt_select_name(info->backend);

	return Py_BuildValue("{s:s,s:s,s:k,s:z}", "backend", b ? b : "?", "library", info->library,
			     "loops", info->loops, "cpu_details", cpu_details);
}

/* What a dump knows of a tensor's quantization, as dump.json says it: an
 * output record's own, fp16 values by value, else the zero point its
 * command states (the scale of an inner tensor is not in the file). */
static PyObject *dump_quantization(const nbg_model *m, const nbg_cpu_tensor *t)
{
	const nbg_io *io = t->output_record >= 0 ? nbg_model_output_at(m, (size_t)t->output_record) : NULL;

	if (io && io->data_format == t->data_format)
		return Py_BuildValue("{s:s,s:d,s:i,s:i}", "format", nbg_quant_format_name(io->quant_format),
				     "scale", (double)io->scale, "zero_point", (int)io->zero_point,
				     "fixed_point_pos", (int)io->fixed_point_pos);
	if (t->data_format != 2)
		return Py_BuildValue("{s:s}", "format", "none");
	return Py_BuildValue("{s:N,s:O}", "zero_point",
			     t->zero_point_known ? PyLong_FromLong(t->zero_point) : Py_NewRef(Py_None),
			     "scale", Py_None);
}

/* One dumped tensor's metadata: what dump.json says of it (doc/debugging.md). */
static PyObject *dump_tensor(const nbg_model *m, const nbg_cpu_tensor *t)
{
	PyObject *shape = PyTuple_New(t->ndim);

	if (!shape)
		return NULL;
	for (uint32_t d = 0; d < t->ndim; d++) {
		PyObject *v = PyLong_FromUnsignedLongLong(t->shape[d]);
		if (!v) {
			Py_DECREF(shape);
			return NULL;
		}
		PyTuple_SET_ITEM(shape, d, v);
	}
	return Py_BuildValue("{s:n,s:k,s:s,s:s,s:N,s:s,s:N,s:N,s:N,s:K,s:O,s:n}", "operation",
			     (Py_ssize_t)t->operation, "layer_id", (unsigned long)t->layer_id, "layer",
			     t->layer ? t->layer : "", "operator", t->kind ? t->kind : "?", "shape", shape,
			     "data_type", nbg_data_format_name(t->data_format), "quantization",
			     dump_quantization(m, t), "zero_point",
			     t->zero_point_known ? PyLong_FromLong(t->zero_point) : Py_NewRef(Py_None),
			     "output_record",
			     t->output_record >= 0 ? PyLong_FromLong(t->output_record) : Py_NewRef(Py_None),
			     "bytes", (unsigned long long)t->bytes, "whole_layer",
			     t->whole_layer ? Py_True : Py_False, "tiles",
			     (Py_ssize_t)(t->whole_layer ? t->tiles : 1));
}

PyObject *nbgpy_dump_tensors(const nbg_model *m, const nbg_cpu_tensor *list, size_t n, int with_data)
{
	PyObject *out = PyList_New(0);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		PyObject *meta = dump_tensor(m, &list[i]);
		PyObject *item = !meta || !with_data ? meta
			: Py_BuildValue("(Ny#)", meta, (const char *)list[i].data, (Py_ssize_t)list[i].bytes);
		if (append(out, item)) {
			Py_DECREF(out);
			return NULL;
		}
	}
	return out;
}

PyObject *nbgpy_dump_result(const nbg_model *m, const nbg_rt_dump_result *r, const char *cpu_details)
{
	PyObject *outs = PyList_New(0);

	if (!outs)
		return NULL;
	for (size_t i = 0; i < r->output_count; i++)
		if (append(outs, PyBytes_FromStringAndSize(r->outputs[i].data, (Py_ssize_t)r->outputs[i].size))) {
			Py_DECREF(outs);
			return NULL;
		}
	return Py_BuildValue("(sNN)", cpu_details, outs, nbgpy_dump_tensors(m, r->tensors, r->count, 1));
}

PyObject *nbgpy_stats(const nbg_tensor_stats *s)
{
	return Py_BuildValue("{s:K,s:d,s:K,s:O,s:d,s:d,s:d,s:d,s:d,s:k,s:k,s:O}", "elements",
			     (unsigned long long)s->elements, "tolerance", s->tolerance, "beyond",
			     (unsigned long long)s->beyond, "first_beyond",
			     s->beyond ? PyLong_FromUnsignedLongLong(s->first_beyond) : Py_NewRef(Py_None),
			     "max_abs_diff_stored", s->max_abs_stored, "mean_abs_diff_stored", s->mean_abs_stored,
			     "max_abs_diff_dequantized", s->max_abs, "mean_abs_diff_dequantized", s->mean_abs,
			     "cosine", s->cosine, "top_k", (unsigned long)s->top_k, "top_k_common",
			     (unsigned long)s->top_common, "top1_equal", s->top1_equal ? Py_True : Py_False);
}
