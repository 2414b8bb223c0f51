# Make rules for web/build.sh (run from the source root): libnbg, jansson and
# web/nbg_web.c compiled with emcc into $(WORK)/nbg.js, the wasm embedded in
# it (SINGLE_FILE: a file:// page cannot fetch a .wasm beside it); and the
# same with WebAssembly SIMD (-msimd128: clang vectorizes the CPU backend's
# int16 x int16 -> int32 loops) into $(WORK)/nbg-simd.js, from objects in
# $(WORK)/obj-simd.  The page runs the second where the browser has SIMD.
CC = emcc
AR = emar
CFLAGS = -std=c11 -O2 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter \
	-Wno-missing-field-initializers -fvisibility=hidden -MMD -MP
INC = -I$(WORK)/gen -Iinclude -Ilib -I$(JANSSON)/src
JANSSON_SRCS = $(addprefix $(JANSSON)/src/,dump.c error.c hashtable.c hashtable_seed.c \
	load.c memory.c pack_unpack.c strbuffer.c strconv.c utf.c value.c version.c)
LIB_OBJS = $(patsubst %.c,$(WORK)/obj/%.o,$(LIB_SRCS))
SIMD_OBJS = $(patsubst %.c,$(WORK)/obj-simd/%.o,$(LIB_SRCS))
JANSSON_OBJS = $(patsubst $(JANSSON)/src/%.c,$(WORK)/obj/jansson/%.o,$(JANSSON_SRCS))
EXPORTS = _nbg_web_buffer,_nbg_web_cpu_plan,_nbg_web_cpu_input,_nbg_web_cpu_run,_nbg_web_cpu_output,_nbg_web_cpu_output_count,_nbg_web_loaded,_nbg_web_parse,_nbg_web_report,_nbg_web_dot,_nbg_web_map,_nbg_web_meta,_nbg_web_diff,_nbg_web_weights,_nbg_web_weights_npy,_nbg_web_cpu_tensor_npy,_nbg_web_cpu_golden,_nbg_web_cpu_compare,_nbg_web_cpu_compare_entry,_nbg_web_free,_nbg_web_warm,_malloc,_free
LDFLAGS = -O2 -sMODULARIZE=1 -sEXPORT_NAME=NbgModule -sSINGLE_FILE=1 \
	-sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=2GB -sENVIRONMENT=worker,node \
	-sEXPORTED_FUNCTIONS=$(EXPORTS) -sEXPORTED_RUNTIME_METHODS=UTF8ToString,stringToUTF8,lengthBytesUTF8 \
	-sFILESYSTEM=0

$(WORK)/nbg.js: $(WORK)/obj/nbg_web.o $(WORK)/libnbg.a $(WORK)/libjansson.a web/web.mk
	$(CC) $(LDFLAGS) -o $@ $(WORK)/obj/nbg_web.o $(WORK)/libnbg.a $(WORK)/libjansson.a

$(WORK)/nbg-simd.js: $(WORK)/obj-simd/nbg_web.o $(WORK)/libnbg-simd.a $(WORK)/libjansson.a web/web.mk
	$(CC) $(LDFLAGS) -msimd128 -o $@ $(WORK)/obj-simd/nbg_web.o $(WORK)/libnbg-simd.a $(WORK)/libjansson.a

$(WORK)/libnbg-simd.a: $(SIMD_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

$(WORK)/obj-simd/nbg_web.o: web/nbg_web.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -msimd128 $(INC) -c -o $@ $<

$(WORK)/obj-simd/lib/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -msimd128 $(INC) -DNBG_BUILDING_LIBRARY -DNBG_STATIC_LINKING_ONLY= -c -o $@ $<

$(WORK)/libnbg.a: $(LIB_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

$(WORK)/libjansson.a: $(JANSSON_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

$(WORK)/obj/nbg_web.o: web/nbg_web.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) -c -o $@ $<

$(WORK)/obj/lib/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) -DNBG_BUILDING_LIBRARY -DNBG_STATIC_LINKING_ONLY= -c -o $@ $<

$(WORK)/obj/jansson/%.o: $(JANSSON)/src/%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -DHAVE_CONFIG_H -I$(WORK)/gen -I$(JANSSON)/src -MMD -MP -c -o $@ $<

-include $(LIB_OBJS:.o=.d) $(SIMD_OBJS:.o=.d) $(WORK)/obj-simd/nbg_web.d $(JANSSON_OBJS:.o=.d) $(WORK)/obj/nbg_web.d
