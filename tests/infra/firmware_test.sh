#!/bin/sh
# firmware_test.sh <tern-firmware> <tern> <model>
# The firmware example (examples/firmware) prints its start marker, then the
# same greedy story `tern run` gives for the same model, prompt and length.
set -u
fw=$1; tern=$2; model=$3
out=$("$fw"); rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: tern-firmware exited with $rc: $out"; exit 1; fi
first=$(printf '%s\n' "$out" | head -n 1)
if [ "$first" != "tern firmware: start" ]; then echo "FAIL: first line is '$first'"; exit 1; fi
story=$(printf '%s\n' "$out" | tail -n +2)
want=$("$tern" run -m "$model" -p "Once upon a time" -n 100 --temp 0 -c 256 2>/dev/null)
if [ "$story" != "$want" ]; then
  printf 'FAIL: the firmware story differs from tern run:\n--- firmware\n%s\n--- tern run\n%s\n' "$story" "$want"
  exit 1
fi
printf '%s\n' "$story"
echo "PASS: firmware output = tern run output ($(printf '%s' "$story" | wc -c) bytes)"
