#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_output.py KIND FILE: check what tools/multi-fault wrote.

  json FILE   every non-empty line a JSON object with the result keys
  trace FILE  a Chrome Trace Event file: fields, per-thread order, nesting
  svg FILE    a well-formed SVG plot with a line, axis label and legend

Exit 0 if FILE passes, 1 (with the reason on stderr) if not, 2 on misuse.
Standard library only.
"""
import json
import sys
import xml.etree.ElementTree as ET

JSON_KEYS = ("backing", "uffd_mode", "strategy", "lock", "threads", "writer",
             "duration_s", "repeats", "faults", "faults_per_s",
             "faults_per_s_stddev", "aborts")
SVG = "{http://www.w3.org/2000/svg}"
STRATEGIES = ("locked", "spf", "pervma")
EPS = 1e-3  # us: a nanosecond of slack for ts + dur rounding


class Bad(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Bad(msg)


def isnum(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def no_constant(name):
    raise ValueError("not JSON: " + name)


def check_json(path):
    n = 0
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                o = json.loads(line, parse_constant=no_constant)
            except ValueError as e:
                raise Bad("line %d: %s" % (i, e))
            need(isinstance(o, dict), "line %d: not a JSON object" % i)
            missing = [k for k in JSON_KEYS if k not in o]
            need(not missing, "line %d: no %s" % (i, ", ".join(missing)))
            need(isinstance(o["aborts"], dict),
                 "line %d: aborts is not an object" % i)
            need(isnum(o["faults"]) and o["faults"] > 0,
                 "line %d: faults %r, not > 0" % (i, o["faults"]))
            n += 1
    need(n > 0, "no JSON lines")


def check_nesting(key, spans):
    """spans: (ts, dur) of one thread; each inside the open one or after."""
    stack = []  # end times of the open spans, innermost last
    for ts, dur in sorted(spans, key=lambda s: (s[0], -s[1])):
        while stack and stack[-1] <= ts + EPS:
            stack.pop()
        need(not stack or ts + dur <= stack[-1] + EPS,
             "pid/tid %r: X at ts %r dur %r overlaps the one around it"
             % (key, ts, dur))
        stack.append(ts + dur)


def check_trace(path):
    with open(path, encoding="utf-8") as f:
        try:
            doc = json.load(f, parse_constant=no_constant)
        except ValueError as e:
            raise Bad(str(e))
    need(isinstance(doc, dict), "not a JSON object")
    events = doc.get("traceEvents")
    need(isinstance(events, list), "no traceEvents list")
    spans, last, seen = {}, {}, set()
    for i, e in enumerate(events):
        need(isinstance(e, dict), "event %d: not an object" % i)
        for k in ("name", "ph", "pid", "tid"):
            need(k in e, "event %d: no %s" % (i, k))
        ph, name = e["ph"], e["name"]
        key = (e["pid"], e["tid"])
        need(all(isinstance(x, (int, str)) for x in key),
             "event %d: bad pid/tid" % i)
        if ph != "M" or "ts" in e:
            need(isnum(e.get("ts")), "event %d: no numeric ts" % i)
        if ph == "X":
            need(isnum(e.get("dur")) and e["dur"] >= 0,
                 "event %d: X without dur >= 0" % i)
            prev = last.get(key)
            need(prev is None or e["ts"] >= prev,
                 "event %d: ts %r before %r on pid/tid %r"
                 % (i, e["ts"], prev, key))
            last[key] = e["ts"]
            spans.setdefault(key, []).append((e["ts"], e["dur"]))
        elif ph == "M" and name == "thread_name":
            args = e.get("args")
            need(isinstance(args, dict) and isinstance(args.get("name"),
                                                       str),
                 "event %d: thread_name without args.name" % i)
        elif ph == "C":
            args = e.get("args")
            need(isinstance(args, dict) and args and
                 all(isnum(v) for v in args.values()),
                 "event %d: C without numeric args" % i)
        seen.add((ph, name) if ph in "XM" else (ph, None))
    need(("X", "fault") in seen, "no X event named fault")
    need(("M", "thread_name") in seen, "no M thread_name event")
    need(("C", None) in seen, "no C event")
    for key, s in spans.items():
        check_nesting(key, s)


def check_svg(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise Bad("not well-formed: %s" % e)
    need(root.tag == SVG + "svg", "root is %s, not svg:svg" % root.tag)
    need(any(el.tag in (SVG + "polyline", SVG + "path")
             for el in root.iter()), "no polyline or path")
    texts = ["".join(t.itertext()).strip() for t in root.iter(SVG + "text")]
    need(any("threads" in t.lower() for t in texts),
         "no text 'threads' (the x axis label)")
    legend = any("legend" in (el.get("id", "") + " " +
                              el.get("class", "")).lower() and
                 any(True for _ in el.iter(SVG + "text"))
                 for el in root.iter())
    need(legend or any(t in STRATEGIES for t in texts),
         "no legend (an element of id or class legend with text in it, "
         "or a text naming a strategy)")


CHECKS = {"json": check_json, "trace": check_trace, "svg": check_svg}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in CHECKS:
        print("usage: check_output.py json|trace|svg FILE", file=sys.stderr)
        return 2
    kind, path = sys.argv[1], sys.argv[2]
    try:
        CHECKS[kind](path)
    except (Bad, OSError, UnicodeDecodeError) as e:
        print("check_output: %s %s: %s" % (kind, path, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
