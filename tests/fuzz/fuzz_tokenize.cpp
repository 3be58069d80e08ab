// libFuzzer target over the tokenizers: the first input byte picks one of the
// shared vocabularies (every ggml-vocab-*.gguf in $TERN_SHARED_DIR/vocab,
// loaded once, vocab only), the second selects add_special / parse_special,
// the rest is the text. Tokenize (again with the size asked for when the
// buffer was short) and render every token back: each ends in a count or a
// status, never a crash.
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tern.h"

// Plain storage (no destructor): the vocabularies stay reachable until exit.
static tern_model * g_vocabs[64];
static size_t g_n_vocabs = 0;

static void quiet(tern_log_level, const char *, void *) {}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    tern_log_set(quiet, NULL);
    const char * shared = getenv("TERN_SHARED_DIR");
    const std::string dir = std::string(shared ? shared : "../shared") + "/vocab";
    std::vector<std::string> files;
    if (DIR * d = opendir(dir.c_str())) {
        while (dirent * e = readdir(d)) {
            std::string n = e->d_name;
            if (n.size() > 5 && n.compare(n.size() - 5, 5, ".gguf") == 0) files.push_back(dir + "/" + n);
        }
        closedir(d);
    }
    std::sort(files.begin(), files.end());
    for (const std::string & f : files) {
        tern_model_params p = tern_model_default_params();
        p.vocab_only = 1;
        tern_model * m = NULL;
        if (tern_model_load_file(f.c_str(), &p, &m) == TERN_OK && tern_vocab_type_of(m) != TERN_VOCAB_WPM &&
            g_n_vocabs < sizeof(g_vocabs) / sizeof(g_vocabs[0])) {
            g_vocabs[g_n_vocabs++] = m;
        } else if (m) {
            tern_model_free(m);
        }
    }
    if (g_n_vocabs == 0) {
        fprintf(stderr, "fuzz_tokenize: no vocabulary in %s (set TERN_SHARED_DIR)\n", dir.c_str());
        abort();
    }
    fprintf(stderr, "fuzz_tokenize: %zu vocabularies from %s\n", g_n_vocabs, dir.c_str());
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    if (size < 2) return 0;
    tern_model * m = g_vocabs[data[0] % g_n_vocabs];
    const int add_special = data[1] & 1, parse_special = (data[1] >> 1) & 1;
    const char * text = (const char *) data + 2;
    const int32_t len = (int32_t) (size - 2);
    std::vector<tern_token> toks((size_t) len + 8);
    int32_t n = tern_tokenize(m, text, len, toks.data(), (int32_t) toks.size(), add_special, parse_special);
    if (n < 0 && n != INT32_MIN) {  // too small: the count asked for must then fit
        toks.resize((size_t) -n);
        n = tern_tokenize(m, text, len, toks.data(), (int32_t) toks.size(), add_special, parse_special);
        if (n < 0) abort();
    }
    char piece[256];
    for (int32_t i = 0; i < n; i++) {
        if (toks[i] < 0 || toks[i] >= tern_model_n_vocab(m)) abort();
        tern_token_to_piece(m, toks[i], piece, sizeof(piece), data[1] & 4);
    }
    return 0;
}
