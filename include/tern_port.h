/*
 * tern_port.h — the hooks of Tern's freestanding port (C99).
 *
 * A build with -DTERN_PORT=freestanding has no operating system beneath it:
 * no files, no mmap, no threads, no heap of its own. The model comes from a
 * memory blob (tern_model_load_blob), and model, context, sampler and
 * tokenizer scratch live in the caller's memory (static arrays sized with the
 * tern_*_mem_size functions). What the library still needs from the board it
 * asks through these hooks. Each has a weak default in port/freestanding/;
 * a firmware overrides one by defining a function of the same name (C
 * linkage). The POSIX port (the default) does not call them.
 */
#ifndef TERN_PORT_H
#define TERN_PORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Monotonic microseconds (load and perf timings). Default: always 0. */
int64_t tern_port_time_us(void);

/* One log line (level as tern_log_level, text ends with '\n') when no
 * tern_log_set callback is installed. Default: dropped. */
void tern_port_log(int level, const char * line);

/* Memory for an object created without caller memory (a NULL arena). Default:
 * NULL, so such a create fails with TERN_ERR_NO_MEMORY and every object must
 * be given its memory. A board with a heap may return it from here. */
void * tern_port_alloc(size_t bytes);
void   tern_port_free(void * p);

#ifdef __cplusplus
}
#endif

#endif /* TERN_PORT_H */
