#!/usr/bin/env bash
# compare.sh: Tern against llama.cpp on the same files, interleaved, one table.
#
#   bench/compare.sh --tern build/bin/tern-bench --llama /path/llama-bench \
#       -m a.gguf,b.gguf [-p 128] [-n 32] [-t 2] [-r 3] [--bw /path/bw]
#
# Each of the -r rounds runs, for every model in turn, tern-bench and then
# llama-bench with the same -p/-n/-t and one timed repetition each (after each
# tool's own warmup), so drift of a shared machine falls on both tools alike.
# The table gives each tool's mean ± standard deviation of t/s over the rounds
# and the ratio Tern / llama.cpp (above 1: Tern is faster). --bw runs the
# bandwidth probe (shared/peer/bw.c) with -t threads before and after.
# Exit status: 0 all runs succeeded, 1 a run failed (its cells read "failed"),
# 2 bad command line.
set -u

prog=compare.sh
usage() {
  cat <<EOF
usage: $prog --tern PATH/tern-bench --llama PATH/llama-bench -m MODEL[,MODEL...]
             [-p N[,N...]] [-n N[,N...]] [-t N] [-r N] [--bw PATH/bw]
  --tern FILE    tern-bench executable
  --llama FILE   llama-bench executable (llama.cpp)
  -m FILES       GGUF models, comma-separated or -m repeated
  -p LIST        prompt tokens of the pp tests (default 128; 0: none)
  -n LIST        generated tokens of the tg tests (default 32; 0: none)
  -t N           threads for both tools (default: $(nproc 2>/dev/null || echo 1))
  -r N           interleaved rounds, one timed repetition per tool and round (default 3)
  --bw FILE      also measure read bandwidth with this probe before and after
EOF
}
die() { echo "$prog: $*" >&2; exit 2; }

tern= llama= bw= models=() p=128 n=32 t=$(nproc 2>/dev/null || echo 1) r=3
is_uint() { [[ $1 =~ ^[0-9]+$ ]] && [ ${#1} -le 9 ]; }
is_list() { [[ $1 =~ ^[0-9]{1,9}(,[0-9]{1,9})*$ ]]; }
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --tern|--llama|--bw|-m|-p|-n|-t|-r) [ $# -ge 2 ] || die "$1 needs a value" ;;
    *) die "unknown option '$1' ($prog --help lists them)" ;;
  esac
  case $1 in
    --tern) tern=$2 ;;
    --llama) llama=$2 ;;
    --bw) bw=$2 ;;
    -m) [[ -n $2 && $2 != ,* && $2 != *, && $2 != *,,* ]] || die "-m: empty item in '$2'"
        IFS=, read -r -a items <<<"$2"; models+=("${items[@]}") ;;
    -p) is_list "$2" || die "-p: '$2' is not a comma list of numbers"; p=$2 ;;
    -n) is_list "$2" || die "-n: '$2' is not a comma list of numbers"; n=$2 ;;
    -t) is_uint "$2" && [ "$2" -ge 1 ] || die "-t: '$2' is not a number >= 1"; t=$2 ;;
    -r) is_uint "$2" && [ "$2" -ge 1 ] || die "-r: '$2' is not a number >= 1"; r=$2 ;;
  esac
  shift 2
done
[ -n "$tern" ] || die "give --tern PATH/tern-bench"
[ -n "$llama" ] || die "give --llama PATH/llama-bench"
[ -x "$tern" ] || die "--tern: '$tern' is not an executable"
[ -x "$llama" ] || die "--llama: '$llama' is not an executable"
[ -z "$bw" ] || [ -x "$bw" ] || die "--bw: '$bw' is not an executable"
[ ${#models[@]} -gt 0 ] || die "give -m MODEL[,MODEL...]"
for m in "${models[@]}"; do [ -r "$m" ] || die "-m: cannot read '$m'"; done
[[ $p =~ [1-9] || $n =~ [1-9] ]] || die "nothing to run: -p and -n are all 0"

work=$(mktemp -d "${TMPDIR:-/tmp}/compare.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
samples=$work/samples.tsv   # tool, model index, test, t/s
: >"$samples"
failed=0

# Quoted csv (llama-bench quotes every value) split into out[1..n] (awk).
split_csv_awk='
  function split_csv(line, out,    n, i, c, f, q) {
    n = 0; f = ""; q = 0
    for (i = 1; i <= length(line); i++) {
      c = substr(line, i, 1)
      if (q) {
        if (c == "\"") {
          if (substr(line, i + 1, 1) == "\"") { f = f "\""; i++ } else q = 0
        } else f = f c
      } else if (c == "\"") q = 1
      else if (c == ",") { out[++n] = f; f = "" }
      else f = f c
    }
    out[++n] = f
    return n
  }
  { sub(/\r$/, "") }
  NR == 1 { nf = split_csv($0, h); for (i = 1; i <= nf; i++) col[h[i]] = i; next }'

# Rows of a llama-bench / tern-bench csv: "test<TAB>t/s" (columns found by name).
csv_rows() {
  awk "$split_csv_awk"'
    NR == 2 && (!("n_prompt" in col) || !("n_gen" in col) || !("avg_ts" in col)) {
      print "no n_prompt/n_gen/avg_ts columns" > "/dev/stderr"; exit 1
    }
    NF {
      split_csv($0, v)
      np = v[col["n_prompt"]] + 0; ng = v[col["n_gen"]] + 0
      name = ng == 0 ? "pp" np : (np == 0 ? "tg" ng : "pp" np "+tg" ng)
      printf "%s\t%s\n", name, v[col["avg_ts"]]
    }' "$1"
}

# One value of the first data row of a csv, by column name.
csv_value() {
  awk -v want="$2" "$split_csv_awk"'
    NF { split_csv($0, v); if (want in col) print v[col[want]]; exit }' "$1"
}

run_one() {  # tool, model index, command...
  local tool=$1 mi=$2; shift 2
  if "$@" >"$work/out.csv" 2>"$work/err.txt" && csv_rows "$work/out.csv" >"$work/rows.tsv" &&
     [ -s "$work/rows.tsv" ]; then
    awk -v tool="$tool" -v mi="$mi" -F'\t' '{ printf "%s\t%s\t%s\t%s\n", tool, mi, $1, $2 }' "$work/rows.tsv" >>"$samples"
    [ "$tool" = tern ] && [ -z "${tern_kernels:-}" ] && tern_kernels=$(csv_value "$work/out.csv" kernels)
    [ "$tool" = llama ] && [ -z "${llama_build:-}" ] && llama_build=$(csv_value "$work/out.csv" build_commit)
  else
    failed=1
    echo "$prog: $tool failed on ${models[$mi]}: $*" >&2
    tail -n 5 "$work/err.txt" | sed 's/^/    /' >&2
  fi
}

bw_line() { [ -z "$bw" ] || echo "read bandwidth ($1): $("$bw" "$t" 2>&1 | tail -n 1)"; }

bw_before=$(bw_line before)
for ((round = 1; round <= r; round++)); do
  for mi in "${!models[@]}"; do
    m=${models[$mi]}
    echo "$prog: round $round/$r: ${m##*/}" >&2
    run_one tern "$mi" "$tern" -m "$m" -p "$p" -n "$n" -t "$t" -r 1 -o csv
    run_one llama "$mi" "$llama" -m "$m" -p "$p" -n "$n" -t "$t" -r 1 -o csv
  done
done
bw_after=$(bw_line after)

[ -s "$samples" ] || { echo "$prog: no results" >&2; exit 1; }
names=$(for m in "${models[@]}"; do printf '%s\n' "${m##*/}"; done)
echo "Tern (kernels ${tern_kernels:-?}) vs llama.cpp (build ${llama_build:-?}), $t threads, $r interleaved rounds, -p $p -n $n"
[ -z "$bw_before" ] || echo "$bw_before; $bw_after"
echo
NAMES=$names awk -F'\t' '
  BEGIN { nm = split(ENVIRON["NAMES"], name, "\n") }
  {
    k = $2 SUBSEP $3
    if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
    cnt[$1, k]++; sum[$1, k] += $4; sq[$1, k] += $4 * $4
  }
  function cell(tool, k,    c, m, v) {
    c = cnt[tool, k] + 0
    if (c == 0) return "failed"
    m = sum[tool, k] / c
    v = c > 1 ? (sq[tool, k] - c * m * m) / (c - 1) : 0
    return sprintf("%.2f ± %.2f", m, v > 0 ? sqrt(v) : 0)
  }
  END {
    print "| model | test | llama.cpp t/s | Tern t/s | Tern / llama.cpp |"
    print "| --- | --- | ---: | ---: | ---: |"
    # rows by model (command-line order), then test (order of first result)
    for (mi = 0; mi < nm; mi++)
      for (i = 1; i <= nk; i++) {
        split(order[i], kk, SUBSEP)
        if (kk[1] + 0 != mi) continue
        k = order[i]
        ratio = "-"
        if (cnt["tern", k] && cnt["llama", k] && sum["llama", k] > 0)
          ratio = sprintf("%.2f", (sum["tern", k] / cnt["tern", k]) / (sum["llama", k] / cnt["llama", k]))
        printf "| %s | %s | %s | %s | %s |\n", name[mi + 1], kk[2], cell("llama", k), cell("tern", k), ratio
      }
  }' "$samples"
exit $failed
