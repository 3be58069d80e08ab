# libFuzzer targets over the text parsers hostile input reaches: GBNF grammars
# (and the grammar engine), JSON schemas (and the JSON reader), Jinja chat
# templates. Built like fuzz_model (clang, -DTERN_SANITIZE=...,fuzzer-no-link);
# each smoke test fuzzes TERN_FUZZ_TEXT_SECONDS from the seeds in fuzz/seeds/.
if(CMAKE_CXX_COMPILER_ID MATCHES Clang AND TERN_SANITIZE MATCHES "fuzzer-no-link")
  set(TERN_FUZZ_TEXT_SECONDS 30 CACHE STRING "Seconds each text-parser fuzz smoke test fuzzes")
  set(targets fuzz_grammar:gbnf)
  if(TERN_JSON_SCHEMA)
    list(APPEND targets fuzz_json_schema:schema)
  endif()
  if(TERN_JINJA)
    list(APPEND targets fuzz_jinja:jinja)
  endif()
  foreach(pair ${targets})
    string(REPLACE ":" ";" parts ${pair})
    list(GET parts 0 target)
    list(GET parts 1 seeds)
    add_executable(${target} fuzz/${target}.cpp)
    target_link_libraries(${target} PRIVATE tern_internal)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
    set(corpus ${CMAKE_CURRENT_BINARY_DIR}/${target}_corpus)
    add_test(NAME ${target}_smoke COMMAND sh -c
      "rm -rf '${corpus}' && mkdir -p '${corpus}' && cp '${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds/${seeds}/'* '${corpus}/' && '$<TARGET_FILE:${target}>' -max_total_time=${TERN_FUZZ_TEXT_SECONDS} -max_len=4096 -timeout=20 -rss_limit_mb=1024 '${corpus}'")
    set_tests_properties(${target}_smoke PROPERTIES TIMEOUT 600 LABELS fuzz)
  endforeach()
endif()
