// The option parser and help generator over the table (options.h).
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

long long cli_args::num(cli_id id, long long def) const {
    return has(id) ? strtoll(items[id].back().c_str(), NULL, 10) : def;
}

float cli_args::flt(cli_id id, float def) const {
    return has(id) ? strtof(items[id].back().c_str(), NULL) : def;
}

std::vector<long long> cli_args::nums(cli_id id) const {
    std::vector<long long> v;
    for (const std::string & s : items[id]) v.push_back(strtoll(s.c_str(), NULL, 10));
    return v;
}

void cli_error(const cli_command & cmd, const char * fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s (see `%s --help`)\n", cmd.name, buf, cmd.name);
}

const cli_opt * cli_find(unsigned cmd_bit, const char * name) {
    for (size_t i = 0; i < cli_n_options; i++) {
        const cli_opt & o = cli_options[i];
        if (!(o.cmds & cmd_bit)) continue;
        for (const char * n : o.names) if (n && !strcmp(n, name)) return &o;
    }
    return NULL;
}

size_t cli_edit_distance(const std::string & a, const std::string & b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); j++) row[j] = j;
    for (size_t i = 1; i <= a.size(); i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); j++) {
            const size_t up = row[j];
            const size_t sub = diag + (a[i - 1] != b[j - 1]);
            row[j] = sub < up + 1 ? sub : up + 1;
            if (row[j - 1] + 1 < row[j]) row[j] = row[j - 1] + 1;
            diag = up;
        }
    }
    return row[b.size()];
}

// The closest name the command takes, when it is close enough to be a typo:
// at most 2 edits, and fewer than half the name's length.
static const char * closest(unsigned cmd_bit, const std::string & name) {
    const char * best = NULL;
    size_t best_d = (size_t) -1;
    for (size_t i = 0; i < cli_n_options; i++) {
        if (!(cli_options[i].cmds & cmd_bit)) continue;
        for (const char * n : cli_options[i].names) {
            if (!n) continue;
            const size_t d = cli_edit_distance(name, n);
            if (d < best_d) { best_d = d; best = n; }
        }
    }
    return best && best_d <= 2 && best_d * 2 < name.size() ? best : NULL;
}

static const char * command_of(unsigned bit) {
    switch (bit) {
        case CLI_RUN: return "tern run";
        case CLI_CHAT: return "tern chat";
        case CLI_TOKENIZE: return "tern tokenize";
        case CLI_INFO: return "tern info";
        default: return "tern-bench";
    }
}

// One item of a value: checked against the descriptor; canonical form to *out.
static bool check_item(const cli_command & cmd, const char * flag, const cli_opt & o, const std::string & v,
                       std::string * out) {
    const char * s = v.c_str();
    switch (o.kind) {
        case K_FLAG:
            break;
        case K_INT: {
            char * end;
            errno = 0;
            const long long x = strtoll(s, &end, 10);
            if (!*s || isspace((unsigned char) *s) || *end) {
                cli_error(cmd, "option %s needs an integer, not '%s'", flag, s);
                return false;
            }
            if (errno == ERANGE || x < o.lo || x > o.hi) {
                cli_error(cmd, "option %s: %s is out of range [%lld, %lld]", flag, s, o.lo, o.hi);
                return false;
            }
            *out = std::to_string(x);
            return true;
        }
        case K_FLOAT: {
            char * end;
            const float x = strtof(s, &end);
            if (!*s || isspace((unsigned char) *s) || *end) {
                cli_error(cmd, "option %s needs a number, not '%s'", flag, s);
                return false;
            }
            if (!isfinite(x)) {
                cli_error(cmd, "option %s: %s is not a finite number", flag, s);
                return false;
            }
            char buf[64];
            snprintf(buf, sizeof(buf), "%.9g", (double) x);
            *out = buf;
            return true;
        }
        case K_STRING:
            if (o.nonempty && v.empty()) {
                cli_error(cmd, "option %s: an empty value", flag);
                return false;
            }
            break;
        case K_CHOICE: {
            const std::string all = o.choices;
            size_t at = 0;
            while (at <= all.size()) {
                size_t comma = all.find(',', at);
                if (comma == std::string::npos) comma = all.size();
                if (all.compare(at, comma - at, v) == 0 && comma - at == v.size()) { *out = v; return true; }
                at = comma + 1;
            }
            std::string shown = all;
            for (char & c : shown) if (c == ',') c = '|';
            cli_error(cmd, "option %s: '%s' is not one of %s", flag, s, shown.c_str());
            return false;
        }
        case K_CHECK: {
            std::string why;
            if (!o.check(s, &why)) {
                cli_error(cmd, "option %s: %s", flag, why.c_str());
                return false;
            }
            break;
        }
    }
    *out = v;
    return true;
}

static bool store(const cli_command & cmd, const char * flag, const cli_opt & o, const char * value, int index,
                  cli_args * out) {
    std::vector<std::string> items;
    if (o.list) {  // "a,b,c": an empty item (",5", "5,", "5,,6", "") is refused
        const std::string s = value;
        size_t at = 0;
        for (;;) {
            size_t comma = s.find(',', at);
            if (comma == std::string::npos) comma = s.size();
            if (comma == at) {
                cli_error(cmd, "option %s: empty item in '%s'", flag, value);
                return false;
            }
            items.push_back(s.substr(at, comma - at));
            if (comma == s.size()) break;
            at = comma + 1;
        }
    } else {
        items.push_back(value ? value : "1");
    }
    for (const std::string & it : items) {
        std::string canon;
        if (!check_item(cmd, flag, o, it, &canon)) return false;
        out->items[o.id].push_back(o.kind == K_FLAG ? "1" : canon);
    }
    out->last[o.id] = index;
    return true;
}

static void print_parsed(const cli_args & a) {
    for (size_t i = 0; i < cli_n_options; i++) {
        const cli_opt & o = cli_options[i];
        if (!a.has(o.id)) continue;
        bool first_of_id = true;  // one id may have descriptors per command family
        for (size_t k = 0; k < i; k++) first_of_id &= cli_options[k].id != o.id;
        if (!first_of_id) continue;
        printf("%s=", o.names[1] ? o.names[1] : o.names[0]);
        for (size_t k = 0; k < a.items[o.id].size(); k++) printf("%s%s", k ? "|" : "", a.items[o.id][k].c_str());
        printf("\n");
    }
}

cli_result cli_parse(const cli_command & cmd, int argc, char ** argv, cli_args * out) {
    for (int i = 1; i < argc; i++) {
        std::string name = argv[i];
        const char * value = NULL;
        bool inline_value = false;
        // --opt=value (a long option's value after '=')
        const size_t eq = name.find('=');
        if (name.compare(0, 2, "--") == 0 && eq != std::string::npos) {
            value = argv[i] + eq + 1;
            name.resize(eq);
            inline_value = true;
        }
        const cli_opt * o = cli_find(cmd.bit, name.c_str());
        if (!o) {
            for (unsigned b = CLI_RUN; b <= CLI_BENCH; b <<= 1) {
                if (b != cmd.bit && (cmd.bit != CLI_BENCH) == (b != CLI_BENCH) && cli_find(b, name.c_str())) {
                    cli_error(cmd, "%s is an option of %s, not of %s", name.c_str(), command_of(b), cmd.name);
                    return CLI_ERROR;
                }
            }
            const char * near = name.size() > 1 && name[0] == '-' ? closest(cmd.bit, name) : NULL;
            if (near) cli_error(cmd, "unknown option '%s'; did you mean %s?", name.c_str(), near);
            else cli_error(cmd, "unknown option '%s'", argv[i]);
            return CLI_ERROR;
        }
        if (!o->arg && inline_value) {
            cli_error(cmd, "option %s takes no value", name.c_str());
            return CLI_ERROR;
        }
        if (o->arg && !inline_value) {
            if (i + 1 >= argc) {
                cli_error(cmd, "option %s needs a value (%s)", name.c_str(), o->arg);
                return CLI_ERROR;
            }
            value = argv[++i];
        }
        if (!store(cmd, name.c_str(), *o, value, i, out)) return CLI_ERROR;
    }
    if (out->has(O_HELP)) {
        cli_print_help(stdout, cmd);
        return CLI_EXIT_OK;
    }
    const char * print = getenv("TERN_CLI_PRINT_OPTIONS");
    if (print && !strcmp(print, "1")) {
        print_parsed(*out);
        return CLI_EXIT_OK;
    }
    return CLI_GO;
}

void cli_print_help(FILE * f, const cli_command & cmd) {
    fputs(cmd.usage_head, f);
    const size_t col = 27;  // help text starts here; a longer left side gets two spaces
    for (size_t i = 0; i < cli_n_options; i++) {
        const cli_opt & o = cli_options[i];
        if (!(o.cmds & cmd.bit)) continue;
        std::string left = "  ";
        for (int k = 0; k < 3 && o.names[k]; k++) left += std::string(k ? ", " : "") + o.names[k];
        if (o.arg) left += std::string(" ") + o.arg;
        // a left side too long for the column: the help starts on the next line
        left += left.size() + 1 < col ? std::string(col - left.size(), ' ') : "\n" + std::string(col, ' ');
        std::string help = o.help;
        std::string text = left;
        for (char c : help) {
            text += c;
            if (c == '\n') text += std::string(col, ' ');
        }
        fprintf(f, "%s\n", text.c_str());
    }
    if (cmd.usage_tail) fputs(cmd.usage_tail, f);
}
