/*
 * mkhostile.c - writes one hostile model of the CPU backend's limits
 * (tests/cpu_hostile.h) for the Python package's tests.
 * Usage: nbg-cpu-hostile NAME OUT.nb, NAME one of
 *   shared-conv   ch_shared_conv(32): 32 records naming one convolution
 *   tp-walk       ch_tp_walk(65535): a TP pooling walk of 65535 x 65535 tile rows
 *   scratch       ch_scratch(2048): 537 MB of scratch for a 2 KB output
 *   big-output    ch_copy(1, 0, 1 GiB - 16): an output record of 1 GiB less 16 bytes
 *   copy          ch_copy(1, 0, 0): a 16-byte copy that runs
 *   copy-nhwc     ch_copy_nhwc: that copy from an NHWC input of shape (1, 4, 2, 2)
 *   copy-2in      ch_copy_two_inputs: that copy with a second input nothing reads
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_hostile.h"

int main(int argc, char **argv)
{
	size_t n = 0;
	uint8_t *b = NULL;

	if (argc != 3) {
		fprintf(stderr, "usage: nbg-cpu-hostile shared-conv|tp-walk|scratch|big-output|copy|copy-nhwc|copy-2in OUT.nb\n");
		return 2;
	}
	if (!strcmp(argv[1], "shared-conv"))
		b = ch_shared_conv(32, &n);
	else if (!strcmp(argv[1], "tp-walk"))
		b = ch_tp_walk(65535, &n);
	else if (!strcmp(argv[1], "scratch"))
		b = ch_scratch(2048, &n);
	else if (!strcmp(argv[1], "big-output"))
		b = ch_copy(1, 0, (1u << 30) - 16, &n);
	else if (!strcmp(argv[1], "copy"))
		b = ch_copy(1, 0, 0, &n);
	else if (!strcmp(argv[1], "copy-nhwc"))
		b = ch_copy_nhwc(&n);
	else if (!strcmp(argv[1], "copy-2in"))
		b = ch_copy_two_inputs(&n);
	if (!b) {
		fprintf(stderr, "nbg-cpu-hostile: no model named %s\n", argv[1]);
		return 2;
	}
	FILE *f = fopen(argv[2], "wb");
	int ok = f && fwrite(b, 1, n, f) == n;
	if (f && fclose(f) != 0)
		ok = 0;
	free(b);
	if (!ok) {
		fprintf(stderr, "nbg-cpu-hostile: cannot write %s\n", argv[2]);
		return 3;
	}
	return 0;
}
