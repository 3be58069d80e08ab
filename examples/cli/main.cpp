// tern — minimal CLI over libtern: info, run, tokenize.
#include <stdio.h>
#include <string.h>
#include <new>
#include "cli.h"
#include "options.h"

static void print_usage(FILE * f) {
    fprintf(f,
        "usage: tern <command> [options]\n"
        "\n"
        "commands:\n"
        "  info      -m FILE            describe a GGUF model: architecture, hyper-parameters,\n"
        "                               tokenizer, every tensor, load time and path\n"
        "  run       -m FILE -p PROMPT  generate text (greedy with --temp 0)\n"
        "  chat      -m FILE            chat with an instruct model (its chat template)\n"
        "  tokenize  -m FILE -p TEXT    print the token ids of a text\n"
        "\n"
        "`tern <command> --help` lists a command's options; `tern --version` the version, kernels and devices.\n"
        "Environment: TERN_KERNELS=scalar|avx2|avxvnni|avx512|neon|dotprod|i8mm forces a lower CPU kernel set.\n");
}


static int dispatch(int argc, char ** argv) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 1 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        cli_print_version();
        return 0;
    }
    const char * cmd = argv[1];
    if (strcmp(cmd, "info") == 0) return cmd_info(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "tokenize") == 0) return cmd_tokenize(argc - 1, argv + 1);
    if (strcmp(cmd, "chat") == 0) return cmd_chat(argc - 1, argv + 1);
    const char * near = NULL;  // a typo of a command: the closest within 2 edits
    for (const char * c : {"info", "run", "chat", "tokenize"})
        if (cli_edit_distance(cmd, c) <= 2 && cli_edit_distance(cmd, c) < strlen(c)) near = c;
    if (near) fprintf(stderr, "tern: unknown command '%s'; did you mean %s? (see `tern --help`)\n", cmd, near);
    else fprintf(stderr, "tern: unknown command '%s' (see `tern --help`)\n", cmd);
    return 1;
}

// The library throws nothing; the CLI's std::string and std::vector may
// (std::bad_alloc on a huge file): one error line and status 1, never an abort.
int main(int argc, char ** argv) {
    try {
        return dispatch(argc, argv);
    } catch (const std::bad_alloc &) {
        fprintf(stderr, "tern: out of memory\n");
    } catch (...) {
        fprintf(stderr, "tern: unexpected error\n");
    }
    return 1;
}
