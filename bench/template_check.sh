#!/usr/bin/env bash
# template_check.sh: real models' chat templates through Tern's Jinja engine and
# through llama.cpp's --jinja path (common_chat_templates_apply), byte for byte.
#
#   bench/template_check.sh --tern build/bin/tern-template-render --llama /path/llama.cpp \
#       --templates /path/llama.cpp/models/templates [--keep DIR] [--tern-extra JSON]
#
# --llama is a llama.cpp tree built with its common library (build/common/libcommon.a,
# libllama and libggml under build/); the script compiles bench/template_peer.cpp
# against it: c392e509 (minja), or a newer tree with llama.cpp's own Jinja engine
# such as ik_llama.cpp's (its leading BOS text is removed there, as a model's
# tokenizer has it). --tern-extra gives Tern's render more variables, as `tern chat
# --chat-template-kwargs`: '{"enable_thinking": true}' is what newer trees pass by
# default. Each template runs on three conversations: system + two user turns
# with an assistant turn between (BOS <s>), no system message (BOS <|begin_of_text|>),
# and a tool call with its result and one tool given (BOS <s>). A template counts as
# the same when both give identical bytes, or both refuse. The table names each
# difference: "peer refuses" (llama.cpp fails, Tern renders), "peer: ChatML"
# (llama.cpp cannot parse the template and runs its ChatML one instead, Tern runs
# the template), "Tern refuses", or "differs" (both render the template; with
# --keep the two outputs are kept for diff).
set -u
prog=template_check.sh
here=$(cd "$(dirname "$0")" && pwd)
tern= llama= templates= keep=
while [ $# -gt 0 ]; do
  case $1 in
    --tern) tern=$2; shift 2 ;;
    --llama) llama=$2; shift 2 ;;
    --templates) templates=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --tern-extra) export TERN_TEMPLATE_EXTRA=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "$prog: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ -x "$tern" ] && [ -d "$llama/common" ] && [ -d "$templates" ] || { echo "$prog: give --tern, --llama and --templates" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
json=$(find "$llama/common" "$llama/vendor" -name json.hpp 2>/dev/null | head -1)
[ -n "$json" ] || { echo "$prog: no json.hpp in $llama" >&2; exit 2; }
libdirs=$(find "$llama/build" \( -name 'libllama.so' -o -name 'libggml.so' -o -name 'libggml-base.so' \) -printf '%h\n' | sort -u)
rpath=$(echo $libdirs | tr ' ' ':')
libs="-lllama -lggml"
for d in $libdirs; do [ -f "$d/libggml-base.so" ] && libs="$libs -lggml-base"; done
if ! g++ -std=c++17 -O1 "$here/template_peer.cpp" -o "$tmp/peer" -DTEMPLATE_PEER_JSON="\"$json\"" \
     -I"$llama/common" -I"$llama/include" -I"$llama/src" -I"$llama/ggml/include" -I"$llama/vendor" \
     "$llama/build/common/libcommon.a" $(for d in $libdirs; do echo "-L$d"; done) $libs -Wl,-rpath,"$rpath" 2>"$tmp/cc.log"; then
  tail -20 "$tmp/cc.log" >&2
  echo "$prog: could not build the peer program against $llama" >&2
  exit 2
fi

cat > "$tmp/plain.json" <<'J'
[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello, who are you?"},{"role":"assistant","content":"I am an assistant."},{"role":"user","content":"What is 2 + 2?"}]
J
cat > "$tmp/nosys.json" <<'J'
[{"role":"user","content":"Hi there"},{"role":"assistant","content":"  Hello! How can I help?  "},{"role":"user","content":"Tell me a joke.\nA short one."}]
J
cat > "$tmp/tools_msgs.json" <<'J'
[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"What is the weather in Paris?"},{"role":"assistant","content":"","tool_calls":[{"type":"function","id":"call_1","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]},{"role":"tool","tool_call_id":"call_1","name":"get_weather","content":"{\"temp\": 21}"},{"role":"assistant","content":"It is 21 degrees in Paris."},{"role":"user","content":"Thanks!"}]
J
cat > "$tmp/tools.json" <<'J'
[{"type":"function","function":{"name":"get_weather","description":"Get the weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string","description":"The city"}},"required":["city"]}}}]
J
[ -n "$keep" ] && mkdir -p "$keep"

echo "| template | plain | no system | tools |"
echo "|---|---|---|---|"
declare -A same=() total=()
for f in "$templates"/*.jinja; do
  name=$(basename "$f" .jinja)
  row="| $name"
  for conv in plain nosys tools; do
    case $conv in
      plain) args=("$tmp/plain.json" - "<s>" "</s>") ;;
      nosys) args=("$tmp/nosys.json" - "<|begin_of_text|>" "<|eot_id|>") ;;
      tools) args=("$tmp/tools_msgs.json" "$tmp/tools.json" "<s>" "</s>") ;;
    esac
    timeout 30 "$tmp/peer" "$f" "${args[@]}" >"$tmp/p" 2>"$tmp/perr"; prc=$?
    timeout 30 "$tern" "$f" "${args[@]}" >"$tmp/t" 2>/dev/null; trc=$?
    total[$conv]=$(( ${total[$conv]:-0} + 1 ))
    if { [ $prc = 0 ] && [ $trc = 0 ] && cmp -s "$tmp/p" "$tmp/t"; } || { [ $prc != 0 ] && [ $trc != 0 ]; }; then
      same[$conv]=$(( ${same[$conv]:-0} + 1 )); cell=same
      [ $prc != 0 ] && cell="both refuse"
    elif [ $prc != 0 ]; then cell="peer refuses"
    elif grep -q "defaulting to chatml" "$tmp/perr"; then
      cell="peer: ChatML"; [ $trc != 0 ] && cell="peer: ChatML, **Tern refuses**"
    elif [ $trc != 0 ]; then cell="**Tern refuses**"
    else
      cell="**differs**"
      [ -n "$keep" ] && cp "$tmp/p" "$keep/$name.$conv.llama.txt" && cp "$tmp/t" "$keep/$name.$conv.tern.txt"
    fi
    row="$row | $cell"
  done
  echo "$row |"
done
echo
for conv in plain nosys tools; do echo "$conv: ${same[$conv]:-0} of ${total[$conv]:-0} the same"; done
