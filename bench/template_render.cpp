// tern-template-render: a chat template run by Tern's Jinja engine on a conversation,
// the prompt to stdout (template_check.sh compares it with llama.cpp's --jinja).
//
//   tern-template-render TEMPLATE.jinja MESSAGES.json [TOOLS.json|-] [BOS EOS]
//
// The environment's TERN_TEMPLATE_EXTRA, when set, is a JSON object of more
// template variables (tern_chat_params.extra_json, `tern chat --chat-template-kwargs`).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "tern.h"

static bool slurp(const char * path, std::string * out) {
    FILE * f = fopen(path, "rb");
    if (!f) return false;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out->append(buf, n);
    const bool ok = !ferror(f);
    fclose(f);
    return ok;
}

int main(int argc, char ** argv) {
    if (argc < 3 || argc == 5 || argc > 6) {
        fprintf(stderr, "usage: tern-template-render TEMPLATE.jinja MESSAGES.json [TOOLS.json|-] [BOS EOS]\n");
        return 2;
    }
    std::string tmpl, msgs, tools;
    if (!slurp(argv[1], &tmpl) || !slurp(argv[2], &msgs) || (argc > 3 && strcmp(argv[3], "-") && !slurp(argv[3], &tools))) {
        fprintf(stderr, "tern-template-render: cannot read an input file\n");
        return 2;
    }
    tern_chat_params p = tern_chat_default_params();
    p.tmpl = tmpl.c_str();
    p.messages_json = msgs.c_str();
    p.tools_json = tools.empty() ? NULL : tools.c_str();
    p.extra_json = getenv("TERN_TEMPLATE_EXTRA");
    p.bos_token = argc > 4 ? argv[4] : "";
    p.eos_token = argc > 5 ? argv[5] : "";
    const int32_t n = tern_chat_apply(NULL, &p, NULL, 0, NULL, 0);
    if (n < 0) {
        fprintf(stderr, "tern-template-render: %s\n", tern_last_error());
        return 1;
    }
    std::vector<char> out((size_t) n + 1);
    tern_chat_apply(NULL, &p, NULL, 0, out.data(), n + 1);
    fwrite(out.data(), 1, (size_t) n, stdout);
    return 0;
}
