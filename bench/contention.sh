#!/usr/bin/env bash
# contention.sh: decode and prompt speed beside busy processes, Tern and llama.cpp.
#
#   bench/contention.sh --tern build/bin/tern-bench [--llama /path/llama-bench] \
#       -m a.gguf,b.gguf [-p 128] [-n 32] [-t N] [--busy 0,1,2] [-r 3]
#
# An edge board runs other work beside the model (a UI, an audio loop). For
# each count B of --busy, B CPU-bound processes (shell loops) run for the
# whole measurement, and each tool runs every model at -t 1 and at -t N (N:
# the CPUs online, both tools' default), one timed repetition per round, in
# turn, so drift falls on all alike. The table gives the median t/s over the
# rounds and two ratios: -t N / -t 1 (below 1: the extra threads cost more
# than they bring; a pool that waits for descheduled workers collapses here)
# and Tern / llama.cpp at -t N.
# Exit status: 0 all runs succeeded, 1 a run failed (its cells read "failed"),
# 2 bad command line.
set -u

prog=contention.sh
here=$(cd "$(dirname "$0")" && pwd)
usage() {
  cat <<EOF
usage: $prog --tern PATH/tern-bench [--llama PATH/llama-bench] -m MODEL[,MODEL...]
             [-p N] [-n N] [-t N] [--busy LIST] [-r N]
  --tern FILE    tern-bench executable
  --llama FILE   llama-bench executable (llama.cpp); without it, Tern's columns only
  -m FILES       GGUF models, comma-separated or -m repeated
  -p N           prompt tokens of the pp test (default 128; 0: none)
  -n N           generated tokens of the tg test (default 32; 0: none)
  -t N           the many-thread count (default: the CPUs online, $(nproc 2>/dev/null || echo 1))
  --busy LIST    busy processes beside the tools, one table block per count (default 0,1,2)
  -r N           rounds, one timed repetition per tool, thread count and round (default 3)
EOF
}
die() { echo "$prog: $*" >&2; exit 2; }

tern= llama= models=() p=128 n=32 t=$(nproc 2>/dev/null || echo 1) busy=0,1,2 r=3
is_uint() { [[ $1 =~ ^[0-9]+$ ]] && [ ${#1} -le 9 ]; }
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --tern|--llama|--busy|-m|-p|-n|-t|-r) [ $# -ge 2 ] || die "$1 needs a value" ;;
    *) die "unknown option '$1' ($prog --help lists them)" ;;
  esac
  case $1 in
    --tern) tern=$2 ;;
    --llama) llama=$2 ;;
    -m) [[ -n $2 && $2 != ,* && $2 != *, && $2 != *,,* ]] || die "-m: empty item in '$2'"
        IFS=, read -r -a items <<<"$2"; models+=("${items[@]}") ;;
    -p) is_uint "$2" || die "-p: '$2' is not a number"; p=$2 ;;
    -n) is_uint "$2" || die "-n: '$2' is not a number"; n=$2 ;;
    -t) is_uint "$2" && [ "$2" -ge 1 ] || die "-t: '$2' is not a number >= 1"; t=$2 ;;
    -r) is_uint "$2" && [ "$2" -ge 1 ] || die "-r: '$2' is not a number >= 1"; r=$2 ;;
    --busy) [[ $2 =~ ^[0-9]{1,3}(,[0-9]{1,3})*$ ]] || die "--busy: '$2' is not a comma list of counts"; busy=$2 ;;
  esac
  shift 2
done
[ -n "$tern" ] || die "give --tern PATH/tern-bench"
[ -x "$tern" ] || die "--tern: '$tern' is not an executable"
[ -z "$llama" ] || [ -x "$llama" ] || die "--llama: '$llama' is not an executable"
[ ${#models[@]} -gt 0 ] || die "give -m MODEL[,MODEL...]"
for m in "${models[@]}"; do [ -r "$m" ] || die "-m: cannot read '$m'"; done
[ "$p" -gt 0 ] || [ "$n" -gt 0 ] || die "nothing to run: -p and -n are both 0"

work=$(mktemp -d "${TMPDIR:-/tmp}/contention.XXXXXX") || exit 1
busy_pids=()
stop_busy() { [ ${#busy_pids[@]} -eq 0 ] || kill "${busy_pids[@]}" 2>/dev/null; wait 2>/dev/null; busy_pids=(); }
trap 'stop_busy; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
samples=$work/samples.tsv   # busy, tool, threads, model index, test, t/s
: >"$samples"
failed=0
tools=(tern); [ -z "$llama" ] || tools+=(llama)
threads=(1); [ "$t" -eq 1 ] || threads+=("$t")

run_one() {  # busy, tool, threads, model index
  local b=$1 tool=$2 th=$3 mi=$4 exe=$tern
  [ "$tool" = llama ] && exe=$llama
  if "$exe" -m "${models[$mi]}" -p "$p" -n "$n" -t "$th" -r 1 -o csv >"$work/out.csv" 2>"$work/err.txt" &&
     awk -f "$here/csv_rows.awk" "$work/out.csv" >"$work/rows.tsv" && [ -s "$work/rows.tsv" ]; then
    awk -v pre="$b	$tool	$th	$mi" -F'\t' '{ printf "%s\t%s\t%s\n", pre, $1, $2 }' "$work/rows.tsv" >>"$samples"
  else
    failed=1
    echo "$prog: $tool -t $th failed on ${models[$mi]} with $b busy" >&2
    tail -n 5 "$work/err.txt" | sed 's/^/    /' >&2
  fi
}

IFS=, read -r -a busy_counts <<<"$busy"
for b in "${busy_counts[@]}"; do
  for ((k = 0; k < b; k++)); do
    ( trap - INT TERM; while :; do :; done ) &
    busy_pids+=($!)
  done
  for ((round = 1; round <= r; round++)); do
    echo "$prog: $b busy, round $round/$r" >&2
    for mi in "${!models[@]}"; do
      # The order turns each round: no tool or thread count always runs first.
      order=()
      for tool in "${tools[@]}"; do for th in "${threads[@]}"; do order+=("$tool $th"); done; done
      nord=${#order[@]}
      for ((k = 0; k < nord; k++)); do
        read -r tool th <<<"${order[$(((k + round - 1) % nord))]}"
        run_one "$b" "$tool" "$th" "$mi"
      done
    done
  done
  stop_busy
done

[ -s "$samples" ] || { echo "$prog: no results" >&2; exit 1; }
names=$(for m in "${models[@]}"; do printf '%s\n' "${m##*/}"; done)
echo "contention: $(nproc 2>/dev/null || echo ?) CPUs online, -t 1 and -t $t, busy ${busy}, $r rounds (median t/s), -p $p -n $n"
echo "$(uname -m) $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')"
echo
NAMES=$names HAVE_LLAMA=${llama:+1} T=$t awk -F'\t' '
  BEGIN { nm = split(ENVIRON["NAMES"], name, "\n"); ll = ENVIRON["HAVE_LLAMA"] == "1"; T = ENVIRON["T"] }
  {
    k = $1 SUBSEP $4 SUBSEP $5
    if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
    key = $2 SUBSEP $3 SUBSEP k
    v[key, ++cnt[key]] = $6 + 0
  }
  function median(key,    c, i, j, t, a) {
    c = cnt[key]
    if (!c) return -1
    for (i = 1; i <= c; i++) a[i] = v[key, i]
    for (i = 2; i <= c; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
  }
  function cell(x) { return x < 0 ? "failed" : sprintf("%.2f", x) }
  function ratio(a, b) { return a < 0 || b <= 0 ? "-" : sprintf("%.2fx", a / b) }
  END {
    hdr = "| model | busy | test |"
    sep = "|---|---:|---|"
    if (ll) { hdr = hdr " llama.cpp -t 1 | llama.cpp -t " T " | -t " T "/-t 1 |"; sep = sep "---:|---:|---:|" }
    hdr = hdr " Tern -t 1 | Tern -t " T " | -t " T "/-t 1 |"; sep = sep "---:|---:|---:|"
    if (ll) { hdr = hdr " Tern/llama.cpp (-t " T ") |"; sep = sep "---:|" }
    print hdr; print sep
    for (i = 1; i <= nk; i++) {
      k = order[i]; split(k, f, SUBSEP)
      line = "| " name[f[2] + 1] " | " f[1] " | " f[3] " |"
      if (ll) {
        l1 = median("llama" SUBSEP 1 SUBSEP k); lt = T == 1 ? l1 : median("llama" SUBSEP T SUBSEP k)
        line = line " " cell(l1) " | " cell(lt) " | " ratio(lt, l1) " |"
      }
      t1 = median("tern" SUBSEP 1 SUBSEP k); tt = T == 1 ? t1 : median("tern" SUBSEP T SUBSEP k)
      line = line " " cell(t1) " | " cell(tt) " | " ratio(tt, t1) " |"
      if (ll) line = line " " ratio(tt, lt) " |"
      print line
    }
  }' "$samples"
exit $failed
