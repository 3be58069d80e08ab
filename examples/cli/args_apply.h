// From a parsed command line (options.h) to the library's parameters. Each
// flag is turned into parameters in one place, so tern run and tern chat give
// it one meaning (penalties, -s -1, a negative --top-k, -r, -l, -ctk ...).
#pragma once
#include <stdint.h>
#include <string>
#include <vector>
#include "options.h"
#include "tern.h"

// --no-mmap, --mlock, --check-tensors, --no-repack.
void cli_apply_model(const cli_args & a, tern_model_params * mp);
// -c (0 or above the training context: the training context), -b and -ub
// (the smaller wins), -t (default: the online CPUs, at most 4), -ctk, -ctv.
void cli_apply_context(const cli_args & a, tern_context_params * cp, int32_t n_ctx_train);
// --temp, --top-k (negative: off), --top-p, --min-p, the three penalties,
// --repeat-last-n (-1: n_ctx), -s (-1 or none: random). Returns the seed used.
uint32_t cli_apply_sampling(const cli_args & a, tern_sampler_params * sp, uint32_t n_ctx);
// The KV cache type of a -ctk / -ctv value (checked by the table).
tern_type cli_kv_type(const char * name);

// -l TOKEN+BIAS, in the order given.
struct cli_bias {
    tern_token token;
    float bias;
};
std::vector<cli_bias> cli_logit_biases(const cli_args & a);
// Every bias names a token of the vocabulary, and they do not ban every token;
// false after one line on stderr. (With --ignore-eos the end tokens join the bans.)
bool cli_biases_check(const char * cmd, const std::vector<cli_bias> & biases, const tern_model * m, bool ignore_eos);
// Add the biases to a row of logits.
void cli_biases_apply(const std::vector<cli_bias> & biases, float * logits);

// The stop strings of -r (escapes processed when `escape`).
std::vector<std::string> cli_stop_strings(const cli_args & a, bool escape);
// llama.cpp's string_process_escapes: \n \r \t \' \" \\ and \xNN.
std::string cli_process_escapes(const std::string & in);
