/*
 * _model_access.c - the Python extension's only direct reads of libnbg
 * structure members (nbg_model, nbg_io, nbg_rt_session_result).  Kept in
 * one small file so that moving to accessor functions touches nothing else.
 */
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
