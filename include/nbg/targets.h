/*
 * targets.h - the NBG header's `target` word: which VeriSilicon hardware
 * configuration a file was compiled for, and what public sources name it.
 *
 * "Known" means named by a public source (vendor toolchain configuration
 * names, SoC vendors' SDKs), not verified on hardware.  An unknown target is
 * shown as unknown; no SoC is ever guessed.
 */
#ifndef NBG_TARGETS_H
#define NBG_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#include "nbg.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nbg_target_info {
	uint32_t target;
	const char *config; /* VeriSilicon configuration name, or NULL when none is public */
	const char *soc;    /* SoC or board where a source states it, or NULL */
} nbg_target_info;

#ifdef __cplusplus
}
#endif
#endif

/* Static-linking-only: not part of the stable interface (doc/api.md). */
#if defined(NBG_STATIC_LINKING_ONLY) && !defined(NBG_TARGETS_H_STATIC_LINKING_ONLY)
#define NBG_TARGETS_H_STATIC_LINKING_ONLY
#ifdef __cplusplus
extern "C" {
#endif

/* The entry for `target`, or NULL when no public source names it.  The
 * table is static: the pointer stays valid.  Reentrant. */
NBG_API const nbg_target_info *nbg_target_lookup(uint32_t target);

/* The i-th entry of the table in ascending target order (for listings), or
 * NULL past the end. */
NBG_API const nbg_target_info *nbg_target_at(size_t i);

/* Writes "0x1000003b (VIP9000NANODI_PLUS_PID0X1000003B, Allwinner A733 ...)"
 * or "0x00000015 (unknown target)" into buf (always NUL-terminated when
 * size > 0) and returns buf. */
NBG_API char *nbg_target_describe(uint32_t target, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
