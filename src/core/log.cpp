#include "core/log.h"
#include "port.h"

#include <stdarg.h>
#include <stdio.h>   // vsnprintf only: the sink is the port's

namespace tern {

static tern_log_callback g_log_callback = NULL;
static void * g_log_user_data = NULL;

extern "C" void tern_log_set(tern_log_callback callback, void * user_data) {
    g_log_callback = callback;
    g_log_user_data = user_data;
}

void tern_log_write(tern_log_level level, const char * fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (g_log_callback) {
        g_log_callback(level, line, g_log_user_data);
    } else {
        port_log_line((int) level, line);
    }
}

}  // namespace tern
