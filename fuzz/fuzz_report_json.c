/*
 * fuzz_report_json.c - libFuzzer harness: the JSON writers.  A parse that
 * succeeds goes through nbg_json_document_write, a failure through nbg_error_json;
 * either document must be valid JSON (jansson reads it back) and agree with
 * the model or the error it was written from.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_common.h"

static const char *fz_path = "fuzz \"input\"\\.nb";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nbg_model *m = NULL;
	nbg_error err;
	nbg_code rc = fz_parse(data, size, &m, &err);
	json_error_t jerr;
	json_t *doc;
	char *s;

	if (rc == NBG_OK) {
		s = fz_document(m, fz_path, 0);
		FZ_CHECK(s != NULL);
		doc = json_loads(s, 0, &jerr);
		FZ_CHECK(doc != NULL && json_is_object(doc));
		/* the fuzzing build skips the CRC comparisons: a model whose
		 * checksums fail is reported as such, never as valid */
		FZ_CHECK(json_is_boolean(json_object_get(doc, "valid")) &&
			 json_is_true(json_object_get(doc, "valid")) ==
				 (nbg_model_integrity(m) != NBG_INTEGRITY_FAILED));
		FZ_CHECK(!strcmp(json_string_value(json_object_get(doc, "integrity")),
				 nbg_integrity_name(nbg_model_integrity(m))));
		FZ_CHECK(json_is_object(json_object_get(doc, "error")) ==
			 (nbg_model_integrity(m) == NBG_INTEGRITY_FAILED));
		FZ_CHECK(!strcmp(json_string_value(json_object_get(doc, "path")), fz_path));
		FZ_CHECK(json_integer_value(json_object_get(doc, "family")) == nbg_model_family(m));
		FZ_CHECK(json_array_size(json_object_get(doc, "sections")) == nbg_model_section_count(m));
		FZ_CHECK(json_array_size(json_object_get(doc, "inputs")) == nbg_model_input_count(m));
		FZ_CHECK(json_array_size(json_object_get(doc, "outputs")) == nbg_model_output_count(m));
		/* a note lost to a string jansson refused would show here */
		FZ_CHECK(json_array_size(json_object_get(doc, "notes")) == nbg_model_note_count(m));
		nbg_model_free(m);
	} else {
		s = nbg_error_json(&err, fz_path);
		FZ_CHECK(s != NULL);
		doc = json_loads(s, 0, &jerr);
		FZ_CHECK(doc != NULL && json_is_object(doc));
		FZ_CHECK(json_is_false(json_object_get(doc, "valid")));
		json_t *e = json_object_get(doc, "error");
		FZ_CHECK(json_is_object(e));
		FZ_CHECK(!strcmp(json_string_value(json_object_get(e, "code")), nbg_code_name(rc)));
		FZ_CHECK((uint64_t)json_integer_value(json_object_get(e, "offset")) == err.offset);
		FZ_CHECK(!strcmp(json_string_value(json_object_get(e, "message")), err.message));
	}
	json_decref(doc);
	free(s);
	return 0;
}
