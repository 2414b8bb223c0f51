/*
 * json.c - JSON and text helpers every document writer shares: nested keys,
 * strings that keep arbitrary bytes readable, digests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/json.h"

void nbg_json_set_path(json_t *obj, const char *key, json_t *v)
{
	const char *dot;

	while ((dot = strchr(key, '.')) != NULL) {
		char part[64];
		size_t n = (size_t)(dot - key);
		json_t *child;

		if (n >= sizeof(part))
			n = sizeof(part) - 1;
		memcpy(part, key, n);
		part[n] = '\0';
		child = json_object_get(obj, part);
		if (!json_is_object(child)) {
			child = json_object();
			json_object_set_new(obj, part, child);
		}
		obj = child;
		key = dot + 1;
	}
	json_object_set_new(obj, key, v);
}

char *nbg_text_escape(const char *s, size_t max)
{
	if (!s)
		return NULL;
	size_t n = strnlen(s, max), o = 0;
	char *buf = malloc(4 * n + 1);

	if (!buf)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			buf[o++] = (char)ch;
		else
			o += (size_t)snprintf(buf + o, 5, "\\x%02x", ch);
	}
	buf[o] = '\0';
	return buf;
}

/* Text from the file as JSON: printable ASCII kept, anything else \xNN. */
json_t *nbg_json_text(const char *s, size_t max)
{
	char *e = nbg_text_escape(s, max);
	json_t *j = e ? json_string(e) : NULL;
	free(e);
	return j ? j : json_null();
}

json_t *nbg_json_str(const char *s)
{
	json_t *j;

	if (!s)
		return json_null();
	if ((j = json_string(s)) != NULL)
		return j;
	return nbg_json_text(s, SIZE_MAX);
}

json_t *nbg_json_path(const char *path)
{
	json_t *j;
	char *e;

	if (!path)
		return json_null();
	if ((j = json_string(path)) != NULL)
		return j;
	e = nbg_path_escape(path);
	j = e ? json_string(e) : NULL;
	free(e);
	return j ? j : json_null();
}

json_t *nbg_json_sha(const uint8_t d[32])
{
	char hex[65];
	nbg_hex32(d, hex);
	return json_string(hex);
}
