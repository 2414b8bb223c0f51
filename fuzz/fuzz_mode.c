/*
 * fuzz_mode.c - linked into the replay drivers only: before main, every
 * parse of this process skips the CRC comparisons, as the libFuzzer build
 * (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION) does, so that a replay reaches
 * what a fuzzing run reached.  The drivers link the build's static library
 * (compiled once) instead of a second copy compiled with that macro.
 */
#include "common/internal.h"

__attribute__((constructor)) static void fuzz_mode(void)
{
	nbg_fuzzing_no_crc = 1;
}
