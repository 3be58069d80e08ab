#include <ctype.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "cli.h"
#include "device_flags.h"

bool cli_value(int argc, char ** argv, int & i, const char *& out) {
    if (i + 1 >= argc) {
        fprintf(stderr, "tern: option %s needs a value\n", argv[i]);
        return false;
    }
    out = argv[++i];
    return true;
}

bool cli_int(int argc, char ** argv, int & i, long long & out, long long lo, long long hi) {
    const char * v;
    if (!cli_value(argc, argv, i, v)) return false;
    char * end;
    errno = 0;
    const long long x = strtoll(v, &end, 10);
    if (*v == 0 || isspace((unsigned char) *v) || *end != 0) {
        fprintf(stderr, "tern: option %s needs an integer, not '%s'\n", argv[i - 1], v);
        return false;
    }
    if (errno == ERANGE || x < lo || x > hi) {
        fprintf(stderr, "tern: option %s: %s is out of range [%lld, %lld]\n", argv[i - 1], v, lo, hi);
        return false;
    }
    out = x;
    return true;
}

bool cli_float(int argc, char ** argv, int & i, float & out) {
    const char * v;
    if (!cli_value(argc, argv, i, v)) return false;
    char * end;
    const float x = strtof(v, &end);
    if (*v == 0 || isspace((unsigned char) *v) || *end != 0) {
        fprintf(stderr, "tern: option %s needs a number, not '%s'\n", argv[i - 1], v);
        return false;
    }
    if (!isfinite(x)) {
        fprintf(stderr, "tern: option %s: %s is not a finite number\n", argv[i - 1], v);
        return false;
    }
    out = x;
    return true;
}

static int progress_bar(float progress, void *) {
    const int width = 40;
    int filled = (int) (progress * width + 0.5f);
    fprintf(stderr, "\rloading [");
    for (int i = 0; i < width; i++) fputc(i < filled ? '#' : ' ', stderr);
    fprintf(stderr, "] %3d%%", (int) (progress * 100.0f + 0.5f));
    if (progress >= 1.0f) fputc('\n', stderr);
    return 1;
}

tern_model * cli_load_model(const char * path, tern_model_params params) {
    if (isatty(2) && !params.progress_callback) params.progress_callback = progress_bar;
    tern_model * model = NULL;
    tern_status st = tern_model_load_file(path, &params, &model);
    if (st != TERN_OK) {
        if (params.progress_callback == progress_bar) fputc('\n', stderr);
        fprintf(stderr, "tern: %s: %s\n", tern_status_str(st), tern_last_error());
        return NULL;
    }
    return model;
}

bool cli_read_stdin(const char * who, std::string & out) {
    char buf[65536];
    ssize_t n;
    while ((n = read(0, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) { fprintf(stderr, "%s: reading standard input: %s\n", who, strerror(errno)); return false; }
        out.append(buf, (size_t) n);
        if (out.size() > CLI_MAX_TEXT_BYTES) {
            fprintf(stderr, "%s: standard input holds more than %zu bytes\n", who, CLI_MAX_TEXT_BYTES);
            return false;
        }
    }
    return true;
}

std::string cli_printable(const char * text, size_t n, size_t max_bytes) {
    std::string out;
    const size_t shown = n < max_bytes ? n : max_bytes;
    for (size_t i = 0; i < shown; i++) {
        const unsigned char c = (unsigned char) text[i];
        if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            char esc[8];
            snprintf(esc, sizeof(esc), "\\x%02x", c);
            out += esc;
        } else {
            out += (char) c;
        }
    }
    if (shown < n) out += "...";
    return out;
}

bool cli_read_file(const char * path, std::string & out, size_t max_bytes) {
    // Non-blocking open, then the kind: a FIFO must not hang the open, and a
    // device (/dev/zero) must not be read without end.
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        fprintf(stderr, "tern: cannot open '%s': %s\n", path, strerror(errno));
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "tern: '%s' is not a regular file\n", path);
        close(fd);
        return false;
    }
    if ((uint64_t) st.st_size > max_bytes) {
        fprintf(stderr, "tern: '%s' is %lld bytes; at most %zu are read\n", path, (long long) st.st_size, max_bytes);
        close(fd);
        return false;
    }
    out.resize((size_t) st.st_size);
    size_t got = 0;
    while (got < out.size()) {
        ssize_t n = read(fd, &out[got], out.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t) n;
    }
    close(fd);
    if (got != out.size()) {
        fprintf(stderr, "tern: '%s': short read (%zu of %zu bytes)\n", path, got, out.size());
        return false;
    }
    return true;
}

void json_append_string(std::string & out, const std::string & s) {
    static const char hex[] = "0123456789abcdef";
    out += '"';
    const unsigned char * p = (const unsigned char *) s.data();
    size_t n = s.size();
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (c < 0x80) {
            if (c == '"') out += "\\\"";
            else if (c == '\\') out += "\\\\";
            else if (c == '\n') out += "\\n";
            else if (c == '\t') out += "\\t";
            else if (c == '\r') out += "\\r";
            else if (c < 0x20 || c == 0x7f) { out += "\\u00"; out += hex[c >> 4]; out += hex[c & 15]; }
            else out += (char) c;
            i++;
            continue;
        }
        // A valid UTF-8 sequence is copied; anything else becomes U+FFFD.
        int len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        bool ok = len > 0 && i + len <= n;
        for (int k = 1; ok && k < len; k++) ok = (p[i + k] & 0xc0) == 0x80;
        if (ok) {
            uint32_t cp = c & (0x7f >> len);
            for (int k = 1; k < len; k++) cp = (cp << 6) | (p[i + k] & 0x3f);
            static const uint32_t min_cp[5] = { 0, 0, 0x80, 0x800, 0x10000 };
            ok = cp >= min_cp[len] && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
        }
        if (ok) {
            out.append((const char *) p + i, len);
            i += len;
        } else {
            out += "\xef\xbf\xbd";
            i++;
        }
    }
    out += '"';
}

void cli_print_version(void) {
    printf("tern %s\nkernels: %s (compiled: %s; TERN_SIMD=%s)\n", TERN_VERSION, tern_kernels_name(),
           tern_kernels_compiled_names(), TERN_SIMD_TARGET);
    fflush(stdout);
    cli_print_device_lines(stdout, "device: ");
}
