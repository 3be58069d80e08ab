/*
 * C99 consumer of tern.h: compiled with -std=c99 -pedantic -Wall -Wextra -Werror
 * and linked with the C compiler driver against libtern.a (no libstdc++), it
 * proves the header is C99 and the library needs no C++ runtime. It calls the
 * entry points that need no model file: status strings, type names, default
 * parameters, batches, a threadpool, logging, and the error paths of loading
 * and of NULL handles.
 */
#include <stdio.h>
#include <string.h>

#include "tern.h"
#include "tern_port.h"   /* the freestanding hooks compile as C99 too */
#if TERN_WITH_HAL
#include "tern_hal.h"    /* and the device vtable, in builds with devices */
#endif

static int g_passed = 0;
static int g_failed = 0;

#define EXPECT(cond) do { if (cond) { g_passed++; } else { g_failed++; \
    fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)

static int g_log_calls = 0;
static void count_log(tern_log_level level, const char * text, void * user_data) {
    (void) level;
    (void) text;
    *(int *) user_data += 1;
}

static int never_abort(void * user_data) {
    (void) user_data;
    return 0;
}

static void check_status_strings(void) {
    int s;
    const char * unknown = tern_status_str((tern_status) 1000);
    EXPECT(unknown != NULL);
    EXPECT(strcmp(tern_status_str(TERN_OK), "ok") == 0);
    for (s = TERN_OK; s <= TERN_ERR_INTERNAL; s++) {
        const char * text = tern_status_str((tern_status) s);
        EXPECT(text != NULL && text[0] != '\0' && strcmp(text, unknown) != 0);
    }
    EXPECT(tern_last_error() != NULL);
}

static void check_type_names(void) {
    EXPECT(tern_type_name(TERN_TYPE_F32) != NULL && strcmp(tern_type_name(TERN_TYPE_F32), "F32") == 0);
    EXPECT(tern_type_name(TERN_TYPE_Q8_0) != NULL && strcmp(tern_type_name(TERN_TYPE_Q8_0), "Q8_0") == 0);
    EXPECT(tern_type_name((tern_type) 4) == NULL);   /* a hole in ggml's numbering */
    EXPECT(tern_type_name(TERN_TYPE_COUNT) == NULL);
}

static void check_default_params(void) {
    tern_model_params mp = tern_model_default_params();
    tern_context_params cp = tern_context_default_params();
    tern_threadpool_params tp = tern_threadpool_default_params(3);
    tern_sampler_params sp = tern_sampler_default_params();

    EXPECT(mp.progress_callback == NULL && mp.vocab_only == 0);
    EXPECT(cp.n_batch > 0 && cp.n_seq_max >= 1 && cp.n_seq_max <= TERN_MAX_SEQ);
    EXPECT(cp.pool == NULL && cp.arena == NULL && cp.abort_callback == NULL);
    EXPECT(tp.n_threads == 3);
    EXPECT(sp.temp > 0.0f && sp.top_p > 0.0f && sp.top_p <= 1.0f && sp.repeat_penalty == 1.0f);
    printf("defaults: use_mmap %d, n_batch %u, n_seq_max %u, temp %.2f, top_k %d (tern %s, SIMD %s)\n",
           mp.use_mmap, (unsigned) cp.n_batch, (unsigned) cp.n_seq_max, (double) sp.temp, (int) sp.top_k,
           TERN_VERSION, TERN_SIMD_TARGET);
}

static void check_batch(void) {
    tern_token tokens[3] = {1, 2, 3};
    tern_batch b = tern_batch_get_one(tokens, 3);
    EXPECT(b.n_tokens == 3 && b.token == tokens);
    EXPECT(b.pos == NULL && b.n_seq_id == NULL && b.seq_id == NULL && b.logits == NULL);
}

/* Failing loads return a status, leave the model NULL and say which file. */
static void check_load_errors(void) {
    tern_model_params mp = tern_model_default_params();
    tern_model * model = (tern_model *) &mp;   /* must be overwritten */
    static const unsigned char not_gguf[16] = {'N', 'O', 'T', 'G', 'G', 'U', 'F'};
    tern_status st = tern_model_load_file("/nonexistent/tern-c99.gguf", &mp, &model);
    EXPECT(st == TERN_ERR_IO);
    EXPECT(model == NULL);
    EXPECT(strstr(tern_last_error(), "tern-c99.gguf") != NULL);

    model = (tern_model *) &mp;
    st = tern_model_load_blob(not_gguf, sizeof(not_gguf), &mp, &model);
    EXPECT(st == TERN_ERR_FORMAT);
    EXPECT(model == NULL);
    tern_model_free(NULL);
}

/* NULL handles are refused, not crashed on. */
static void check_null_handles(void) {
    tern_context_params cp = tern_context_default_params();
    tern_context * ctx = NULL;
    tern_sampler * sampler = NULL;
    tern_threadpool * pool = NULL;
    tern_threadpool_params tp = tern_threadpool_default_params(1);
    tern_tensor_info info;

    cp.abort_callback = never_abort;
    EXPECT(tern_context_mem_size(NULL, &cp) == 0);
    EXPECT(tern_context_create(NULL, &cp, &ctx) == TERN_ERR_INVALID_ARG && ctx == NULL);
    EXPECT(tern_sampler_mem_size(NULL, NULL) == 0);
    EXPECT(tern_sampler_create(NULL, NULL, NULL, 0, &sampler) == TERN_ERR_INVALID_ARG && sampler == NULL);
    EXPECT(tern_model_tensor_info(NULL, 0, &info) != TERN_OK);
    tern_sampler_free(NULL);
    tern_sampler_reset(NULL);
    tern_sampler_accept(NULL, 0);
    tern_context_free(NULL);

    /* A pool needs no model: one thread (the caller) is always possible. */
    EXPECT(tern_threadpool_create(&tp, &pool) == TERN_OK && pool != NULL);
    tern_threadpool_free(pool);
}

static void check_logging(void) {
    tern_model_params mp = tern_model_default_params();
    tern_model * model = NULL;
    tern_log_set(count_log, &g_log_calls);
    (void) tern_model_load_file("/nonexistent/tern-c99-log.gguf", &mp, &model);
    tern_log_set(NULL, NULL);
    printf("log lines routed to the callback while failing a load: %d\n", g_log_calls);
}

#if TERN_WITH_HAL
/* A vendor's table, registered from C: refused for another ABI version or a
 * missing entry, listed devices counted. */
static int32_t no_instances(void) { return 0; }
static void check_hal(void) {
    tern_hal_device_desc d;
    char names[4][32];
    memset(&d, 0, sizeof(d));
    d.abi_version = TERN_HAL_ABI_VERSION + 1;
    d.name = "c99dev";
    d.count = no_instances;
    EXPECT(tern_hal_register(&d) == TERN_ERR_INVALID_ARG);
    d.abi_version = TERN_HAL_ABI_VERSION;
    EXPECT(tern_hal_register(&d) == TERN_ERR_INVALID_ARG); /* no open, no buffers ... */
    EXPECT(tern_hal_list_devices(names, 4) >= 0);
    EXPECT(tern_hal_error(TERN_ERR_IO, "device %d", 3) == TERN_ERR_IO && strcmp(tern_last_error(), "device 3") == 0);
}
#endif

int main(void) {
#if TERN_WITH_HAL
    check_hal();
#endif
    check_status_strings();
    check_type_names();
    check_default_params();
    check_batch();
    check_load_errors();
    check_null_handles();
    check_logging();
    printf("%d passed, %d failed\n", g_passed, g_failed);
    return (g_failed == 0 && g_passed > 0) ? 0 : 1;
}
