/*
 * _nbgkit.c - the C half of the Python package nbgkit (python/nbgkit/):
 * opens and parses NBG files with libnbg, writes its JSON documents, and
 * runs verify, ledger, diff, weights, quantization and runs.  The Python
 * half builds the objects users see from what this returns.
 *
 * The GIL is released around everything that reads the file's bytes
 * (reading or mapping, parsing, hashing, report writing, decoding, runs).
 * A path is read into memory unless map=True: a mapping that another
 * process truncates is guarded (nbg_install_sigbus_guard: the lost bytes
 * read as zeros), and every call that read it checks afterwards and raises
 * file-changed instead of returning what it computed.  A model in use by
 * one thread cannot be closed by another (`busy` counts the calls in
 * flight).  Direct reads of libnbg structure members live in
 * _model_access.c alone.
 */
/* nbg_read_file, nbg_install_sigbus_guard, nbg_mapping_changed: the
 * extension is built with the library it links */
#define NBG_STATIC_LINKING_ONLY

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "_model_access.h"
#include "nbg/commands.h"
#include "nbg/cpu.h"
#include "nbg/decoded.h"
#include "nbg/diff.h"
#include "nbg/graph.h"
#include "nbg/ledger.h"
#include "nbg/report.h"
#include "nbg/tensor.h"
#include "nbg/weights.h"

/* ------------------------------------------------------------ errors */

/* The classes (doc/python.md, "Errors"): Error, and under it one class per
 * exit class, each also a builtin exception a Python caller catches
 * (ValueError, OSError, RuntimeError); the arrays a caller passes have their
 * own (ArrayError, ArrayTypeError), and a read that failed with ENOENT,
 * EISDIR or EACCES/EPERM raises the ReadError that is also the builtin
 * FileNotFoundError, IsADirectoryError or PermissionError. */
static PyObject *Error, *InvalidFileError, *UsageError, *ReadError, *RuntimeUnavailableError;
static PyObject *ArrayError, *ArrayTypeError, *MissingFileError, *IsDirectoryError,
	*AccessDeniedError;

/* The exception class for a failure: the caller's array (by code), a read
 * by its errno, else the exit class (nbg_code_exit). */
static PyObject *error_class(nbg_code code, int sys_errno)
{
	switch (code) {
	case NBG_E_TENSOR_TYPE_MISMATCH: return ArrayTypeError;
	case NBG_E_TENSOR_SHAPE_MISMATCH:
	case NBG_E_INPUT_COUNT_MISMATCH:
	case NBG_E_INPUT_SIZE_MISMATCH: return ArrayError;
	default: break;
	}
	switch (nbg_code_exit(code)) {
	case NBG_EXIT_INVALID: return InvalidFileError;
	case NBG_EXIT_USAGE: return UsageError;
	case NBG_EXIT_IO:
		switch (sys_errno) {
		case ENOENT: return MissingFileError;
		case EISDIR: return IsDirectoryError;
		case EACCES:
		case EPERM: return AccessDeniedError;
		default: return ReadError;
		}
	case NBG_EXIT_RUNTIME: return RuntimeUnavailableError;
	default: return Error;
	}
}

/* The errno of a failure: the library's, or EISDIR for a directory that
 * not-regular-file refused (the library reports no errno for it). */
static int error_errno(const nbg_error *err, const char *path)
{
	struct stat st;

	if (err->sys_errno == 0 && err->code == NBG_E_NOT_REGULAR_FILE && path &&
	    stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return EISDIR;
	return err->sys_errno;
}

/* The exception for err, not raised (NULL with one raised on failure); path
 * (may be NULL) is the file involved. */
static PyObject *make_error(const nbg_error *err, const char *path)
{
	int sys_errno = error_errno(err, path);
	PyObject *cls = error_class(err->code, sys_errno), *exc, *v;
	const char *name = nbg_code_name(err->code);
	int is_os = PyObject_IsSubclass(cls, PyExc_OSError) == 1;
	int bad = 0;

	/* the message as text whatever its bytes (it may quote a file name) */
	v = PyUnicode_DecodeUTF8(err->message, (Py_ssize_t)strnlen(err->message, sizeof(err->message)),
				 "replace");
	if (!v)
		return NULL;
	exc = PyObject_CallOneArg(cls, v);
	Py_DECREF(v);
	if (!exc)
		return NULL;
#define SET(attr, expr)                                                                    \
	do {                                                                               \
		v = (expr);                                                                \
		if (!v || PyObject_SetAttrString(exc, attr, v))                            \
			bad = 1;                                                           \
		Py_XDECREF(v);                                                             \
	} while (0)
	SET("code", PyUnicode_FromString(name ? name : "unknown"));
	SET("offset", PyLong_FromUnsignedLongLong(err->offset));
	SET("field", PyUnicode_DecodeUTF8(err->field, (Py_ssize_t)strnlen(err->field, sizeof(err->field)), "replace"));
	SET("message", PyUnicode_DecodeUTF8(err->message, (Py_ssize_t)strnlen(err->message, sizeof(err->message)), "replace"));
	SET("exit_code", PyLong_FromLong(nbg_code_exit(err->code)));
	SET("errno", PyLong_FromLong(sys_errno));
	SET("index", PyLong_FromLong(err->index));
	SET("path", path ? PyUnicode_DecodeFSDefault(path) : Py_NewRef(Py_None));
	if (is_os) {
		/* OSError's own fields: the name as given, the system's sentence */
		SET("filename", path ? PyUnicode_DecodeFSDefault(path) : Py_NewRef(Py_None));
		SET("strerror", sys_errno ? PyUnicode_DecodeLocale(strerror(sys_errno), "surrogateescape")
					  : Py_NewRef(Py_None));
	}
#undef SET
	if (bad)
		Py_CLEAR(exc);
	return exc;
}

/* Raises the exception for err; path (may be NULL) is the file involved.
 * Returns NULL. */
static PyObject *raise_error(const nbg_error *err, const char *path)
{
	PyObject *exc = make_error(err, path);

	if (exc) {
		PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
		Py_DECREF(exc);
	}
	return NULL;
}

/* An error of our own making (an argument the library never saw). */
static PyObject *raise_code(nbg_code code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static PyObject *raise_code(nbg_code code, const char *fmt, ...)
{
	nbg_error err;
	va_list ap;

	memset(&err, 0, sizeof(err));
	err.code = code;
	err.index = -1;
	va_start(ap, fmt);
	vsnprintf(err.message, sizeof(err.message), fmt, ap);
	va_end(ap);
	return raise_error(&err, NULL);
}

/* ------------------------------------------------------------ model */

typedef struct {
	PyObject_HEAD
	nbg_model *model;
	nbg_mapping map;   /* a file: read into memory, or mapped */
	int mapped;        /* map holds something to release */
	int live;          /* map is a mapping of the file (map=True): it may be cut short */
	Py_buffer view;    /* bytes-like: the caller's buffer, held */
	int has_view;
	const uint8_t *data;
	size_t size;
	char *path;        /* as given; "-" for a buffer, as `nbg inspect -` names it */
	int busy;          /* calls in flight with the GIL released */
	/* The model's decoded parts, each decoded once (nbg_decoded), owned by
	 * the capsule `decoded` that the Blobs of weights() hold too, so that
	 * they outlive close(); dec_lock (taken with the GIL released) lets one
	 * thread at a time use it. */
	nbg_decoded *dec;
	PyObject *decoded;
	PyThread_type_lock dec_lock;
	/* The CPU backend's plan kept by a run that asked for it (run_many),
	 * with the limits it was built with; under dec_lock, freed with the
	 * model. */
	nbg_cpu_plan *plan;
	nbg_cpu_options plan_opts;
} ModelObject;

static PyTypeObject ModelType;

/* Reads path into m (map 0) or maps it (map 1: the SIGBUS guard first),
 * GIL released by the caller. */
static nbg_code load_file(const char *path, int map, nbg_mapping *m, nbg_error *err)
{
	if (!map)
		return nbg_read_file(path, 0, m, err);
	if (nbg_install_sigbus_guard() != NBG_OK) {
		memset(m, 0, sizeof(*m));
		memset(err, 0, sizeof(*err));
		err->code = NBG_E_IO;
		err->sys_errno = errno;
		err->index = -1;
		snprintf(err->message, sizeof(err->message),
			 "cannot install the SIGBUS guard a mapped file needs: %s", strerror(errno));
		return NBG_E_IO;
	}
	return nbg_map_file(path, m, err);
}

/* 1 when the mapping m of path was cut short since it was made (a fault
 * the guard answered with zeros, or a size now smaller: a shrink inside the
 * last page read faults nowhere). */
static int mapping_shrank(const char *path, const nbg_mapping *m)
{
	struct stat st;

	return nbg_mapping_changed(m) || (stat(path, &st) == 0 && (uint64_t)st.st_size < m->size);
}

/* Raises file-changed for path; NULL. */
static PyObject *raise_changed(const char *path)
{
	nbg_error err;
	char *shown = nbg_path_escape(path);

	memset(&err, 0, sizeof(err));
	err.code = NBG_E_FILE_CHANGED;
	err.index = -1;
	snprintf(err.field, sizeof(err.field), "file");
	snprintf(err.message, sizeof(err.message),
		 "%s shrank while it was mapped (another process truncated it): what was read "
		 "from it is dropped; open it without map=True to read it into memory",
		 shown ? shown : "the file");
	free(shown);
	return raise_error(&err, path);
}

/* 1 (an exception raised) when self's mapping was cut short. */
static int model_shrank(ModelObject *self)
{
	if (!self->live || !mapping_shrank(self->path, &self->map))
		return 0;
	raise_changed(self->path);
	return 1;
}

/* Marks the model in use; NULL-returning error when closed. */
static int enter(ModelObject *self)
{
	if (!self->model) {
		PyErr_SetString(PyExc_ValueError, "the model is closed");
		return -1;
	}
	self->busy++;
	return 0;
}

static void leave(ModelObject *self)
{
	self->busy--;
}

static void model_release(ModelObject *self)
{
	/* the capsule frees the decoded parts once no Blob holds them
	 * (nbg_decoded_free reads neither the model nor its bytes) */
	nbg_cpu_plan_free(self->plan); /* before the decoded parts it uses */
	self->plan = NULL;
	self->dec = NULL;
	Py_CLEAR(self->decoded);
	nbg_model_free(self->model);
	self->model = NULL;
	if (self->mapped)
		nbg_unmap_file(&self->map);
	self->mapped = self->live = 0;
	if (self->has_view)
		PyBuffer_Release(&self->view);
	self->has_view = 0;
	free(self->path);
	self->path = NULL;
}

static void model_dealloc(ModelObject *self)
{
	model_release(self);
	if (self->dec_lock)
		PyThread_free_lock(self->dec_lock);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *model_close(ModelObject *self, PyObject *unused)
{
	if (self->busy) {
		PyErr_SetString(PyExc_RuntimeError,
				"the model is in use by another thread: close it after that call returns");
		return NULL;
	}
	model_release(self);
	Py_RETURN_NONE;
}

static void decoded_capsule_free(PyObject *cap)
{
	nbg_decoded_free(PyCapsule_GetPointer(cap, "nbgkit.decoded"));
}

/* The decoded model of self's model, in its capsule: 0, or -1 with the
 * exception raised. */
static int model_decoded_new(ModelObject *self, nbg_error *err)
{
	if (nbg_decoded_new(self->model, &self->dec, err) != NBG_OK) {
		raise_error(err, self->path);
		return -1;
	}
	self->decoded = PyCapsule_New(self->dec, "nbgkit.decoded", decoded_capsule_free);
	if (!self->decoded) {
		nbg_decoded_free(self->dec);
		self->dec = NULL;
		return -1;
	}
	return 0;
}

/* _open(source, strict=True, flags=0, map=False): source a path (str,
 * bytes path, os.PathLike; read into memory, or mapped with map) or a
 * bytes-like object.  strict=False: a file whose only failure is a checksum
 * still opens, parsed as `nbg inspect` does after printing the failure
 * (integrity "failed"). */
static PyObject *nbgpy_open(PyObject *mod, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "source", "strict", "flags", "map", NULL };
	PyObject *source, *pathobj = NULL;
	int strict = 1, map = 0;
	unsigned flags = 0;
	ModelObject *self;
	nbg_error err;
	nbg_code rc = NBG_OK;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|pIp", kwlist, &source, &strict, &flags, &map))
		return NULL;
	self = PyObject_New(ModelObject, &ModelType);
	if (!self)
		return NULL;
	self->model = NULL;
	self->mapped = self->live = self->has_view = self->busy = 0;
	self->path = NULL;
	self->dec = NULL;
	self->decoded = NULL;
	self->plan = NULL;
	self->dec_lock = PyThread_allocate_lock();
	if (!self->dec_lock) {
		PyErr_NoMemory();
		goto fail;
	}
	memset(&self->map, 0, sizeof(self->map));
	memset(&err, 0, sizeof(err));
	if (PyObject_CheckBuffer(source) && !PyBytes_Check(source) && !PyUnicode_Check(source)) {
		/* bytearray, memoryview, mmap, numpy: the bytes themselves */
		if (PyObject_GetBuffer(source, &self->view, PyBUF_SIMPLE))
			goto fail;
	} else if (PyBytes_Check(source)) {
		if (PyObject_GetBuffer(source, &self->view, PyBUF_SIMPLE))
			goto fail;
	} else {
		if (!PyUnicode_FSConverter(source, &pathobj))
			goto fail;
		self->path = strdup(PyBytes_AS_STRING(pathobj));
		Py_DECREF(pathobj);
		if (!self->path) {
			PyErr_NoMemory();
			goto fail;
		}
	}
	if (!self->path) {
		self->has_view = 1;
		self->data = self->view.buf;
		self->size = (size_t)self->view.len;
		self->path = strdup("-");
		if (!self->path) {
			PyErr_NoMemory();
			goto fail;
		}
	}
	{
		/* strict=False: one parse without the checksum comparisons, the
		 * model whenever only checksums fail (what failed first is
		 * nbg_integrity_failure's), else the failure that refused it */
		nbg_parse_options o = { .size = sizeof(o),
					.flags = flags | (strict ? 0 : NBG_PARSE_NO_CRC_CHECK) };
		int is_file = !self->has_view;
		Py_BEGIN_ALLOW_THREADS
		if (is_file) {
			rc = load_file(self->path, map, &self->map, &err);
			if (rc == NBG_OK) {
				self->mapped = 1;
				self->live = map;
				self->data = self->map.data;
				self->size = self->map.size;
			}
		}
		if (rc == NBG_OK) {
			rc = nbg_parse(self->data, self->size, &o, &self->model, &err);
		}
		Py_END_ALLOW_THREADS
	}
	if (self->live && mapping_shrank(self->path, &self->map)) {
		raise_changed(self->path);
		goto fail;
	}
	if (rc != NBG_OK) {
		raise_error(&err, self->has_view ? NULL : self->path);
		goto fail;
	}
	if (model_decoded_new(self, &err) != 0)
		goto fail;
	return (PyObject *)self;
fail:
	Py_DECREF(self);
	return NULL;
}

/* Runs fn(self, f, ctx) into a memory stream with the GIL released; the
 * text as str. */
typedef nbg_code (*writer_fn)(ModelObject *self, FILE *f, void *ctx, nbg_error *err);

static PyObject *write_text(ModelObject *self, writer_fn fn, void *ctx)
{
	char *buf = NULL;
	size_t len = 0;
	nbg_error err;
	nbg_code rc = NBG_OK;
	FILE *f;
	PyObject *out;

	if (enter(self))
		return NULL;
	memset(&err, 0, sizeof(err));
	Py_BEGIN_ALLOW_THREADS
	f = open_memstream(&buf, &len);
	if (!f) {
		rc = NBG_E_OUT_OF_MEMORY;
	} else {
		PyThread_acquire_lock(self->dec_lock, WAIT_LOCK);
		rc = fn(self, f, ctx, &err);
		PyThread_release_lock(self->dec_lock);
		if (fclose(f) && rc == NBG_OK)
			rc = NBG_E_OUT_OF_MEMORY;
	}
	Py_END_ALLOW_THREADS
	leave(self);
	if (model_shrank(self)) {
		free(buf);
		return NULL;
	}
	if (rc != NBG_OK) {
		free(buf);
		if (rc == NBG_E_OUT_OF_MEMORY)
			return PyErr_NoMemory();
		return raise_error(&err, self->path);
	}
	out = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "replace");
	free(buf);
	return out;
}

static nbg_code json_writer(ModelObject *self, FILE *f, void *ctx, nbg_error *err)
{
	return nbg_json_document_write_decoded(f, self->dec, self->path, *(unsigned *)ctx, err);
}

/* json(what): the document `nbg inspect --json` writes, `what` its
 * NBG_JSON_DOC_* and NBG_GRAPH_JSON_* bits. */
static PyObject *model_json(ModelObject *self, PyObject *args)
{
	unsigned what = 0;

	if (!PyArg_ParseTuple(args, "|I", &what))
		return NULL;
	return write_text(self, json_writer, &what);
}

static nbg_code text_writer(ModelObject *self, FILE *f, void *ctx, nbg_error *err)
{
	nbg_text_report_decoded(f, self->dec, self->path);
	return NBG_OK;
}

/* text(): the report `nbg inspect FILE` prints. */
static PyObject *model_text(ModelObject *self, PyObject *unused)
{
	return write_text(self, text_writer, NULL);
}

/* A malloc'd string from a libnbg JSON writer, as str (NULL: out of memory). */
static PyObject *take_string(char *s)
{
	PyObject *out;

	if (!s)
		return PyErr_NoMemory();
	out = PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
	free(s);
	return out;
}

/* A document built with the GIL released: build sets *out (malloc'd text,
 * NULL when out of memory) or returns the failure; arg is the builder's. */
typedef nbg_code (*doc_builder)(const ModelObject *self, const void *arg, char **out, nbg_error *err);

static PyObject *released_doc(ModelObject *self, doc_builder build, const void *arg)
{
	nbg_error err;
	nbg_code rc;
	char *s = NULL;

	if (enter(self))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	PyThread_acquire_lock(self->dec_lock, WAIT_LOCK);
	rc = build(self, arg, &s, &err);
	PyThread_release_lock(self->dec_lock);
	Py_END_ALLOW_THREADS
	leave(self);
	if (model_shrank(self)) {
		free(s);
		return NULL;
	}
	if (rc != NBG_OK) {
		free(s);
		return raise_error(&err, self->path);
	}
	return take_string(s);
}

/* The ledger with the bytes of the decoded kernel streams as
 * decoded-coefficients, as `nbg ledger --json` writes it. */
static nbg_code ledger_doc(const ModelObject *self, const void *unused, char **out, nbg_error *err)
{
	const nbg_ledger *l = NULL;
	nbg_code rc = nbg_decoded_ledger(self->dec, &l, err);

	if (rc == NBG_OK)
		*out = nbg_ledger_json(l, self->path);
	return rc;
}

/* ledger_json() */
static PyObject *model_ledger_json(ModelObject *self, PyObject *unused)
{
	return released_doc(self, ledger_doc, NULL);
}

/* The CPU backend's plan with every step, the document `nbg run --backend
 * cpu --check --json` prints without its "model", planned with the limits
 * arg points to (nbg_cpu_options). */
static nbg_code cpu_plan_doc(const ModelObject *self, const void *arg, char **out, nbg_error *err)
{
	nbg_cpu_plan *p = NULL;
	nbg_code rc = nbg_cpu_plan_build_decoded(self->dec, arg, &p, err);

	if (rc == NBG_OK)
		*out = nbg_cpu_plan_json(p, NBG_CPU_JSON_STEPS);
	nbg_cpu_plan_free(p);
	return rc;
}

/* cpu_plan_json(max_work=0, max_memory=0, max_plan_steps=0): the plan with
 * those limits (0 takes the default, 2^64 - 1 lifts the limit). */
static PyObject *model_cpu_plan_json(ModelObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "max_work", "max_memory", "max_plan_steps", NULL };
	nbg_cpu_options o = { .size = sizeof(o) };

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|KKK", kwlist, &o.max_work, &o.max_memory,
					 &o.max_plan_steps))
		return NULL;
	return released_doc(self, cpu_plan_doc, &o);
}

/* ------------------------------------------------------------ blobs */

/* A read-only buffer over memory another object owns (zero-copy views of
 * decoded weights). */
typedef struct {
	PyObject_HEAD
	PyObject *owner;
	const void *ptr;
	Py_ssize_t len;
} BlobObject;

static PyTypeObject BlobType;

static int blob_getbuffer(BlobObject *self, Py_buffer *view, int flags)
{
	return PyBuffer_FillInfo(view, (PyObject *)self, (void *)self->ptr, self->len, 1, flags);
}

static void blob_dealloc(BlobObject *self)
{
	Py_XDECREF(self->owner);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyBufferProcs blob_as_buffer = { (getbufferproc)blob_getbuffer, NULL };

static PyTypeObject BlobType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "nbgkit._nbgkit.Blob",
	.tp_basicsize = sizeof(BlobObject),
	.tp_dealloc = (destructor)blob_dealloc,
	.tp_as_buffer = &blob_as_buffer,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Read-only bytes owned by a decoded result (numpy.frombuffer reads them).",
};

static PyObject *blob_new(PyObject *owner, const void *ptr, size_t len)
{
	BlobObject *b;

	if (!ptr)
		Py_RETURN_NONE;
	b = PyObject_New(BlobObject, &BlobType);
	if (!b)
		return NULL;
	b->owner = Py_NewRef(owner);
	b->ptr = ptr;
	b->len = (Py_ssize_t)len;
	return (PyObject *)b;
}

/* ------------------------------------------------------------ weights */

/* weights(): every NN-engine operation's (and TP fully connected layer's)
 * kernel stream, a list of dicts;
 * the arrays are zero-copy views (Blob) of the decoded result. */
static PyObject *model_weights(ModelObject *self, PyObject *unused)
{
	const nbg_weights *w = NULL;
	nbg_error err;
	nbg_code rc;
	PyObject *cap, *list;

	if (enter(self))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	PyThread_acquire_lock(self->dec_lock, WAIT_LOCK);
	rc = nbg_decoded_weights(self->dec, &w, &err);
	PyThread_release_lock(self->dec_lock);
	Py_END_ALLOW_THREADS
	leave(self);
	if (model_shrank(self))
		return NULL;
	if (rc != NBG_OK)
		return raise_error(&err, self->path);
	/* the arrays are the decoded model's: each Blob holds its capsule */
	cap = Py_NewRef(self->decoded);
	list = PyList_New(0);
	for (size_t i = 0; list && i < nbg_weights_count(w); i++) {
		const nbg_weights_op *o = nbg_weights_at(w, i);
		const uint32_t *s = nbg_weights_op_shape(o);
		size_t n = 0, ch = s[0];
		const uint8_t *codes = nbg_weights_op_codes(o, &n);
		uint64_t bit = nbg_weights_op_bit_offset(o);
		const char *fmt = nbg_weights_format_name(nbg_weights_op_format(o));
		const char *order = nbg_weights_op_order(o);
		const char *dt = nbg_command_data_type_name(nbg_weights_op_data_type(o));
		const float *scale = nbg_weights_op_scale(o);
		/* int16 kernels: two bytes a code, 48-bit stored biases as int64 */
		const int64_t *b64 = nbg_weights_op_bias_stored64(o);
		unsigned cb = nbg_weights_op_code_bytes(o);
		PyObject *d = Py_BuildValue(
			"{s:n,s:n,s:k,s:s,s:s,s:s,s:O,s:s,s:s,s:s,s:(kkkk),s:i,s:i,s:K,s:K,s:k,s:N,s:N,s:N,s:N}",
			"index", (Py_ssize_t)nbg_weights_op_index(o), "operation",
			(Py_ssize_t)nbg_weights_op_operation(o), "command",
			(unsigned long)nbg_weights_op_command(o), "status",
			nbg_weights_status_name(nbg_weights_op_status(o)), "reason_id",
			nbg_weights_op_reason_id(o), "reason", nbg_weights_op_reason(o),
			"bit_offset", bit == UINT64_MAX ? Py_None : Py_False, "format",
			fmt ? fmt : "", "order", order ? order : "", "data_type", dt ? dt : "",
			"shape", (unsigned long)s[0], (unsigned long)s[1], (unsigned long)s[2],
			(unsigned long)s[3], "zero_point", (int)nbg_weights_op_zero_point(o),
			"input_zero_point", (int)nbg_weights_op_input_zero_point(o),
			"stream_offset", (unsigned long long)nbg_weights_op_stream_offset(o),
			"stream_size", (unsigned long long)nbg_weights_op_stream_size(o), "cores",
			(unsigned long)nbg_weights_op_cores(o), "codes", blob_new(cap, codes, n * (cb ? cb : 1)),
			"bias", blob_new(cap, nbg_weights_op_bias(o), ch * sizeof(int32_t)),
			"bias_stored", b64 ? blob_new(cap, b64, ch * sizeof(int64_t))
					   : blob_new(cap, nbg_weights_op_bias_stored(o), ch * sizeof(int32_t)),
			"scale", blob_new(cap, scale, ch * sizeof(float)));
		/* NN_LUT tables on fp16 data: each entry's input, float16 bits */
		const uint16_t *lin = nbg_weights_op_lut_inputs(o);
		if (d && lin) {
			PyObject *b = blob_new(cap, lin, ch * sizeof(uint16_t));
			if (!b || PyDict_SetItemString(d, "lut_inputs", b))
				Py_CLEAR(d);
			Py_XDECREF(b);
		}
		/* a convolution's NN_LUT operation: the table after its kernels,
		 * 1,024 float32 little-endian values */
		const uint8_t *lt = nbg_weights_op_lut_table(o, NULL);
		if (d && lt) {
			PyObject *b = blob_new(cap, lt, 1024 * 4);
			if (!b || PyDict_SetItemString(d, "lut_table", b))
				Py_CLEAR(d);
			Py_XDECREF(b);
		}
		if (d && bit != UINT64_MAX) {
			PyObject *b = PyLong_FromUnsignedLongLong(bit);
			if (!b || PyDict_SetItemString(d, "bit_offset", b))
				Py_CLEAR(d);
			Py_XDECREF(b);
		}
		if (!d || PyList_Append(list, d))
			Py_CLEAR(list);
		Py_XDECREF(d);
	}
	Py_DECREF(cap);
	return list;
}

/* ------------------------------------------------------------ tensors */

static int io_arg(ModelObject *self, int is_output, Py_ssize_t i, nbgpy_io *io)
{
	if (i < 0 || !nbgpy_io_get(self->model, is_output, (size_t)i, io)) {
		raise_code(NBG_E_INVALID_ARGUMENT, "the model has %zu %s; there is no %s %zd",
			   nbgpy_io_count(self->model, is_output), is_output ? "outputs" : "inputs",
			   is_output ? "output" : "input", i);
		return -1;
	}
	return 0;
}

/* quantize(is_output, index, float32 bytes) -> the record's raw bytes, or
 * (quantize 0) dequantize(is_output, index, raw bytes) -> float32 bytes. */
static PyObject *convert(ModelObject *self, PyObject *args, int quantize)
{
	int is_output;
	Py_ssize_t i;
	Py_buffer in;
	nbgpy_io io;
	nbg_error err;
	nbg_code rc;
	uint64_t want_in, out_size;
	PyObject *out = NULL;

	if (!PyArg_ParseTuple(args, "pny*", &is_output, &i, &in))
		return NULL;
	if (enter(self)) {
		PyBuffer_Release(&in);
		return NULL;
	}
	if (io_arg(self, is_output, i, &io))
		goto done;
	if (!io.byte_size_known) {
		raise_code(NBG_E_IO_SIZE_UNKNOWN, "the record's data format %u has no known size",
			   (unsigned)io.data_format);
		goto done;
	}
	want_in = quantize ? io.element_count * sizeof(float) : io.byte_size;
	out_size = quantize ? io.byte_size : io.element_count * sizeof(float);
	if ((uint64_t)in.len != want_in) {
		raise_code(NBG_E_INPUT_SIZE_MISMATCH, "%zd bytes were given; the record needs %llu",
			   in.len, (unsigned long long)want_in);
		goto done;
	}
	out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)out_size);
	if (!out)
		goto done;
	{
		char *dst = PyBytes_AS_STRING(out);
		Py_BEGIN_ALLOW_THREADS
		if (quantize)
			rc = nbg_tensor_quantize(io.io, in.buf, io.element_count, dst, out_size, &err);
		else
			rc = nbg_tensor_dequantize(io.io, in.buf, (size_t)in.len, (float *)dst,
						   io.element_count, &err);
		Py_END_ALLOW_THREADS
	}
	if (rc != NBG_OK) {
		Py_CLEAR(out);
		raise_error(&err, self->path);
	}
done:
	leave(self);
	PyBuffer_Release(&in);
	return out;
}

static PyObject *model_quantize(ModelObject *self, PyObject *args)
{
	return convert(self, args, 1);
}

static PyObject *model_dequantize(ModelObject *self, PyObject *args)
{
	return convert(self, args, 0);
}

/* shape_check(is_output, index, shape, layout) -> whether the array must be
 * transposed from layout (0 none, 1 NCHW, 2 NHWC) to the record's order:
 * nbg_tensor_shape_check, the rule nbg run applies; its refusal raised. */
static PyObject *model_shape_check(ModelObject *self, PyObject *args)
{
	int is_output, layout, convert = 0;
	Py_ssize_t i;
	PyObject *shape, *out = NULL;
	uint64_t dims[NBG_NPY_MAX_DIMS];
	nbgpy_io io;
	nbg_error err;

	if (!PyArg_ParseTuple(args, "pnO!i", &is_output, &i, &PyTuple_Type, &shape, &layout))
		return NULL;
	Py_ssize_t n = PyTuple_GET_SIZE(shape);
	if (n > NBG_NPY_MAX_DIMS || layout < NBG_LAYOUT_MODEL || layout > NBG_LAYOUT_NHWC)
		return raise_code(NBG_E_INVALID_ARGUMENT, "a shape of %zd dimensions (at most %d), "
				  "layout %d", n, NBG_NPY_MAX_DIMS, layout);
	for (Py_ssize_t k = 0; k < n; k++) {
		dims[k] = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(shape, k));
		if (PyErr_Occurred())
			return NULL;
	}
	if (enter(self))
		return NULL;
	if (io_arg(self, is_output, i, &io))
		goto done;
	if (nbg_tensor_shape_check(io.io, dims, (uint32_t)n, (nbg_tensor_layout)layout, &convert,
				   &err) != NBG_OK)
		raise_error(&err, NULL);
	else
		out = PyBool_FromLong(convert);
done:
	leave(self);
	return out;
}

/* ------------------------------------------------------------ run */

/* libnbg runs one session at a time per process. */
static PyThread_type_lock run_lock;

/* A run's wait, with the GIL released: the thread state to take it back
 * with, and the exception a signal handler raised (Ctrl-C:
 * KeyboardInterrupt), kept for after the run. */
typedef struct run_wait {
	PyThreadState *ts;
	PyObject *type, *value, *tb;
} run_wait;

/* The session's stop (nbg_rt_session_options.stop): Python's signal
 * handlers run here, in the waiting thread when it is the main one; one
 * that raises stops the run. */
static int run_stop(void *ctx)
{
	run_wait *w = ctx;
	int stop;

	PyEval_RestoreThread(w->ts);
	stop = PyErr_CheckSignals() < 0;
	if (stop)
		PyErr_Fetch(&w->type, &w->value, &w->tb);
	w->ts = PyEval_SaveThread();
	return stop;
}

/* Takes run_lock with the GIL released, the signal handlers run meanwhile
 * (another thread's run may hold it for minutes): 0, or -1 with the
 * handler's exception kept in w. */
static int run_lock_take(run_wait *w)
{
	while (!PyThread_acquire_lock_timed(run_lock, 20000, 0))
		if (run_stop(w))
			return -1;
	return 0;
}

/* The CPU backend's plan of self with the limits co, GIL released: the
 * kept one when it has those limits, else a new one, kept when keep asks
 * and none is (*owned 0: not the caller's to free).  NULL when it cannot
 * be made, err (may be NULL) saying why. */
static nbg_cpu_plan *model_plan(ModelObject *self, const nbg_cpu_options *co, int keep, int *owned,
			       nbg_error *err)
{
	nbg_cpu_plan *plan = NULL;

	PyThread_acquire_lock(self->dec_lock, WAIT_LOCK);
	if (self->plan && !memcmp(&self->plan_opts, co, sizeof(*co))) {
		plan = self->plan;
		*owned = 0;
	} else if (nbg_cpu_plan_build_decoded(self->dec, co, &plan, err) == NBG_OK) {
		*owned = !(keep && !self->plan);
		if (!*owned) {
			self->plan = plan;
			self->plan_opts = *co;
		}
	}
	PyThread_release_lock(self->dec_lock);
	return plan;
}

/* A run's inputs: a sequence of bytes-like objects held as buffers. */
typedef struct run_inputs {
	PyObject *seq;
	nbg_rt_buffer *bufs;
	Py_buffer *views;
	Py_ssize_t n, got;
} run_inputs;

static void run_inputs_release(run_inputs *in)
{
	for (Py_ssize_t i = 0; i < in->got; i++)
		PyBuffer_Release(&in->views[i]);
	PyMem_Free(in->views);
	PyMem_Free(in->bufs);
	Py_XDECREF(in->seq);
}

/* 0, or -1 with the exception raised (run_inputs_release either way). */
static int run_inputs_take(PyObject *inputs, run_inputs *in)
{
	memset(in, 0, sizeof(*in));
	in->seq = PySequence_Fast(inputs, "inputs must be a sequence of bytes-like objects");
	if (!in->seq)
		return -1;
	in->n = PySequence_Fast_GET_SIZE(in->seq);
	in->bufs = PyMem_Calloc((size_t)in->n + 1, sizeof(*in->bufs));
	in->views = PyMem_Calloc((size_t)in->n + 1, sizeof(*in->views));
	if (!in->bufs || !in->views) {
		PyErr_NoMemory();
		return -1;
	}
	for (; in->got < in->n; in->got++) {
		if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(in->seq, in->got), &in->views[in->got],
				       PyBUF_SIMPLE))
			return -1;
		in->bufs[in->got].data = in->views[in->got].buf;
		in->bufs[in->got].size = (size_t)in->views[in->got].len;
	}
	return 0;
}

/* run(backend, inputs, flags, lib_path, device_root, timeout_ms, max_work,
 * max_memory, max_plan_steps, threads, keep_plan): backend "auto", "nnsdk",
 * "viplite" or "cpu" (nbgkit's CPU backend), inputs a sequence of
 * bytes-like in the records' raw formats; max_* the CPU backend's limits
 * and threads the threads an operation may use (nbg_cpu_options, 0: the
 * default), keep_plan keeps its plan for the next
 * runs with those limits (model_plan).  Returns (info, [(bytes,
 * data_format)...]). */
static PyObject *model_run(ModelObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "backend", "inputs", "flags", "library", "device_root", "timeout_ms",
				  "max_work", "max_memory", "max_plan_steps", "threads", "keep_plan", NULL };
	const char *backend, *lib = NULL, *root = NULL;
	PyObject *inputs, *result = NULL;
	unsigned flags = 0, timeout = 0;
	nbg_cpu_options co = { .size = sizeof(co) };
	nbg_rt_session_options o;
	nbg_rt_session_result *r = NULL;
	nbg_cpu_plan *plan = NULL;
	char *details = NULL;
	run_inputs in;
	nbg_error err;
	nbg_code rc = NBG_E_INTERRUPTED;
	run_wait w = { NULL, NULL, NULL, NULL };
	int sel, keep = 0, owned = 1;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "sO|IzzIKKKKp", kwlist, &backend, &inputs, &flags,
					 &lib, &root, &timeout, &co.max_work, &co.max_memory,
					 &co.max_plan_steps, &co.threads, &keep))
		return NULL;
	if (!strcmp(backend, "auto"))
		sel = NBG_RT_SELECT_AUTO;
	else if (!strcmp(backend, "nnsdk"))
		sel = NBG_RT_SELECT_NNSDK;
	else if (!strcmp(backend, "viplite"))
		sel = NBG_RT_SELECT_VIPLITE;
	else if (!strcmp(backend, "cpu"))
		sel = NBG_RT_SELECT_CPU;
	else
		return raise_code(NBG_E_INVALID_ARGUMENT,
				  "backend must be \"auto\", \"nnsdk\", \"viplite\" or \"cpu\"");
	if (run_inputs_take(inputs, &in) || enter(self))
		goto done;
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.backend = sel;
	o.lib_path = lib;
	o.device_root = root;
	o.flags = flags;
	o.timeout_ms = timeout;
	o.cpu = &co;
	/* the model parsed once, and for the CPU backend its plan made once:
	 * the run's and its details' (a plan that cannot be made is the
	 * session's to refuse, as it would its own) */
	o.parsed = self->model;
	memset(&err, 0, sizeof(err));
	o.stop = run_stop;
	o.stop_ctx = &w;
	w.ts = PyEval_SaveThread();
	if (sel == NBG_RT_SELECT_CPU)
		o.cpu_plan = plan = model_plan(self, &co, keep, &owned, NULL);
	if (run_lock_take(&w) == 0) {
		rc = nbg_rt_session_run(&o, self->data, self->size, in.bufs, (size_t)in.n, &r, &err);
		PyThread_release_lock(run_lock);
	}
	if (rc == NBG_OK && plan && !(details = nbg_cpu_run_details_json(plan)))
		rc = err.code = NBG_E_OUT_OF_MEMORY;
	if (owned)
		nbg_cpu_plan_free(plan);
	PyEval_RestoreThread(w.ts);
	leave(self);
	if (w.type) { /* a signal handler's exception (KeyboardInterrupt), whatever the run did */
		nbg_rt_session_free(r);
		PyErr_Restore(w.type, w.value, w.tb);
		goto done;
	}
	if (model_shrank(self)) {
		nbg_rt_session_free(r);
		goto done;
	}
	if (rc == NBG_E_OUT_OF_MEMORY && r) {
		nbg_rt_session_free(r);
		PyErr_NoMemory();
		goto done;
	}
	if (rc != NBG_OK) {
		raise_error(&err, self->path);
		goto done;
	}
	/* the CPU backend's details (nbg_cpu_run_details_json) as its info's
	 * "cpu_details" */
	result = Py_BuildValue("(NN)", nbgpy_session_info(r, details), nbgpy_session_outputs(r));
	nbg_rt_session_free(r);
done:
	free(details);
	run_inputs_release(&in);
	return result;
}

/* run_dump(inputs, max_bytes, timeout_ms, max_work, max_memory,
 * max_plan_steps, threads, keep_plan): a CPU backend run keeping every executed
 * operation's output (nbg_rt_cpu_dump_run: isolated as run's session),
 * a dump whose tensors hold more than max_bytes refused before it runs.
 * Returns (cpu_details, [(bytes, data_format)...] of the outputs,
 * [(dict, bytes)...] of the tensors in execution order). */
static PyObject *model_run_dump(ModelObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "inputs", "max_bytes", "timeout_ms", "max_work", "max_memory",
				  "max_plan_steps", "threads", "keep_plan", NULL };
	PyObject *inputs, *result = NULL;
	unsigned long long max_bytes;
	unsigned timeout = 0;
	nbg_cpu_options co = { .size = sizeof(co) };
	nbg_rt_session_options o;
	nbg_rt_dump_result *r = NULL;
	nbg_cpu_plan *plan;
	char *details = NULL;
	run_inputs in;
	nbg_error err;
	nbg_code rc = NBG_E_INTERRUPTED;
	run_wait w = { NULL, NULL, NULL, NULL };
	int keep = 0, owned = 1;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "OK|IKKKKp", kwlist, &inputs, &max_bytes, &timeout,
					 &co.max_work, &co.max_memory, &co.max_plan_steps, &co.threads, &keep))
		return NULL;
	if (run_inputs_take(inputs, &in) || enter(self))
		goto done;
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.backend = NBG_RT_SELECT_CPU;
	o.timeout_ms = timeout;
	o.cpu = &co;
	o.parsed = self->model;
	o.stop = run_stop;
	o.stop_ctx = &w;
	memset(&err, 0, sizeof(err));
	w.ts = PyEval_SaveThread();
	o.cpu_plan = plan = model_plan(self, &co, keep, &owned, &err);
	if (!plan)
		rc = err.code;
	else if (run_lock_take(&w) == 0) {
		rc = nbg_rt_cpu_dump_run(&o, in.bufs, (size_t)in.n, max_bytes, &r, &err);
		PyThread_release_lock(run_lock);
	}
	if (rc == NBG_OK && !(details = nbg_cpu_run_details_json(plan)))
		rc = err.code = NBG_E_OUT_OF_MEMORY;
	PyEval_RestoreThread(w.ts);
	if (w.type) /* a signal handler's exception (KeyboardInterrupt), whatever the run did */
		PyErr_Restore(w.type, w.value, w.tb);
	else if (model_shrank(self))
		;
	else if (rc == NBG_E_OUT_OF_MEMORY)
		PyErr_NoMemory();
	else if (rc != NBG_OK)
		raise_error(&err, self->path);
	else /* the tensors' layer and kind are the plan's: converted before it is freed */
		result = nbgpy_dump_result(self->model, r, details);
	nbg_rt_dump_result_free(r);
	if (owned)
		nbg_cpu_plan_free(plan);
	leave(self);
done:
	free(details);
	run_inputs_release(&in);
	return result;
}

/* dump_list(max_work, max_memory, max_plan_steps, threads): what run_dump would
 * keep, with nothing run: [dict...] (the tensors' metadata). */
static PyObject *model_dump_list(ModelObject *self, PyObject *args)
{
	nbg_cpu_options co = { .size = sizeof(co) };
	nbg_cpu_tensor *list = NULL;
	nbg_cpu_plan *plan = NULL;
	PyObject *out = NULL;
	size_t n = 0;
	nbg_error err;
	nbg_code rc;
	int owned = 1;

	if (!PyArg_ParseTuple(args, "KKKK", &co.max_work, &co.max_memory, &co.max_plan_steps, &co.threads) ||
	    enter(self))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	plan = model_plan(self, &co, 0, &owned, &err);
	rc = plan ? nbg_cpu_dump_list(plan, SIZE_MAX, &list, &n, &err) : err.code;
	Py_END_ALLOW_THREADS
	if (!model_shrank(self)) {
		if (rc != NBG_OK)
			raise_error(&err, self->path);
		else
			out = nbgpy_dump_tensors(self->model, list, n, 0);
	}
	free(list);
	if (owned)
		nbg_cpu_plan_free(plan);
	leave(self);
	return out;
}

/* ------------------------------------------------------------ model type */

static PyObject *model_enter(ModelObject *self, PyObject *unused)
{
	if (!self->model) {
		PyErr_SetString(PyExc_ValueError, "the model is closed");
		return NULL;
	}
	return Py_NewRef(self);
}

static PyObject *model_exit(ModelObject *self, PyObject *args)
{
	return model_close(self, NULL);
}

static PyObject *model_get_closed(ModelObject *self, void *unused)
{
	return PyBool_FromLong(self->model == NULL);
}

static PyObject *model_get_path(ModelObject *self, void *unused)
{
	if (!self->path)
		Py_RETURN_NONE;
	return PyUnicode_DecodeFSDefault(self->path);
}

static PyMethodDef model_methods[] = {
	{ "close", (PyCFunction)model_close, METH_NOARGS, "Unmaps the file and frees the model." },
	{ "__enter__", (PyCFunction)model_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)model_exit, METH_VARARGS, NULL },
	{ "json", (PyCFunction)model_json, METH_VARARGS,
	  "json(what=0) -> str: the JSON document of `nbg inspect --json` (what: document bits)." },
	{ "text", (PyCFunction)model_text, METH_NOARGS,
	  "text() -> str: the report `nbg inspect FILE` prints." },
	{ "ledger_json", (PyCFunction)model_ledger_json, METH_NOARGS,
	  "ledger_json() -> str: the byte ledger document." },
	{ "cpu_plan_json", (PyCFunction)(void (*)(void))model_cpu_plan_json, METH_VARARGS | METH_KEYWORDS,
	  "cpu_plan_json(max_work=0, max_memory=0, max_plan_steps=0) -> str: the CPU backend's plan, "
	  "every operation's verdict, with those limits (0: the default)." },
	{ "weights", (PyCFunction)model_weights, METH_NOARGS,
	  "weights() -> list of dict: every NN operation's and TP fully connected layer's "
	  "decoded kernel stream." },
	{ "quantize", (PyCFunction)model_quantize, METH_VARARGS,
	  "quantize(is_output, index, float32_bytes) -> bytes in the record's format." },
	{ "dequantize", (PyCFunction)model_dequantize, METH_VARARGS,
	  "dequantize(is_output, index, raw_bytes) -> float32 bytes." },
	{ "shape_check", (PyCFunction)model_shape_check, METH_VARARGS,
	  "shape_check(is_output, index, shape, layout) -> whether to transpose (nbg run's rule)." },
	{ "run", (PyCFunction)(void (*)(void))model_run, METH_VARARGS | METH_KEYWORDS,
	  "run(backend, inputs, flags=0, library=None, device_root=None, timeout_ms=0, max_work=0, "
	  "max_memory=0, max_plan_steps=0, threads=0, keep_plan=False)." },
	{ "run_dump", (PyCFunction)(void (*)(void))model_run_dump, METH_VARARGS | METH_KEYWORDS,
	  "run_dump(inputs, max_bytes, timeout_ms=0, max_work=0, max_memory=0, max_plan_steps=0, "
	  "threads=0, keep_plan=False) -> (cpu_details, outputs, tensors): a CPU run keeping every operation's "
	  "output." },
	{ "dump_list", (PyCFunction)model_dump_list, METH_VARARGS,
	  "dump_list(max_work, max_memory, max_plan_steps, threads) -> [dict]: the tensors run_dump keeps." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef model_getset[] = {
	{ "closed", (getter)model_get_closed, NULL, "True after close().", NULL },
	{ "path", (getter)model_get_path, NULL, "The path given, or \"-\" for bytes.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject ModelType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "nbgkit._nbgkit.RawModel",
	.tp_basicsize = sizeof(ModelObject),
	.tp_dealloc = (destructor)model_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A parsed NBG file over its mapped bytes (nbgkit.Model wraps it).",
	.tp_methods = model_methods,
	.tp_getset = model_getset,
};

/* ------------------------------------------------------------ functions */

/* verify(path, map=False) -> (summary dict or None, error or None): the checks
 * `nbg verify` makes (structure and every checksum; no SHA-256).  A file
 * whose checksum fails keeps its model (NBG_PARSE_KEEP_UNVERIFIED) when
 * every other rule holds, to list every checksum with its values.  I/O
 * failures raise. */
static PyObject *nbgpy_verify(PyObject *mod, PyObject *args)
{
	PyObject *pathobj, *summary = NULL, *errdict = NULL;
	nbg_mapping map;
	nbg_model *m = NULL;
	nbg_error err, first;
	nbg_code rc, strict_rc = NBG_OK;
	const char *path;
	int mapped = 0, shrank;

	if (!PyArg_ParseTuple(args, "O&|p", PyUnicode_FSConverter, &pathobj, &mapped))
		return NULL;
	path = PyBytes_AS_STRING(pathobj);
	memset(&first, 0, sizeof(first));
	Py_BEGIN_ALLOW_THREADS
	rc = load_file(path, mapped, &map, &err);
	if (rc == NBG_OK) {
		nbg_parse_options o = { .size = sizeof(o),
					.flags = NBG_PARSE_NO_FILE_SHA256 | NBG_PARSE_NO_SECTION_SHA256 |
						 NBG_PARSE_KEEP_UNVERIFIED };
		strict_rc = nbg_parse(map.data, map.size, &o, &m, &first);
	}
	Py_END_ALLOW_THREADS
	if (rc != NBG_OK) {
		raise_error(&err, path);
		Py_DECREF(pathobj);
		return NULL;
	}
	if (m)
		summary = nbgpy_verify_summary(m);
	shrank = mapped && mapping_shrank(path, &map);
	nbg_model_free(m);
	nbg_unmap_file(&map);
	if (shrank) {
		raise_changed(path);
		goto fail;
	}
	if (m && !summary)
		goto fail;
	if (strict_rc != NBG_OK) {
		/* the exception object the caller keeps as Report.error */
		PyObject *t, *v, *tb;
		raise_error(&first, path);
		PyErr_Fetch(&t, &v, &tb);
		PyErr_NormalizeException(&t, &v, &tb);
		Py_XDECREF(t);
		Py_XDECREF(tb);
		errdict = v;
		if (!errdict)
			goto fail;
	}
	Py_DECREF(pathobj);
	return Py_BuildValue("(NN)", summary ? summary : Py_NewRef(Py_None),
			     errdict ? errdict : Py_NewRef(Py_None));
fail:
	Py_XDECREF(summary);
	Py_DECREF(pathobj);
	return NULL;
}

/* diff(a, b) -> str: the document `nbg diff --json A B` writes. */
static PyObject *nbgpy_diff(PyObject *mod, PyObject *args)
{
	ModelObject *a, *b;
	nbg_diff *d = NULL;
	nbg_error err;
	nbg_code rc;
	char *s = NULL;

	if (!PyArg_ParseTuple(args, "O!O!", &ModelType, &a, &ModelType, &b))
		return NULL;
	if (enter(a))
		return NULL;
	if (enter(b)) {
		leave(a);
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	rc = nbg_diff_models(a->model, b->model, &d, &err);
	if (rc == NBG_OK)
		s = nbg_diff_json(d, a->model, a->path, b->model, b->path);
	nbg_diff_free(d);
	Py_END_ALLOW_THREADS
	leave(a);
	leave(b);
	if (model_shrank(a) || model_shrank(b)) {
		free(s);
		return NULL;
	}
	if (rc != NBG_OK)
		return raise_error(&err, NULL);
	return take_string(s);
}

/* npy_descr(data_format) -> str or None: the numpy dtype string. */
static PyObject *nbgpy_npy_descr(PyObject *mod, PyObject *args)
{
	unsigned fmt;
	const char *d;

	if (!PyArg_ParseTuple(args, "I", &fmt))
		return NULL;
	d = nbg_npy_descr(fmt);
	if (!d)
		Py_RETURN_NONE;
	return PyUnicode_FromString(d);
}

/* codes() -> list of (name, exit, text): every failure code. */
static PyObject *nbgpy_codes(PyObject *mod, PyObject *unused)
{
	PyObject *list = PyList_New(0);

	for (int c = 1; list && c < NBG_E__COUNT; c++) {
		PyObject *t = Py_BuildValue("(sis)", nbg_code_name((nbg_code)c),
					    nbg_code_exit((nbg_code)c), nbg_code_text((nbg_code)c));
		if (!t || PyList_Append(list, t))
			Py_CLEAR(list);
		Py_XDECREF(t);
	}
	return list;
}

/* error(code, message, offset=0, field="") -> the exception nbgkit raises
 * for that failure code (not raised): the Python half's own failures take
 * the class and attributes the library's would. */
static PyObject *nbgpy_error(PyObject *mod, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "code", "message", "offset", "field", NULL };
	const char *code, *message, *field = "";
	unsigned long long offset = 0;
	nbg_error err;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|Ks", kwlist, &code, &message, &offset, &field))
		return NULL;
	memset(&err, 0, sizeof(err));
	err.index = -1;
	for (int c = 1; c < NBG_E__COUNT && !err.code; c++) {
		const char *name = nbg_code_name((nbg_code)c);

		if (name && strcmp(name, code) == 0)
			err.code = (nbg_code)c;
	}
	if (!err.code) {
		PyErr_Format(PyExc_ValueError, "no failure code is named %s", code);
		return NULL;
	}
	err.offset = offset;
	snprintf(err.message, sizeof(err.message), "%s", message);
	snprintf(err.field, sizeof(err.field), "%s", field);
	return make_error(&err, NULL);
}

/* measure(a, b, a_zero_point, a_scale, b_zero_point, b_scale, tolerance,
 * relative, top_k): two float32 buffers of one element count, the stored
 * values of two tensors, measured by nbg_tensor_measure (`nbg compare`'s
 * figures; a scale 0 when not known).  Returns the figures as a dict. */
static PyObject *nbgpy_measure(PyObject *mod, PyObject *args)
{
	Py_buffer a, b;
	double azp, ascale, bzp, bscale, tol;
	int relative;
	unsigned top;
	nbg_tensor_stats st;
	nbg_error err;
	nbg_code rc;
	PyObject *out = NULL;

	if (!PyArg_ParseTuple(args, "y*y*dddddpI", &a, &b, &azp, &ascale, &bzp, &bscale, &tol,
			      &relative, &top))
		return NULL;
	if (a.len != b.len || a.len % (Py_ssize_t)sizeof(float)) {
		raise_code(NBG_E_TENSOR_SHAPE_MISMATCH, "%zd and %zd bytes: not two float32 tensors of "
			   "one element count", a.len, b.len);
	} else {
		nbg_tensor_side sa = { a.buf, azp, ascale }, sb = { b.buf, bzp, bscale };
		Py_BEGIN_ALLOW_THREADS
		rc = nbg_tensor_measure(&sa, &sb, (uint64_t)a.len / sizeof(float), tol, relative, top,
					&st, &err);
		Py_END_ALLOW_THREADS
		out = rc == NBG_OK ? nbgpy_stats(&st) : raise_error(&err, NULL);
	}
	PyBuffer_Release(&a);
	PyBuffer_Release(&b);
	return out;
}

static PyMethodDef module_methods[] = {
	{ "measure", nbgpy_measure, METH_VARARGS,
	  "measure(a, b, a_zero_point, a_scale, b_zero_point, b_scale, tolerance, relative, top_k) -> "
	  "dict: nbg compare's figures of two float32 buffers of stored values." },
	{ "open", (PyCFunction)(void (*)(void))nbgpy_open, METH_VARARGS | METH_KEYWORDS,
	  "open(source, strict=True, flags=0, map=False) -> RawModel" },
	{ "verify", nbgpy_verify, METH_VARARGS, "verify(path, map=False) -> (summary, error)" },
	{ "diff", nbgpy_diff, METH_VARARGS, "diff(a, b) -> str (JSON)" },
	{ "npy_descr", nbgpy_npy_descr, METH_VARARGS, "npy_descr(data_format) -> str or None" },
	{ "codes", nbgpy_codes, METH_NOARGS, "codes() -> [(name, exit, text)]" },
	{ "error", (PyCFunction)(void (*)(void))nbgpy_error, METH_VARARGS | METH_KEYWORDS,
	  "error(code, message, offset=0, field='') -> the exception for that code, not raised" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT, "_nbgkit", "The C half of nbgkit (libnbg).", -1, module_methods,
	NULL, NULL, NULL, NULL,
};

/* The exception classes (doc/python.md, "Errors"), each derived from an
 * nbgkit class (none for Error) and a builtin exception, in the order they
 * are made. */
static const struct {
	const char *name;
	PyObject **cls;
	PyObject **base;    /* NULL: the builtin alone */
	PyObject **builtin;
	const char *doc;
} error_classes[] = {
	{ "Error", &Error, NULL, &PyExc_Exception,
	  "A libnbg failure: .code (the failure code's name, as nbg codes lists it), .offset "
	  "(the byte offset), .field, .message, .exit_code (what nbg exits with), .errno (0 when "
	  "none), .index, .path." },
	{ "InvalidFileError", &InvalidFileError, &Error, &PyExc_ValueError,
	  "The file is not a valid NBG, a check failed, or a limit was passed (exit 1); a "
	  "ValueError." },
	{ "ArrayError", &ArrayError, &Error, &PyExc_ValueError,
	  "An array given is not what the record needs: its shape, count or byte size (exit 1); "
	  "a ValueError." },
	{ "ArrayTypeError", &ArrayTypeError, &ArrayError, &PyExc_TypeError,
	  "An array's dtype is neither float nor the record's (tensor-type-mismatch, exit 1); an "
	  "ArrayError and a TypeError." },
	{ "UsageError", &UsageError, &Error, &PyExc_ValueError,
	  "An argument nbgkit cannot use (exit 2); a ValueError." },
	{ "ReadError", &ReadError, &Error, &PyExc_OSError,
	  "An input cannot be read, or memory ran out (exit 3); an OSError with .errno and "
	  ".filename." },
	{ "MissingFileError", &MissingFileError, &ReadError, &PyExc_FileNotFoundError,
	  "The file does not exist (ENOENT): a ReadError and a FileNotFoundError." },
	{ "IsDirectoryError", &IsDirectoryError, &ReadError, &PyExc_IsADirectoryError,
	  "The path is a directory (not-regular-file, EISDIR): a ReadError and an "
	  "IsADirectoryError." },
	{ "AccessDeniedError", &AccessDeniedError, &ReadError, &PyExc_PermissionError,
	  "The file may not be read (EACCES, EPERM): a ReadError and a PermissionError." },
	{ "RuntimeUnavailableError", &RuntimeUnavailableError, &Error, &PyExc_RuntimeError,
	  "The NPU runtime or device is not available, or it failed (exit 4); a RuntimeError." },
};

/* Makes the class error_classes[i] and adds it to m; -1 on failure.  A
 * class that is an OSError keeps the message as its str (OSError's own
 * would print the errno and file name before the sentence, which already
 * names the file). */
static int add_error(PyObject *m, size_t i)
{
	char full[64];
	PyObject *builtin = *error_classes[i].builtin, *dict = PyDict_New(), *bases, *cls, *str;

	bases = error_classes[i].base ? PyTuple_Pack(2, *error_classes[i].base, builtin)
				      : PyTuple_Pack(1, builtin);
	if (!dict || !bases)
		goto fail;
	if (PyObject_IsSubclass(builtin, PyExc_OSError) == 1) {
		str = PyObject_GetAttrString(PyExc_BaseException, "__str__");
		if (!str || PyDict_SetItemString(dict, "__str__", str)) {
			Py_XDECREF(str);
			goto fail;
		}
		Py_DECREF(str);
	}
	snprintf(full, sizeof(full), "nbgkit.%s", error_classes[i].name);
	cls = PyErr_NewExceptionWithDoc(full, error_classes[i].doc, bases, dict);
	Py_DECREF(dict);
	Py_DECREF(bases);
	if (!cls || PyModule_AddObjectRef(m, error_classes[i].name, cls)) {
		Py_XDECREF(cls);
		return -1;
	}
	*error_classes[i].cls = cls;
	return 0;
fail:
	Py_XDECREF(dict);
	Py_XDECREF(bases);
	return -1;
}

/* Every class of error_classes; -1 on failure. */
static int add_errors(PyObject *m)
{
	for (size_t i = 0; i < sizeof(error_classes) / sizeof(error_classes[0]); i++)
		if (add_error(m, i))
			return -1;
	return 0;
}

PyMODINIT_FUNC PyInit__nbgkit(void);
PyMODINIT_FUNC PyInit__nbgkit(void)
{
	PyObject *m;

	if (PyType_Ready(&ModelType) || PyType_Ready(&BlobType))
		return NULL;
	run_lock = PyThread_allocate_lock();
	if (!run_lock)
		return PyErr_NoMemory();
	m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	if (add_errors(m) ||
	    PyModule_AddObjectRef(m, "RawModel", (PyObject *)&ModelType) ||
	    PyModule_AddStringConstant(m, "libnbg_version", nbg_version_string()) ||
	    PyModule_AddIntConstant(m, "DOC_NO_CORE", NBG_JSON_DOC_NO_CORE) ||
	    PyModule_AddIntConstant(m, "DOC_COMMANDS", NBG_JSON_DOC_COMMANDS) ||
	    PyModule_AddIntConstant(m, "DOC_NETWORK", NBG_JSON_DOC_NETWORK) ||
	    PyModule_AddIntConstant(m, "DOC_MEMORY", NBG_JSON_DOC_MEMORY) ||
	    PyModule_AddIntConstant(m, "DOC_WEIGHTS", NBG_JSON_DOC_WEIGHTS) ||
	    PyModule_AddIntConstant(m, "GRAPH_SUMMARY", NBG_GRAPH_JSON_SUMMARY) ||
	    PyModule_AddIntConstant(m, "GRAPH_LAYERS", NBG_GRAPH_JSON_LAYERS) ||
	    PyModule_AddIntConstant(m, "GRAPH_OPERATIONS", NBG_GRAPH_JSON_OPERATIONS) ||
	    PyModule_AddIntConstant(m, "GRAPH_PATCHES", NBG_GRAPH_JSON_PATCHES) ||
	    PyModule_AddIntConstant(m, "GRAPH_TABLES", NBG_GRAPH_JSON_TABLES) ||
	    PyModule_AddIntConstant(m, "GRAPH_FINDINGS", NBG_GRAPH_JSON_FINDINGS) ||
	    PyModule_AddIntConstant(m, "SESSION_FORCE_TARGET", NBG_RT_SESSION_FORCE_TARGET) ||
	    PyModule_AddIntConstant(m, "SESSION_FLOAT32_OUTPUTS", NBG_RT_SESSION_FLOAT32_OUTPUTS) ||
	    PyModule_AddIntConstant(m, "SESSION_SKIP_PROBE", NBG_RT_SESSION_SKIP_PROBE)) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
