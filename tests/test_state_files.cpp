// State files are never lost and never written over something else
// (issue 23, items 1 and 2):
// 1. A save to a path that holds anything but a Tern state (a model, a text,
//    an empty file, a corrupted state) is refused and the file keeps every
//    byte; a save over a state replaces it; a symbolic link is followed. The
//    same for `tern run --prompt-cache` (the model it runs, a text, a FIFO).
// 2. Saves are atomic: a save that fails half way (the file-size limit,
//    RLIMIT_FSIZE, here) leaves the previous state intact and no temporary
//    file behind; a FIFO, a directory or a device is refused at once (a
//    watchdog turns a hang into a failure).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "check.h"
#include "tern.h"

namespace {

std::string g_dir, g_model;

std::string slurp(const std::string & path) {
    std::string out;
    FILE * f = fopen(path.c_str(), "rb");
    if (!f) return "<missing>";
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
    fclose(f);
    return out;
}

void put(const std::string & path, const std::string & bytes) {
    FILE * f = fopen(path.c_str(), "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
    fclose(f);
}

// Names in g_dir (to find temporary files left behind).
std::vector<std::string> listing() {
    std::vector<std::string> names;
    DIR * d = opendir(g_dir.c_str());
    while (d) {
        struct dirent * e = readdir(d);
        if (!e) break;
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) names.push_back(e->d_name);
    }
    if (d) closedir(d);
    return names;
}

bool no_temp_files() {
    for (const std::string & n : listing()) {
        if (n.find(".tern-tmp-") != std::string::npos) {
            fprintf(stderr, "temporary file left behind: %s\n", n.c_str());
            return false;
        }
    }
    return true;
}

tern_context * make_ctx(tern_model * m) {
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = 64;
    cp.n_batch = 64;
    cp.n_seq_max = 2;
    cp.n_threads = 1;
    tern_context * ctx = NULL;
    CHECK_MSG(tern_context_create(m, &cp, &ctx) == TERN_OK, "%s", tern_last_error());
    return ctx;
}

void feed(tern_context * ctx, int n) {
    std::vector<tern_token> t((size_t) n);
    for (int i = 0; i < n; i++) t[(size_t) i] = 1 + (i * 37) % 400;
    tern_kv_cache_clear(ctx);
    CHECK_MSG(tern_decode(ctx, tern_batch_get_one(t.data(), n)) == TERN_OK, "%s", tern_last_error());
}

// Saving over `path` is refused and leaves its bytes (and no temporary file).
void expect_kept(tern_context * ctx, const std::string & path, const char * what) {
    const std::string before = slurp(path);
    const tern_token tok[2] = {1, 2};
    const tern_status st = tern_state_save_file(ctx, path.c_str(), tok, 2);
    CHECK_MSG(st != TERN_OK && slurp(path) == before, "%s: save status %d, file %s", what, (int) st,
              slurp(path) == before ? "kept" : "CHANGED");
    CHECK_MSG(strstr(tern_last_error(), path.c_str()) != NULL, "%s: the error names the path: %s", what, tern_last_error());
    const tern_status st2 = tern_state_seq_save_file(ctx, path.c_str(), 0, NULL, 0);
    CHECK_MSG(st2 != TERN_OK && slurp(path) == before, "%s: sequence save status %d", what, (int) st2);
    CHECK(no_temp_files());
}

void test_refuse_non_states(tern_context * ctx) {
    feed(ctx, 8);
    // The model itself (a copy: the shared one is read-only), a text, an empty file.
    const std::string model = g_dir + "/model.gguf", text = g_dir + "/notes.txt", empty = g_dir + "/empty";
    put(model, slurp(g_model));
    put(text, "a prompt the user wrote\n");
    put(empty, "");
    expect_kept(ctx, model, "a model file");
    CHECK_MSG(strstr(tern_last_error(), "not a Tern state") != NULL, "%s", tern_last_error());
    expect_kept(ctx, text, "a text file");
    expect_kept(ctx, empty, "an empty file");
    // A state with one byte cut or one header byte changed is not a state any more.
    const std::string good = g_dir + "/good.state";
    CHECK_MSG(tern_state_save_file(ctx, good.c_str(), NULL, 0) == TERN_OK, "%s", tern_last_error());
    const std::string state = slurp(good);
    CHECK(state.size() > 64 && state.compare(0, 4, "TRNS") == 0);
    put(g_dir + "/cut.state", state.substr(0, state.size() - 1));
    expect_kept(ctx, g_dir + "/cut.state", "a cut state");
    std::string flipped = state;
    flipped[20] ^= 1;
    put(g_dir + "/flipped.state", flipped);
    expect_kept(ctx, g_dir + "/flipped.state", "a state with a header byte changed");
    // Over a state: replaced, and it loads.
    feed(ctx, 20);
    CHECK_MSG(tern_state_save_file(ctx, good.c_str(), NULL, 0) == TERN_OK, "%s", tern_last_error());
    CHECK(slurp(good) != state);
    CHECK_MSG(tern_state_load_file(ctx, good.c_str(), NULL, 0, NULL) == TERN_OK, "%s", tern_last_error());
    CHECK(tern_kv_cache_used_cells(ctx) == 20);
    // A replaced file keeps its permissions.
    CHECK(chmod(good.c_str(), 0640) == 0);
    CHECK(tern_state_seq_save_file(ctx, good.c_str(), 0, NULL, 0) == TERN_OK);
    struct stat st;
    CHECK(stat(good.c_str(), &st) == 0 && (st.st_mode & 0777) == 0640);
    // Symbolic links: followed to a state (the link stays a link), refused to a model.
    const std::string link = g_dir + "/link.state", model_link = g_dir + "/model-link";
    CHECK(symlink("good.state", link.c_str()) == 0 && symlink("model.gguf", model_link.c_str()) == 0);
    feed(ctx, 5);
    CHECK_MSG(tern_state_save_file(ctx, link.c_str(), NULL, 0) == TERN_OK, "%s", tern_last_error());
    CHECK(lstat(link.c_str(), &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(tern_state_load_file(ctx, good.c_str(), NULL, 0, NULL) == TERN_OK && tern_kv_cache_used_cells(ctx) == 5);
    expect_kept(ctx, model_link, "a link to a model");
    CHECK(slurp(model) == slurp(g_model));
    // A new path: created.
    const std::string fresh = g_dir + "/fresh.state";
    CHECK(tern_state_save_file(ctx, fresh.c_str(), NULL, 0) == TERN_OK && slurp(fresh).compare(0, 4, "TRNS") == 0);
    CHECK(no_temp_files());
}

// Non-regular targets: refused at once (the watchdog of main catches a hang).
void test_refuse_special(tern_context * ctx) {
    const std::string fifo = g_dir + "/fifo";
    CHECK(mkfifo(fifo.c_str(), 0644) == 0);
    alarm(30);
    CHECK(tern_state_save_file(ctx, fifo.c_str(), NULL, 0) == TERN_ERR_IO);
    CHECK_MSG(strstr(tern_last_error(), "regular file") != NULL, "%s", tern_last_error());
    CHECK(tern_state_seq_save_file(ctx, fifo.c_str(), 0, NULL, 0) == TERN_ERR_IO);
    CHECK(tern_state_load_file(ctx, fifo.c_str(), NULL, 0, NULL) != TERN_OK);
    alarm(0);
    struct stat st;
    CHECK(stat(fifo.c_str(), &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK(tern_state_save_file(ctx, g_dir.c_str(), NULL, 0) == TERN_ERR_IO);  // a directory
    CHECK(tern_state_save_file(ctx, "/dev/null", NULL, 0) == TERN_ERR_IO);   // a device
    CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    CHECK(no_temp_files());
}

// A save that fails half way leaves the previous state.
void test_atomic(tern_context * ctx) {
    const std::string path = g_dir + "/atomic.state";
    feed(ctx, 2);
    CHECK(tern_state_save_file(ctx, path.c_str(), NULL, 0) == TERN_OK);
    const std::string before = slurp(path);
    feed(ctx, 40);
    const size_t bigger = tern_state_get_size(ctx);
    CHECK(bigger > before.size() + 4096);
    struct rlimit old_limit, limit;
    CHECK(getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
    limit = old_limit;
    limit.rlim_cur = (rlim_t) (before.size() + 1024);  // the new state cannot be written whole
    signal(SIGXFSZ, SIG_IGN);                          // write() then fails with EFBIG
    CHECK(setrlimit(RLIMIT_FSIZE, &limit) == 0);
    const tern_status st = tern_state_save_file(ctx, path.c_str(), NULL, 0);
    const tern_status st_seq = tern_state_seq_save_file(ctx, path.c_str(), 0, NULL, 0);
    CHECK(setrlimit(RLIMIT_FSIZE, &old_limit) == 0);
    signal(SIGXFSZ, SIG_DFL);
    CHECK_MSG(st == TERN_ERR_IO && st_seq == TERN_ERR_IO, "saves past the file-size limit: %d %d", (int) st, (int) st_seq);
    CHECK_MSG(slurp(path) == before, "the previous state was damaged by a failed save");
    CHECK(no_temp_files());
    // And it still loads.
    CHECK_MSG(tern_state_load_file(ctx, path.c_str(), NULL, 0, NULL) == TERN_OK && tern_kv_cache_used_cells(ctx) == 2,
              "%s", tern_last_error());
}

// `tern run --prompt-cache`: never over the model, a text or a FIFO.
int run(const std::string & cmd) {
    const int st = system(cmd.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void test_cli(const std::string & bin) {
    const std::string model = g_dir + "/cli-model.gguf", text = g_dir + "/cli-notes.txt", cache = g_dir + "/cli.cache";
    put(model, slurp(g_model));
    put(text, "Once upon a time\n");
    const std::string base = "timeout 60 " + bin + "/tern run -m " + model + " -p 'Once upon a time' -n 4 --temp 0 --no-perf";
    for (const std::string & target : {model, text}) {
        const std::string before = slurp(target);
        const int rc = run(base + " --prompt-cache " + target + " >/dev/null 2>" + g_dir + "/cli.err");
        const std::string err = slurp(g_dir + "/cli.err");
        CHECK_MSG(rc == 1 && slurp(target) == before, "--prompt-cache %s: exit %d, file %s\n%s", target.c_str(), rc,
                  slurp(target) == before ? "kept" : "CHANGED", err.c_str());
        CHECK_MSG(err.find("refus") != std::string::npos && err.find('\n') == err.size() - 1, "one error line: %s", err.c_str());
    }
    const std::string fifo = g_dir + "/cli.fifo";
    CHECK(mkfifo(fifo.c_str(), 0644) == 0);
    CHECK_MSG(run(base + " --prompt-cache " + fifo + " >/dev/null 2>/dev/null") == 1, "--prompt-cache FIFO");
    CHECK(run(base + " --prompt-cache " + g_dir + " >/dev/null 2>/dev/null") == 1);
    // A cache that works: created, then reused.
    CHECK(run(base + " --prompt-cache " + cache + " >/dev/null 2>/dev/null") == 0);
    CHECK(slurp(cache).compare(0, 4, "TRNS") == 0);
    CHECK(run(base + " --prompt-cache " + cache + " >/dev/null 2>/dev/null") == 0);
    CHECK(slurp(model) == slurp(g_model));
    CHECK(no_temp_files());
}

}  // namespace

int main(void) {
    g_model = std::string(tern_test_shared_dir()) + "/models/stories260K.gguf";
    char dir[] = "/tmp/tern_state_files_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    g_dir = dir;
    tern_model_params mp = tern_model_default_params();
    tern_model * m = NULL;
    CHECK_MSG(tern_model_load_file(g_model.c_str(), &mp, &m) == TERN_OK, "%s", tern_last_error());
    tern_context * ctx = m ? make_ctx(m) : NULL;
    if (ctx) {
        test_refuse_non_states(ctx);
        test_refuse_special(ctx);
        test_atomic(ctx);
    }
    tern_context_free(ctx);
    tern_model_free(m);
    const char * bin = getenv("TERN_BIN_DIR");
    if (bin && access((std::string(bin) + "/tern").c_str(), X_OK) == 0) test_cli(bin);
    else CHECK_MSG(false, "TERN_BIN_DIR has no tern executable");
    for (const std::string & n : listing()) unlink((g_dir + "/" + n).c_str());
    rmdir(dir);
    return tern_test_summary();
}
