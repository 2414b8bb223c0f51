/*
 * rt_models.h - the two models the runtime tests run.  By default (the
 * default suite) they are synthesized by the fixture builder with the inputs
 * and outputs of the real face detector pair: INT16 dynamic fixed point
 * (input fl 15, outputs fl 7 and 8) and FP16, input [1,128,128,3], outputs
 * [1,896,16] and [1,896,1], target 0x1000003b, and beside the INT16 one a
 * meta.json in the vendor compiler's layout that names those positions.
 * With --corpus (suite 'corpus') they are the real files
 * v2/face_detector_nbg_int16.nb and v2/face_detector_nbg_fp16.nb with the
 * vendor's own meta.json, and the program is skipped without them.
 */
#ifndef NBG_RT_MODELS_H
#define NBG_RT_MODELS_H

typedef struct rt_models {
	char int16[512], fp16[512];
	char meta_int16[512]; /* the INT16 model's meta.json */
	char dir[64];         /* the synthesized files' directory, "" for the real ones */
} rt_models;

/* Fills m as argv asks (no argument or --synthesized: synthesized).
 * Returns 0, or TC_SKIP with the reason printed when --corpus finds no
 * corpus, or 1 when the synthesized files cannot be written. */
int rt_models_open(int argc, char **argv, const char *program, rt_models *m);
/* The synthesized pair whatever argv says (for a test that runs the real
 * one in a case of its own): 0, or 1 when the files cannot be written. */
int rt_models_synthesize(rt_models *m);
/* Removes the synthesized files. */
void rt_models_close(rt_models *m);

#endif
