// Logging hook: levels above TERN_LOG_LEVEL compile to nothing.
#pragma once
#include "tern.h"

namespace tern {

void tern_log_write(tern_log_level level, const char * fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#define TERN_LOG_AT(lvl, ...) do { if ((lvl) <= TERN_LOG_LEVEL) tern_log_write((lvl), __VA_ARGS__); } while (0)
#define TERN_LOGE(...) TERN_LOG_AT(TERN_LOG_ERROR, __VA_ARGS__)
#define TERN_LOGW(...) TERN_LOG_AT(TERN_LOG_WARN, __VA_ARGS__)
#define TERN_LOGI(...) TERN_LOG_AT(TERN_LOG_INFO, __VA_ARGS__)
#define TERN_LOGD(...) TERN_LOG_AT(TERN_LOG_DEBUG, __VA_ARGS__)

}  // namespace tern
