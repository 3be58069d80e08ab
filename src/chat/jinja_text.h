// Python's text formatting for the Jinja builtins (jinja_builtins.cpp calls
// these with its arguments read): the work of the filters and methods that
// turn values into laid-out text.
//
//   "%-5s|%03d" | format("ab", 7)             -> "ab   |007"       (printf-style, Python's %; also "..." % (a, b))
//   "{:>5}|{n:,}".format("ab", n=1234567)     -> "   ab|1,234,567" (str.format with format specs)
//   "a long line of words" | wordwrap(10)     -> "a long\nline of\nwords"   (textwrap's greedy fill)
//   "hello world" | truncate(8, leeway=0)     -> "hello..."         (at a word end unless killwords)
//   "<b>x</b>  &amp; y" | striptags           -> "x & y"            (markupsafe 3's striptags)
//   1500000 | filesizeformat                  -> "1.5 MB"
//
// Lengths, widths and cuts count code points, as Python's do. Every output is
// a jbuf of the render (capped at the output limit); a malformed format is an
// error naming what is wrong, as Python raises it.
#pragma once
#include "chat/jinja_ast.h"

namespace tern {

// fmt % (args...): %% and %[(key)][flags][width][.precision] with s r d i u f
// F e E g G x X o c; %(key) conversions read a lone dict argument.
jv jinja_percent_format(jrender * r, const jv & fmt, const jcall & c);
// The conversions in fmt (%% not counted): whether "fmt % list" takes the
// list as its arguments or as one value (tuples are lists here).
uint32_t jinja_percent_count(const jv & fmt);

// fmt.format(args..., name=value...): {} {0} {name} with .attr and [key]
// lookups, !r / !s / !a conversions and the format-spec mini-language
// [[fill]align][sign][#][0][width][,|_][.precision][type], one level of
// nested {} inside a spec.
jv jinja_str_format(jrender * r, const jv & fmt, const jcall & c);

// Jinja2's wordwrap: each line of s (split as str.splitlines) filled greedily
// to width with textwrap's rules (words longer than width broken when
// break_long_words, after hyphens when break_on_hyphens; blanks dropped at the
// wraps), the lines joined by wrapstring.
jv jinja_wordwrap(jrender * r, const jv & s, int64_t width, bool break_long_words, const jv & wrapstring,
                  bool break_on_hyphens);

// Jinja2's truncate: s as it is when it has at most length + leeway code
// points, else cut to length - len(end) (at the last blank unless killwords)
// with end appended.
jv jinja_truncate(jrender * r, const jv & s, int64_t length, bool killwords, const jv & end, int64_t leeway);

// Comments and tags removed, runs of blanks made one space, entities decoded.
jv jinja_striptags(jrender * r, const jv & s);

// A byte count in decimal (kB, MB, ...) or binary (KiB, MiB, ...) units.
jv jinja_filesizeformat(jrender * r, double bytes, bool binary);

}  // namespace tern
