#!/usr/bin/env python3
"""Worst-case stack of Tern's public calls, from GCC's -fcallgraph-info=su.

Usage: stack_bound.py [--limit BYTES] [--show N] <build folder or .ci files...>

Each .ci file (one per object) gives every function's own frame ("N bytes
(static)") and its call edges. The bound of a function is its frame plus the
largest bound of what it calls:
  - a library function: its bound (recursion is reported as an error: the
    library has none, and a cycle would make the bound infinite);
  - a C library function (vsnprintf, memcpy, expf, ...): LIBC_ALLOWANCE bytes;
  - an indirect call: the largest bound among the functions that call site
    can reach, by the file it is in (and the calling function) (INDIRECT_FAMILIES: the threadpool and
    executor call graph-node jobs and ops, ops call kernel pointers, the
    repacker calls repack kernels, the loader calls GGUF visitors and loader
    entry points, the pre-tokenizer calls its scanners, std::sort calls its
    comparator). User callbacks (log, progress, abort) are the caller's own
    and not counted; an indirect call from any other file is an error.
std::sort's introsort recurses at most INTROSORT_DEPTH times (2 log2 n for
n < 2^32 elements): such a cycle counts its frame that many times.
A frame marked "dynamic" (alloca, VLA) is an error unless "bounded".
Prints the bound of every public entry point (tern_*) and the deepest
chain of the largest; with --limit, exits 1 when any exceeds it.
"""
import os
import re
import sys

LIBC_ALLOWANCE = 2048
INTROSORT_DEPTH = 64
# (call-site file, the functions it may call: a regex over "file name") in order.
INDIRECT_FAMILIES = [
    (r"/src/cpu/threadpool\.cpp", r"9run_graphiiPv"),           # the executor's job
    (r"/src/cpu/compute\.cpp:110:", None),                       # the user's abort callback
    (r"/src/cpu/compute\.cpp", r"/src/cpu/(ops/|kernels/)"),
    (r"/src/cpu/(ops/|kernels/)", r"/src/cpu/kernels/"),
    (r"/src/model/repack\.cpp", r"/src/cpu/kernels/.*\drepack(_q\d_K)?[IEP]"),  # the sets' repack functions
    (r"/src/gguf/reader\.cpp", r"\d(vocab_sizer_visit|visit_kv|visit_tensor)[EP]"),
    (r"/src/model/model_file\.cpp",                               # sizer hooks (and the user's progress callback)
     r"\d(model_sizer_visit|model_sizer_tensor|model_sizer_extra|vocab_sizer_visit)[EP]"),
    (r"/src/api\.cpp", r"\d(open_path|open_blob)E"),
    # the pre-tokenizer, by calling function: pretokenize() calls scanners, the
    # split helpers call code-point classes or matchers
    (r"/src/vocab/pretokenize\.cpp:\S+ \S*11pretokenize", r"\d+scan_[a-z0-9_]+PK[jm][il][il]Ph$"),
    (r"/src/vocab/pretokenize\.cpp:\S+ \S*(split_runs|split_singles|match_prefixed_run)",
     r"pretokenize\.cpp.*_ZL\d+[a-z0-9_]+[jm]$"),
    (r"/src/vocab/pretokenize\.cpp:\S+ \S*split_matches", r"\d+match_[a-z0-9_]+PK[jm][il][il]$"),
    (r"/bits/predefined_ops\.h|/bits/stl_", r"_EUl"),
    (r"/src/tensor/quants_k", r"/src/tensor/quants_k.*\d+decode_q\d_K"),  # K-quant superblock decoders
    (r"/src/core/log\.cpp", None),            # the user's log callback
]
# A function that itself makes an indirect call of a family is never a target
# of that family (wrappers such as vec.h's inline kernel calls, the
# pre-tokenizer's split helpers): pointers reach the leaves.

node_re = re.compile(r'^node: \{ title: "([^"]+)" label: "((?:[^"\\]|\\.)*)"(.*)\}$')
edge_re = re.compile(r'^edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
frame_re = re.compile(r'\\n(\d+) bytes \(([a-z,]+)\)')


def load(paths):
    frames, where, kind, edges = {}, {}, {}, {}
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = node_re.match(line.strip())
                if m:
                    title, label = m.group(1), m.group(2)
                    fm = frame_re.search(label)
                    if fm:  # defined here (external declarations have no frame)
                        frames[title] = max(frames.get(title, 0), int(fm.group(1)))
                        kind[title] = fm.group(2)
                        where[title] = label.split("\\n")[1] if "\\n" in label else ""
                    continue
                m = edge_re.match(line.strip())
                if m:
                    target = m.group(2)
                    if target == "__indirect_call":
                        lm = re.search(r'label: "([^"]*)"', line)
                        site = lm.group(1) if lm else ""   # file:line:column
                        target = "__indirect_call@" + site + " " + m.group(1)  # site and caller
                    edges.setdefault(m.group(1), set()).add(target)
    return frames, where, kind, edges


def main(argv):
    limit, show, inputs = None, 3, []
    i = 0
    while i < len(argv):
        if argv[i] == "--limit":
            limit = int(argv[i + 1]); i += 2; continue
        if argv[i] == "--show":
            show = int(argv[i + 1]); i += 2; continue
        inputs.append(argv[i]); i += 1
    paths = []
    for p in inputs:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                paths += [os.path.join(root, f) for f in files if f.endswith(".ci")]
        else:
            paths.append(p)
    if not paths:
        print("stack_bound: no .ci files (build with -fcallgraph-info=su)", file=sys.stderr)
        return 2
    frames, where, kind, edges = load(paths)
    errors = [f"{f}: dynamic stack frame ({kind[f]}) at {where[f]}" for f in frames
              if "dynamic" in kind[f] and "bounded" not in kind[f]]
    families = [(re.compile(a), re.compile(b) if b else None) for a, b in INDIRECT_FAMILIES]
    members = {}  # family index -> functions

    def family_of(site):
        for k, (site_re, _) in enumerate(families):
            if site_re.search(site):
                return k
        return -1

    callers = {}  # family index -> functions with an indirect call site of that family
    for f in frames:
        for g in edges.get(f, ()):
            if g.startswith("__indirect_call@"):
                callers.setdefault(family_of(g[len("__indirect_call@"):]), set()).add(f)
    for k, (_, target_re) in enumerate(families):
        members[k] = [f for f in frames if target_re and target_re.search(where[f] + " " + f)
                      and f not in callers.get(k, ())]

    memo, chain, on_path = {}, {}, set()

    def cost(g):
        if g.startswith("__indirect_call@"):
            k = family_of(g[len("__indirect_call@"):])
            if k < 0:
                errors.append(f"indirect call at {g[16:]}: no family says what it may call")
                return 0
            return max((bound(t) for t in members[k]), default=0)
        if g in frames:
            return bound(g)
        return LIBC_ALLOWANCE

    def bound(f):
        if f in memo:
            return memo[f]
        if f in on_path:
            if "__introsort_loop" in f:
                return frames[f] * (INTROSORT_DEPTH - 1)  # the frames below the first
            errors.append(f"recursion through {f} ({where.get(f, '')})")
            return 0
        on_path.add(f)
        best, via = 0, None
        for g in sorted(edges.get(f, ())):
            c = cost(g)
            if c > best:
                best, via = c, g
        on_path.discard(f)
        memo[f] = frames[f] + best
        chain[f] = via
        return memo[f]

    for f in frames:
        bound(f)

    public = sorted((f for f in frames if f.startswith("tern_")), key=lambda f: -memo[f])
    print(f"stack bound: {len(frames)} functions, {len(paths)} objects; C library call "
          f"{LIBC_ALLOWANCE} B; indirect calls by family")
    for f in public:
        print(f"  {memo[f]:7d} B  {f}")
    for f in public[:show]:
        print(f"deepest chain of {f}:")
        g = f
        seen = set()
        while g is not None and g not in seen:
            seen.add(g)
            if g.startswith("__indirect_call@"):
                k = family_of(g[16:])
                best = max(members[k], key=lambda t: memo[t], default=None) if k >= 0 else None
                print(f"           (indirect call at {g[16:]}: deepest target {best})")
                g = best
                continue
            if g not in frames:
                print(f"    {LIBC_ALLOWANCE:6d} B  {g} (C library)")
                break
            if chain.get(g) == g:
                print(f"    {frames[g]:6d} B  {g}  ({where[g]}) x {INTROSORT_DEPTH} (introsort recursion)")
                break
            print(f"    {frames[g]:6d} B  {g}  ({where[g]})")
            g = chain.get(g)
    for e in errors:
        print("ERROR:", e)
    worst = memo[public[0]] if public else 0
    if limit is not None and worst > limit:
        print(f"FAIL: {public[0]} needs up to {worst} B, above the stated bound {limit} B")
        return 1
    if errors:
        return 1
    print(f"largest public bound: {worst} B" + (f" (limit {limit} B)" if limit else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
