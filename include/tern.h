/*
 * tern.h — the whole public API of Tern, C99.
 *
 * Tern runs GGUF language models on edge devices in fixed memory. Names follow
 * llama.h where the concept is the same. Every fallible call returns a
 * tern_status; tern_last_error() gives a detail line naming the file, key or
 * tensor at fault (per thread).
 *
 * Memory: a model's tables (tensor table, metadata, vocabulary) live in one
 * arena sized from the GGUF header (tern_model_mem_size_*); a context lives in
 * one arena whose exact size tern_context_mem_size() returns; a sampler in
 * tern_sampler_mem_size() bytes; tokenizing in tern_tokenize_scratch_size().
 * Each is either the caller's buffer (firmware: static arrays, the model a
 * blob in flash: no heap call at all) or obtained once. After
 * tern_context_create() nothing is allocated: decode and sampling run inside
 * the arena.
 *
 * Lifecycle:
 *   tern_model_load_file / _blob    -> tern_model *      (read-only, shared)
 *   tern_context_create(model)      -> tern_context *    (KV cache, activations)
 *   tern_sampler_create(model)      -> tern_sampler *
 *   tern_tokenize(model, text)      -> tokens
 *   loop: tern_decode(ctx, batch); tern_sampler_sample(smpl, ctx, -1)
 *   tern_sampler_free, tern_context_free, tern_model_free (reverse order)
 *
 * Threads and lifetimes:
 *   - A model is read-only once loaded: contexts on any threads may use it at
 *     once. It must outlive every context and sampler made from it.
 *   - A context serves one call at a time. tern_decode, tern_kv_cache_clear and
 *     tern_kv_cache_seq_rm entered while another thread is inside one of them on
 *     the same context are refused (TERN_ERR_BUSY, or 0 / nothing done, with
 *     tern_last_error() set); nothing races. Logits pointers stay valid until the
 *     next decode on that context.
 *   - A threadpool runs one decode at a time: contexts sharing one take turns,
 *     and a decode arriving while another runs gets TERN_ERR_BUSY. The pool
 *     must outlive the contexts that use it.
 *   - A sampler belongs to one thread at a time. tern_last_error() is per thread.
 *   - Freeing an object while another thread still uses it is undefined.
 *
 * Hostile input: a malformed, inconsistent or non-finite model file is refused
 * at load with one error line naming the key or tensor, and non-finite logits
 * at run time make tern_decode return TERN_ERR_NUMERIC. A model file that is
 * truncated or rewritten while it is memory-mapped (use_mmap) can still raise
 * SIGBUS: load with use_mmap = 0 where other processes may change the file.
 * docs/SECURITY.md states the whole contract.
 */
#ifndef TERN_H
#define TERN_H

#include <stddef.h>
#include <stdint.h>
#include "tern_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status                                                                   */
/* ------------------------------------------------------------------------ */

typedef enum tern_status {
    TERN_OK = 0,
    TERN_ERR_INVALID_ARG = 1,   /* a NULL handle, a bad parameter value          */
    TERN_ERR_IO = 2,            /* open/read/mmap failed                         */
    TERN_ERR_FORMAT = 3,        /* malformed GGUF, bad metadata                  */
    TERN_ERR_UNSUPPORTED = 4,   /* unknown architecture, type not compiled in    */
    TERN_ERR_NO_MEMORY = 5,     /* an arena (or the one allocation) is too small */
    TERN_ERR_CANCELLED = 6,     /* the progress callback returned 0              */
    TERN_ERR_CONTEXT_FULL = 7,  /* no room in the KV cache for the batch         */
    TERN_ERR_ABORTED = 8,       /* the abort callback stopped a decode           */
    TERN_ERR_NOT_FOUND = 9,     /* a key, tensor or token that does not exist    */
    TERN_ERR_SHAPE = 10,        /* a tensor with the wrong shape or type         */
    TERN_ERR_INTERNAL = 11,
    TERN_ERR_BUSY = 12,         /* the context or its threadpool is in use by another call */
    TERN_ERR_NUMERIC = 13       /* logits turned NaN or Inf (bad weights or hyper-parameters) */
} tern_status;

/* A short fixed description of a status ("malformed file", ...). */
const char * tern_status_str(tern_status status);
/* Detail of the last error on this thread ("model.gguf: tensor 'blk.0.attn_q.weight': ..."). */
const char * tern_last_error(void);

typedef int32_t tern_token;
typedef int32_t tern_pos;
typedef int32_t tern_seq_id;

/* Tensor block formats; the values are GGUF's (ggml_type). */
typedef enum tern_type {
    TERN_TYPE_F32 = 0,
    TERN_TYPE_F16 = 1,
    TERN_TYPE_Q4_0 = 2,
    TERN_TYPE_Q4_1 = 3,
    TERN_TYPE_Q5_0 = 6,
    TERN_TYPE_Q5_1 = 7,
    TERN_TYPE_Q8_0 = 8,
    TERN_TYPE_Q8_1 = 9,
    TERN_TYPE_Q2_K = 10,
    TERN_TYPE_Q3_K = 11,
    TERN_TYPE_Q4_K = 12,
    TERN_TYPE_Q5_K = 13,
    TERN_TYPE_Q6_K = 14,
    TERN_TYPE_Q8_K = 15,
    TERN_TYPE_IQ4_NL = 20,
    TERN_TYPE_I32 = 26,     /* graph inputs (token ids, positions, slots); not a weight type */
    TERN_TYPE_BF16 = 30,
    TERN_TYPE_COUNT = 39
} tern_type;

/* "F32", "Q4_K", ...; NULL for a value that is no known type or is not compiled in (TERN_TYPES). */
const char * tern_type_name(tern_type type);

/* The CPU kernel set in use: "scalar", "avx2", "avx512", or on ARM the level "neon",
   "dotprod" or "i8mm". Chosen once, at the
   first call of any function that computes: the best set this build has and this CPU
   runs, or a lower one named by the environment variable TERN_KERNELS. */
const char * tern_kernels_name(void);
/* The kernel sets this build compiled in, space-separated ("scalar avx2 avx512"). */
const char * tern_kernels_compiled_names(void);

/* ------------------------------------------------------------------------ */
/* Model                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct tern_model tern_model;

/* Called with progress in [0, 1] while loading; return 0 to cancel the load
 * (tern_model_load_* then returns TERN_ERR_CANCELLED and frees everything). */
typedef int (*tern_progress_callback)(float progress, void * user_data);

typedef struct tern_model_params {
    int use_mmap;       /* map the file (zero-copy); 0: read() it into one buffer */
    int prefetch;       /* ask the OS to read the mapping ahead (MAP_POPULATE/WILLNEED) */
    int use_mlock;      /* lock the weights in RAM */
    int check_tensors;  /* validate F32/F16/BF16 values and block scales are finite */
    int vocab_only;     /* metadata and vocabulary only: no weights bound, any architecture */
    int n_threads;      /* threads for check_tensors (<= 0: 1) */
    int repack;         /* rewrite matmul weights into the CPU kernel set's interleaved layouts
                           at load, in place (default 1; mmap: the rewritten pages become private
                           copies, the file is never written; never on the blob path) */
    tern_progress_callback progress_callback;
    void * progress_callback_user_data;
    void * arena;       /* caller memory for the model's tables (and, on the read path, the
                           file's bytes), or NULL to obtain it once; >= tern_model_mem_size_*() */
    size_t arena_size;  /* bytes at arena */

    /* Accelerators (builds with TERN_DEVICES; tern_hal.h). Placement is decided at
     * load, before the CPU repacks the weights it runs:
     *   devices           comma list of device instances, each NAME[:PARAMS] ("vulkan0",
     *                     "sim0:refuse=ATTN,sim1"; PARAMS go to the device's open), or NULL:
     *                     every instance of the kinds that offer themselves (not the sim)
     *   n_gpu_layers      the last N layers run on the devices (< 0 or >= n_layer: all);
     *                     the output layer follows the last one; 0: none
     *   tensor_split      n_devices proportions of the offloaded layers, contiguous ranges
     *                     in device order (llama.cpp's layer split), or NULL: even
     *   tensor_overrides  "REGEX=DEVICE;REGEX=DEVICE..." (DEVICE: an instance name or CPU):
     *                     weights whose GGUF name matches (first pattern wins) go there
     * Without devices compiled in: a device list is TERN_ERR_UNSUPPORTED, n_gpu_layers
     * is ignored. */
    const char *  devices;
    int32_t       n_gpu_layers;
    const float * tensor_split;
    const char *  tensor_overrides;
} tern_model_params;

tern_model_params tern_model_default_params(void);

/* Load a GGUF file. A split model ("name-00001-of-00003.gguf") is loaded whole
 * when its first part is named. */
tern_status tern_model_load_file(const char * path, const tern_model_params * params, tern_model ** out_model);
/* Load from a caller's memory (flash, XIP): weights point into it (zero-copy);
 * the memory must outlive the model. use_mmap is ignored. */
tern_status tern_model_load_blob(const void * data, size_t size, const tern_model_params * params, tern_model ** out_model);
void tern_model_free(tern_model * model);

/* Exact bytes of params->arena the same load takes (any alignment): the
 * tables, the vocabulary, the load scratch, the scratch tern_context_mem_size
 * plans in, and on the read path (use_mmap 0) the file's bytes. The header is
 * measured, nothing is kept; 0 on error (tern_last_error says why). Neither
 * call allocates (the file is mapped to be measured; builds without mmap read
 * its header into one temporary buffer). Firmware: a static buffer of this
 * size and tern_model_load_blob take no heap at all. */
size_t tern_model_mem_size_file(const char * path, const tern_model_params * params);
size_t tern_model_mem_size_blob(const void * data, size_t size, const tern_model_params * params);

/* How the weights were obtained: "mmap", "read" or "blob". */
const char * tern_model_load_path(const tern_model * model);
/* Wall time of the whole load in milliseconds: opening, mapping or reading
 * the file (with check_tensors), the repack, and the upload to devices. The
 * progress callback spans all of it: the file takes [0, 0.9] when a repack
 * or an upload may follow ([0, 1] otherwise), the repack and the upload the
 * rest, and 1.0 is reported once, at the very end. */
double tern_model_load_ms(const tern_model * model);
/* How that time splits: mapping or reading the file (*file_ms), rewriting
 * weights for the CPU (*repack_ms), copying them to devices (*upload_ms).
 * Any pointer may be NULL. */
void tern_model_load_split(const tern_model * model, double * file_ms, double * repack_ms, double * upload_ms);

/* Hyper-parameters. */
const char * tern_model_arch(const tern_model * model);   /* general.architecture */
int32_t tern_model_n_vocab(const tern_model * model);
int32_t tern_model_n_ctx_train(const tern_model * model);
int32_t tern_model_n_embd(const tern_model * model);
int32_t tern_model_n_layer(const tern_model * model);
int32_t tern_model_n_head(const tern_model * model);
int32_t tern_model_n_head_kv(const tern_model * model);
int32_t tern_model_n_ff(const tern_model * model);
int32_t tern_model_n_embd_head(const tern_model * model);
float   tern_model_rope_freq_base(const tern_model * model);
float   tern_model_norm_rms_eps(const tern_model * model);
/* Sliding-window attention: a token at position p attends positions > p - n_swa
 * (phi3); 0 when the model attends every earlier position. */
int32_t tern_model_n_swa(const tern_model * model);
/* Total bytes of all tensor data. */
uint64_t tern_model_size(const tern_model * model);
/* Bytes of the model's own tables (tensor table, metadata index, vocabulary). */
size_t tern_model_arena_size(const tern_model * model);

/* Metadata: any key by name or index. Values are rendered as text into buf
 * (arrays as "[a, b, ...]" cut to fit); returns the full length, or -1 when the
 * key does not exist (like llama_model_meta_val_str). */
int32_t tern_model_meta_count(const tern_model * model);
int32_t tern_model_meta_key_by_index(const tern_model * model, int32_t i, char * buf, size_t buf_size);
int32_t tern_model_meta_val_str_by_index(const tern_model * model, int32_t i, char * buf, size_t buf_size);
int32_t tern_model_meta_val_str(const tern_model * model, const char * key, char * buf, size_t buf_size);

/* Tensors. */
typedef struct tern_tensor_info {
    const char * name;
    tern_type type;
    int32_t n_dims;
    int64_t ne[4];      /* elements per dimension, ne[0] innermost */
    uint64_t bytes;
    uint64_t offset;    /* offset of the data in its file's data section */
    int32_t split;      /* which file of a split model holds it (0 otherwise) */
} tern_tensor_info;

int32_t tern_model_n_tensors(const tern_model * model);
tern_status tern_model_tensor_info(const tern_model * model, int32_t i, tern_tensor_info * out);

/* ------------------------------------------------------------------------ */
/* Vocabulary                                                               */
/* ------------------------------------------------------------------------ */

typedef enum tern_vocab_type {
    TERN_VOCAB_NONE = 0,
    TERN_VOCAB_SPM = 1,   /* tokenizer.ggml.model "llama" */
    TERN_VOCAB_BPE = 2,   /* "gpt2" */
    TERN_VOCAB_WPM = 3    /* "bert" (loaded, not tokenized) */
} tern_vocab_type;

tern_vocab_type tern_vocab_type_of(const tern_model * model);
/* tokenizer.ggml.model and tokenizer.ggml.pre as written in the file ("" when absent). */
const char * tern_vocab_model_name(const tern_model * model);
const char * tern_vocab_pre_name(const tern_model * model);

tern_token tern_token_bos(const tern_model * model);   /* -1 when the model has none */
tern_token tern_token_eos(const tern_model * model);
tern_token tern_token_eot(const tern_model * model);
int  tern_add_bos(const tern_model * model);
int  tern_add_eos(const tern_model * model);
/* End of generation: EOS, EOT or another end-of-generation token. */
int  tern_token_is_eog(const tern_model * model, tern_token token);
const char * tern_token_get_text(const tern_model * model, tern_token token);

/* Tokenize text_len bytes of text. Returns the number of tokens written, or
 * -(number needed) when n_tokens_max is too small, or INT32_MIN on error
 * (tern_last_error says why). Working memory: one allocation per call, freed
 * before returning (tern_tokenize_in below takes the caller's instead). */
int32_t tern_tokenize(const tern_model * model, const char * text, int32_t text_len,
                      tern_token * tokens, int32_t n_tokens_max, int add_special, int parse_special);
/* The same with the caller's working memory (no allocation): scratch of at
 * least tern_tokenize_scratch_size(model, text_len) bytes, any alignment;
 * INT32_MIN (TERN_ERR_NO_MEMORY in tern_last_error) when it is smaller. */
size_t tern_tokenize_scratch_size(const tern_model * model, int32_t text_len);
int32_t tern_tokenize_in(const tern_model * model, const char * text, int32_t text_len, tern_token * tokens,
                         int32_t n_tokens_max, int add_special, int parse_special, void * scratch, size_t scratch_size);

/* Bytes of one token's text (byte-fallback tokens give their byte). Returns the
 * number written, or -(needed) when buf is too small, or INT32_MIN for a token
 * outside the vocabulary or a bad buffer (tern_last_error says which).
 * special: render control tokens' text too. */
int32_t tern_token_to_piece(const tern_model * model, tern_token token, char * buf, int32_t buf_size, int special);

/* ------------------------------------------------------------------------ */
/* Threadpool                                                               */
/* ------------------------------------------------------------------------ */

typedef struct tern_threadpool tern_threadpool;

typedef struct tern_threadpool_params {
    int32_t n_threads;      /* including the calling thread (worker 0) */
    int32_t spin_rounds;    /* rounds an idle worker spins for the next job (at most 2 ms) before it sleeps */
    int     pin_threads;    /* set CPU affinity of worker i to core i */
    size_t  min_step_bytes; /* a graph whose steps read fewer bytes than this on average (a
                               small model's decode) runs on the calling thread alone: each
                               step costs the pool about a microsecond of cache traffic
                               between cores. Logits are the same either way. 0: always
                               the whole pool. Default 64 KiB. */
} tern_threadpool_params;

tern_threadpool_params tern_threadpool_default_params(int32_t n_threads);
/* A pool may be shared by several contexts (one decode at a time). */
tern_status tern_threadpool_create(const tern_threadpool_params * params, tern_threadpool ** out_pool);
void tern_threadpool_free(tern_threadpool * pool);

/* ------------------------------------------------------------------------ */
/* Context and decode                                                       */
/* ------------------------------------------------------------------------ */

typedef struct tern_context tern_context;

/* Return nonzero to abort the decode in progress (checked between graph nodes). */
typedef int (*tern_abort_callback)(void * user_data);

typedef struct tern_context_params {
    uint32_t n_ctx;         /* KV cells, <= 2^31 - 1 (0: the model's training context) */
    uint32_t n_batch;       /* most tokens one graph evaluates (a longer batch is split in ubatches) */
    uint32_t n_seq_max;     /* sequences the KV cache may hold (<= TERN_MAX_SEQ) */
    int32_t  n_threads;     /* threads of the context's own pool, [0, TERN_MAX_THREADS] (0: one; ignored with pool) */
    tern_threadpool * pool; /* a shared pool, or NULL for a pool of the context's own */
    void *   arena;         /* caller memory for the context, or NULL to obtain it once */
    size_t   arena_size;    /* bytes at arena (>= tern_context_mem_size()) */
    int      logits_all;    /* keep logits of every token, whatever batch.logits says */
    tern_abort_callback abort_callback;
    void *   abort_callback_data;
    float    defrag_thold;  /* compact the KV cache before a decode when its fragmentation exceeds this (<= 0: off) */
    tern_type type_k;       /* KV cache key type: TERN_TYPE_F16 (default), F32, Q8_0, Q4_0 */
    tern_type type_v;       /* value type: the same choices */

    /* Accelerators (the model's devices; ignored without them): */
    int      offload_kqv;   /* a layer's KV cache lives where its layer runs (default 1); 0: every
                               layer's cache on the host (llama.cpp's -nkvo) */
    int      op_offload;    /* large matmuls of host weights run on a device once a batch reaches
                               its threshold (default 1; prompts, never single tokens) */
    int32_t  graph_cache;   /* captured device graphs kept (LRU); < 0: the build's
                               TERN_GRAPH_CACHE_SIZE (default 12); 0: capture off */
    int      capture_prefill; /* capture batches of several tokens of one sequence too (default 0:
                               only decode batches, one token per sequence, are captured) */
} tern_context_params;

tern_context_params tern_context_default_params(void);

/* Exact bytes tern_context_create() needs for these parameters (KV cache,
 * worst-case activations, logits, graph tables, scratch). 0 on error. */
size_t tern_context_mem_size(const tern_model * model, const tern_context_params * params);
tern_status tern_context_create(const tern_model * model, const tern_context_params * params, tern_context ** out_ctx);
void tern_context_free(tern_context * ctx);

uint32_t tern_n_ctx(const tern_context * ctx);
uint32_t tern_n_batch(const tern_context * ctx);

/* A batch of tokens: caller-owned arrays of n_tokens entries. pos, n_seq_id,
 * seq_id and logits may be NULL: positions then continue sequence 0, every
 * token is in sequence 0 and only the last token's logits are kept. */
typedef struct tern_batch {
    int32_t n_tokens;
    tern_token * token;
    tern_pos * pos;
    int32_t * n_seq_id;
    tern_seq_id ** seq_id;
    int8_t * logits;
} tern_batch;

/* A batch over one array of tokens for sequence 0 (like llama_batch_get_one). */
tern_batch tern_batch_get_one(tern_token * tokens, int32_t n_tokens);
/* A batch with room for n_tokens tokens of up to n_seq_max sequence ids each
 * (like llama_batch_init; n_tokens of the result is 0: fill token[i], pos[i],
 * n_seq_id[i], seq_id[i][..], logits[i] and set n_tokens). _in: in the
 * caller's memory of tern_batch_mem_size() bytes (nothing to free); without
 * _in: one allocation, released by tern_batch_free. token is NULL on error. */
size_t tern_batch_mem_size(int32_t n_tokens, int32_t n_seq_max);
tern_batch tern_batch_init_in(void * mem, size_t mem_size, int32_t n_tokens, int32_t n_seq_max);
tern_batch tern_batch_init(int32_t n_tokens, int32_t n_seq_max);
void tern_batch_free(tern_batch batch);

/* Evaluate a batch. TERN_ERR_CONTEXT_FULL when the KV cache has no room for it:
 * nothing of the batch is kept and the context stays usable. With a sliding
 * window (tern_model_n_swa > 0) a full cache first frees every cell that each
 * sequence holding it has left behind the window (it can no longer be
 * attended going forward); those stay freed even when the batch then fails.
 * Rolling a sequence back (seq_rm of its last positions) and decoding again
 * is exact or refused: a token whose window reaches a freed position is
 * refused with TERN_ERR_INVALID_ARG (nothing changes; decode the sequence
 * again from its start). tern_kv_cache_seq_pos_min gives the lowest position
 * a sequence still holds, as llama.cpp's does: a rollback to position p is
 * safe while p - n_swa + 1 >= that. */
tern_status tern_decode(tern_context * ctx, tern_batch batch);

/* Logits [n_vocab] of the i-th token of the last batch (negative i counts from
 * the end); NULL when that token's logits were not requested. */
float * tern_get_logits_ith(tern_context * ctx, int32_t i);

/* KV cache (llama.h's llama_kv_self_* semantics). Cells hold one token's keys
 * and values for every layer, a position and a set of sequences. Position
 * ranges are [p0, p1); p0 < 0 means 0, p1 < 0 means "to the end". Calls that
 * return int give 1 on success, 0 on a bad argument (tern_last_error says). */
/* Forget every token of the KV cache (all sequences). */
void tern_kv_cache_clear(tern_context * ctx);
/* Remove positions [p0, p1) of a sequence (seq_id < 0: every sequence). */
int tern_kv_cache_seq_rm(tern_context * ctx, tern_seq_id seq_id, tern_pos p0, tern_pos p1);
/* dst shares src's cells in [p0, p1) (no K/V data copied: a common prefix). */
int tern_kv_cache_seq_cp(tern_context * ctx, tern_seq_id src, tern_seq_id dst, tern_pos p0, tern_pos p1);
/* Drop every sequence but seq. */
int tern_kv_cache_seq_keep(tern_context * ctx, tern_seq_id seq);
/* Add delta to the positions in [p0, p1) of seq (cells pushed below 0 are
 * removed); divide them by d (d >= 1). The keys are rotated to the new
 * positions before the next decode (or by tern_kv_cache_update): RoPE's
 * additivity, nothing recomputed. A cell shared by several sequences moves
 * for all of them. */
int tern_kv_cache_seq_add(tern_context * ctx, tern_seq_id seq, tern_pos p0, tern_pos p1, tern_pos delta);
int tern_kv_cache_seq_div(tern_context * ctx, tern_seq_id seq, tern_pos p0, tern_pos p1, int d);
/* Smallest / largest position held for a sequence, -1 when empty. */
tern_pos tern_kv_cache_seq_pos_min(const tern_context * ctx, tern_seq_id seq_id);
tern_pos tern_kv_cache_seq_pos_max(const tern_context * ctx, tern_seq_id seq_id);
/* Apply pending position changes now (the K-shift). */
tern_status tern_kv_cache_update(tern_context * ctx);
/* Move the used cells to the front, keeping their order: the same logits,
 * bit for bit, with less to attend over. */
tern_status tern_kv_cache_defrag(tern_context * ctx);
int32_t tern_kv_cache_used_cells(const tern_context * ctx);
/* 1 - used cells / (highest used cell + 1): 0 when the used cells are packed. */
float tern_kv_cache_fragmentation(const tern_context * ctx);

/* Performance counters, as llama_perf_context: the model's load time
 * (tern_model_load_ms), and the time and tokens of successful tern_decode
 * calls, a batch of more than one token counting as prompt evaluation, a
 * single token as one generation step (llama.cpp's rule). No memory taken. */
typedef struct tern_perf_data {
    double  t_load_ms;    /* loading the model (all of tern_model_load_ms) */
    double  t_load_file_ms, t_load_repack_ms, t_load_upload_ms;  /* its split (tern_model_load_split) */
    double  t_p_eval_ms;  /* decodes of more than one token */
    double  t_eval_ms;    /* single-token decodes */
    int32_t n_p_eval;     /* tokens of those multi-token decodes */
    int32_t n_eval;       /* single-token decodes */
    /* Graph execution (all zero without devices but graphs_built):
     *   graphs_built   graphs (re)built: a new batch shape, a K-shift, a defrag
     *   splits         device and CPU splits run
     *   copies_*, bytes_*: split inputs and outputs moved host->device, device->host,
     *                  device->device (a copy between two devices counts once, as d2d)
     *   launches       ops launched one by one (eager)
     *   captures, replays, hits, misses, evictions, capture_failures: the captured-
     *                  graph cache (a hit replays; a miss captures)
     *   submissions    work handed to device queues: each eager copy and launch, each replay */
    uint64_t graphs_built, splits;
    uint64_t copies_h2d, copies_d2h, copies_d2d, bytes_h2d, bytes_d2h, bytes_d2d;
    uint64_t launches, captures, replays, hits, misses, evictions, capture_failures, submissions;
} tern_perf_data;
/* Fills *out (all zero for a NULL ctx); out NULL: nothing. */
void tern_perf_context(const tern_context * ctx, tern_perf_data * out);
/* Zero the decode counters (the load time stays the model's). */
void tern_perf_context_reset(tern_context * ctx);

/* ------------------------------------------------------------------------ */
/* State: save and restore                                                  */
/* ------------------------------------------------------------------------ */

/* A context's KV cells (only the used ones, keys rotated to their positions)
 * and last logits, or one sequence's cells, as bytes (llama_state_* names).
 * The format is versioned and carries two checksums, the K/V types and
 * widths, layer count, vocabulary size and the model's fingerprint: a 64-bit
 * FNV-1a of the architecture name, every hyper-parameter, and every tensor's
 * name, type and shape and data in the file's layout - all of a tensor of at
 * most 64 KiB, else 64 runs of 256 bytes spread evenly over it (the first at
 * its start, the last at its end). Two files that differ anywhere in that
 * (a base model and its fine-tune) give different fingerprints; two that
 * differ only between the sampled runs of large tensors do not. A state from
 * another model, cache type or version, a truncated or corrupted one, or one
 * whose cells, logits or K/V values (block scales) are out of range
 * (TERN_ERR_FORMAT) or not finite (TERN_ERR_NUMERIC), is refused and leaves
 * the context exactly as it was. Every state a context saves loads back,
 * whatever sequence operations came before (positions out of cell order or
 * equal after seq_div, context shifts, a sliding window's freed cells).
 * Loading checks everything before it changes anything, and takes no memory.
 * A whole context replaces the cache; a sequence state replaces the cells of
 * the destination sequence. A restored context continues with the same
 * logits, bit for bit. docs/ARCHITECTURE.md has the byte layout.
 * get_data/set_data return the bytes written/read, 0 on error. */
size_t tern_state_get_size(tern_context * ctx);
size_t tern_state_get_data(tern_context * ctx, uint8_t * dst, size_t size);
size_t tern_state_set_data(tern_context * ctx, const uint8_t * src, size_t size);
/* Files also carry the prompt tokens (llama_state_save_file): load returns
 * them in tokens[capacity] with their count in *n_tokens. A save replaces a
 * file whole and only a Tern state: a path that holds anything else (a model,
 * a text, an empty file, a damaged state) is refused with TERN_ERR_INVALID_ARG
 * and a directory, FIFO or device at once with TERN_ERR_IO, nothing written.
 * The state goes to a temporary file beside the path, is flushed and renamed
 * over it (a symbolic link is followed): a save that fails half way (disk
 * full, file-size limit) returns TERN_ERR_IO and leaves the previous file as
 * it was, with no temporary file behind. */
tern_status tern_state_save_file(tern_context * ctx, const char * path, const tern_token * tokens, size_t n_tokens);
tern_status tern_state_load_file(tern_context * ctx, const char * path, tern_token * tokens, size_t capacity,
                                 size_t * n_tokens);
size_t tern_state_seq_get_size(tern_context * ctx, tern_seq_id seq);
size_t tern_state_seq_get_data(tern_context * ctx, uint8_t * dst, size_t size, tern_seq_id seq);
size_t tern_state_seq_set_data(tern_context * ctx, const uint8_t * src, size_t size, tern_seq_id dest_seq);
tern_status tern_state_seq_save_file(tern_context * ctx, const char * path, tern_seq_id seq,
                                     const tern_token * tokens, size_t n_tokens);
tern_status tern_state_seq_load_file(tern_context * ctx, const char * path, tern_seq_id dest_seq,
                                     tern_token * tokens, size_t capacity, size_t * n_tokens);

/* ------------------------------------------------------------------------ */
/* Devices (accelerators: builds with TERN_DEVICES, tern_hal.h)             */
/* ------------------------------------------------------------------------ */

/* Where a model or a context runs: entry 0 is the CPU (the host), then each
 * device the model was placed on, in the order of tern_model_params.devices.
 * Bytes each holds: the weights (models and contexts), the KV cache and the
 * compute memory (activations, and the staging buffer on the device that
 * holds it) of a context. layers: repeating layers it runs; output: 1 when it
 * runs the output layer. Writes up to n entries and returns how many there are. */
typedef struct tern_device_usage {
    char     name[32];     /* "CPU", "sim0", "vulkan0" */
    uint64_t weights;
    uint64_t kv;
    uint64_t compute;
    int32_t  layers;
    int32_t  output;
} tern_device_usage;
int32_t tern_model_devices(const tern_model * model, tern_device_usage * out, int32_t n);
int32_t tern_context_devices(const tern_context * ctx, tern_device_usage * out, int32_t n);
/* Where layer il runs: 0 the CPU, i >= 1 entry i of tern_model_devices; il ==
 * n_layer: the output layer; -1 for another il. */
int32_t tern_model_layer_device(const tern_model * model, int32_t il);
/* How the context runs each graph kind (forward, and the small-batch forward
 * plan where there is one, K-shift, defrag): its splits (device, nodes, first
 * and last node) and its copies, one line each, into buf like snprintf (the
 * full length is returned; buf may be NULL with size 0). Builds the worst-case
 * graphs: not while another call uses the context (TERN_ERR_BUSY then: -1). */
int32_t tern_context_describe(tern_context * ctx, char * buf, size_t size);

/* Bytes of a context's arena per category, for tuning memory. */
typedef struct tern_mem_audit {
    size_t total;       /* arena size */
    size_t used;        /* high-water mark */
    size_t kv_cache;
    size_t activations; /* planned intermediates */
    size_t work;        /* per-node scratch (quantized activations, attention rows) */
    size_t logits;
    size_t graph;       /* tensor and node tables */
    size_t other;
} tern_mem_audit;
void tern_context_mem_audit(const tern_context * ctx, tern_mem_audit * out);

/* ------------------------------------------------------------------------ */
/* Sampling                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct tern_sampler tern_sampler;

typedef struct tern_sampler_params {
    float    temp;              /* <= 0: greedy (argmax) */
    int32_t  top_k;             /* <= 0: off */
    float    top_p;             /* >= 1: off */
    float    min_p;             /* <= 0: off */
    float    repeat_penalty;    /* 1: off */
    float    frequency_penalty; /* 0: off */
    float    presence_penalty;  /* 0: off */
    int32_t  penalty_last_n;    /* tokens the penalties look back over */
    uint32_t seed;
} tern_sampler_params;

tern_sampler_params tern_sampler_default_params(void);
/* Bytes a sampler needs for a vocabulary of n_vocab tokens. */
size_t tern_sampler_mem_size(const tern_model * model, const tern_sampler_params * params);
/* Create a sampler chain in caller memory (mem, mem_size >= tern_sampler_mem_size()),
 * or, with mem NULL, in memory obtained once. */
tern_status tern_sampler_create(const tern_model * model, const tern_sampler_params * params,
                                void * mem, size_t mem_size, tern_sampler ** out_sampler);
void tern_sampler_free(tern_sampler * sampler);
/* Sample a token from the logits of the i-th token of the last batch. */
tern_token tern_sampler_sample(tern_sampler * sampler, tern_context * ctx, int32_t i);
/* Record a token for the penalties (tern_sampler_sample accepts its own choice;
 * a grammar stage is not advanced by this: see tern_sampler_grammar_accept). */
void tern_sampler_accept(tern_sampler * sampler, tern_token token);
/* Forget the penalty window, re-seed, and put a grammar stage back at its start. */
void tern_sampler_reset(tern_sampler * sampler);

/* Grammars (GBNF, llama.cpp's syntax: grammars/README.md there) constrain the
 * chain: tern_sampler_sample then only returns tokens whose text extends the
 * text sampled so far toward a complete sentence of the grammar, and an
 * end-of-generation token only where that text is complete. As llama.cpp's
 * common sampler: the chain's choice is kept when the grammar takes it, else
 * every token the grammar refuses gets -inf and the chain runs again.
 *
 *   root ::= "yes" | "no"
 *   root ::= "{" ws "\"name\":" ws string ws "}"   (see tern_json_schema_to_grammar)
 *
 * Memory: tern_sampler_grammar_mem_size() bytes, the caller's or obtained once
 * (released by tern_sampler_free): the compiled rules, the model's token texts
 * sorted by bytes (about 20 bytes per token: 3.3 MB for a 152k vocabulary),
 * and a fixed pool of parse-stack state (65536 stack nodes of 16 bytes, 16384
 * stacks, tokens of at most 1024 bytes). A sampling step that would need more
 * stack state fails with TERN_ERR_NO_MEMORY (nothing grows); no heap is used
 * after setup. A grammar with left recursion, an undefined rule, no start
 * symbol or no finite sentence is refused here, with the line and column of a
 * syntax error in tern_last_error(). */
size_t tern_sampler_grammar_mem_size(const tern_model * model, const char * grammar, const char * root);
/* Add the grammar stage to the sampler's chain (replacing one it had). root:
 * the start symbol, NULL for "root". mem NULL: memory obtained once. */
tern_status tern_sampler_init_grammar(tern_sampler * sampler, const tern_model * model, const char * grammar,
                                      const char * root, void * mem, size_t mem_size);
/* Advance the grammar by a token chosen elsewhere (TERN_ERR_INVALID_ARG when it
 * does not fit: the grammar is then unchanged). */
tern_status tern_sampler_grammar_accept(tern_sampler * sampler, tern_token token);
/* Put the grammar back at its start for a new text, with a budget: the tokens
 * the sampler will still be asked for (-1: unknown). With a budget, a token is
 * taken only when the text can still be completed in the tokens left after it
 * (counting a byte per token), so generation cut at that count ends in a
 * complete sentence. tern_sampler_reset also restarts the grammar, with the
 * budget set last. */
tern_status tern_sampler_grammar_reset(tern_sampler * sampler, int32_t budget);
/* -1: no grammar; 0: the text is incomplete; 1: complete (end of generation
 * may come); 2: complete and nothing can follow it. */
int tern_sampler_grammar_state(const tern_sampler * sampler);

/* A JSON schema as a GBNF grammar (the one llama.cpp's json_schema_to_grammar
 * writes). Keywords that cannot be enforced are an error naming the keyword
 * (tern_last_error), unless lenient (ignored then, as llama.cpp does). Writes
 * like tern_chat_apply_template: at most `length` bytes, NUL-terminated when
 * shorter, returns the full length, or a negative tern_status. Uses one block
 * of memory obtained for the call and released. */
int32_t tern_json_schema_to_grammar(const char * schema, int lenient, char * buf, int32_t length);

/* ------------------------------------------------------------------------ */
/* Logging                                                                  */
/* ------------------------------------------------------------------------ */

typedef enum tern_log_level {
    TERN_LOG_NONE = 0, TERN_LOG_ERROR = 1, TERN_LOG_WARN = 2, TERN_LOG_INFO = 3, TERN_LOG_DEBUG = 4
} tern_log_level;
typedef void (*tern_log_callback)(tern_log_level level, const char * text, void * user_data);
/* Replace the log sink (default: stderr for levels up to TERN_LOG_LEVEL). NULL restores it. */
void tern_log_set(tern_log_callback callback, void * user_data);

/* ------------------------------------------------------------------------ */
/* Chat templates                                                           */
/* ------------------------------------------------------------------------ */

/* One message of a conversation: role ("system", "user", "assistant", ...) and
 * content, both NUL-terminated UTF-8. */
typedef struct tern_chat_message {
    const char * role;
    const char * content;
} tern_chat_message;

/* Format a conversation into a prompt with a built-in chat template, like
 * llama_chat_apply_template (same names, same bytes out; no Jinja is run:
 * tern_chat_apply below runs a model's own template).
 * tmpl: a built-in name ("chatml", "llama3", ...; see tern_chat_builtin_templates)
 * or the Jinja source of a model's template (tern_model_chat_template), from
 * which the built-in is recognised by marker strings as llama.cpp does; NULL
 * means "chatml" (as in llama.cpp). add_assistant: end with the opening of the
 * assistant's turn (templates that have one). Writes at most `length` bytes to
 * buf (buf may be NULL with length 0 to measure), NUL-terminated when the text
 * is shorter than `length`, and returns the text's full length (excluding the
 * NUL): call again with a larger buffer when it is >= length. Returns a negative
 * tern_status: -TERN_ERR_UNSUPPORTED for a template it does not know,
 * -TERN_ERR_INVALID_ARG for a NULL role or content (nothing written then).
 * Allocates nothing. */
int32_t tern_chat_apply_template(const char * tmpl, const tern_chat_message * msgs, size_t n_msgs,
                                 int add_assistant, char * buf, int32_t length);

/* A conversation formatted by the model's own chat template, run by Tern's
 * Jinja engine as llama.cpp's --jinja path does (minja): the template's
 * capabilities are probed and what it lacks is rewritten (system messages
 * merged into the next user turn, tools and tool calls written as JSON), a
 * leading BOS and a trailing EOS are removed (the tokenizer adds them).
 * Template variables: messages, add_generation_prompt, bos_token, eos_token,
 * tools (when given), strftime_now(), date_string ("28 Nov 2026") and
 * datetime ("Nov 28 2026") (today, from `now`; as llama.cpp's chat path) and
 * those of extra_json (which win over all of these).
 *
 * Which template: params->tmpl, else the model's tokenizer.chat_template,
 * else "chatml". A built-in name always picks the built-in (as
 * tern_chat_apply_template); Jinja source runs in the engine (use_jinja), or
 * is matched to a built-in by its markers when use_jinja is 0. Source the
 * engine cannot parse runs as llama.cpp's ChatML Jinja template instead, with a
 * warning naming the line and column (llama.cpp's --jinja does the same); a
 * template that fails while running (raise_exception, an unknown filter it
 * reaches, a bound) is an error.
 *
 * Bounds (a template inside a model file is hostile input): the engine works
 * in one block of mem_size bytes (params->mem, else obtained for the call and
 * released), the text is at most max_output bytes, the call at most
 * max_steps steps over all its renders (the capability probes too; work on
 * large values counts by size: a step per 64 bytes copied or searched),
 * nesting at most 64 levels; past any of them the call fails
 * with an error naming the template's line and column. Writes and returns like
 * tern_chat_apply_template. Without TERN_JINJA (freestanding builds) Jinja
 * source is matched to a built-in only. */
typedef struct tern_chat_params {
    const char * tmpl;                  /* NULL: the model's template, else chatml */
    int          use_jinja;             /* 1 (default): Jinja source runs in the engine */
    int          add_generation_prompt; /* default 1 */
    const char * messages_json;         /* NULL, or the conversation as a JSON array (role, content,
                                           tool_calls, name, tool_call_id, ...): msgs is then ignored */
    const char * tools_json;            /* NULL, or a JSON array of tools (OpenAI style) */
    const char * extra_json;            /* NULL, or a JSON object of more template variables */
    const char * bos_token;             /* NULL: the model's BOS text ("" without a model) */
    const char * eos_token;             /* NULL: the model's EOS text */
    int64_t      now;                   /* seconds since 1970 (UTC) for the dates; -1 (default): the
                                           environment's SOURCE_DATE_EPOCH if set, else the clock */
    void *       mem;                   /* the engine's memory, or NULL */
    size_t       mem_size;              /* 0: 32 MiB */
    size_t       max_output;            /* 0: 8 MiB */
    uint64_t     max_steps;             /* 0: 20 million */
} tern_chat_params;

tern_chat_params tern_chat_default_params(void);
/* model may be NULL (then tmpl is needed for anything but chatml). */
int32_t tern_chat_apply(const tern_model * model, const tern_chat_params * params, const tern_chat_message * msgs,
                        size_t n_msgs, char * buf, int32_t length);

/* Names of the built-in templates in byte order: writes the first n of them to
 * names (static strings) and returns how many there are. */
int32_t tern_chat_builtin_templates(const char ** names, size_t n);

/* The model's own template (tokenizer.chat_template, Jinja source), copied into
 * buf like tern_model_meta_val_str (cut to fit, NUL-terminated when buf_size > 0;
 * the file's string is not NUL-terminated, so it is not handed out in place).
 * Returns its full length, or -1 when the model has none. */
int32_t tern_model_chat_template(const tern_model * model, char * buf, size_t buf_size);

#ifdef __cplusplus
}
#endif

#endif /* TERN_H */
