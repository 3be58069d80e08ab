#!/usr/bin/env bash
# Generation speed with and without a grammar, Tern's `tern run` against llama.cpp's
# `llama-cli --grammar-file`, on the same model files, interleaved per round.
#
#   bench/grammar.sh --tern build/bin/tern --llama /work/peer/llama/build/bin/llama-cli \
#       -m /work/bench-models/tinyllama-Q4_0.gguf,/work/bench-models/qwen2.5-0.5b-Q4_0.gguf \
#       -g grammars/json.gbnf [-n 64] [-t 2] [-r 3] [-p PROMPT]
#
# Per round and model four runs, greedy, one after the other: tern run, tern run
# with the grammar, llama-cli, llama-cli with the grammar. A run's speed is its
# generated tokens over the wall time of its generation loop (decode, sampling,
# the grammar, printing): Tern's gen_wall_ms and sample_runs (tern run --json),
# llama.cpp's total time minus prompt eval time over its sampling runs
# (llama_perf_context_print / llama_perf_sampler_print: llama.cpp's own
# "sampling time" leaves its grammar out). Medians over the rounds; the table
# gives both ratios with and without the grammar and Tern over llama.cpp.
# bash + awk only.
set -euo pipefail
tern=build/bin/tern
llama=
models=
grammar=
n=64
t=$(nproc 2>/dev/null || echo 2)
r=3
prompt='{"name":'
while [ $# -gt 0 ]; do
  case "$1" in
    --tern) tern=$2; shift 2;;
    --llama) llama=$2; shift 2;;
    -m) models=$2; shift 2;;
    -g) grammar=$2; shift 2;;
    -n) n=$2; shift 2;;
    -t) t=$2; shift 2;;
    -r) r=$2; shift 2;;
    -p) prompt=$2; shift 2;;
    *) echo "usage: $0 --tern BIN --llama LLAMA_CLI -m A.gguf[,B.gguf] -g GRAMMAR [-n 64] [-t N] [-r 3] [-p PROMPT]" >&2; exit 2;;
  esac
done
[ -n "$llama" ] && [ -n "$models" ] && [ -n "$grammar" ] || { echo "$0: --llama, -m and -g are required" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# tern run: tokens/s of the generation loop, from its --json timings.
tern_tps() {
  local out
  out=$("$tern" run -m "$1" -p "$prompt" -n "$n" -t "$t" -c 512 --temp 0 --no-escape --json "${@:2}" 2>/dev/null) || { echo failed; return; }
  echo "$out" | awk '{
    w = $0; sub(/.*"gen_wall_ms": /, "", w); sub(/[,}].*/, "", w);
    s = $0; sub(/.*"sample_runs": /, "", s); sub(/[,}].*/, "", s);
    if (w > 0) printf "%.3f\n", s * 1000 / w; else print "failed" }'
}

# llama-cli: tokens/s of the generation loop, from its perf lines.
llama_tps() {
  "$llama" -m "$1" -p "$prompt" -n "$n" -t "$t" -c 512 --temp 0 -no-cnv "${@:2}" >/dev/null 2>"$tmp/llama.err" </dev/null ||
    { echo failed; return; }
  awk '
    /sampling time/ { for (i = 1; i <= NF; i++) if ($i == "runs") runs = $(i - 1) }
    /prompt eval time/ { for (i = 1; i <= NF; i++) if ($i == "=") { pe = $(i + 1); break } }
    /total time/ { for (i = 1; i <= NF; i++) if ($i == "=") { tot = $(i + 1); break } }
    END { if (tot - pe > 0 && runs > 0) printf "%.3f\n", runs * 1000 / (tot - pe); else print "failed" }' "$tmp/llama.err"
}

IFS=',' read -r -a files <<< "$models"
for ((round = 1; round <= r; round++)); do
  for f in "${files[@]}"; do
    key=$(basename "$f")
    echo "$key tern $(tern_tps "$f")" >> "$tmp/results"
    echo "$key tern_g $(tern_tps "$f" --grammar-file "$grammar")" >> "$tmp/results"
    echo "$key llama $(llama_tps "$f")" >> "$tmp/results"
    echo "$key llama_g $(llama_tps "$f" --grammar-file "$grammar")" >> "$tmp/results"
  done
done

echo "| model | Tern t/s | Tern + grammar t/s | Tern ratio | llama.cpp t/s | llama.cpp + grammar t/s | llama.cpp ratio | Tern / llama.cpp with grammar |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for f in "${files[@]}"; do
  key=$(basename "$f")
  awk -v key="$key" '
    function median(arr, k,   i, j, tmp) {
      for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (arr[j] < arr[i]) { tmp = arr[i]; arr[i] = arr[j]; arr[j] = tmp }
      return k % 2 ? arr[(k + 1) / 2] : (arr[k / 2] + arr[k / 2 + 1]) / 2
    }
    $1 == key && $3 != "failed" { n[$2]++; v[$2, n[$2]] = $3 }
    $1 == key && $3 == "failed" { bad[$2] = 1 }
    END {
      split("tern tern_g llama llama_g", kinds, " ")
      for (k = 1; k <= 4; k++) {
        kind = kinds[k]
        if (bad[kind] || !n[kind]) { m[kind] = 0; continue }
        for (i = 1; i <= n[kind]; i++) a[i] = v[kind, i]
        m[kind] = median(a, n[kind])
      }
      printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", key, m["tern"], m["tern_g"],
             m["tern"] ? m["tern_g"] / m["tern"] : 0, m["llama"], m["llama_g"], m["llama"] ? m["llama_g"] / m["llama"] : 0,
             m["llama_g"] ? m["tern_g"] / m["llama_g"] : 0
    }' "$tmp/results"
done
grep -q failed "$tmp/results" && { echo "some runs failed:" >&2; grep failed "$tmp/results" >&2; exit 1; }
exit 0
