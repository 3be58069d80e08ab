// The accelerator flags of `tern run`, `tern chat`, `tern info` and
// `tern-bench`, as llama.cpp spells them: -ngl, --device, -ot, -ts, -nkvo,
// --no-op-offload, --graph-cache, --list-devices (parsed and described by the
// option table, options.h), and what they do to the parameters.
#pragma once
#include <stdio.h>
#include <string>
#include <vector>
#include "options.h"
#include "tern.h"

struct cli_devices {
    long long          ngl = -2;        // -2: not given
    std::string        devices;         // --device list ("" : not given; "none": none)
    std::string        overrides;       // -ot patterns, ';'-joined for tern_model_params
    std::vector<float> split;           // -ts proportions
    bool               nkvo = false;    // -nkvo
    bool               no_op_offload = false;
    long long          graph_cache = -1;
    bool               list = false;    // --list-devices
};

// The flags of a parsed command line.
void cli_devices_from_args(const cli_args & a, cli_devices * d);
// The flags into model and context parameters (the strings stay d's: keep d
// alive while loading). Prints the note about -ngl in a build without
// devices, and about --device without -ngl.
void cli_devices_apply(const char * cmd, const cli_devices & d, tern_model_params * mp, tern_context_params * cp);
// After the load: a note when -ngl asked for layers but no device took any.
void cli_devices_loaded(const char * cmd, const cli_devices & d, const tern_model * m);
// --list-devices: the instances this build sees, one per line.
void cli_list_devices(FILE * f);
// One line per device instance present: its description (the features it
// reports: fp16/int8 arithmetic, integer dot product, subgroup size, ...), each
// after `prefix` (tern --version).
void cli_print_device_lines(FILE * f, const char * prefix);
// The same for the devices a model was placed on (tern run -v).
void cli_print_model_devices(FILE * f, const tern_model * m);
// Where the model and the context run, as llama.cpp prints it at load:
// layers offloaded N/M, per device the bytes of weights, KV cache and compute.
void cli_print_placement(FILE * f, const tern_model * m, const tern_context * ctx);
// Where each layer and the output run, with the bytes of weights per device
// (tern info; nothing for a model on the CPU alone).
void cli_print_layers(FILE * f, const tern_model * m);
