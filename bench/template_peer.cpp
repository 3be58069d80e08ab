// The peer side of template_check.sh: llama.cpp's --jinja formatting (common_chat_templates_apply)
// of a conversation, built by the script against a llama.cpp tree (its common library).
//
//   template-peer TEMPLATE.jinja MESSAGES.json [TOOLS.json|-] [BOS EOS]
#include <cstdio>
#include <fstream>
#include <sstream>

#include "chat.h"
#include TEMPLATE_PEER_JSON  // the tree's nlohmann/json header (its path differs between trees)

static std::string slurp(const char * path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

int main(int argc, char ** argv) {
    if (argc < 3) { fprintf(stderr, "usage: template-peer TEMPLATE MESSAGES [TOOLS|-] [BOS EOS]\n"); return 2; }
    const std::string bos = argc > 5 ? argv[4] : "", eos = argc > 5 ? argv[5] : "";
    try {
        auto tmpls = common_chat_templates_init(nullptr, slurp(argv[1]), bos, eos);
        common_chat_templates_inputs in;
        in.messages = common_chat_msgs_parse_oaicompat(nlohmann::ordered_json::parse(slurp(argv[2])));
        if (argc > 3 && std::string(argv[3]) != "-") {
            in.tools = common_chat_tools_parse_oaicompat(nlohmann::ordered_json::parse(slurp(argv[3])));
        }
        in.use_jinja = true;
        in.add_generation_prompt = true;
        const common_chat_params out = common_chat_templates_apply(tmpls.get(), in);
        // Without a model newer trees keep a leading BOS text that the tokenizer would add
        // again; with a model (add_bos) they remove it, as c392e509 always does: so here.
        size_t skip = 0;
        if (!bos.empty() && out.prompt.compare(0, bos.size(), bos) == 0) skip = bos.size();
        fwrite(out.prompt.data() + skip, 1, out.prompt.size() - skip, stdout);
    } catch (const std::exception & e) {
        fprintf(stderr, "template-peer: %s\n", e.what());
        return 1;
    }
    return 0;
}
