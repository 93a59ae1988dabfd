#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/kerneldoc-filter.py - let doxygen read vmsim's kernel-doc comments.

The public headers are documented the kernel's way
(Documentation/doc-guide/kernel-doc.rst), which doxygen does not read:
"@name:" would be an unknown command to it, "Return:" plain text.  As
doxygen's INPUT_FILTER this script rewrites a header into what doxygen
understands, changing comments only and keeping every line where it is
(so doxygen's warnings point at the real line):

  /* path.h - text */      the file's first comment: "\\file" + "\\brief"
                           (in include/vmsim/vmsim.h: "\\mainpage vmsim")
  /** name - text          a kernel-doc block: "\\brief text"
   * @arg: text            before a function or macro: "\\param arg text"
   * @member: text         before a struct, union or enum: the text is
                           moved to the member as a trailing doc comment
   * Context: text         "\\context text" (ALIASES: a "Context:" heading)
   * Return: text          "\\return text"
   * ... @arg ...          "\\p arg" anywhere else
  /** @member: text */     inside a struct: documents the next member
  code; /* text */         a trailing comment on a declaration or #define
                           documents it ("/**<")

Plain "/* */" comments elsewhere stay plain: they are not documentation.

With --check FILE... it reports, in doxygen's warning format, what
doxygen cannot: a kernel-doc block whose name is not the declaration it
precedes, a function without a "Context:" section, a function that
returns a value without a "Return:" section, an "@member:" line naming
no member.  It exits 1 when it reported anything.
"""

import os
import re
import sys

# Comments and string/character literals, so that a "/*" inside a string
# is not taken for a comment.
TOKEN_RE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"'
                      r"|'(?:\\.|[^'\\\n])*'", re.S)
NAME_LINE_RE = re.compile(
    r'^(?:(struct|union|enum|typedef)\s+)?([A-Za-z_]\w*)(?:\(\))?'
    r'\s+-\s+(.*)$')
ARG_LINE_RE = re.compile(r'^@(\w+(?:\.\w+)*)((?:\s*,\s*@\w+)*)\s*:\s?(.*)$')
SECTION_RE = re.compile(r'^(Context|Returns?):\s?(.*)$')
INLINE_ARG_RE = re.compile(r'(?<![\w@\\])@(\w+)')
FILE_HEAD_RE = re.compile(r'^(\S+\.h)\s+-\s+(.*)$')
AGGREGATE_RE = re.compile(
    r'\s*(?:typedef\s+)?(struct|union|enum)\s*(\w*)\s*\{')
IDENT_RE = re.compile(r'[A-Za-z_]\w*')
PRIVATE_RE = re.compile(r'(vs|VS)__')
KEYWORDS = {'const', 'volatile', 'struct', 'union', 'enum', 'unsigned',
            'signed', 'long', 'short', 'int', 'char', 'void', '_Atomic',
            'static', 'inline', 'extern'}


def split_comment(text):
    """Split a comment into (prefix, content, suffix) per line."""
    out = []
    lines = text.split('\n')
    for k, line in enumerate(lines):
        suffix = ''
        if k == len(lines) - 1:
            m = re.search(r'\s*\*/$', line)
            suffix = line[m.start():]
            line = line[:m.start()]
        if k == 0:
            m = re.match(r'/\*\*?[ \t]?', line)
        else:
            m = re.match(r'[ \t]*\*(?!/)[ ]?|[ \t]*', line)
        out.append([line[:m.end()], line[m.end():], suffix])
    return out


def join_comment(parts):
    return '\n'.join(p + c + s for p, c, s in parts)


def inline_args(content):
    return INLINE_ARG_RE.sub(r'\\p \1', content)


class Block:
    """One kernel-doc comment, parsed."""

    def __init__(self, text):
        self.parts = split_comment(text)
        self.name = None        # from the "name - brief" line
        self.args = []          # [names, first line, [text], [lines]]
        self.sections = set()   # Context, Return
        self.inline_member = None
        contents = [c for _, c, _ in self.parts]
        first = next((i for i, c in enumerate(contents) if c.strip()), None)
        if first is None:
            return
        m = NAME_LINE_RE.match(contents[first].strip())
        if m:
            self.name = m.group(2)
        m = ARG_LINE_RE.match(contents[first].strip())
        if m and not m.group(1).count('.'):
            self.inline_member = m.group(1)
        current = None
        for i, c in enumerate(contents):
            s = c.strip()
            m = ARG_LINE_RE.match(s)
            if m:
                names = [m.group(1)] + re.findall(r'@(\w+)', m.group(2))
                current = [names, i, [m.group(3)], [i]]
                self.args.append(current)
                continue
            m = SECTION_RE.match(s)
            if m:
                self.sections.add('Return' if m.group(1).startswith('Ret')
                                  else 'Context')
                current = None
                continue
            if not s:
                current = None
            elif current is not None and i != first:
                current[2].append(s)
                current[3].append(i)

    def rewrite(self, members):
        """The comment for doxygen.  members: the block documents an
        aggregate, so "@member:" lines are removed (returned as a dict
        name -> text for the caller to place)."""
        moved = {}
        parts = [list(p) for p in self.parts]
        skip = set()
        if members:
            for names, _, text, lines in self.args:
                for n in names:
                    moved[n] = ' '.join(text)
                skip.update(lines)
        done_name = False
        for i, (_, c, _) in enumerate(parts):
            if i in skip:
                parts[i][1] = ''
                continue
            s = c.strip()
            if not s:
                continue
            if not done_name:
                done_name = True
                m = NAME_LINE_RE.match(s)
                if m:
                    parts[i][1] = '\\brief ' + inline_args(m.group(3))
                    continue
                m = ARG_LINE_RE.match(s)
                if m and self.inline_member:
                    parts[i][1] = inline_args(m.group(3))
                    continue
            m = ARG_LINE_RE.match(s)
            if m:
                names = [m.group(1)] + re.findall(r'@(\w+)', m.group(2))
                parts[i][1] = ('\\param ' + ','.join(names) + ' ' +
                               inline_args(m.group(3)))
                continue
            m = SECTION_RE.match(s)
            if m:
                cmd = '\\return ' if m.group(1).startswith('Ret') \
                    else '\\context '
                parts[i][1] = cmd + inline_args(m.group(2))
                continue
            parts[i][1] = inline_args(c)
        return join_comment(parts), moved


def blank(text, spans):
    """text with every span replaced by spaces (newlines kept)."""
    chars = list(text)
    for a, b in spans:
        for k in range(a, b):
            if chars[k] != '\n':
                chars[k] = ' '
    return ''.join(chars)


def match_brace(code, open_pos):
    depth = 0
    for k in range(open_pos, len(code)):
        if code[k] == '{':
            depth += 1
        elif code[k] == '}':
            depth -= 1
            if depth == 0:
                return k
    return len(code)


def split_top(code, start, end, seps):
    """Split code[start:end] at depth-0 separators: [(a, b, sep)]."""
    items, depth, a = [], 0, start
    for k in range(start, end):
        ch = code[k]
        if ch in '([{':
            depth += 1
        elif ch in ')]}':
            depth -= 1
        elif depth == 0 and ch in seps:
            items.append((a, k, ch))
            a = k + 1
    if code[a:end].strip():
        items.append((a, end, None))
    return items


def declarator_name(text):
    m = re.search(r'\(\s*\*+\s*([A-Za-z_]\w*)\s*\)', text)
    if m:
        return m.group(1)
    text = re.sub(r'\[[^\]]*\]', ' ', text)
    text = re.sub(r':\s*\w+\s*$', ' ', text)
    text = re.sub(r'\b\w+\s*\([^()]*\)', ' ', text)  # VS_ATOMIC(type)
    ids = [i for i in IDENT_RE.findall(text) if i not in KEYWORDS]
    return ids[-1] if ids else None


def aggregate_members(code, brace, kind):
    """[(name, insert position)] of the members of the aggregate whose
    '{' is at brace (code has comments blanked)."""
    close = match_brace(code, brace)
    out = []
    if kind == 'enum':
        for a, b, _ in split_top(code, brace + 1, close, ','):
            m = IDENT_RE.search(code, a, b)
            if m:
                end = b
                while end > a and code[end - 1].isspace():
                    end -= 1
                out.append((m.group(0), end))
        return out
    for a, b, sep in split_top(code, brace + 1, close, ';'):
        if sep is None:
            continue
        decls = split_top(code, a, b, ',')
        for k, (c, d, _) in enumerate(decls):
            name = declarator_name(code[c:d])
            if name:
                # After the ',' or ';' that ends the declarator: doxygen
                # misreads a function pointer or shows a '<' otherwise.
                out.append((name, b + 1 if k == len(decls) - 1 else d + 1))
    return out


def process(text, path):
    """Return (filtered text, problems) for one header."""
    tokens = [m for m in TOKEN_RE.finditer(text)
              if m.group(0).startswith('/*')]
    code = blank(text, [(m.start(), m.end()) for m in tokens])
    edits = []      # (start, end, replacement)
    problems = []   # (line, message)
    base = os.path.basename(path)

    def line_of(pos):
        return text.count('\n', 0, pos) + 1

    def line_start(pos):
        return text.rfind('\n', 0, pos) + 1

    seen_code = False
    # The bodies of every struct and union: their member lines.
    bodies = [(m.end() - 1, match_brace(code, m.end() - 1))
              for m in re.finditer(r'\b(?:struct|union)\s*\w*\s*\{', code)]
    for m in tokens:
        a, b, ctext = m.start(), m.end(), m.group(0)
        before = text[line_start(a):a]
        if not seen_code and code[:a].strip():
            seen_code = True
        # The file's own comment.
        if not seen_code and not ctext.startswith('/**') and \
                'SPDX-License-Identifier' not in ctext:
            parts = split_comment(ctext)
            i = next((k for k, p in enumerate(parts) if p[1].strip()), None)
            fm = FILE_HEAD_RE.match(parts[i][1].strip()) if i is not None \
                else None
            if fm:
                seen_code = True
                if base == 'vmsim.h':
                    parts[i][1] = '\\mainpage vmsim'
                else:
                    parts[i][1] = '\\file ' + fm.group(1) + \
                        ' \\brief ' + inline_args(fm.group(2))
                for k in range(i + 1, len(parts)):
                    parts[k][1] = inline_args(parts[k][1])
                parts[0][0] = parts[0][0].replace('/*', '/**', 1)
                edits.append((a, b, join_comment(parts)))
                continue
        if ctext.startswith('/**') and not ctext.startswith('/**<') and \
                not before.strip():
            blk = Block(ctext)
            nxt = AGGREGATE_RE.match(code, b)
            if blk.inline_member and any(x < a < y for x, y in bodies):
                new, _ = blk.rewrite(False)
                edits.append((a, b, new))
                continue
            if nxt:
                brace = nxt.end() - 1
                members = aggregate_members(code, brace, nxt.group(1))
                new, moved = blk.rewrite(True)
                edits.append((a, b, new))
                names = {n for n, _ in members}
                for n, pos in members:
                    if n in moved:
                        edits.append((pos, pos, ' /**< ' + inline_args(
                            moved[n]) + ' */'))
                for names_, i, _, _ in blk.args:
                    for n in names_:
                        if n not in names:
                            problems.append((line_of(a) + i,
                                             "'@%s:' names no member of %s"
                                             % (n, nxt.group(2) or
                                                'the ' + nxt.group(1))))
                if blk.name and nxt.group(2) and blk.name != nxt.group(2):
                    problems.append((line_of(a), "kernel-doc names '%s' "
                                     "but precedes %s %s" % (
                                         blk.name, nxt.group(1),
                                         nxt.group(2))))
                continue
            new, _ = blk.rewrite(False)
            edits.append((a, b, new))
            check_function(blk, code, b, line_of(a), problems)
            continue
        # A trailing comment documents the declaration it follows.
        if before.strip() and not ctext.startswith('/**'):
            lead = before.strip()
            if lead.startswith('#') and not lead.startswith('#define'):
                continue
            if lead.endswith('{') or lead.endswith('}'):
                continue
            edits.append((a, a + 2, '/**<'))
            # "int a, b; /* text */" in a struct documents a and b.
            ls = line_start(a)
            if lead.endswith(';') and any(x < a < y for x, y in bodies):
                doc = ' /**< ' + ' '.join(
                    c.strip() for _, c, _ in split_comment(ctext)
                    if c.strip()) + ' */'
                for c, d, sep in split_top(code, ls, a, ','):
                    if sep == ',':
                        edits.append((d + 1, d + 1, doc))
    out = text
    for a, b, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        out = out[:a] + new + out[b:]
    return out, problems


DECL_END_RE = re.compile(r'[;{]')


def check_function(blk, code, pos, line, problems):
    """Problems of a kernel-doc block before a function or a macro."""
    m = DECL_END_RE.search(code, pos)
    decl = code[pos:m.start()] if m else code[pos:]
    stripped = decl.strip()
    if stripped.startswith('#define'):
        dm = re.match(r'#define\s+(\w+)', stripped)
        if blk.name and dm and dm.group(1) != blk.name:
            problems.append((line, "kernel-doc names '%s' but precedes "
                             "macro %s" % (blk.name, dm.group(1))))
        return
    fm = re.match(r'(.*?)\b([A-Za-z_]\w*)\s*\((.*)\)\s*$', stripped, re.S)
    if not fm or fm.group(1).strip().startswith('typedef') or \
            '(' in fm.group(1):
        return
    name = fm.group(2)
    if PRIVATE_RE.match(name):
        return  # not in the reference (EXCLUDE_SYMBOLS)
    if blk.name is None:
        problems.append((line, "kernel-doc of %s() has no 'name - "
                         "purpose' line" % name))
    elif blk.name != name:
        problems.append((line, "kernel-doc names '%s' but precedes %s()"
                         % (blk.name, name)))
    if 'Context' not in blk.sections:
        problems.append((line, "%s(): no 'Context:' section (locking "
                         "rule)" % name))
    rtype = re.sub(r'\b(VS_EXTERN|static|inline|extern)\b', ' ',
                   fm.group(1)).split()
    if rtype != ['void'] and 'Return' not in blk.sections:
        problems.append((line, "%s(): returns a value but has no "
                         "'Return:' section" % name))


def main(argv):
    if len(argv) >= 2 and argv[1] == '--check':
        bad = 0
        for path in argv[2:]:
            with open(path, encoding='utf-8') as f:
                _, problems = process(f.read(), path)
            for line, msg in problems:
                print('%s:%d: warning: %s' % (path, line, msg))
                bad += 1
        return 1 if bad else 0
    if len(argv) != 2:
        sys.stderr.write('usage: %s FILE | --check FILE...\n' % argv[0])
        return 2
    with open(argv[1], encoding='utf-8') as f:
        out, _ = process(f.read(), argv[1])
    sys.stdout.write(out)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
