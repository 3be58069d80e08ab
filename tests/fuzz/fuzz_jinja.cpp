// libFuzzer target over the Jinja engine through tern_chat_apply: the input is
// a template, rendered with llama.cpp's test conversation and, for odd sizes,
// tools, in a 4 MiB block with a 64 KiB output and 200000-step budget. Every
// call ends in a text or an error, never a crash, a hang or growth.
#include <stdint.h>
#include <string.h>

#include <string>
#include <vector>

#include "tern.h"

static const tern_chat_message k_conv[] = {
    {"system", "You are a helpful assistant"}, {"user", "Hello"}, {"assistant", "Hi there"},
    {"user", "Who are you"}, {"assistant", "   I am an assistant   "}, {"user", "Another question"},
};

static void quiet(tern_log_level, const char *, void *) {}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    tern_log_set(quiet, NULL);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    const std::string tmpl(reinterpret_cast<const char *>(data), size);
    static std::vector<char> mem((size_t) 4 << 20);
    tern_chat_params p = tern_chat_default_params();
    p.tmpl = tmpl.c_str();   // a NUL inside ends the template early: fine
    p.now = 86400;
    p.mem = mem.data();
    p.mem_size = mem.size();
    p.max_output = 65536;
    p.max_steps = 200000;
    p.bos_token = "<s>";
    p.eos_token = "</s>";
    if (size % 2) p.tools_json = "[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {}}}]";
    char buf[256];
    (void) tern_chat_apply(NULL, &p, k_conv, 6, buf, sizeof(buf));
    return 0;
}
