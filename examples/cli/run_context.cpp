#include "run_context.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int32_t run_context_shift(tern_context * ctx, int32_t n_keep, int32_t * n_past) {
    const int32_t n_left = *n_past - n_keep;
    const int32_t n_discard = n_left / 2;
    if (n_discard <= 0) return 0;
    tern_kv_cache_seq_rm(ctx, 0, n_keep, n_keep + n_discard);
    tern_kv_cache_seq_add(ctx, 0, n_keep + n_discard, *n_past, -n_discard);
    *n_past -= n_discard;
    return n_discard;
}

// One loop of llama.cpp's main example (grp_attn_n / grp_attn_w), expressed
// over an abstract "shift" so the unit test can replay it on plain positions.
template <class Add, class Div>
static void self_extend_loop(run_self_extend * ga, int32_t * n_past, Add add, Div div) {
    if (ga->n <= 1) return;
    while (*n_past >= ga->i + ga->w) {
        const int32_t ib = (ga->n * ga->i) / ga->w;
        const int32_t bd = (ga->w / ga->n) * (ga->n - 1);
        const int32_t dd = (ga->w / ga->n) - ib * bd - ga->w;
        add(ga->i, *n_past, ib * bd);
        div(ga->i + ib * bd, ga->i + ib * bd + ga->w, ga->n);
        add(ga->i + ib * bd + ga->w, *n_past + ib * bd, dd);
        *n_past -= bd;
        ga->i += ga->w / ga->n;
    }
}

void run_self_extend_step(tern_context * ctx, run_self_extend * ga, int32_t * n_past) {
    self_extend_loop(ga, n_past,
                     [ctx](int32_t p0, int32_t p1, int32_t d) { tern_kv_cache_seq_add(ctx, 0, p0, p1, d); },
                     [ctx](int32_t p0, int32_t p1, int32_t d) { tern_kv_cache_seq_div(ctx, 0, p0, p1, d); });
}

void run_self_extend_positions(std::vector<int32_t> & pos, run_self_extend * ga, int32_t * n_past) {
    self_extend_loop(ga, n_past,
                     [&pos](int32_t p0, int32_t p1, int32_t d) {
                         for (int32_t & p : pos) if (p >= p0 && p < p1) p += d;
                     },
                     [&pos](int32_t p0, int32_t p1, int32_t d) {
                         for (int32_t & p : pos) if (p >= p0 && p < p1) p /= d;
                     });
}

int32_t run_prompt_cache_load(tern_context * ctx, const char * path, const std::vector<tern_token> & prompt,
                              bool * logits_ready) {
    *logits_ready = false;
    struct stat st;
    if (stat(path, &st) != 0) return 0;  // first run: nothing saved yet
    std::vector<tern_token> saved((size_t) tern_n_ctx(ctx));
    size_t n_saved = 0;
    if (tern_state_load_file(ctx, path, saved.data(), saved.size(), &n_saved) != TERN_OK) {
        fprintf(stderr, "tern run: prompt cache '%s' not used: %s\n", path, tern_last_error());
        tern_kv_cache_clear(ctx);
        return 0;
    }
    size_t same = 0;
    while (same < n_saved && same < prompt.size() && saved[same] == prompt[same]) same++;
    if (same == prompt.size() && n_saved == prompt.size()) {
        *logits_ready = true;  // the state was saved right after this very prompt
        return (int32_t) same;
    }
    // Keep the common prefix; at least the last prompt token is evaluated again
    // (its logits are needed).
    if (same == prompt.size()) same--;
    tern_kv_cache_seq_rm(ctx, -1, (tern_pos) same, -1);
    return (int32_t) same;
}

bool run_prompt_cache_save(tern_context * ctx, const char * path, const std::vector<tern_token> & prompt) {
    if (tern_state_save_file(ctx, path, prompt.data(), prompt.size()) != TERN_OK) {
        fprintf(stderr, "tern run: cannot save the prompt cache: %s\n", tern_last_error());
        return false;
    }
    return true;
}

bool run_prompt_cache_check(const char * path, const char * model_path) {
    struct stat st, ms;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) return true;  // first run: created after the prompt
        fprintf(stderr, "tern run: --prompt-cache '%s': %s\n", path, strerror(errno));
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        fprintf(stderr, "tern run: --prompt-cache '%s': %s, not a file: refused\n", path,
                S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket");
        return false;
    }
    if (model_path && stat(model_path, &ms) == 0 && ms.st_dev == st.st_dev && ms.st_ino == st.st_ino) {
        fprintf(stderr, "tern run: --prompt-cache '%s' is the model file: refused (it would be overwritten)\n", path);
        return false;
    }
    char magic[4] = {0, 0, 0, 0};
    const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    const bool is_state = fd >= 0 && read(fd, magic, 4) == 4 && memcmp(magic, "TRNS", 4) == 0;
    if (fd >= 0) close(fd);
    if (!is_state) {
        fprintf(stderr, "tern run: --prompt-cache '%s' exists and is not a Tern state file: refusing to overwrite it "
                "(remove it or choose another path)\n", path);
        return false;
    }
    return true;
}
