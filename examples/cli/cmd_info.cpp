// tern info: everything a GGUF model file says about itself.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include "cli.h"

static void info_usage(FILE * f) {
    fprintf(f,
        "usage: tern info -m FILE [options]\n"
        "\n"
        "Prints the architecture, hyper-parameters, tokenizer (model and size), every\n"
        "tensor (name, type, shape, bytes, offset), total bytes, load time and the load\n"
        "path used (mmap, read or blob). A bad file prints one error line on stderr and\n"
        "exits with status 1.\n"
        "\n"
        "options:\n"
        "  -m, --model FILE   GGUF file (the first part of a split model loads all parts)\n"
        "  --no-mmap          read() the file into one buffer instead of mapping it\n"
        "  --blob             read the file into memory and load it as a caller's blob\n"
        "  --vocab-only       metadata and vocabulary only (any architecture, no weights)\n"
        "  --check-tensors    validate that weights and block scales are finite\n"
        "  --meta             also print every metadata key and value\n"
        "  -h, --help         this text\n");
}

static tern_model * load_blob(const char * path, const tern_model_params & p, std::string & bytes) {
    if (!cli_read_file(path, bytes, (size_t) PTRDIFF_MAX)) return NULL;
    tern_model * m = NULL;
    tern_status st = tern_model_load_blob(bytes.data(), bytes.size(), &p, &m);
    if (st != TERN_OK) {
        fprintf(stderr, "tern: %s: %s\n", tern_status_str(st), tern_last_error());
        return NULL;
    }
    return m;
}

int cmd_info(int argc, char ** argv) {
    const char * path = NULL;
    bool blob = false, meta = false;
    tern_model_params p = tern_model_default_params();
    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) { if (!cli_value(argc, argv, i, path)) return 1; }
        else if (!strcmp(a, "--no-mmap")) p.use_mmap = 0;
        else if (!strcmp(a, "--blob")) blob = true;
        else if (!strcmp(a, "--vocab-only")) p.vocab_only = 1;
        else if (!strcmp(a, "--check-tensors")) p.check_tensors = 1;
        else if (!strcmp(a, "--meta")) meta = true;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { info_usage(stdout); return 0; }
        else { fprintf(stderr, "tern info: unknown option '%s'\n", a); info_usage(stderr); return 1; }
    }
    if (!path) { fprintf(stderr, "tern info: -m FILE is required\n"); return 1; }

    std::string bytes;
    tern_model * m = blob ? load_blob(path, p, bytes) : cli_load_model(path, p);
    if (!m) return 1;

    printf("file:            %s\n", path);
    printf("load:            %s, %.2f ms\n", tern_model_load_path(m), tern_model_load_ms(m));
    printf("kernels:         %s\n", tern_kernels_name());
    printf("architecture:    %s\n", tern_model_arch(m));
    printf("n_vocab:         %d\n", tern_model_n_vocab(m));
    printf("n_ctx_train:     %d\n", tern_model_n_ctx_train(m));
    printf("n_embd:          %d\n", tern_model_n_embd(m));
    printf("n_layer:         %d\n", tern_model_n_layer(m));
    printf("n_head:          %d\n", tern_model_n_head(m));
    printf("n_head_kv:       %d\n", tern_model_n_head_kv(m));
    printf("n_embd_head:     %d\n", tern_model_n_embd_head(m));
    printf("n_ff:            %d\n", tern_model_n_ff(m));
    printf("rope_freq_base:  %g\n", tern_model_rope_freq_base(m));
    printf("norm_rms_eps:    %g\n", tern_model_norm_rms_eps(m));
    const char * pre = tern_vocab_pre_name(m);
    printf("tokenizer:       %s%s%s, %d tokens, bos %d, eos %d\n", tern_vocab_model_name(m), *pre ? " / " : "",
           pre, tern_model_n_vocab(m), tern_token_bos(m), tern_token_eos(m));
    printf("model tables:    %zu bytes (one arena)\n", tern_model_arena_size(m));

    if (meta) {
        printf("\nmetadata (%d keys):\n", tern_model_meta_count(m));
        for (int32_t i = 0; i < tern_model_meta_count(m); i++) {
            char key[256], val[256];
            tern_model_meta_key_by_index(m, i, key, sizeof(key));
            tern_model_meta_val_str_by_index(m, i, val, sizeof(val));
            printf("  %-44s %s\n", key, val);
        }
    }

    const int32_t n = tern_model_n_tensors(m);
    printf("\ntensors (%d):\n", n);
    printf("  %-36s %-7s %-24s %12s %12s\n", "name", "type", "shape", "bytes", "offset");
    uint64_t total = 0;
    for (int32_t i = 0; i < n; i++) {
        tern_tensor_info t;
        if (tern_model_tensor_info(m, i, &t) != TERN_OK) continue;
        char shape[64];
        int len = snprintf(shape, sizeof(shape), "[");
        for (int d = 0; d < t.n_dims; d++) {
            len += snprintf(shape + len, sizeof(shape) - len, "%s%lld", d ? ", " : "", (long long) t.ne[d]);
        }
        snprintf(shape + len, sizeof(shape) - len, "]");
        const char * tn = tern_type_name(t.type);
        printf("  %-36s %-7s %-24s %12llu %12llu\n", t.name, tn ? tn : "?", shape,
               (unsigned long long) t.bytes, (unsigned long long) t.offset);
        total += t.bytes;
    }
    printf("total:           %llu bytes (%.2f MiB) in %d tensors\n", (unsigned long long) total,
           total / (1024.0 * 1024.0), n);
    tern_model_free(m);
    return 0;
}
