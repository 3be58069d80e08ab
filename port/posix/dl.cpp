// POSIX shared libraries: dlopen for drivers a device loads at run time
// (the Vulkan loader), so libtern.a links nothing but libc, libm and pthreads
// (glibc 2.34+ and musl have dlopen in libc; older glibc needs -ldl, which
// the CMake package adds through CMAKE_DL_LIBS).
#include "port.h"

#include <dlfcn.h>
#include <stdio.h>

namespace tern {

void * port_dlopen(const char * name, char * err, size_t err_size) {
    void * lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib && err && err_size) {
        const char * why = dlerror();
        snprintf(err, err_size, "%s", why ? why : "cannot open");
    }
    return lib;
}

void * port_dlsym(void * lib, const char * symbol) { return lib ? dlsym(lib, symbol) : NULL; }

void port_dlclose(void * lib) {
    if (lib) dlclose(lib);
}

}  // namespace tern
