// tern info: everything a GGUF model file says about itself.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include "cli.h"
#include "device_flags.h"
#include "options.h"

static const cli_command info_command = {
    CLI_INFO, "tern info",
    "usage: tern info -m FILE [options]\n"
    "\n"
    "Prints the architecture, hyper-parameters, tokenizer (model and size), every\n"
    "tensor (name, type, shape, bytes, offset), total bytes, load time and the load\n"
    "path used (mmap, read or blob), and whether Tern can run it. Any valid GGUF is\n"
    "described: a file Tern cannot run (an architecture not compiled in, a vocabulary\n"
    "without weights, a missing tensor, inconsistent hyper-parameters, a tokenizer or\n"
    "pre-tokenizer Tern does not know, no vocabulary at all) is read for its metadata\n"
    "and tokenizer, with one `runnable: no (...)` line saying why, and exit status 0.\n"
    "A broken file (not GGUF, truncated, malformed) prints one error line on stderr\n"
    "and exits with status 1. The weights are never read, rewritten (repacked) or\n"
    "prefetched: a mapped file's weight pages stay untouched (except with --no-mmap,\n"
    "--blob or --check-tensors, which read the file). With -ngl, --device, -ot or -ts:\n"
    "where the layers and weights would run on those devices (placement: layers per\n"
    "device, bytes of weights).\n"
    "\n"
    "options:\n",
    NULL,
};

// Load without printing; the status and error line are kept for the caller.
static tern_model * load_quiet(const char * path, const tern_model_params & p, bool blob, std::string & bytes,
                               tern_status * st, std::string * err) {
    tern_model * m = NULL;
    if (blob) {
        if (bytes.empty() && !cli_read_file(path, bytes, (size_t) PTRDIFF_MAX)) { *st = TERN_ERR_IO; *err = ""; return NULL; }
        *st = tern_model_load_blob(bytes.data(), bytes.size(), &p, &m);
    } else {
        *st = tern_model_load_file(path, &p, &m);
    }
    if (*st != TERN_OK) *err = std::string("tern: ") + tern_status_str(*st) + ": " + tern_last_error();
    return *st == TERN_OK ? m : NULL;
}

static void quiet_log(tern_log_level, const char *, void *) {}

int cmd_info(int argc, char ** argv) {
    cli_args args;
    const cli_result pr = cli_parse(info_command, argc, argv, &args);
    if (pr != CLI_GO) return pr == CLI_EXIT_OK ? 0 : 1;
    const char * path = args.str(O_MODEL);
    const bool blob = args.has(O_BLOB), meta = args.has(O_META);
    tern_model_params p = tern_model_default_params();
    if (args.has(O_NO_MMAP)) p.use_mmap = 0;
    if (args.has(O_VOCAB_ONLY)) p.vocab_only = 1;
    if (args.has(O_CHECK_TENSORS)) p.check_tensors = 1;
    cli_devices dev;
    cli_devices_from_args(args, &dev);
    if (!path) { fprintf(stderr, "tern info: -m FILE is required\n"); return 1; }
    cli_devices_apply("tern info", dev, &p, NULL);
    // Metadata only: the weights are bound (shapes checked) but never read,
    // rewritten or prefetched (--no-mmap and --blob still read the file, and
    // --check-tensors reads every weight, as asked).
    p.repack = 0;
    p.prefetch = 0;

    std::string bytes, err;
    tern_status st = TERN_OK;
    tern_model * m = load_quiet(path, p, blob, bytes, &st, &err);
    std::string cannot_run;
    if (!m && !p.vocab_only && (st == TERN_ERR_UNSUPPORTED || st == TERN_ERR_FORMAT || st == TERN_ERR_SHAPE ||
                                st == TERN_ERR_NOT_FOUND || st == TERN_ERR_NUMERIC)) {
        // A valid GGUF that cannot run: describe its metadata and vocabulary.
        tern_model_params vp = p;
        vp.vocab_only = 1;
        vp.check_tensors = 0;
        std::string err2;
        tern_status st2;
        tern_log_set(quiet_log, NULL);  // its warnings were printed by the first attempt
        m = load_quiet(path, vp, blob, bytes, &st2, &err2);
        tern_log_set(NULL, NULL);
        if (m) {
            cannot_run = err;
            const std::string prefix = std::string("tern: ") + tern_status_str(st) + ": ";
            if (cannot_run.rfind(prefix, 0) == 0) cannot_run = cannot_run.substr(prefix.size());
            const std::string file_prefix = std::string(blob ? "blob" : path) + ": ";  // what the loader names
            if (cannot_run.rfind(file_prefix, 0) == 0) cannot_run = cannot_run.substr(file_prefix.size());
            if (tern_model_n_tensors(m) == 0) {
                std::string why = tern_model_n_vocab(m) > 0 ? "no weights: a vocabulary-only file"
                                                            : "no weights and no vocabulary";
                if (cannot_run.rfind("tokenizer.", 0) == 0) why += "; " + cannot_run;  // and a vocabulary Tern cannot use
                cannot_run = why;
            }
        }
    }
    if (!m) {
        if (!err.empty()) fprintf(stderr, "%s\n", err.c_str());
        return 1;
    }

    printf("file:            %s\n", path);
    double file_ms = 0, repack_ms = 0, upload_ms = 0;
    tern_model_load_split(m, &file_ms, &repack_ms, &upload_ms);
    printf("load:            %s, %.2f ms (file %.2f, repack %.2f, device upload %.2f)\n", tern_model_load_path(m),
           tern_model_load_ms(m), file_ms, repack_ms, upload_ms);
    printf("kernels:         %s\n", tern_kernels_name());
    printf("architecture:    %s\n", *tern_model_arch(m) ? cli_printable(tern_model_arch(m)).c_str() : "(none)");
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
    if (tern_model_n_swa(m) > 0) printf("n_swa:           %d (sliding window)\n", tern_model_n_swa(m));
    const char * pre = tern_vocab_pre_name(m);
    printf("tokenizer:       %s%s%s, %d tokens, bos %d, eos %d\n", cli_printable(tern_vocab_model_name(m)).c_str(),
           *pre ? " / " : "", cli_printable(pre).c_str(), tern_model_n_vocab(m), tern_token_bos(m), tern_token_eos(m));
    printf("model tables:    %zu bytes (one arena)\n", tern_model_arena_size(m));
    if (!cannot_run.empty()) printf("runnable:        no (%s)\n", cli_printable(cannot_run).c_str());
    else if (p.vocab_only) printf("runnable:        not checked (--vocab-only)\n");
    else printf("runnable:        yes\n");
    if (m && !p.vocab_only) cli_print_layers(stdout, m);

    if (meta) {
        printf("\nmetadata (%d keys):\n", tern_model_meta_count(m));
        for (int32_t i = 0; i < tern_model_meta_count(m); i++) {
            // Keys and values come from the file: control bytes escaped (a
            // chat template's newlines show as \n, one line per key).
            char key[256], val[256];
            tern_model_meta_key_by_index(m, i, key, sizeof(key));
            tern_model_meta_val_str_by_index(m, i, val, sizeof(val));
            printf("  %-44s %s\n", cli_printable(key).c_str(), cli_printable(val).c_str());
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
        printf("  %-36s %-7s %-24s %12llu %12llu\n", cli_printable(t.name).c_str(), tn ? tn : "?", shape,
               (unsigned long long) t.bytes, (unsigned long long) t.offset);
        total += t.bytes;
    }
    printf("total:           %llu bytes (%.2f MiB) in %d tensors\n", (unsigned long long) total,
           total / (1024.0 * 1024.0), n);
    tern_model_free(m);
    return 0;
}
