/*
 * lp64.h - the libnnsdk backend on a build that is not LP64.
 *
 * The libnnsdk structures nbgkit passes are the ones recovered from AArch64
 * callers (lib/runtime/nnsdk_abi.h): 8-byte pointers at fixed offsets.  On
 * another data model (armhf: 4-byte pointers) nothing says what they look
 * like, so the runtime refuses libnnsdk with abi-unsupported (exit 4) before
 * loading anything.  VIPLite's interface has no pointer inside a struct and
 * runs on both.  A test that needs libnnsdk to open calls NEEDS_NNSDK_ABI()
 * first: on LP64 it does nothing; elsewhere the test is skipped, saying why,
 * and each suite has one check that the refusal itself is what it should be.
 */
#ifndef NBG_TESTS_RUNTIME_LP64_H
#define NBG_TESTS_RUNTIME_LP64_H

#include <stdint.h>

#define NBG_TEST_NNSDK_ABI (UINTPTR_MAX == UINT64_MAX && SIZE_MAX == UINT64_MAX)

#if NBG_TEST_NNSDK_ABI
#define NEEDS_NNSDK_ABI() ((void)0)
#else
#define NEEDS_NNSDK_ABI()                                                                  \
	do {                                                                               \
		print_message("skipped: needs the libnnsdk backend, which is LP64 only; "  \
			      "this build has %u-byte pointers (abi-unsupported)\n",       \
			      (unsigned)sizeof(void *));                                   \
		skip();                                                                    \
	} while (0)
#endif

#endif
