# tern_cli_options: the option table, its parser and help generator, and the
# flags' meaning as library parameters (examples/cli/options.h). A static
# library of its own so that the `tern` command (examples/cli) and tern-bench
# (bench/) parse with the same table; both sit above libtern, and libtern never
# sees it. Included by the top-level CMakeLists.txt when either is built.
add_library(tern_cli_options STATIC
  ${CMAKE_CURRENT_LIST_DIR}/options.cpp
  ${CMAKE_CURRENT_LIST_DIR}/options_table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/args_apply.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_flags.cpp)
target_include_directories(tern_cli_options PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(tern_cli_options PUBLIC tern)
target_compile_options(tern_cli_options PRIVATE ${TERN_SANITIZE_FLAGS})
