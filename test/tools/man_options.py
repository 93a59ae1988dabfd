#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check each tool's man page against the tool's option table.

    man_options.py check MAN_DIR BUILD_DIR TOOL...
    man_options.py selftest          this script on made-up pages

A tool's options are the rows of its option table (tools/common/
bench_opts.h), as TOOL --help prints them, -h and -V included: one
left column a row, "  -s, --strategy LIST" or "      --mix N".  Its man
page, MAN_DIR/TOOL.1, gives each option a .TP paragraph in its OPTIONS
section whose tag names it, "-s list, --strategy=list" or "--mix=n".
Every option of the table must have such a paragraph with the same
letter (or none) and an argument exactly when the table gives one, and
be named in the SYNOPSIS section; every option tag of the page, and
every long option of its SYNOPSIS, must be in the table.

Prints "ok N - what" or "not ok N - what" per tool, TAP style, then
what differs.  Exit status: 0 every page agrees; 1 one does not, or a
tool's --help failed; 2 bad usage, or a page or --help in which no
option is found (this script would then check nothing).
"""
import os
import re
import subprocess
import sys

# "  -s, --strategy LIST  ..." or "      --mix N  ...": bench_opts.c's
# print_left(); the help text starts after two spaces or more, or on
# the next line.
HELP_ROW = re.compile(r"^  (?:-(?P<short>[A-Za-z]), |    )"
                      r"--(?P<long>[a-z][a-z0-9-]*)"
                      r"(?: (?P<arg>[A-Z][A-Za-z./]*))?(?:  |$)")
LONG = re.compile(r"(?<![\w-])--(?P<long>[a-z][a-z0-9-]*)"
                  r"(?P<arg>(?:=| +)[^\s,-][^\s,]*)?")
SHORT = re.compile(r"(?<![\w-])-(?P<short>[A-Za-z])(?![\w-])")
# Macros whose arguments alternate fonts: rendered without spaces.
ALTERNATING = {".BI", ".BR", ".IB", ".IR", ".RB", ".RI"}


class Unreadable(Exception):
    """No option found where there must be some: exit 2."""


def help_options(text):
    """{long: (letter or None, takes an argument)} of --help's @text."""
    opts = {}
    for line in text.splitlines():
        m = HELP_ROW.match(line)
        if m:
            opts[m.group("long")] = (m.group("short"), bool(m.group("arg")))
    return opts


def troff_args(rest):
    """The arguments of a macro line: split at unescaped spaces, a
    "quoted" argument whole."""
    args, cur, i, quoted = [], "", 0, False
    while i < len(rest):
        c = rest[i]
        if c == "\\" and i + 1 < len(rest):
            cur += rest[i:i + 2]
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        elif c == " " and not quoted:
            if cur:
                args.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    if cur:
        args.append(cur)
    return args


def unescape(s):
    """@s as troff renders it, fonts dropped: "\\-" is "-"."""
    s = re.sub(r"\\f(\[[^]]*\]|\(..|.)", "", s)
    s = s.replace("\\-", "-").replace("\\ ", " ").replace("\\&", "")
    s = s.replace("\\e", "\\")
    return s


def render(line):
    """The text of one line of a man page, its macro applied."""
    if not line.startswith("."):
        return unescape(line)
    macro, _, rest = line.partition(" ")
    args = troff_args(rest)
    sep = "" if macro in ALTERNATING else " "
    return unescape(sep.join(args))


def sections(text):
    """{name: [lines]} of the man page @text's .SH sections."""
    found, name = {}, None
    for line in text.splitlines():
        if line.startswith(".SH"):
            name = render(line).strip().strip('"')
            found[name] = []
        elif name:
            found[name].append(line)
    return found


def synopsis_options(text):
    """The long options the SYNOPSIS section of the man page @text
    names."""
    lines = sections(text).get("SYNOPSIS", [])
    return {m.group("long") for line in lines
            for m in LONG.finditer(render(line))}


def man_options(text):
    """{long: (letter or None, takes an argument)} of the .TP tags of
    the OPTIONS section of the man page @text, and the tags that name a
    letter and no long option (errors)."""
    opts, odd = {}, []
    lines = sections(text).get("OPTIONS", [])
    for i, line in enumerate(lines):
        if line.strip() != ".TP":
            continue
        if i + 1 >= len(lines):
            break
        tag = render(lines[i + 1])
        longs = list(LONG.finditer(tag))
        shorts = SHORT.findall(tag)
        if not longs:
            if shorts:
                odd.append(tag)
            continue
        for m in longs:
            opts[m.group("long")] = (shorts[0] if shorts else None,
                                     bool(m.group("arg")))
    return opts, odd


def describe(name, opt):
    """"-s, --strategy ARG" for option @name, @opt = (letter, arg)."""
    letter, arg = opt
    return "%s--%s%s" % ("-%s, " % letter if letter else "", name,
                         " ARG" if arg else "")


def compare(table, page, synopsis):
    """The differences of the man page's options @page, and of the long
    options of its SYNOPSIS, from @table's."""
    diffs = ["--%s: in the %s, not in the %s" %
             ((name,) + (("table", "SYNOPSIS") if name in table
                         else ("SYNOPSIS", "table")))
             for name in sorted(set(table) ^ synopsis)]
    for name in table:
        if name not in page:
            diffs.append("%s: in the table, not in the man page"
                         % describe(name, table[name]))
        elif page[name] != table[name]:
            diffs.append("%s in the table, %s in the man page"
                         % (describe(name, table[name]),
                            describe(name, page[name])))
    for name in page:
        if name not in table:
            diffs.append("%s: in the man page, not in the table"
                         % describe(name, page[name]))
    return diffs


def check_tool(man_dir, build, tool):
    """The differences for @tool; Unreadable when a side has none."""
    try:
        run = subprocess.run([os.path.join(build, tool), "--help"],
                             capture_output=True, text=True, timeout=60,
                             check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return ["%s --help: %s" % (tool, e)]
    if run.returncode:
        return ["%s --help exited %d: %s" % (tool, run.returncode,
                                             run.stderr.strip())]
    table = help_options(run.stdout)
    try:
        with open(os.path.join(man_dir, tool + ".1"), encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        return ["%s.1: %s" % (tool, e)]
    page, odd = man_options(text)
    if not table or not page:
        raise Unreadable("%s: no option found in %s" %
                         (tool, "its --help" if not table
                          else "the OPTIONS section of %s.1" % tool))
    return compare(table, page, synopsis_options(text)) + \
        ["a tag with a letter and no long option: %s" % t for t in odd]


def check(man_dir, build, tools):
    """TAP lines for @tools.  Return: the exit status."""
    failed = 0
    for n, tool in enumerate(tools, 1):
        diffs = check_tool(man_dir, build, tool)
        print("%s %d - %s.1 gives the options of %s's table"
              % ("not ok" if diffs else "ok", n, tool, tool))
        for d in diffs:
            print("# " + d)
        failed += bool(diffs)
    print("1..%d" % len(tools))
    return 1 if failed else 0


SELF_HELP = """usage: t [options]

  -s, --strategy LIST     which
      --mix N             how many
  -q, --quick             fast
      --output-file-name-too-long FILE
                          a long left column
  -h, --help              this text
  -V, --version           the version
"""

SELF_PAGE = r""".TH T 1
.SH NAME
t \- a tool
.SH SYNOPSIS
.B t
.RB [ \-\-strategy
.IR list ]
.RB [ \-\-mix
.IR n ]
.RB [ \-\-quick ]
.RB [ \-\-output\-file\-name\-too\-long
.IR file ]
.br
.B t \-\-help
|
.B \-\-version
.SH DESCRIPTION
.TP
.B \-\-not\-an\-option
here
.SH OPTIONS
.TP
.BI \-s\  list\fR,\fP\ \-\-strategy= list
which
.TP
.BI \-\-mix= n
how many
.TP
.BR \-q ,\ \-\-quick
fast
.TP
.BI \-\-output\-file\-name\-too\-long\  file
long
.TP
.BR \-h ,\  \-\-help
this text
.TP
.BR \-V ,\  \-\-version
the version
.SH SEE ALSO
.TP
.B \-\-nor\-this
"""


def selftest():
    """This script on made-up pages: agreeing ones, and one fault of
    each kind.  Return: the exit status."""
    table = help_options(SELF_HELP)
    cases = [("the same options", SELF_PAGE, 0)]
    faults = [
        ("an option left out", r".BI \-\-mix= n" + "\nhow many\n.TP\n", ""),
        ("an option too many", ".SH SEE ALSO",
         ".TP\n.B \\-\\-extra\nmore\n.SH SEE ALSO"),
        ("another letter", r".BR \-q ,\ \-\-quick", r".BR \-Q ,\ \-\-quick"),
        ("an argument too many", r".BR \-q ,\ \-\-quick",
         r".BI \-q ,\ \-\-quick\  n"),
        ("an argument missing", r".BI \-\-mix= n", r".B \-\-mix"),
        ("a letter alone", r".BR \-q ,\ \-\-quick", r".B \-q"),
        ("an option left out of the SYNOPSIS", ".RB [ \\-\\-quick ]\n", ""),
        ("an option too many in the SYNOPSIS", ".br\n",
         ".RB [ \\-\\-extra ]\n.br\n"),
    ]
    for what, old, new in faults:
        if old not in SELF_PAGE:
            print("not ok - selftest: %r is not in the made-up page" % old)
            return 1
        cases.append((what, SELF_PAGE.replace(old, new, 1), 1))
    status = 0
    for what, text, want in cases:
        page, odd = man_options(text)
        have = 1 if compare(table, page, synopsis_options(text)) or odd \
            else 0
        print("%s - selftest: %s %s" % ("ok" if have == want else "not ok",
                                        what, "found" if want else "agrees"))
        status |= have != want
    if len(table) != 6:
        print("not ok - selftest: %d options of the made-up --help, not 6"
              % len(table))
        status = 1
    return status


def main(argv):
    """Dispatch; see the module's docstring."""
    if len(argv) == 2 and argv[1] == "selftest":
        return selftest()
    if len(argv) < 5 or argv[1] != "check":
        print(__doc__, file=sys.stderr)
        return 2
    try:
        return check(argv[2], argv[3], argv[4:])
    except Unreadable as e:
        print("man_options.py: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
