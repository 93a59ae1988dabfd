#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build and run every build line of the docs against an installed vmsim.

    doc_build_lines.py check SRC_DIR PREFIX   every line of the docs
    doc_build_lines.py list SRC_DIR           the lines found, no run
    doc_build_lines.py selftest               this script on made-up docs

PREFIX is a scratch install of vmsim (test/install/prefix.sh makes it).
The docs are README.md, docs/*.md, the man pages docs/man/*.1 and the
build lines in the comments of docs/examples/*.c.  A line is found in:

  - a fenced block of Markdown (``` or ~~~) that is not source (c, cmake,
    json, ...): its `$ ` lines when it has any, else every line;
  - an inline `code span` of Markdown that starts with a build word and
    has more words;
  - a man page's .EX/.EE block: its `$ ` lines, else every line;
  - an example's comment: a line `cc ...` and its `\\` continuations.

It is a build line when its first word (after VAR=value words and sudo)
is cc, gcc, clang, cmake, ctest, pkg-config, export, ldconfig or
apt-get; a tool command when its first word is an installed tool
(PREFIX/bin); a run when it is `./PROG` (not ./build/: the build tree's
commands are docs/tutorial.md's, which doc_blocks.py checks).  A tool
command in an inline span is prose, not a command to run, and is not
taken.

Each doc file's lines run in order, through `sh -e -c`, in a scratch
directory of its own, with PATH=PREFIX/bin:$PATH,
PKG_CONFIG_PATH=PREFIX/lib/pkgconfig, no LD_LIBRARY_PATH and
HOME=a scratch home whose .local and vmsim-asan are PREFIX; /tmp/vmsim
(the prefix the docs install into) reads PREFIX.  A build line that
writes a program with -o NAME is followed by running ./NAME (the
examples exit 0 when they pass), so a program that links but does not
load fails too.  A tool command runs for --duration 0.01 (its own
duration or --quick is replaced by it, or the option added).

The sources the lines compile: an example (docs/examples/NAME.c) is its
own; a ```c block whose first line is `/* NAME.c - ...` is NAME.c from
there on; and a line that is only `<!-- build-source: NAME PATH -->` (in a man page
`.\\" build-source: NAME PATH`) makes NAME the file PATH (relative to
SRC_DIR) from there on.  A ```cmake block is a CMakeLists.txt: the
project, then `add_executable(T T.c)` for the target T its
target_link_libraries() names, then the block; it is configured with
CMAKE_PREFIX_PATH=PREFIX, built, and T is run.

A line that cannot run here is in SKIP below, with the reason; a found
line that is neither built nor skipped is an error.

Exit status: 0 every line passed; 1 a line failed (named FILE:LINE); 2
bad usage or a malformed doc (an unclosed fence or .EX, a mark that
names no file).
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

BUILD_WORDS = {"cc", "gcc", "clang", "cmake", "ctest", "pkg-config",
               "export", "ldconfig", "apt-get"}
SOURCE_LANGS = {"c", "json", "text", "ini", "diff", "python"}
TIMEOUT_S = 60
TOOL_DURATION = "0.01"

# (pattern on the command, reason): lines that are not run, and why.
SKIP = [
    (r"\bapt-get\b",
     "installs system packages, as root, from the network"),
    (r"^(sudo )?ldconfig\b",
     "refreshes the system loader's cache, as root"),
    (r"^cmake --preset|^cmake --build --preset|^ctest\b",
     "builds or tests vmsim in its own tree: the build this test runs in"),
    (r"^cmake -S vmsim|^cmake --build build-(asan|lockdep)\b",
     "builds vmsim itself under ASan or lockdep (minutes); the lines "
     "after it run against the test's prefix"),
    (r"\./build-lockdep/test/",
     "runs vmsim's own suite in that lockdep build"),
    (r"^cmake -D",
     "configures vmsim's own tree (a planted-bug build: docs/testing.md)"),
    (r"^cmake --install\b",
     "the install: the test's own (test/install/prefix.sh) made PREFIX"),
]


class DocError(Exception):
    """A doc this script cannot read: exit 2."""


class Line:
    """One command of a doc: where it is and what it is."""

    def __init__(self, path, lineno, cmd, kind, sources):
        self.path, self.lineno, self.cmd = path, lineno, cmd
        self.kind = kind        # "build", "tool", "run", "cmake"
        self.sources = dict(sources)    # NAME -> path or text

    def where(self):
        return "%s:%d" % (self.path, self.lineno)


def words_of(cmd):
    """@cmd's words after VAR=value and sudo, or [] when unsplittable."""
    try:
        words = shlex.split(cmd, comments=True)
    except ValueError:
        return []
    while words and (re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0])
                     or words[0] in ("sudo", "$sudo")):
        words = words[1:]
    return words


def kind_of(cmd, tools, inline):
    """What @cmd is: "build", "tool", "run", or None (not a command)."""
    words = words_of(cmd)
    if not words:
        return None
    w = words[0]
    if inline and len(words) < 2:
        return None             # a word in prose: "`cc` lines"
    if w in BUILD_WORDS or cmd.lstrip().startswith("sudo="):
        return "build"
    if inline:
        return None
    if w in tools or (w == "parallel" and len(words) > 1
                      and words[1] in tools):
        return "tool"
    if w.startswith("./") and not w.startswith("./build/"):
        return "run"
    return None


def joined(lines, i):
    """The command starting at @lines[@i] with its `\\` continuations,
    and the index after it."""
    cmd = lines[i].rstrip()
    while cmd.endswith("\\") and i + 1 < len(lines):
        i += 1
        cmd = cmd[:-1].rstrip() + " " + lines[i].strip()
    return cmd, i + 1


MARK_MD = re.compile(r"^<!-- build-source: (\S+) (\S+) -->$")
MARK_MAN = re.compile(r'^\.\\" build-source: (\S+) (\S+)$')
NAMED_C = re.compile(r"^/\* (\S+\.c) - ")


def block_cmds(body, start):
    """The commands of a block @body whose first line is line @start:
    [(line number, command)]."""
    dollar = any(b.startswith("$ ") for b in body)
    out = []
    i = 0
    while i < len(body):
        text = body[i]
        if dollar:
            if not text.startswith("$ "):
                i += 1
                continue
            text = text[2:]
        if not text.strip() or text.lstrip().startswith("#"):
            i += 1
            continue
        k = i
        rest = [text] + [b[2:] if dollar and b.startswith("$ ") else b
                         for b in body[i + 1:]]
        cmd, n = joined(rest, 0)
        out.append((start + k, cmd.strip()))
        i = k + n
    return out


def parse_md(path, text, tools, src_dir):
    lines = text.split("\n")
    sources = {}
    found = []
    i = 0
    prose = []          # (line number, text) outside fences
    while i < len(lines):
        line = lines[i]
        m = MARK_MD.match(line.strip())
        if m:
            sources[m.group(1)] = source_path(src_dir, path, i, m.group(2))
        if not line.startswith(("```", "~~~")):
            prose.append((i + 1, line))
            i += 1
            continue
        fence, lang = line[:3], line[3:].strip()
        end = i + 1
        while end < len(lines) and not lines[end].startswith(fence):
            end += 1
        if end >= len(lines):
            raise DocError("%s:%d: the block is not closed" % (path, i + 1))
        body = lines[i + 1:end]
        # Inline spans before this block see the sources defined so far.
        found += inline_cmds(path, prose, tools, sources)
        prose = []
        if lang == "c" and body and NAMED_C.match(body[0]):
            sources[NAMED_C.match(body[0]).group(1)] = \
                "\n".join(body) + "\n"
        elif lang == "cmake":
            found.append(Line(path, i + 2, "\n".join(body), "cmake",
                              sources))
        elif lang not in SOURCE_LANGS:
            for n, cmd in block_cmds(body, i + 2):
                k = kind_of(cmd, tools, False)
                if k:
                    found.append(Line(path, n, cmd, k, sources))
        i = end + 1
    found += inline_cmds(path, prose, tools, sources)
    return found


def inline_cmds(path, prose, tools, sources):
    """The build lines in the inline code spans of @prose lines, which
    may span a line break."""
    text = "\n".join(t for _, t in prose)
    nos = [n for n, _ in prose]
    found = []
    for m in re.finditer(r"`([^`]+)`", text):
        cmd = " ".join(m.group(1).split())
        if kind_of(cmd, tools, True):
            lineno = nos[text.count("\n", 0, m.start())]
            found.append(Line(path, lineno, cmd, "build", sources))
    return found


def unroff(s):
    return s.replace("\\-", "-").replace("\\(aq", "'").replace("\\e", "\\")


def parse_man(path, text, tools, src_dir):
    lines = text.split("\n")
    sources = {}
    found = []
    i = 0
    while i < len(lines):
        m = MARK_MAN.match(lines[i])
        if m:
            sources[m.group(1)] = source_path(src_dir, path, i, m.group(2))
        if lines[i].strip() != ".EX":
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end].strip() != ".EE":
            end += 1
        if end >= len(lines):
            raise DocError("%s:%d: .EX without .EE" % (path, i + 1))
        body = [unroff(b) for b in lines[i + 1:end]]
        for n, cmd in block_cmds(body, i + 2):
            k = kind_of(cmd, tools, False)
            if k:
                found.append(Line(path, n, cmd, k, sources))
        i = end + 1
    return found


def parse_example(path, text, tools, src_dir):
    lines = text.split("\n")
    found = []
    body = [re.sub(r"^\s*\*\s?", "", b) for b in lines]
    own = {os.path.basename(path): os.path.join(src_dir, path)}
    i = 0
    while i < len(lines):
        if not re.match(r"^\s*\*\s+(cc|gcc|clang) ", lines[i]):
            i += 1
            continue
        cmd, n = joined(body, i)
        found.append(Line(path, i + 1, cmd.strip(), "build", own))
        i = n
    return found


def source_path(src_dir, path, i, rel):
    full = os.path.join(src_dir, rel)
    if not os.path.isfile(full):
        raise DocError("%s:%d: build-source %s: no such file"
                       % (path, i + 1, rel))
    return full


def doc_files(src_dir):
    files = ["README.md"]
    for pat in ("docs/*.md", "docs/man/*.1", "docs/examples/*.c"):
        files += sorted(os.path.relpath(p, src_dir)
                        for p in glob.glob(os.path.join(src_dir, pat)))
    return files


def find_all(src_dir, tools):
    found = []
    for rel in doc_files(src_dir):
        with open(os.path.join(src_dir, rel)) as f:
            text = f.read()
        if rel.endswith(".md"):
            found += parse_md(rel, text, tools, src_dir)
        elif rel.endswith(".1"):
            found += parse_man(rel, text, tools, src_dir)
        else:
            found += parse_example(rel, text, tools, src_dir)
    return found


def skip_reason(line):
    if line.kind == "cmake":
        return None
    cmd = " ".join(words_of(line.cmd)) if words_of(line.cmd) else line.cmd
    for pat, why in SKIP:
        if re.search(pat, line.cmd) or re.search(pat, cmd):
            return why
    return None


def short_tool(cmd):
    """@cmd run for TOOL_DURATION: its --duration, or --quick (the
    tools' short run, which some refuse beside --duration), replaced, or
    --duration added after the tool's name (before any pipe); a merge
    of shards (--merge) as it is: it runs nothing itself."""
    if "--merge" in cmd:
        return cmd
    cmd = re.sub(r"--quick\b", "--duration " + TOOL_DURATION, cmd)
    if re.search(r"--duration[ =]\S+", cmd):
        return re.sub(r"--duration[ =]\S+", "--duration " + TOOL_DURATION,
                      cmd)
    return re.sub(r"^(\s*\S+)", r"\1 --duration " + TOOL_DURATION, cmd,
                  count=1)


def place_sources(line, work):
    """Copy the sources @line names into @work."""
    for name, src in line.sources.items():
        if not re.search(r"(^|[\s/])%s\b" % re.escape(name), line.cmd) \
                and line.kind != "cmake":
            continue
        dst = os.path.join(work, name)
        if os.path.isfile(src):
            shutil.copyfile(src, dst)
        else:
            with open(dst, "w") as f:
                f.write(src)


def shell(cmd, work, env):
    try:
        p = subprocess.run(["sh", "-e", "-c", cmd], cwd=work, env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return 124, "timed out after %d s" % TIMEOUT_S
    return p.returncode, p.stdout.decode(errors="replace")


def cmake_script(line):
    """The shell lines that build and run a ```cmake block."""
    m = re.search(r"target_link_libraries\((\w+)", line.cmd)
    if not m:
        raise DocError("%s: a cmake block with no target_link_libraries()"
                       % line.where())
    t = m.group(1)
    return ("cmake -S . -B b -DCMAKE_PREFIX_PATH=\"$VS_PREFIX\" >/dev/null"
            " && cmake --build b >/dev/null && ./b/%s" % t), t


def run_line(line, work, env):
    """Run @line in @work: (exit status, output)."""
    place_sources(line, work)
    cmd = line.cmd.replace("/tmp/vmsim", env["VS_PREFIX"])
    if line.kind == "cmake":
        script, t = cmake_script(line)
        with open(os.path.join(work, "CMakeLists.txt"), "w") as f:
            f.write("cmake_minimum_required(VERSION 3.16)\n"
                    "project(doc C)\nadd_executable(%s %s.c)\n%s\n"
                    % (t, t, line.cmd))
        return shell(script, work, env)
    if line.kind == "tool":
        cmd = short_tool(cmd)
    rc, out = shell(cmd, work, env)
    prog = program_of(cmd)
    if line.kind == "build" and rc == 0 and prog:
        rc, more = shell("./" + prog, work, env)
        out += more
    return rc, out


def program_of(cmd):
    """The program a compiler line @cmd links (its -o, or a.out), or
    None when @cmd is no such line."""
    words = words_of(cmd)
    if not words or words[0] not in ("cc", "gcc", "clang") or "-c" in words:
        return None
    if "-o" in words and words.index("-o") + 1 < len(words):
        return words[words.index("-o") + 1]
    return "a.out"


def environment(prefix, scratch):
    home = os.path.join(scratch, "home")
    os.makedirs(home, exist_ok=True)
    for name in (".local", "vmsim-asan"):
        os.symlink(prefix, os.path.join(home, name))
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("VMSIM_PROFILE_PATH", None)
    env.update(HOME=home, VS_PREFIX=prefix,
               PATH=os.path.join(prefix, "bin") + ":" + env["PATH"],
               PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    return env


def tools_of(prefix):
    d = os.path.join(prefix, "bin")
    return set(os.listdir(d)) if os.path.isdir(d) else set()


def check(src_dir, prefix):
    prefix = os.path.abspath(prefix)
    found = find_all(src_dir, tools_of(prefix))
    scratch = tempfile.mkdtemp(prefix="doc-build-lines.")
    env = environment(prefix, scratch)
    bad = ran = 0
    try:
        works = {}
        for line in found:
            why = skip_reason(line)
            if why:
                print("skip: %s: %s (%s)" % (line.where(), line.cmd, why))
                continue
            work = works.get(line.path)
            if not work:
                work = works[line.path] = tempfile.mkdtemp(dir=scratch)
            if line.kind == "cmake":
                work = tempfile.mkdtemp(dir=scratch)
            ran += 1
            rc, out = run_line(line, work, env)
            if rc:
                bad += 1
                print("FAIL: %s: %s: exit %d\n%s" % (line.where(),
                      line.cmd, rc, out.rstrip()))
            else:
                print("ok: %s: %s" % (line.where(), line.cmd.split("\n")[0]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("%d of %d doc lines build and run against %s"
          % (ran - bad, ran, prefix))
    return 1 if bad else 0


def selftest():
    """A made-up doc: a good line, a broken one, one skipped; the check
    must fail naming the broken line and pass the others."""
    d = tempfile.mkdtemp(prefix="doc-build-lines-selftest.")
    try:
        os.makedirs(os.path.join(d, "docs", "man"))
        os.makedirs(os.path.join(d, "prefix", "bin"))
        with open(os.path.join(d, "docs", "ok.c"), "w") as f:
            f.write("int main(void) { return 0; }\n")
        with open(os.path.join(d, "README.md"), "w") as f:
            f.write("<!-- build-source: app.c docs/ok.c -->\n"
                    "Build it: `cc app.c -o app`, or `cmake --preset x`.\n"
                    "\n```sh\n$ cc -o broken app.c -lno-such-lib\n"
                    "output\n```\n")
        p = subprocess.run([sys.executable, __file__, "check", d,
                            os.path.join(d, "prefix")],
                           stdout=subprocess.PIPE)
        out = p.stdout.decode()
        want = ["ok: README.md:2: cc app.c -o app",
                "skip: README.md:2: cmake --preset x",
                "FAIL: README.md:5: cc -o broken app.c -lno-such-lib",
                "1 of 2 doc lines"]
        missing = [w for w in want if w not in out]
        if p.returncode != 1 or missing:
            print("selftest: exit %d, missing %s:\n%s"
                  % (p.returncode, missing, out))
            return 1
        print("selftest: ok")
        return 0
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main(argv):
    try:
        if len(argv) == 4 and argv[1] == "check":
            return check(argv[2], argv[3])
        if len(argv) == 3 and argv[1] == "list":
            for line in find_all(argv[2], {"multi-fault", "multi-fault-ref",
                                           "faultbench", "lockbench",
                                           "uffd-floor", "vcpubench",
                                           "vmbench", "vcpu-calibrate"}):
                print("%s: %s: %s (%s)" % (line.where(), line.kind,
                      line.cmd.split("\n")[0], skip_reason(line) or "run"))
            return 0
        if len(argv) == 2 and argv[1] == "selftest":
            return selftest()
    except DocError as e:
        print("doc_build_lines.py: %s" % e, file=sys.stderr)
        return 2
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
