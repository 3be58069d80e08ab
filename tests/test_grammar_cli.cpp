// Structured output from the `tern` command: --grammar, --grammar-file,
// -j/--json-schema, -jf/--json-schema-file in tern run and tern chat. The
// outputs of schema-constrained runs (random seeds, greedy, sampled) parse
// and validate; "yes" | "no" prints one of the two; errors are one line
// naming the line and column or the keyword; --help lists the flags.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "check.h"
#include "cli_test_util.h"
#include "json_validate.h"

static std::string g_bin, g_shared, g_src, g_tmp;

static int run(const std::string & cmd, std::string & out) { return run_command(cmd, &out); }

static std::string strip_newline(std::string s) {
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
}

static const char * const k_name_schema =
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}";

static void test_issue_commands(void) {
    const std::string model = shell_quote(g_src + "/examples/models/stories260K.gguf");
    // The issue's command, as written (no prompt, a random seed each time), then fixed seeds and greedy.
    const char * extra[] = {"", "", "", " --temp 0", " -s 1 --temp 1.2", " -s 2 --top-k 0 --top-p 1 --min-p 0"};
    for (const char * e : extra) {
        std::string out;
        int rc = run(g_bin + " run -m " + model + " --json-schema " + shell_quote(k_name_schema) + " -n 64" + e + " 2>/dev/null", out);
        std::string why;
        std::string text = strip_newline(out);
        CHECK_MSG(rc == 0 && json_validates(text, k_name_schema, &why), "run%s: exit %d, '%s': %s", e, rc, text.c_str(),
                  why.c_str());
    }
    for (const char * e : extra) {
        std::string out;
        int rc = run(g_bin + " run -m " + model + " --grammar " + shell_quote("root ::= \"yes\" | \"no\"") + e + " 2>/dev/null", out);
        CHECK_MSG(rc == 0 && (out == "yes\n" || out == "no\n"), "yes/no%s: exit %d, '%s'", e, rc, out.c_str());
    }
    // With a prompt, --json: the text is the object and the stop reason says why it ended.
    std::string out;
    int rc = run(g_bin + " run -m " + model + " -p 'Once upon a time' -j " + shell_quote(k_name_schema) +
                 " -n 64 --temp 0 --json 2>/dev/null", out);
    CHECK_MSG(rc == 0 && out.find("\"stop\": \"grammar\"") != std::string::npos, "exit %d: %s", rc, out.c_str());
}

static void test_files_and_chat(void) {
    const std::string model = shell_quote(g_shared + "/models/TinyStories-656K-Q8_0.gguf");
    const std::string json_model = shell_quote(g_src + "/examples/models/stories260K.gguf");   // TinyStories' vocabulary has no '{' 
    const std::string gfile = g_tmp + "/g.gbnf", sfile = g_tmp + "/s.json", mfile = g_tmp + "/m.json";
    const char * schema = "{\"type\":\"object\",\"properties\":{\"hero\":{\"type\":\"string\",\"maxLength\":20},"
                          "\"friends\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":3}},"
                          "\"required\":[\"hero\",\"friends\"],\"additionalProperties\":false}";
    FILE * f = fopen(gfile.c_str(), "w");
    fputs("# a comment\nroot ::= animal (\", \" animal)*\nanimal ::= \"cat\" | \"dog\" | \"bird\"\n", f);
    fclose(f);
    f = fopen(sfile.c_str(), "w");
    fputs(schema, f);
    fclose(f);
    f = fopen(mfile.c_str(), "w");
    fputs("[{\"role\": \"user\", \"content\": \"Tell me about a hero.\"}]", f);
    fclose(f);
    std::string out, why;
    int rc = run(g_bin + " run -m " + model + " -p 'Once upon a time' --no-escape --grammar-file " + shell_quote(gfile) +
                 " -n 12 --temp 0 --json 2>/dev/null", out);
    json_doc d(out);
    const tern::json_node * text = d.root ? tern::json_get(d.root, "text") : NULL;
    std::string t = text ? std::string(text->s, text->n) : "";
    bool ok = !t.empty();
    for (size_t at = 0; ok && at < t.size();) {   // animal (", " animal)*
        size_t e = t.find(", ", at);
        std::string a = t.substr(at, e == std::string::npos ? std::string::npos : e - at);
        ok = a == "cat" || a == "dog" || a == "bird";
        at = e == std::string::npos ? t.size() : e + 2;
    }
    CHECK_MSG(rc == 0 && ok, "--grammar-file: exit %d, '%s'", rc, t.c_str());
    for (const char * e : {" --temp 0", " -s 5", " -s 6 --temp 1.5"}) {
        rc = run(g_bin + " run -m " + json_model + " -p 'The hero' -jf " + shell_quote(sfile) + " -n 64" + e + " --json 2>/dev/null", out);
        json_doc dd(out);
        const tern::json_node * tx = dd.root ? tern::json_get(dd.root, "text") : NULL;
        std::string txt = tx ? std::string(tx->s, tx->n) : "";
        CHECK_MSG(rc == 0 && json_validates(txt, schema, &why), "-jf%s: exit %d, '%s': %s", e, rc, txt.c_str(), why.c_str());
    }
    // tern chat: the reply is constrained; every reply of a session restarts the grammar.
    rc = run(g_bin + " chat -m " + json_model + " --chat-template chatml --messages " + shell_quote(mfile) + " --json-schema-file " +
             shell_quote(sfile) + " -n 64 --temp 0 --no-perf 2>/dev/null", out);
    CHECK_MSG(rc == 0 && json_validates(strip_newline(out), schema, &why), "chat: exit %d, '%s': %s", rc, out.c_str(),
              why.c_str());
    rc = run("printf 'one\\ntwo\\n' | " + g_bin + " chat -m " + model + " --chat-template chatml --grammar " +
             shell_quote("root ::= \"yes\" | \"no\"") + " --temp 0 --no-perf 2>/dev/null", out);
    CHECK_MSG(rc == 0 && (out == "yes\nyes\n" || out == "no\nno\n" || out == "yes\nno\n" || out == "no\nyes\n"),
              "chat yes/no: exit %d, '%s'", rc, out.c_str());
}

static void test_errors(void) {
    const std::string model = shell_quote(g_src + "/examples/models/stories260K.gguf");
    std::string out;
    int rc = run(g_bin + " run -m " + model + " --grammar " + shell_quote("root ::= \"a\"\nx ::= (\"b\"") + " 2>&1 >/dev/null", out);
    CHECK_MSG(rc == 1 && out.find("line 2") != std::string::npos && out.find('\n') == out.size() - 1, "exit %d: %s", rc,
              out.c_str());
    rc = run(g_bin + " run -m " + model + " -j " + shell_quote("{\"type\":\"array\",\"uniqueItems\":true}") + " 2>&1 >/dev/null", out);
    CHECK_MSG(rc == 1 && out.find("'uniqueItems'") != std::string::npos, "exit %d: %s", rc, out.c_str());
    rc = run(g_bin + " run -m " + model + " -j '{\"type\":' 2>&1 >/dev/null", out);
    CHECK_MSG(rc == 1 && out.find("line 1") != std::string::npos, "exit %d: %s", rc, out.c_str());
    rc = run(g_bin + " run -m " + model + " --grammar-file /nonexistent.gbnf 2>&1 >/dev/null", out);
    CHECK_MSG(rc == 1 && out.find("/nonexistent.gbnf") != std::string::npos, "exit %d: %s", rc, out.c_str());
    rc = run(g_bin + " run -m " + model + " --grammar " + shell_quote("root ::= \"a\" | root \"b\"") + " 2>&1 >/dev/null", out);
    CHECK_MSG(rc == 1 && out.find("left recursion") != std::string::npos, "exit %d: %s", rc, out.c_str());
    for (const char * cmd : {"run", "chat"}) {
        run(g_bin + " " + cmd + " --help", out);
        for (const char * flag : {"--grammar GRAMMAR", "--grammar-file FILE", "-j, --json-schema SCHEMA", "-jf, --json-schema-file FILE"}) {
            CHECK_MSG(out.find(flag) != std::string::npos, "tern %s --help lacks %s", cmd, flag);
        }
    }
}

int main(void) {
    g_shared = tern_test_shared_dir();
    const char * bin = getenv("TERN_BIN_DIR");
    const char * src = getenv("TERN_SOURCE_DIR");
    g_bin = std::string(bin ? bin : "build/bin") + "/tern";
    g_src = src ? src : ".";
    char tmpl[] = "/tmp/tern_grammar_cli_XXXXXX";
    g_tmp = mkdtemp(tmpl);
    test_issue_commands();
    test_files_and_chat();
    test_errors();
    std::string out;
    run("rm -rf " + shell_quote(g_tmp), out);
    return tern_test_summary();
}
