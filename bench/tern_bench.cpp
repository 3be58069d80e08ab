// tern-bench: prompt processing (pp) and text generation (tg) speed, with
// llama-bench's flags, tests, timing and output formats, so the two tools run
// side by side on the same files (bench/compare.sh).
//
//   tern-bench -m a.gguf,b.gguf -p 128,512 -n 32 -pg 128,32 -d 0,1024 -t 2 -r 3 -o md
//
// Every combination of model x -b x -t x -d runs a pp test per -p value, a tg
// test per -n value and a pp+tg test per -pg pair (0 skips a test). A test:
// one context sized for it (n_ctx = depth + pp + tg), a warmup run (the whole
// prompt, one generated token), then -r repetitions, each on an emptied KV
// cache: depth tokens decoded first (not timed), then the pp tokens in batches
// of -b and the tg tokens one at a time (timed). t/s = tokens / time.
//
// For tg tests it also gives the effective bandwidth, weight bytes x tokens/s:
// decode reads every weight once per token, so this is the figure to hold
// against the machine's memory bandwidth.
//
// With devices (-ngl or --device) each test also gives the host CPU time of
// the decoding thread per timed token (CLOCK_THREAD_CPUTIME_ID; pool workers
// are not counted): what replaying a captured device graph saves against
// launching its ops one by one (--graph-cache 0).
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "tern.h"
#include "args_apply.h"
#include "device_flags.h"
#include "options.h"

namespace {

enum output_format { OUT_MD, OUT_CSV, OUT_JSON };

const int k_default_prompt = 512;
const int k_default_gen = 128;
const int k_default_batch = 2048;
const int k_default_ubatch = 512;  // llama-bench's
const int k_default_reps = 5;

int default_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > TERN_MAX_THREADS) n = TERN_MAX_THREADS;
    return (int) n;
}

struct options {
    std::vector<std::string> models;
    std::vector<int> n_prompt, n_gen, n_depth, n_threads, n_batch, n_ubatch;
    std::vector<std::string> type_k, type_v;                     // -ctk / -ctv lists
    std::vector<int> n_gpu_layers, no_kv_offload, graph_cache;   // lists, as llama-bench's -ngl / -nkvo
    std::vector<std::pair<int, int>> n_pg;
    int reps = k_default_reps;
    output_format format = OUT_MD;
    cli_devices dev;   // --device, -ot, -ts, --no-op-offload (one setting for every test)
    bool devices = false;  // a device column set is shown (-ngl or --device given)
};

const cli_command bench_command = {
    CLI_BENCH, "tern-bench",
    "usage: tern-bench -m MODEL[,MODEL...] [options]\n"
    "\n"
    "Measures prompt processing (pp) and text generation (tg) like llama-bench, with\n"
    "llama-bench's flags: a list flag takes comma-separated values and may be\n"
    "repeated; every combination is run. Options take their value as `--opt value`\n"
    "or `--opt=value`.\n"
    "\n"
    "options:\n",
    "\n"
    "Columns: model (file name), size (weight bytes in MiB/GiB), params, kernels (the\n"
    "kernel set in use), threads, test (pp512, tg128, pp512+tg128, \"pp512 @ d1024\"),\n"
    "t/s (mean ± standard deviation over the repetitions) and, for tg tests, GB/s:\n"
    "the effective bandwidth, weight bytes x t/s / 1e9. n_batch, n_ubatch, type_k and\n"
    "type_v columns appear when a value other than the default is asked for. csv and\n"
    "json carry the same fields and the per-repetition samples (samples_ns, samples_ts).\n"
    "With -ngl or --device: an ngl column and, for tg tests, what each generated token\n"
    "took on the devices (captures, cache hits and device submissions per token); for\n"
    "every test cpu ms/t, the decoding thread's host CPU time per timed token.\n"
    "Exit status: 0 done, 1 a model or test failed, 2 bad command line.\n",
};

std::vector<int> ints(const cli_args & a, cli_id id, int def) {
    std::vector<int> v;
    for (long long x : a.nums(id)) v.push_back((int) x);
    if (v.empty()) v.push_back(def);
    return v;
}

// Returns 0 to run, 1 for --help or --list-devices (done), 2 for a bad command line.
int parse_args(int argc, char ** argv, options * o) {
    cli_args a;
    const cli_result pr = cli_parse(bench_command, argc, argv, &a);
    if (pr == CLI_ERROR) return 2;
    if (pr == CLI_EXIT_OK) return 1;
    cli_devices_from_args(a, &o->dev);
    if (o->dev.list) {
        cli_list_devices(stdout);
        return 1;
    }
    o->models = a.items[B_MODEL];
    if (o->models.empty()) {
        cli_error(bench_command, "no model: give -m FILE");
        return 2;
    }
    o->n_prompt = ints(a, B_N_PROMPT, k_default_prompt);
    o->n_gen = ints(a, B_N_GEN, k_default_gen);
    o->n_depth = ints(a, B_DEPTH, 0);
    o->n_threads = ints(a, B_THREADS, default_threads());
    o->n_batch = ints(a, B_BATCH, k_default_batch);
    o->n_ubatch = ints(a, B_UBATCH, k_default_ubatch);
    o->n_gpu_layers = ints(a, B_NGL, 0);
    o->graph_cache = ints(a, B_GRAPH_CACHE, -1);
    for (const std::string & v : a.items[B_NKVO]) o->no_kv_offload.push_back(v == "1");
    if (o->no_kv_offload.empty()) o->no_kv_offload.push_back(0);
    o->type_k = a.items[B_CACHE_TYPE_K];
    if (o->type_k.empty()) o->type_k.push_back("f16");
    o->type_v = a.items[B_CACHE_TYPE_V];
    if (o->type_v.empty()) o->type_v.push_back("f16");
    for (const std::string & pg : a.items[B_PG]) {
        const size_t comma = pg.find(',');
        o->n_pg.push_back(std::make_pair(atoi(pg.c_str()), atoi(pg.c_str() + comma + 1)));
    }
    o->reps = (int) a.num(B_REPS, k_default_reps);
    const std::string f = a.str(B_OUTPUT, "md");
    o->format = f == "csv" ? OUT_CSV : f == "json" ? OUT_JSON : OUT_MD;
    o->devices = a.has(B_NGL) || a.has(O_DEVICE);
    return 0;
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

struct test_case {
    int n_batch, n_threads, n_depth, n_prompt, n_gen;
    int nkvo, graph_cache;   // -nkvo, --graph-cache (-1: the default)
    int n_ubatch;            // -ub: the context's n_batch (tokens per graph), at most n_batch
    std::string type_k, type_v;
};

// llama-bench's order: per model, per batch size, per ubatch size, per KV
// types, per thread count, per depth: the pp tests, the tg tests, the pp+tg tests.
std::vector<test_case> make_tests(const options & o) {
    std::vector<test_case> tests;
    for (int nb : o.n_batch)
      for (int nub : o.n_ubatch)
        for (const std::string & tk : o.type_k)
          for (const std::string & tv : o.type_v)
            for (int nt : o.n_threads)
              for (int kv : o.no_kv_offload)
                for (int gc : o.graph_cache)
                  for (int nd : o.n_depth) {
                      const test_case base = { nb, nt, nd, 0, 0, kv, gc, nub < nb ? nub : nb, tk, tv };
                      for (int np : o.n_prompt)
                          if (np > 0) { test_case t = base; t.n_prompt = np; tests.push_back(t); }
                      for (int ng : o.n_gen)
                          if (ng > 0) { test_case t = base; t.n_gen = ng; tests.push_back(t); }
                      for (const auto & pg : o.n_pg)
                          if (pg.first > 0 || pg.second > 0) {
                              test_case t = base;
                              t.n_prompt = pg.first;
                              t.n_gen = pg.second;
                              tests.push_back(t);
                          }
                  }
    return tests;
}

std::string test_name(const test_case & t) {
    char buf[96];
    if (t.n_gen == 0) snprintf(buf, sizeof(buf), "pp%d", t.n_prompt);
    else if (t.n_prompt == 0) snprintf(buf, sizeof(buf), "tg%d", t.n_gen);
    else snprintf(buf, sizeof(buf), "pp%d+tg%d", t.n_prompt, t.n_gen);
    std::string s = buf;
    if (t.n_depth > 0) {
        snprintf(buf, sizeof(buf), " @ d%d", t.n_depth);
        s += buf;
    }
    return s;
}

uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

// CPU time of the calling thread (the one that decodes).
uint64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

// Token ids: the model's BOS first when it adds one, then pseudo-random ids
// over the vocabulary (llama-bench's choice; content does not change the cost).
struct token_source {
    uint64_t state = 0x9E3779B97F4A7C15ull;
    int32_t n_vocab = 1;
    tern_token bos = -1;
    tern_token next(void) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return (tern_token) (state % (uint64_t) n_vocab);
    }
};

// Decodes n tokens in batches of at most n_batch (a prompt, or the depth fill).
tern_status run_prompt(tern_context * ctx, token_source * ts, int n, int n_batch, std::vector<tern_token> * buf) {
    int done = 0;
    while (done < n) {
        const int k = n - done < n_batch ? n - done : n_batch;
        for (int i = 0; i < k; i++) (*buf)[i] = ts->next();
        if (done == 0 && ts->bos >= 0) (*buf)[0] = ts->bos;
        tern_status st = tern_decode(ctx, tern_batch_get_one(buf->data(), k));
        if (st != TERN_OK) return st;
        done += k;
    }
    return TERN_OK;
}

// Decodes n tokens one at a time.
tern_status run_gen(tern_context * ctx, token_source * ts, int n) {
    tern_token t = ts->bos >= 0 ? ts->bos : ts->next();
    for (int i = 0; i < n; i++) {
        tern_status st = tern_decode(ctx, tern_batch_get_one(&t, 1));
        if (st != TERN_OK) return st;
        t = ts->next();
    }
    return TERN_OK;
}

struct model_info {
    std::string path, name, arch;
    uint64_t size = 0, n_params = 0;
    int n_gpu_layers = 0;
    bool no_op_offload = false;
};

struct result {
    const model_info * model;
    test_case test;
    std::string name, time;
    std::vector<uint64_t> samples_ns;
    std::vector<double> samples_ts;
    double avg_ns = 0, sd_ns = 0, avg_ts = 0, sd_ts = 0;
    bool has_gbps = false;
    double gbps = 0;
    // Devices, per generated token of the timed runs (tg tests).
    double captures_per_tok = 0, hits_per_tok = 0, submissions_per_tok = 0;
    // Host CPU time of the decoding thread per timed token (every test).
    double cpu_ms_per_tok = 0;
};

void mean_sd(const std::vector<double> & v, double * mean, double * sd) {
    double m = 0, s = 0;
    for (double x : v) m += x;
    m /= (double) v.size();
    for (double x : v) s += (x - m) * (x - m);
    *mean = m;
    *sd = v.size() > 1 ? sqrt(s / (double) (v.size() - 1)) : 0;
}

void finish(result * r) {
    const int n_tokens = r->test.n_prompt + r->test.n_gen;
    std::vector<double> ns;
    for (uint64_t t : r->samples_ns) {
        ns.push_back((double) t);
        r->samples_ts.push_back(1e9 * n_tokens / (double) (t > 0 ? t : 1));
    }
    mean_sd(ns, &r->avg_ns, &r->sd_ns);
    mean_sd(r->samples_ts, &r->avg_ts, &r->sd_ts);
    r->has_gbps = r->test.n_prompt == 0;
    r->gbps = (double) r->model->size * r->avg_ts / 1e9;
}

// Runs one test on a context of its own. Returns 0, or 1 after printing why not.
int run_test(const tern_model * m, const model_info & mi, const test_case & tc, int reps, result * r) {
    r->model = &mi;
    r->test = tc;
    r->name = test_name(tc);
    const char * what = r->name.c_str();

    // The context holds the test and no more; -b (tokens per decode call) and
    // -ub (tokens per graph: the context's n_batch) are clamped to it, as llama.cpp does.
    const uint32_t n_ctx = (uint32_t) ((int64_t) tc.n_depth + tc.n_prompt + tc.n_gen);
    const uint32_t n_call = (uint32_t) tc.n_batch < n_ctx ? (uint32_t) tc.n_batch : n_ctx;
    tern_context_params cp = tern_context_default_params();
    cp.n_ctx = n_ctx;
    cp.n_batch = (uint32_t) tc.n_ubatch < n_call ? (uint32_t) tc.n_ubatch : n_call;
    cp.type_k = cli_kv_type(tc.type_k.c_str());
    cp.type_v = cli_kv_type(tc.type_v.c_str());
    cp.n_threads = tc.n_threads;
    cp.offload_kqv = !tc.nkvo;
    cp.op_offload = !mi.no_op_offload;
    cp.graph_cache = tc.graph_cache;
    tern_context * ctx = NULL;
    tern_status st = tern_context_create(m, &cp, &ctx);
    if (st != TERN_OK) {
        fprintf(stderr, "tern-bench: %s: %s: context of %u tokens, batch %u, ubatch %u, %d threads: %s (%s)\n",
                mi.path.c_str(), what, cp.n_ctx, n_call, cp.n_batch, cp.n_threads, tern_status_str(st), tern_last_error());
        return 1;
    }

    token_source ts;
    ts.n_vocab = tern_model_n_vocab(m) > 0 ? tern_model_n_vocab(m) : 1;
    ts.bos = tern_add_bos(m) ? tern_token_bos(m) : -1;
    std::vector<tern_token> buf((size_t) n_call);
    const int nb = (int) n_call;

    // Warmup: the whole prompt, one generated token.
    tern_kv_cache_clear(ctx);
    if (tc.n_prompt > 0) st = run_prompt(ctx, &ts, tc.n_prompt, nb, &buf);
    if (st == TERN_OK && tc.n_gen > 0) st = run_gen(ctx, &ts, 1);

    uint64_t captures = 0, hits = 0, submissions = 0, cpu_ns = 0;
    for (int rep = 0; rep < reps && st == TERN_OK; rep++) {
        tern_kv_cache_clear(ctx);
        if (tc.n_depth > 0) st = run_prompt(ctx, &ts, tc.n_depth, nb, &buf);
        if (st != TERN_OK) break;
        tern_perf_context_reset(ctx);
        const uint64_t c0 = thread_cpu_ns();
        const uint64_t t0 = now_ns();
        if (tc.n_prompt > 0) st = run_prompt(ctx, &ts, tc.n_prompt, nb, &buf);
        if (st == TERN_OK && tc.n_gen > 0) st = run_gen(ctx, &ts, tc.n_gen);
        const uint64_t t1 = now_ns();
        cpu_ns += thread_cpu_ns() - c0;
        if (st == TERN_OK) r->samples_ns.push_back(t1 - t0);
        tern_perf_data pd;
        tern_perf_context(ctx, &pd);
        captures += pd.captures;
        hits += pd.hits;
        submissions += pd.submissions;
    }
    if (tc.n_prompt == 0 && tc.n_gen > 0 && reps > 0) {
        const double n = (double) reps * tc.n_gen;
        r->captures_per_tok = (double) captures / n;
        r->hits_per_tok = (double) hits / n;
        r->submissions_per_tok = (double) submissions / n;
    }
    if (reps > 0 && tc.n_prompt + tc.n_gen > 0)
        r->cpu_ms_per_tok = (double) cpu_ns / 1e6 / ((double) reps * (tc.n_prompt + tc.n_gen));
    tern_context_free(ctx);
    if (st != TERN_OK) {
        fprintf(stderr, "tern-bench: %s: %s: decode failed: %s (%s)\n", mi.path.c_str(), what, tern_status_str(st),
                tern_last_error());
        return 1;
    }
    time_t now = time(NULL);
    char tbuf[64];
    strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    r->time = tbuf;
    finish(r);
    return 0;
}

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------

std::string fmt(const char * f, double v) {
    char buf[64];
    snprintf(buf, sizeof(buf), f, v);
    return buf;
}

std::string size_str(uint64_t bytes) {
    if (bytes < 1024ull * 1024 * 1024) return fmt("%.2f MiB", (double) bytes / 1024.0 / 1024.0);
    return fmt("%.2f GiB", (double) bytes / 1024.0 / 1024.0 / 1024.0);
}

std::string params_str(uint64_t n) {
    if (n < 1000ull * 1000 * 1000) return fmt("%.2f M", (double) n / 1e6);
    return fmt("%.2f B", (double) n / 1e9);
}

std::string csv_quote(const std::string & s) {
    std::string q = "\"";
    for (char c : s) {
        if (c == '"') q += '"';
        q += c;
    }
    return q + "\"";
}

std::string json_str(const std::string & s) {
    std::string q = "\"";
    for (unsigned char c : s) {
        if (c == '"') q += "\\\"";
        else if (c == '\\') q += "\\\\";
        else if (c < 0x20) {
            char buf[8];
            snprintf(buf, sizeof(buf), "\\u%04x", c);
            q += buf;
        } else {
            q += (char) c;
        }
    }
    return q + "\"";
}

// The fields of csv and json, in order: name and value (value already a JSON
// literal when json, a plain string otherwise).
struct field { const char * name; std::string value; bool is_string; };

std::vector<field> fields_of(const result & r, bool json) {
    const std::string sep = json ? ", " : ";";
    std::string sns, sts;
    for (size_t i = 0; i < r.samples_ns.size(); i++) {
        if (i) { sns += sep; sts += sep; }
        sns += std::to_string(r.samples_ns[i]);
        sts += fmt("%.6f", r.samples_ts[i]);
    }
    if (json) { sns = "[" + sns + "]"; sts = "[" + sts + "]"; }
    return {
        { "model", r.model->name, true },
        { "model_filename", r.model->path, true },
        { "model_arch", r.model->arch, true },
        { "model_size", std::to_string(r.model->size), false },
        { "model_n_params", std::to_string(r.model->n_params), false },
        { "kernels", tern_kernels_name(), true },
        { "n_threads", std::to_string(r.test.n_threads), false },
        { "n_batch", std::to_string(r.test.n_batch), false },
        { "n_ubatch", std::to_string(r.test.n_ubatch), false },
        { "type_k", r.test.type_k, true },
        { "type_v", r.test.type_v, true },
        { "n_prompt", std::to_string(r.test.n_prompt), false },
        { "n_gen", std::to_string(r.test.n_gen), false },
        { "n_depth", std::to_string(r.test.n_depth), false },
        { "n_gpu_layers", std::to_string(r.model->n_gpu_layers), false },
        { "no_kv_offload", std::to_string(r.test.nkvo), false },
        { "graph_cache", std::to_string(r.test.graph_cache), false },
        { "captures_per_token", fmt("%.4f", r.captures_per_tok), false },
        { "hits_per_token", fmt("%.4f", r.hits_per_tok), false },
        { "submissions_per_token", fmt("%.4f", r.submissions_per_tok), false },
        { "host_cpu_ms_per_token", fmt("%.6f", r.cpu_ms_per_tok), false },
        { "test", r.name, true },
        { "test_time", r.time, true },
        { "avg_ns", fmt("%.0f", r.avg_ns), false },
        { "stddev_ns", fmt("%.0f", r.sd_ns), false },
        { "avg_ts", fmt("%.6f", r.avg_ts), false },
        { "stddev_ts", fmt("%.6f", r.sd_ts), false },
        { "gbps", r.has_gbps ? fmt("%.6f", r.gbps) : std::string(json ? "null" : ""), false },
        { "samples_ns", sns, false },
        { "samples_ts", sts, false },
    };
}

struct printer {
    output_format format;
    bool show_batch;   // md: an n_batch column when -b was given (as llama-bench)
    bool show_ubatch;  // md: n_ubatch when -ub was given
    bool show_types;   // md: type_k and type_v when -ctk or -ctv was given
    bool show_devices; // md: ngl and per-token device columns
    int n_printed = 0;

    void header(void) {
        if (format == OUT_CSV) {
            result dummy;
            model_info mi;
            dummy.model = &mi;
            dummy.test = test_case{ 0, 0, 0, 0, 0, 0, -1, 0, "f16", "f16" };
            std::vector<field> f = fields_of(dummy, false);
            for (size_t i = 0; i < f.size(); i++) printf("%s%s", i ? "," : "", f[i].name);
            printf("\n");
        } else if (format == OUT_JSON) {
            printf("[\n");
        } else {
            printf("| %-30s | %10s | %10s | %-7s | %7s |", "model", "size", "params", "kernels", "threads");
            if (show_batch) printf(" %7s |", "n_batch");
            if (show_ubatch) printf(" %8s |", "n_ubatch");
            if (show_types) printf(" %6s | %6s |", "type_k", "type_v");
            if (show_devices) printf(" %3s | %4s | %5s |", "ngl", "nkvo", "cache");
            printf(" %13s | %20s | %8s |", "test", "t/s", "GB/s");
            if (show_devices) printf(" %8s | %8s | %8s | %8s |", "capt/tok", "hits/tok", "subm/tok", "cpu ms/t");
            printf("\n| %s | %s: | %s: | %s | %s: |", std::string(30, '-').c_str(), std::string(9, '-').c_str(),
                   std::string(9, '-').c_str(), std::string(7, '-').c_str(), std::string(6, '-').c_str());
            if (show_batch) printf(" %s: |", std::string(6, '-').c_str());
            if (show_ubatch) printf(" %s: |", std::string(7, '-').c_str());
            if (show_types) printf(" %s | %s |", std::string(6, '-').c_str(), std::string(6, '-').c_str());
            if (show_devices) printf(" %s: | %s: | %s: |", std::string(2, '-').c_str(), std::string(3, '-').c_str(), std::string(4, '-').c_str());
            printf(" %s: | %s: | %s: |", std::string(12, '-').c_str(), std::string(19, '-').c_str(), std::string(7, '-').c_str());
            if (show_devices) printf(" %s: | %s: | %s: | %s: |", std::string(7, '-').c_str(), std::string(7, '-').c_str(),
                                     std::string(7, '-').c_str(), std::string(7, '-').c_str());
            printf("\n");
        }
        fflush(stdout);
    }

    void row(const result & r) {
        if (format == OUT_CSV) {
            std::vector<field> f = fields_of(r, false);
            for (size_t i = 0; i < f.size(); i++) printf("%s%s", i ? "," : "", csv_quote(f[i].value).c_str());
            printf("\n");
        } else if (format == OUT_JSON) {
            std::vector<field> f = fields_of(r, true);
            printf("%s  {\n", n_printed ? ",\n" : "");
            for (size_t i = 0; i < f.size(); i++)
                printf("    \"%s\": %s%s\n", f[i].name, f[i].is_string ? json_str(f[i].value).c_str() : f[i].value.c_str(),
                       i + 1 < f.size() ? "," : "");
            printf("  }");
        } else {
            printf("| %-30s | %10s | %10s | %-7s | %7d |", r.model->name.c_str(), size_str(r.model->size).c_str(),
                   params_str(r.model->n_params).c_str(), tern_kernels_name(), r.test.n_threads);
            if (show_batch) printf(" %7d |", r.test.n_batch);
            if (show_ubatch) printf(" %8d |", r.test.n_ubatch);
            if (show_types) printf(" %6s | %6s |", r.test.type_k.c_str(), r.test.type_v.c_str());
            if (show_devices) printf(" %3d | %4d | %5s |", r.model->n_gpu_layers, r.test.nkvo,
                                     r.test.graph_cache < 0 ? "-" : std::to_string(r.test.graph_cache).c_str());
            const std::string ts = fmt("%.2f", r.avg_ts) + " ± " + fmt("%.2f", r.sd_ts);
            // "±" is two bytes: one more column of width keeps the table aligned.
            printf(" %13s | %21s | %8s |", r.name.c_str(), ts.c_str(),
                   r.has_gbps ? fmt("%.2f", r.gbps).c_str() : "");
            if (show_devices) {
                const bool tg = r.test.n_prompt == 0;
                printf(" %8s | %8s | %8s |", tg ? fmt("%.3f", r.captures_per_tok).c_str() : "",
                       tg ? fmt("%.3f", r.hits_per_tok).c_str() : "", tg ? fmt("%.3f", r.submissions_per_tok).c_str() : "");
                printf(" %8.3f |", r.cpu_ms_per_tok);
            }
            printf("\n");
        }
        n_printed++;
        fflush(stdout);
    }

    void footer(void) {
        if (format == OUT_JSON) printf("%s]\n", n_printed ? "\n" : "");
        else if (format == OUT_MD)
            printf("\nbuild: tern %s, kernel sets compiled: %s, TERN_SIMD %s\n", TERN_VERSION,
                   tern_kernels_compiled_names(), TERN_SIMD_TARGET);
        fflush(stdout);
    }
};

}  // namespace

int main(int argc, char ** argv) {
    options o;
    const int pr = parse_args(argc, argv, &o);
    if (pr == 1) return 0;
    if (pr == 2) return 2;
    const std::vector<test_case> tests = make_tests(o);
    if (tests.empty()) {
        fprintf(stderr, "tern-bench: nothing to run: every -p and -n is 0 and no -pg has tokens\n");
        return 2;
    }
    for (const test_case & t : tests) {
        if ((int64_t) t.n_depth + t.n_prompt + t.n_gen > INT32_MAX) {
            fprintf(stderr, "tern-bench: -d/-p/-n/-pg: test %s needs a context of more than %d tokens\n",
                    test_name(t).c_str(), INT32_MAX);
            return 2;
        }
    }

    printer p;
    p.format = o.format;
    p.show_batch = !(o.n_batch.size() == 1 && o.n_batch[0] == k_default_batch);
    p.show_ubatch = !(o.n_ubatch.size() == 1 && o.n_ubatch[0] == k_default_ubatch);
    p.show_types = !(o.type_k.size() == 1 && o.type_k[0] == "f16" && o.type_v.size() == 1 && o.type_v[0] == "f16");
    p.show_devices = o.devices;
    p.header();
    int rc = 0;
    for (const std::string & path : o.models) for (int ngl : o.n_gpu_layers) {
        tern_model_params mp = tern_model_default_params();
        cli_devices dev = o.dev;
        dev.ngl = ngl;
        if (!o.devices) dev.ngl = -2;  // not asked: no note
        cli_devices_apply("tern-bench", dev, &mp, NULL);
        tern_model * m = NULL;
        tern_status st = tern_model_load_file(path.c_str(), &mp, &m);
        if (st != TERN_OK) {
            fprintf(stderr, "tern-bench: %s: %s (%s)\n", path.c_str(), tern_status_str(st), tern_last_error());
            rc = 1;
            break;
        }
        cli_devices_loaded("tern-bench", dev, m);
        model_info mi;
        mi.n_gpu_layers = ngl;
        mi.no_op_offload = o.dev.no_op_offload;
        mi.path = path;
        const size_t slash = path.find_last_of('/');
        mi.name = slash == std::string::npos ? path : path.substr(slash + 1);
        mi.arch = tern_model_arch(m) ? tern_model_arch(m) : "";
        mi.size = tern_model_size(m);
        for (int32_t i = 0; i < tern_model_n_tensors(m); i++) {
            tern_tensor_info ti;
            if (tern_model_tensor_info(m, i, &ti) != TERN_OK) continue;
            uint64_t n = 1;
            for (int d = 0; d < ti.n_dims && d < 4; d++) n *= (uint64_t) ti.ne[d];
            mi.n_params += n;
        }
        for (const test_case & tc : tests) {
            result r;
            if (run_test(m, mi, tc, o.reps, &r) != 0) {
                rc = 1;
                break;
            }
            p.row(r);
        }
        tern_model_free(m);
        if (rc) break;
    }
    p.footer();
    return rc;
}
