#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_output.py KIND FILE [OPTION...]: check what tools/multi-fault wrote.

  json FILE [--lockstat] [--vs-pre]
              every non-empty line a JSON object with the result keys;
              --lockstat: each with the mmap_lock statistics inside it;
              --vs-pre: each strategy but locked with its ratio to locked
  trace FILE [--slices NAME,...] [--slow US] [--rounds N] [--vcpus N]
             [--processes N] [--zap-vma-lock]
              a Chrome Trace Event file: fields, per-thread order,
              nesting; --slices: an X slice of each NAME (a NAME ending
              in "*": of a name that starts so), and the zap's lock
              holds inside the zap (not with --zap-vma-lock: 6.18's
              MADV_DONTNEED holds the VMA's lock instead); --slow: a fault kept as slow, each
              one with a lock wait or hold of US microseconds or more
              inside it; --rounds: the runs' setups, in time order, are
              every configuration once, N times over (A B C A B C);
              --vcpus: the vCPU mode's, in virtual time: in each
              process, tracks "vCPU 0" .. "vCPU N-1", each with faults,
              the zap on vCPU 0's, the counters "faults/s" and "line
              transfers/s"; --processes: N processes, each named
  svg FILE [--ticks LIST] [--log2]
              a well-formed SVG plot with a line, axis label and legend;
              --ticks: the x tick labels are LIST exactly; --log2: the x
              axis says it is log2 (and without it, says nothing of it)

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


def check_lockstat(i, o):
    ls = o.get("lockstat")
    need(isinstance(ls, dict) and isinstance(ls.get("mmap_lock"), dict),
         "line %d: no lockstat.mmap_lock" % i)
    for side in ("R", "W"):
        s = ls["mmap_lock"].get(side)
        need(isinstance(s, dict) and isnum(s.get("acquisitions")),
             "line %d: no lockstat.mmap_lock.%s.acquisitions" % (i, side))
    need(ls["mmap_lock"]["R"]["acquisitions"] > 0,
         "line %d: no read acquisitions of the mmap_lock counted" % i)


def check_vs_pre(i, o):
    r = o.get("vs_pre")
    if o["strategy"] == "locked":
        need(r is None, "line %d: locked is the PRE, vs_pre %r" % (i, r))
        return
    need(isinstance(r, dict), "line %d: no vs_pre object" % i)
    need(all(isnum(r.get(k)) for k in ("median", "min", "max", "rounds")),
         "line %d: vs_pre %r lacks median, min, max, rounds" % (i, r))
    need(r["min"] <= r["median"] <= r["max"],
         "line %d: vs_pre median outside its range: %r" % (i, r))


def check_json(path, opts):
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
            if "--lockstat" in opts:
                check_lockstat(i, o)
            if "--vs-pre" in opts:
                check_vs_pre(i, o)
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


def inside(outer, inner):
    """Whether X event inner lies within X event outer, same thread."""
    return ((outer["pid"], outer["tid"]) == (inner["pid"], inner["tid"]) and
            outer["ts"] - EPS <= inner["ts"] and
            inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + EPS)


def check_slices(xs, names, vma_lock=False):
    """An X slice of each name; the zap holds the mmap_lock inside it,
    unless the version zaps under the VMA's lock (vma_lock: 6.17 on, which
    the trace does not show)."""
    have = {e["name"] for e in xs}
    missing = [n for n in names
               if not any(h == n or (n.endswith("*") and
                                     h.startswith(n[:-1]))
                          for h in have)]
    need(not missing, "no X slice named %s" % ", ".join(missing))
    zaps = [e for e in xs if e["name"] == "MADV_DONTNEED zap"]
    holds = [e for e in xs if e["name"] == "mmap_lock R"]
    if zaps and not vma_lock:
        need(any(inside(z, h) for z in zaps[:50] for h in holds),
             "no mmap_lock R hold inside a MADV_DONTNEED zap")


def check_slow(xs, slow_us):
    """Faults kept as slow: at least one; each has a long lock slice."""
    faults = [e for e in xs if e["name"] == "fault"]
    need(all(isinstance(e.get("args"), dict) and
             e["args"].get("kept") in ("sample", "slow") for e in faults),
         "a fault without args.kept sample or slow")
    slow = [e for e in faults if e["args"]["kept"] == "slow"]
    need(slow, "no fault kept as slow (a lock wait or hold >= %g us)"
         % slow_us)
    locks = {}
    for e in xs:
        if e.get("cat") == "lock":
            locks.setdefault((e["pid"], e["tid"]), []).append(e)
    for f in slow:
        need(any(inside(f, e) and e["dur"] >= slow_us - EPS
                 for e in locks.get((f["pid"], f["tid"]), [])),
             "fault at ts %r kept as slow without a lock slice of %g us "
             "or more inside it" % (f["ts"], slow_us))
    sampled = len(faults) - len(slow)
    need(sampled < len(slow), "sampling kept %d faults, more than the %d "
         "slow ones: was it heavy?" % (sampled, len(slow)))


def check_rounds(xs, rounds):
    """The setups, by time: the same configurations in each round."""
    seq = [e["name"] for e in sorted(xs, key=lambda e: e["ts"])
           if e["name"].startswith("setup: ")]
    need(seq and len(seq) % rounds == 0,
         "%d setups, not a multiple of %d rounds" % (len(seq), rounds))
    arms = seq[:len(seq) // rounds]
    need(len(set(arms)) == len(arms) and seq == arms * rounds,
         "setups %r: not the same %d configurations in each of %d rounds"
         % (seq, len(arms), rounds))


VCPU_COUNTERS = ("faults/s", "line transfers/s")


def check_processes(events, n):
    """N process_name events, of distinct pids, each with a name."""
    names = {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "process_name":
            args = e.get("args")
            need(isinstance(args, dict) and isinstance(args.get("name"),
                                                       str),
                 "process_name without args.name")
            need(e["pid"] not in names, "pid %r named twice" % e["pid"])
            names[e["pid"]] = args["name"]
    need(len(names) == n, "%d processes named, not %d: %r"
         % (len(names), n, sorted(names.values())))


def check_vcpus(doc, events, xs, n):
    """Each process: tracks vCPU 0..n-1 with faults, the zap, counters."""
    need(doc.get("otherData", {}).get("clock") == "virtual",
         "otherData.clock is not \"virtual\"")
    tracks, counters = {}, {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "thread_name":
            tracks.setdefault(e["pid"], {})[e["args"]["name"]] = e["tid"]
        elif e["ph"] == "C":
            counters.setdefault(e["pid"], set()).add(e["name"])
    need(tracks, "no process with named tracks")
    for pid, t in tracks.items():
        for i in range(n):
            need("vCPU %d" % i in t, "pid %r: no track vCPU %d" % (pid, i))
            need(any(e["name"] == "fault" and e["pid"] == pid and
                     e["tid"] == t["vCPU %d" % i] for e in xs),
                 "pid %r: no fault on vCPU %d" % (pid, i))
        need(any(e["name"] == "MADV_DONTNEED zap" and e["pid"] == pid and
                 e["tid"] == t["vCPU 0"] for e in xs),
             "pid %r: no MADV_DONTNEED zap on vCPU 0" % pid)
        missing = set(VCPU_COUNTERS) - counters.get(pid, set())
        need(not missing, "pid %r: no counter %s" % (pid, ", ".join(
            sorted(missing))))


def check_trace(path, opts):
    with open(path, encoding="utf-8") as f:
        try:
            doc = json.load(f, parse_constant=no_constant)
        except ValueError as e:
            raise Bad(str(e))
    need(isinstance(doc, dict), "not a JSON object")
    events = doc.get("traceEvents")
    need(isinstance(events, list), "no traceEvents list")
    spans, last, seen, xs = {}, {}, set(), []
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
            xs.append(e)
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
    if "--slices" in opts:
        check_slices(xs, opts["--slices"].split(","),
                     "--zap-vma-lock" in opts)
    if "--slow" in opts:
        check_slow(xs, float(opts["--slow"]))
    if "--rounds" in opts:
        check_rounds(xs, int(opts["--rounds"]))
    if "--processes" in opts:
        check_processes(events, int(opts["--processes"]))
    if "--vcpus" in opts:
        check_vcpus(doc, events, xs, int(opts["--vcpus"]))


def check_svg(path, opts):
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
    ticks = [el for el in root.iter(SVG + "g") if el.get("id") == "xticks"]
    if "--ticks" in opts:
        need(ticks, "no group of id xticks")
        got = ["".join(t.itertext()).strip()
               for t in ticks[0].iter(SVG + "text")]
        want = opts["--ticks"].split(",")
        need(got == want, "x ticks %r, not %r" % (got, want))
    label = [" ".join(el.itertext()) for el in root.iter(SVG + "text")
             if el.get("id") == "xlabel"]
    need(label and "threads" in label[0], "no text of id xlabel naming "
         "threads")
    need(("log2" in label[0]) == ("--log2" in opts),
         "x axis label %r %s log2" % (label[0], "without" if "--log2" in
                                       opts else "with"))


CHECKS = {"json": check_json, "trace": check_trace, "svg": check_svg}
# The options of each kind: whether each takes a value.
OPTS = {"json": {"--lockstat": False, "--vs-pre": False},
        "trace": {"--slices": True, "--slow": True, "--rounds": True,
                  "--vcpus": True, "--processes": True,
                  "--zap-vma-lock": False},
        "svg": {"--ticks": True, "--log2": False}}


def parse_opts(kind, args):
    """{option: value or True}, or None on misuse."""
    opts, i = {}, 0
    while i < len(args):
        a = args[i]
        if a not in OPTS[kind] or (OPTS[kind][a] and i + 1 == len(args)):
            return None
        opts[a] = args[i + 1] if OPTS[kind][a] else True
        i += 2 if OPTS[kind][a] else 1
    return opts


def main():
    opts = None
    if len(sys.argv) >= 3 and sys.argv[1] in CHECKS:
        opts = parse_opts(sys.argv[1], sys.argv[3:])
    if opts is None:
        print(__doc__.splitlines()[0].replace('"""', ""), file=sys.stderr)
        return 2
    kind, path = sys.argv[1], sys.argv[2]
    try:
        CHECKS[kind](path, opts)
    except (Bad, OSError, UnicodeDecodeError, ValueError) as e:
        print("check_output: %s %s: %s" % (kind, path, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
