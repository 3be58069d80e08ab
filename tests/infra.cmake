# Build infrastructure: tern.h is C99, libtern.a links with the C compiler
# driver and needs no C++ runtime, and an install works for CMake and
# pkg-config users.

# c99_header: a C99 program, strict flags, linked by the C driver. The archive
# is linked by path, not as the target: for a C++ target CMake would add the
# C++ implicit libraries (-lstdc++) to the link line and hide what we test.
add_executable(test_c99_header infra/c99_consumer.c)
add_dependencies(test_c99_header tern)
target_include_directories(test_c99_header PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include)
target_compile_options(test_c99_header PRIVATE -std=c99 -pedantic -Wall -Wextra -Werror)
target_link_libraries(test_c99_header PRIVATE $<TARGET_FILE:tern> Threads::Threads m)
target_link_options(test_c99_header PRIVATE ${TERN_SANITIZE_FLAGS})
set_target_properties(test_c99_header PROPERTIES LINKER_LANGUAGE C C_EXTENSIONS OFF)
add_test(NAME c99_header COMMAND test_c99_header)

# nm_check: only libc/libm/libpthread (and libgcc) symbols undefined, no C++
# runtime, no static constructors, no weak symbol shared across kernel sets'
# objects. Four known-bad archives prove that each kind of violation makes
# the script fail with the matching message.
set(TERN_NM_CHECK ${CMAKE_CURRENT_SOURCE_DIR}/infra/nm_check.sh)
add_test(NAME nm_check COMMAND bash ${TERN_NM_CHECK} $<TARGET_FILE:tern> ${CMAKE_C_COMPILER} "${TERN_SANITIZE}")
if(NOT TERN_SANITIZE)
  add_library(nm_check_bad_new STATIC infra/nm_check_bad_new.cpp)
  add_library(nm_check_bad_ctor STATIC infra/nm_check_bad_ctor.c)
  add_library(nm_check_bad_weak STATIC infra/nm_check_bad_weak_avx2.cpp infra/nm_check_bad_weak_avx512.cpp)
  add_library(nm_check_bad_weak_vnni STATIC infra/nm_check_bad_weak_avxvnni.cpp infra/nm_check_bad_weak_baseline.cpp)
  foreach(bad "new;C++ runtime symbols undefined (operator new" "ctor;static constructors"
              "weak;weak symbols a kernel set's object shares" "weak_vnni;weak symbols a kernel set's object shares")
    list(GET bad 0 name)
    list(GET bad 1 expected)
    add_test(NAME nm_check_detects_${name}
             COMMAND sh -c "out=$(bash \"$0\" \"$1\" \"$2\"); rc=$?; echo \"$out\"; [ $rc -ne 0 ] && echo \"$out\" | grep -qF \"FAIL: $3\""
                     ${TERN_NM_CHECK} $<TARGET_FILE:nm_check_bad_${name}> ${CMAKE_C_COMPILER} "${expected}")
  endforeach()
endif()

# port_check: port/<port> is the only OS boundary (no stdio, heap, files,
# environment, threads or TLS in the objects built from src/). A known-bad
# archive proves each kind of violation fails it.
set(TERN_PORT_CHECK ${CMAKE_CURRENT_SOURCE_DIR}/infra/port_check.sh)
add_test(NAME port_check COMMAND bash ${TERN_PORT_CHECK} $<TARGET_FILE:tern> ${PROJECT_SOURCE_DIR}/port/${TERN_PORT})
if(NOT TERN_SANITIZE)
  add_library(port_check_bad STATIC infra/port_check_bad.cpp)
  add_test(NAME port_check_detects_os_calls
           COMMAND sh -c "out=$(bash \"$0\" \"$1\" \"$2\"); rc=$?; echo \"$out\"; [ $rc -ne 0 ] && echo \"$out\" | grep -q 'port_check_bad.cpp.o: fopen' && echo \"$out\" | grep -q 'port_check_bad.cpp.o: malloc' && echo \"$out\" | grep -q 'FAIL: thread-local storage'"
                   ${TERN_PORT_CHECK} $<TARGET_FILE:port_check_bad> ${PROJECT_SOURCE_DIR}/port/${TERN_PORT})
endif()

# layer_check: no layer of src/ includes one above it (the order in
# docs/ARCHITECTURE.md); a known-bad tree (core/ including model/) proves it fires.
set(TERN_LAYER_CHECK ${CMAKE_CURRENT_SOURCE_DIR}/infra/layer_check.sh)
add_test(NAME layer_check COMMAND bash ${TERN_LAYER_CHECK} ${PROJECT_SOURCE_DIR}/src)
add_test(NAME layer_check_detects_upward_include
         COMMAND sh -c "out=$(bash \"$0\" \"$1\"); rc=$?; echo \"$out\"; [ $rc -ne 0 ] && echo \"$out\" | grep -qF 'src/core/upward.h (core) includes \"model/model.h\"'"
                 ${TERN_LAYER_CHECK} ${CMAKE_CURRENT_SOURCE_DIR}/infra/layer_check_bad)

# hal_check: TERN_DEVICES empty -> no HAL symbol or object in libtern.a; with
# devices the same look finds them.
if(TERN_CONFIG_HAL)
  add_test(NAME hal_check COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/infra/hal_check.sh $<TARGET_FILE:tern> present)
else()
  add_test(NAME hal_check COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/infra/hal_check.sh $<TARGET_FILE:tern> absent)
endif()

# install_consumer: cmake --install into a temporary prefix, then a
# find_package(tern) project and a pkg-config build of the same C program.
string(JOIN " " TERN_SANITIZE_CFLAGS ${TERN_SANITIZE_FLAGS})
add_test(NAME install_consumer
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/infra/run_install_test.sh ${PROJECT_BINARY_DIR}
                 ${CMAKE_CURRENT_SOURCE_DIR}/infra/install_consumer ${CMAKE_C_COMPILER} ${CMAKE_COMMAND}
                 "${TERN_SANITIZE_CFLAGS}")
# A cross build's consumers are programs of the target, which the script runs
# directly: listed as Disabled (Not Run) there, not failed.
if(CMAKE_CROSSCOMPILING)
  set_tests_properties(install_consumer PROPERTIES DISABLED TRUE)
endif()

# subproject_consumer: Tern added with add_subdirectory (as FetchContent does)
# defines the library alone: no test, bench or example target (issue 23).
add_test(NAME subproject_consumer
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/infra/run_subproject_test.sh ${PROJECT_SOURCE_DIR}
                 ${CMAKE_CURRENT_SOURCE_DIR}/infra/subproject_consumer ${CMAKE_COMMAND} ${CMAKE_C_COMPILER}
                 ${CMAKE_CXX_COMPILER})
# readme_generate: the README's generate command builds tern and what it
# needs, never a test program (ninja -t commands on a fresh configuration).
add_test(NAME readme_generate
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/infra/readme_generate_check.sh ${PROJECT_SOURCE_DIR} ${CMAKE_COMMAND})
set_tests_properties(readme_generate PROPERTIES SKIP_RETURN_CODE 77)
if(CMAKE_CROSSCOMPILING)  # both configure for the build machine
  set_tests_properties(subproject_consumer readme_generate PROPERTIES DISABLED TRUE)
endif()

# examples/simple greedy-generates from stories260K like llama.cpp does
# (reference/stories260K.0.json: every margin of these tokens is > 0.8).
# Without the shared data it reports Skipped (exit 77).
if(TARGET tern_simple)
  include(${PROJECT_SOURCE_DIR}/toolchain/emulator.cmake)
  tern_emulated(tern_simple tern_simple_bin)  # cross builds: a script that runs it under qemu
  add_test(NAME example_simple
           COMMAND sh -c "[ -f \"$1\" ] || exit 77; out=$(\"$0\" \"$1\" \"$2\" 8) || exit 1; echo \"$out\"; case \"$out\" in *\"$3\"*) exit 0;; esac; echo \"expected: $3\"; exit 1"
                   ${tern_simple_bin} ${TERN_SHARED_DIR}/models/stories260K.gguf
                   "Once upon a time" "Once upon a time, there was a little girl")
  set_tests_properties(example_simple PROPERTIES SKIP_RETURN_CODE 77)
endif()

# licenses: MIT at the top, every bundled model and test-data folder named
# with its licence in THIRD_PARTY.md (issue 23).
add_test(NAME licenses COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/infra/license_check.sh ${PROJECT_SOURCE_DIR})
