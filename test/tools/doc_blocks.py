#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check or rewrite the checked shell sessions of a Markdown file.

    doc_blocks.py check FILE BUILD_DIR   rerun, compare, print diffs
    doc_blocks.py update FILE BUILD_DIR  rerun, write the outputs into FILE
    doc_blocks.py selftest               this script on made-up docs

A checked block is a fenced block (``` or ~~~) whose fence line comes
right after a line holding only `<!-- check: vcpu -->`.  Inside it, a
line starting with `$ ` is a command; the lines after it, up to the next
`$ ` line or the closing fence, are its expected standard output, byte
for byte (the block's lines joined with newlines, plus a final newline;
no output is no lines).

A command is one program and its arguments, split as the shell would
split words (shlex), with no pipes, redirections or variables.  Its
program must be `./build/TOOL`: it runs BUILD_DIR/TOOL, in the current
directory (CTest runs it in the source tree), with standard input
/dev/null.  Standard error is not compared; a command that exits non-zero
fails the check and its standard error is shown.

Exit status: 0 all blocks agree (check) or FILE was written (update);
1 a block differs or a command failed; 2 bad usage or a malformed FILE
(a marker without a block, an unclosed fence, a block without commands,
no checked block at all).
"""
import difflib
import os
import shlex
import subprocess
import sys
import tempfile

MARKER = "<!-- check: vcpu -->"
PREFIX = "./build/"
TIMEOUT_S = 300


class DocError(Exception):
    """FILE is not what this script reads: exit 2."""


def parse(lines):
    """The checked blocks of @lines (no line ends), as a list of
    [(command line index, command, [expected lines], end index)]: the
    expected output is lines[command index + 1:end index]."""
    blocks = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != MARKER:
            i += 1
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith(("```", "~~~")):
            raise DocError("line %d: %s is not followed by a fence"
                           % (i + 1, MARKER))
        fence = lines[i + 1][:3]
        start = i + 2
        end = start
        while end < len(lines) and not lines[end].startswith(fence):
            end += 1
        if end >= len(lines):
            raise DocError("line %d: the block is not closed" % (i + 2))
        cmds = [k for k in range(start, end) if lines[k].startswith("$ ")]
        if not cmds or cmds[0] != start:
            raise DocError("line %d: a checked block must start with a "
                           "'$ ' command" % (start + 1))
        block = []
        for n, k in enumerate(cmds):
            stop = cmds[n + 1] if n + 1 < len(cmds) else end
            block.append((k, lines[k][2:], stop))
        blocks.append(block)
        i = end + 1
    if not blocks:
        raise DocError("no block marked %s" % MARKER)
    return blocks


def argv_of(cmd, build):
    """The argv that runs @cmd with BUILD_DIR @build."""
    try:
        words = shlex.split(cmd)
    except ValueError as e:
        raise DocError("'%s': %s" % (cmd, e))
    if not words or not words[0].startswith(PREFIX) or \
            "/" in words[0][len(PREFIX):]:
        raise DocError("'%s': the program must be %sTOOL" % (cmd, PREFIX))
    for w in words[1:]:
        if w in ("|", "||", "&&", ";", ">", "<", "&") or "$" in w:
            raise DocError("'%s': one program and its arguments only"
                           % cmd)
    return [os.path.join(build, words[0][len(PREFIX):])] + words[1:]


def run(cmd, build):
    """@cmd's standard output, or None if it failed (reported)."""
    argv = argv_of(cmd, build)
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        print("FAIL: $ %s: %s" % (cmd, e))
        return None
    if p.returncode:
        print("FAIL: $ %s: exit %d\n%s" % (cmd, p.returncode,
                                          p.stderr.decode(errors="replace")))
        return None
    return p.stdout.decode()


def expected(lines, k, stop):
    """The expected output of the command on line @k, as text."""
    return "".join(line + "\n" for line in lines[k + 1:stop])


def check(path, build):
    with open(path) as f:
        lines = f.read().split("\n")
    bad = 0
    n = 0
    for block in parse(lines):
        for k, cmd, stop in block:
            n += 1
            want = expected(lines, k, stop)
            got = run(cmd, build)
            if got is None:
                bad += 1
                continue
            if got == want:
                print("ok: %s:%d: $ %s" % (path, k + 1, cmd))
                continue
            bad += 1
            print("FAIL: %s:%d: $ %s: the output differs from the doc "
                  "(- doc, + now; `update` rewrites it):" % (path, k + 1, cmd))
            sys.stdout.writelines(difflib.unified_diff(
                want.splitlines(True), got.splitlines(True),
                "%s:%d" % (path, k + 2), "$ " + cmd))
    print("%d of %d commands agree with %s" % (n - bad, n, path))
    return 1 if bad else 0


def update(path, build):
    with open(path) as f:
        lines = f.read().split("\n")
    out = []
    done = 0
    bad = 0
    for block in parse(lines):
        for k, cmd, stop in block:
            got = run(cmd, build)
            if got is None:
                bad += 1
                continue
            if got and not got.endswith("\n"):
                got += "\n"
            out.append((k, stop, got.split("\n")[:-1] if got else []))
    if bad:
        print("%s not written: %d commands failed" % (path, bad))
        return 1
    for k, stop, new in reversed(out):
        lines[k + 1:stop] = new
        done += 1
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, path)
    print("%s: %d outputs written" % (path, done))
    return 0


def selftest():
    """check passes on a right doc, fails with a diff on a wrong one,
    update makes it right; malformed docs and commands exit 2."""
    with tempfile.TemporaryDirectory() as d:
        tool = os.path.join(d, "say")
        with open(tool, "w") as f:
            f.write("#!/bin/sh\nfor w; do echo \"$w\"; done\n")
        os.chmod(tool, 0o755)
        doc = os.path.join(d, "doc.md")
        right = ("# t\n\n" + MARKER + "\n```\n$ ./build/say 'a  b' c\n"
                 "a  b\nc\n$ ./build/say\n```\n\n```\n$ not checked\nx\n```\n")
        wrong = right.replace("a  b\nc\n", "a b\n")

        def write(text):
            with open(doc, "w") as f:
                f.write(text)

        def quiet(fn, *args):
            saved = sys.stdout
            sys.stdout = open(os.devnull, "w")
            try:
                return fn(*args)
            except DocError:
                return 2
            finally:
                sys.stdout.close()
                sys.stdout = saved

        write(right)
        assert quiet(check, doc, d) == 0, "a right doc fails"
        write(wrong)
        assert quiet(check, doc, d) == 1, "a wrong doc passes"
        assert quiet(update, doc, d) == 0, "update fails"
        assert open(doc).read() == right, "update wrote something else"
        for text in (right.replace(MARKER, "x"),
                     "# t\n" + MARKER + "\n```\n$ ./build/say\n",
                     right.replace("$ ./build/say 'a", "$ /bin/echo 'a"),
                     right.replace("$ ./build/say\n", "$ ./build/say | x\n"),
                     right.replace("```\n$", "```\nz\n$", 1)):
            write(text)
            assert quiet(check, doc, d) == 2, "not refused:\n" + text
        write(right.replace("./build/say\n", "./build/none\n"))
        assert quiet(check, doc, d) == 1, "a missing tool passes"
    print("selftest: ok")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "selftest":
        return selftest()
    if len(argv) != 4 or argv[1] not in ("check", "update"):
        sys.stderr.write("usage: doc_blocks.py check|update FILE BUILD_DIR"
                         " | selftest\n")
        return 2
    if not os.path.isdir(argv[3]):
        sys.stderr.write("doc_blocks.py: BUILD_DIR: %s is not a directory\n"
                         % argv[3])
        return 2
    try:
        return (check if argv[1] == "check" else update)(argv[2], argv[3])
    except (DocError, OSError) as e:
        sys.stderr.write("doc_blocks.py: %s: %s\n" % (argv[2], e))
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
