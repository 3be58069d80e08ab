include(${PROJECT_SOURCE_DIR}/toolchain/emulator.cmake)  # tern_emulated*: programs run under qemu in cross builds

# Bench tools as a user runs them (tern-make-model: synthetic models with real shapes).
if(TARGET tern-make-model)
  tern_add_test(NAME test_make_model SOURCES test_make_model.cpp SHARED)
  add_dependencies(test_make_model tern-make-model)
  tern_emulated_bin_dir(test_make_model tern-make-model)  # cross builds: run it under qemu
endif()

# tern-bench: every kind of test in every output format on the bundled model, and
# bad command lines: exit status 2 and an error line naming the flag (the
# option table's messages, examples/cli/options.h).
if(TARGET tern-bench)
  tern_emulated(tern-bench tern_bench_bin)  # cross builds: a script that runs it under qemu
  add_test(NAME test_bench_cli COMMAND sh -c [=[
bin=$0; model=$1; fails=0
fail() { echo "FAIL: $*"; fails=1; }
bad() {
  want=$1; shift
  out=$("$bin" "$@" 2>&1 >/dev/null); rc=$?
  case "$out" in "tern-bench: $want"*) [ $rc -eq 2 ] && return ;; esac
  fail "tern-bench $* -> exit $rc: $out"
}
bad "option -p needs an integer, not '12x'" -m "$model" -p 12x
bad "option -n: -5 is out of range [0, " -m "$model" -n -5
bad "option -d: empty item in '1,,2'" -m "$model" -d 1,,2
bad "option -d: empty item in '4,'" -m "$model" -d 4,
bad "option -t: 0 is out of range [1, " -m "$model" -t 0
bad "option -b: 99999999999 is out of range" -m "$model" -b 99999999999
bad "option -r needs an integer, not 'x'" -m "$model" -r x
bad "option -pg: '128' is not PP,TG" -m "$model" -pg 128
bad "option -o: 'xml' is not one of md|csv|json" -m "$model" -o xml
bad "option -m: empty item" -m "$model,"
bad "option -p needs a value" -m "$model" -p
bad "unknown option '--nope'" -m "$model" --nope 1
bad "option -fa: '1': flash attention is not implemented" -m "$model" -fa 1
bad "no model" -p 8
bad "nothing to run" -m "$model" -p 0 -n 0
"$bin" --help | grep -q -e "-pg PP,TG" || fail "--help"
"$bin" -m /nonexistent.gguf -p 4 -n 0 -r 1 >/dev/null 2>&1; [ $? -eq 1 ] || fail "a missing model: exit 1"
run() { "$bin" -m "$model" -p 8 -n 4 -pg 8,4 -d 0,4 -t 1,2 -b 4,2048 -r 2 "$@"; }
out=$(run -o json) || fail "json run"
[ "$(echo "$out" | grep -c '"test":')" -eq 24 ] || fail "json: not 24 tests: $out"
echo "$out" | grep -q '"test": "pp8+tg4 @ d4"' || fail "json: no pp8+tg4 @ d4"
echo "$out" | grep -q '"samples_ts": \[[0-9.]*, [0-9.]*\]' || fail "json: samples"
out=$(run -o csv) || fail "csv run"
[ "$(echo "$out" | wc -l)" -eq 25 ] || fail "csv: not 1 + 24 lines: $out"
out=$(run) || fail "md run"
echo "$out" | grep -q '^| stories260K.gguf .* tg4 @ d4 |' || fail "md: no tg4 @ d4 row: $out"
exit $fails
]=] ${tern_bench_bin} ${PROJECT_SOURCE_DIR}/examples/models/stories260K.gguf)
endif()
