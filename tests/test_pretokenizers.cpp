// Every pre-tokenizer llama.cpp c392e509 knows, against llama.cpp itself
// (tests/data/pretok, written by tests/tools/gen_pretok_vectors.cpp): for each
// recipe the shared base vocabulary is rewritten with its tokenizer.ggml.pre
// (Tern's writer, at run time), loaded, and every test text must give
// llama.cpp's pieces (byte lengths of the pre-tokenizer's split) and token ids;
// "Hello world" with add_special gives its BOS behaviour. Names llama.cpp does
// not know are refused at load, naming the value.
#include <unistd.h>

#include <string>
#include <vector>

#include "check.h"
#include "test_vocab_util.h"
#include "tools/pretok_data.h"
#include "vocab/pretokenize.h"
#include "vocab/unicode.h"

// Tern's internals (namespace tern) are what this file tests.
using namespace tern;

// Byte lengths (of the re-encoded codepoints, as llama.cpp counts them) of Tern's pieces.
static std::vector<int> piece_lengths(const tern_vocab * v, const std::string & text) {
    std::vector<uint32_t> cpts;
    for (size_t pos = 0; pos < text.size();) cpts.push_back(unicode_decode((const uint8_t *) text.data(), text.size(), &pos));
    std::vector<uint8_t> cut(cpts.size() + 1);
    pretokenize(v->pre, cpts.data(), (int32_t) cpts.size(), cut.data());
    std::vector<int> lens;
    for (size_t i = 0; i < cpts.size(); i++) {
        char buf[4];
        if (cut[i]) lens.push_back(0);
        lens.back() += unicode_encode(cpts[i], buf);
    }
    return lens;
}

// Pieces of a text, shown for a failure.
static std::string show_split(const std::string & text, const std::vector<int> & lens) {
    std::string s, enc;
    for (size_t pos = 0; pos < text.size();) {
        char buf[4];
        enc.append(buf, (size_t) unicode_encode(unicode_decode((const uint8_t *) text.data(), text.size(), &pos), buf));
    }
    size_t at = 0;
    for (int n : lens) {
        s += "[" + (at <= enc.size() ? enc.substr(at, (size_t) n) : std::string()) + "]";
        at += (size_t) n;
    }
    return s;
}

struct totals {
    int recipes = 0, texts = 0, split_ok = 0, ids_ok = 0, refused = 0;
};

static void check_recipe(const std::string & shared, const std::string & data, const pretok_recipes & recipes,
                         const pretok_recipe & r, const std::vector<std::string> & texts, const std::string & path,
                         totals * t) {
    std::string err;
    bool written = gguf_rewrite(shared + "/vocab/" + recipes.base, path, pretok_edit(recipes, r.pre), &err);
    CHECK_MSG(written, "%s: rewrite failed: %s", r.pre.c_str(), err.c_str());
    if (!written) return;
    test_vocab tv;
    tern_status st = test_vocab_load(&tv, path);
    if (r.vectors.empty()) {
        // Refused, naming the value.
        const char * msg = tern_last_error();
        CHECK_MSG(st == TERN_ERR_UNSUPPORTED && strstr(msg, ("'" + r.pre + "'").c_str()) &&
                  strstr(msg, "tokenizer.ggml.pre"), "%s: load gave %s: %s", r.pre.c_str(), tern_status_str(st), msg);
        // Nothing tokenizes with it.
        int32_t status = 0;
        test_tokenize(&tv.vocab, "Hello world", false, false, &status);
        CHECK_MSG(status == INT32_MIN, "%s: tokenized with an unknown pre-tokenizer", r.pre.c_str());
        t->refused++;
        return;
    }
    CHECK_MSG(st == TERN_OK, "%s: load failed: %s", r.pre.c_str(), tern_last_error());
    if (st != TERN_OK) return;
    CHECK_MSG(tv.vocab_used == tv.vocab_planned, "%s: vocab took %zu bytes, planned %zu", r.pre.c_str(),
              tv.vocab_used, tv.vocab_planned);
    std::string vec_text;
    pretok_vectors vec;
    bool have = pretok_read_text(data + "/" + r.vectors + ".vec", &vec_text) && pretok_parse_vectors(vec_text, &vec);
    CHECK_MSG(have && vec.ids.size() == texts.size(), "%s: %s.vec missing or for %zu texts (have %zu)", r.pre.c_str(),
              r.vectors.c_str(), vec.ids.size(), texts.size());
    if (!have || vec.ids.size() != texts.size()) return;
    int split_ok = 0, ids_ok = 0;
    for (size_t i = 0; i < texts.size(); i++) {
        std::vector<int> lens = piece_lengths(&tv.vocab, texts[i]);
        bool same_split = lens == vec.pieces[i];
        split_ok += same_split;
        CHECK_MSG(same_split, "%s #%zu split:\n  want %s\n  got  %s", r.pre.c_str(), i,
                  show_split(texts[i], vec.pieces[i]).c_str(), show_split(texts[i], lens).c_str());
        int32_t status = 0;
        bool peak_ok = false;
        std::vector<tern_token> got = test_tokenize(&tv.vocab, texts[i], false, false, &status, &peak_ok);
        CHECK_MSG(peak_ok, "%s #%zu: tokenizer left its scratch", r.pre.c_str(), i);
        std::vector<int> ids(got.begin(), got.end());
        bool same_ids = status >= 0 && ids == vec.ids[i];
        ids_ok += same_ids;
        CHECK_MSG(same_ids, "%s #%zu ids:\n  want%s\n  got %s", r.pre.c_str(), i, pretok_ints_text(vec.ids[i]).c_str(),
                  pretok_ints_text(ids).c_str());
    }
    std::vector<tern_token> bos = test_tokenize(&tv.vocab, PRETOK_BOS_TEXT, true, false);
    std::vector<int> bos_ids(bos.begin(), bos.end());
    CHECK_MSG(bos_ids == vec.bos_ids, "%s: '%s' with add_special:\n  want%s\n  got %s", r.pre.c_str(), PRETOK_BOS_TEXT,
              pretok_ints_text(vec.bos_ids).c_str(), pretok_ints_text(bos_ids).c_str());
    printf("%-18s %-15s splits %3d / %zu, ids %3d / %zu%s\n", r.pre.c_str(), r.vectors.c_str(), split_ok, texts.size(),
           ids_ok, texts.size(), bos_ids == vec.bos_ids ? "" : ", BOS differs");
    t->recipes++;
    t->texts += (int) texts.size();
    t->split_ok += split_ok;
    t->ids_ok += ids_ok;
}

// Every pre-tokenizer on random texts from a palette of the characters the
// scanners treat specially: they terminate, mark the first piece, and cut only
// inside the text (run under the sanitizers in CI).
static void check_random_texts(void) {
    static const uint32_t k_palette[] = {
        'a', 'Z', 'e', 'I', 'M', 'G', 'A', 'B', 'z', '0', '7', ' ', ' ', '\t', '\n', '\r', '\v', '\'', 's', 'l', '~',
        '<', '>', ':', '/', '.', ',', '!', '?', '(', ')', '|', '$', '`', '_', 0x00E9, 0x00C9, 0x0301, 0x00A0, 0x3000,
        0x4E2D, 0x3042, 0x30AB, 0xAC00, 0x0663, 0x00B2, 0x2026, 0x3002, 0xFF0C, 0x0964, 0x1F600, 0x0378, 0xFFFD, 0x2028};
    const size_t n_palette = sizeof(k_palette) / sizeof(k_palette[0]);
    uint32_t rng = 12345;
    int runs = 0, bad = 0;
    for (int pre = VOCAB_PRE_DEFAULT; pre <= VOCAB_PRE_CHAMELEON; pre++) {
        for (int iter = 0; iter < 400; iter++) {
            rng = rng * 1664525u + 1013904223u;
            const int32_t n = (int32_t) (rng >> 24) % 48;
            std::vector<uint32_t> cpts((size_t) n + 1);
            for (int32_t i = 0; i < n; i++) {
                rng = rng * 1664525u + 1013904223u;
                cpts[(size_t) i] = k_palette[(rng >> 16) % n_palette];
            }
            std::vector<uint8_t> cut((size_t) n + 1, 7), again((size_t) n + 1, 9);
            pretokenize((vocab_pre) pre, cpts.data(), n, cut.data());
            pretokenize((vocab_pre) pre, cpts.data(), n, again.data());
            bool ok = n == 0 || cut[0] == 1;
            for (int32_t i = 0; i < n; i++) ok = ok && cut[(size_t) i] <= 1 && cut[(size_t) i] == again[(size_t) i];
            ok = ok && cut[(size_t) n] == 7;  // nothing written past the text
            bad += !ok;
            runs++;
        }
    }
    CHECK_MSG(bad == 0, "%d of %d random splits went wrong", bad, runs);
}

int main() {
    check_random_texts();
    const std::string shared = tern_test_shared_dir();
    const char * src = getenv("TERN_SOURCE_DIR");
    const std::string data = std::string(src ? src : ".") + "/tests/data/pretok";
    std::string recipes_text;
    pretok_recipes recipes;
    CHECK_MSG(pretok_read_text(data + "/recipes.txt", &recipes_text) && pretok_parse_recipes(recipes_text, &recipes),
              "cannot read %s/recipes.txt", data.c_str());
    std::vector<std::string> texts = pretok_texts(shared, data);
    CHECK_MSG(texts.size() > 100, "%zu texts", texts.size());
    char tmp[] = "/tmp/tern_pretok_XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    const std::string path = std::string(tmp) + "/vocab.gguf";
    totals t;
    for (const pretok_recipe & r : recipes.list) check_recipe(shared, data, recipes, r, texts, path, &t);
    unlink(path.c_str());
    rmdir(tmp);
    printf("%d pre-tokenizer names x %zu texts: splits %d / %d, ids %d / %d; %d unknown names refused\n", t.recipes,
           texts.size(), t.split_ok, t.texts, t.ids_ok, t.texts, t.refused);
    CHECK(t.recipes >= 39 && t.refused >= 1);
    return tern_test_summary();
}
