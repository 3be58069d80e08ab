# GGUF reader / writer and model-file loader tests.
tern_add_test(NAME test_gguf_writer SOURCES test_gguf_writer.cpp)
tern_add_test(NAME test_gguf_models SOURCES test_gguf_models.cpp SHARED)
tern_add_test(NAME test_gguf_malformed SOURCES test_gguf_malformed.cpp SHARED)
tern_add_test(NAME test_gguf_split SOURCES test_gguf_split.cpp SHARED)
tern_add_test(NAME test_gguf_progress SOURCES test_gguf_progress.cpp SHARED)

# libFuzzer target over the GGUF reader (clang only). The reader and what it
# needs are compiled into the target with the fuzzer/sanitizer flags instead of
# linking libtern. fuzz_gguf_smoke runs it for TERN_FUZZ_SECONDS on a fresh
# copy of the seed corpus written by make_gguf_seeds (small valid GGUFs).
if(CMAKE_CXX_COMPILER_ID MATCHES Clang)
  set(TERN_FUZZ_SECONDS 10 CACHE STRING "Seconds the fuzz_gguf_smoke test fuzzes")
  file(GLOB TERN_FUZZ_TYPE_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/tensor/*.cpp)
  add_executable(fuzz_gguf fuzz/fuzz_gguf.cpp
    ${PROJECT_SOURCE_DIR}/src/gguf/reader.cpp ${PROJECT_SOURCE_DIR}/src/core/arena.cpp
    ${PROJECT_SOURCE_DIR}/src/core/status.cpp ${PROJECT_SOURCE_DIR}/port/posix/diag.cpp ${TERN_FUZZ_TYPE_SOURCES})
  target_include_directories(fuzz_gguf PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include
                             ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/port)
  target_compile_options(fuzz_gguf PRIVATE -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -g)
  target_link_options(fuzz_gguf PRIVATE -fsanitize=fuzzer,address,undefined)
  add_executable(make_gguf_seeds fuzz/make_seeds.cpp)
  add_dependencies(fuzz_gguf make_gguf_seeds)  # the smoke test needs both
  target_link_libraries(make_gguf_seeds PRIVATE tern_internal)
  set(TERN_FUZZ_CORPUS ${CMAKE_CURRENT_BINARY_DIR}/fuzz_gguf_corpus)
  add_test(NAME fuzz_gguf_smoke COMMAND sh -c
    "rm -rf '${TERN_FUZZ_CORPUS}' && mkdir -p '${TERN_FUZZ_CORPUS}' && '$<TARGET_FILE:make_gguf_seeds>' '${TERN_FUZZ_CORPUS}' && '$<TARGET_FILE:fuzz_gguf>' -max_total_time=${TERN_FUZZ_SECONDS} -max_len=65536 '${TERN_FUZZ_CORPUS}'")
  set_tests_properties(fuzz_gguf_smoke PROPERTIES TIMEOUT 900 LABELS fuzz)
endif()

# libFuzzer targets over the whole library (model load + decode, tokenizers).
# They link libtern, so the library itself must carry the fuzzer's coverage
# instrumentation: configure with clang and
# -DTERN_SANITIZE=address,undefined,float-cast-overflow,fuzzer-no-link (CI does).
if(CMAKE_CXX_COMPILER_ID MATCHES Clang AND TERN_SANITIZE MATCHES "fuzzer-no-link")
  add_executable(make_model_seeds fuzz/make_model_seeds.cpp)
  target_link_libraries(make_model_seeds PRIVATE tern_internal)
  foreach(target fuzz_model fuzz_tokenize)
    add_executable(${target} fuzz/${target}.cpp)
    target_link_libraries(${target} PRIVATE tern)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
  endforeach()
  add_dependencies(fuzz_model make_model_seeds)
  set(TERN_FUZZ_MODEL_CORPUS ${CMAKE_CURRENT_BINARY_DIR}/fuzz_model_corpus)
  add_test(NAME fuzz_model_smoke COMMAND sh -c
    "rm -rf '${TERN_FUZZ_MODEL_CORPUS}' && mkdir -p '${TERN_FUZZ_MODEL_CORPUS}' && '$<TARGET_FILE:make_model_seeds>' '${TERN_FUZZ_MODEL_CORPUS}' && '$<TARGET_FILE:fuzz_model>' -max_total_time=${TERN_FUZZ_SECONDS} -max_len=65536 -timeout=20 '${TERN_FUZZ_MODEL_CORPUS}'")
  set_tests_properties(fuzz_model_smoke PROPERTIES TIMEOUT 900 LABELS fuzz)
  if(TERN_HAVE_SHARED)
    set(TERN_FUZZ_TOK_CORPUS ${CMAKE_CURRENT_BINARY_DIR}/fuzz_tokenize_corpus)
    add_test(NAME fuzz_tokenize_smoke COMMAND sh -c
      "sh '${CMAKE_CURRENT_SOURCE_DIR}/fuzz/tokenize_seeds.sh' '${TERN_FUZZ_TOK_CORPUS}' && '$<TARGET_FILE:fuzz_tokenize>' -max_total_time=${TERN_FUZZ_SECONDS} -max_len=4096 -timeout=20 '${TERN_FUZZ_TOK_CORPUS}'")
    set_tests_properties(fuzz_tokenize_smoke PROPERTIES TIMEOUT 900 LABELS fuzz
      ENVIRONMENT "TERN_SHARED_DIR=${TERN_SHARED_DIR}")
  endif()
endif()
