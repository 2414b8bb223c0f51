/*
 * json.h - JSON helpers every document writer of libnbg shares (reports,
 * graph, ledger, diff).  Private to libnbg.
 */
#ifndef NBG_COMMON_JSON_H
#define NBG_COMMON_JSON_H

#include <jansson.h>

#include "common/internal.h"

/* Sets obj[dotted.key] = v, creating nested objects; steals v. */
NBG_INTERNAL void nbg_json_set_path(json_t *obj, const char *key, json_t *v);
/* Hex string of a SHA-256 digest. */
NBG_INTERNAL json_t *nbg_json_sha(const uint8_t d[32]);
/* Text from a file (at most `max` bytes, stops at NUL), escaped as
 * nbg_text_escape does. */
NBG_INTERNAL json_t *nbg_json_text(const char *s, size_t max);
/* A JSON string for any C string of any length (paths): kept as is when it
 * is valid UTF-8, else every byte >= 0x80 becomes \xNN.  NULL -> null. */
NBG_INTERNAL json_t *nbg_json_str(const char *s);
/* A file name: kept as is when it is valid UTF-8, else escaped as
 * nbg_path_escape does (the one form every printed name takes).
 * NULL -> null. */
NBG_INTERNAL json_t *nbg_json_path(const char *path);

#endif
