#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""trace-blame.py - who made each lock wait in a multi-fault --trace file.

usage: python3 docs/trace-blame.py [--top N] TRACE.json

TRACE.json is the Chrome trace (Trace Event Format) that
`multi-fault --trace` writes (tools/mf_trace.c).  Slices named
"CLASS wait R" / "CLASS wait W" are lock waits, "CLASS R" / "CLASS W"
lock holds; every other slice ("fault", the writer's operations, and
whatever names later versions add) is context.  Slices written as
async "b"/"e" pairs (category "overlap") count like the others.

For each wait it finds the holds of the same lock class on other
threads that overlap it and conflict with it (a write hold for a read
wait; either for a write wait), and blames the one that overlaps it
most: that hold's thread and the innermost other slice around the hold
(the operation that held the lock).  A wait with no such hold but an
overlapping write wait is "behind a waiting writer" (an rwsem stops new
readers once a writer waits).  The trace samples faults (--trace-sample),
so some holds may be missing: a wait can also be "unexplained".

Prints a table of the slice names, then per class and side the waits,
whom they are blamed on, and the longest N waits (--top, default 1).
Standard library only.  Exit 0; 2 with one line on a bad argument or a
file that is not such a trace.
"""
import bisect
import json
import re
import sys

WAIT_RE = re.compile(r"^(?P<cls>.+) wait (?P<side>[RW])$")
HOLD_RE = re.compile(r"^(?P<cls>.+) (?P<side>[RW])$")


def die(msg):
    print("trace-blame: " + msg, file=sys.stderr)
    sys.exit(2)


class Slice:
    __slots__ = ("name", "tid", "t0", "t1")

    def __init__(self, name, tid, t0, t1):
        self.name, self.tid, self.t0, self.t1 = name, tid, t0, t1

    @property
    def dur(self):
        return self.t1 - self.t0


def load(path):
    """Return (slices, thread names, otherData) of the trace at @path."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        die("%s: %s" % (path, e.strerror))
    except ValueError as e:
        die("%s: not JSON: %s" % (path, e))
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        die("%s: no traceEvents list" % path)
    names, slices, begun = {}, [], {}
    for e in events:
        if not isinstance(e, dict):
            die("%s: an event is not an object" % path)
        ph, tid = e.get("ph"), e.get("tid", 0)
        try:
            if ph == "M" and e.get("name") == "thread_name":
                names[tid] = e["args"]["name"]
            elif ph == "X":
                t0 = float(e["ts"])
                slices.append(Slice(e["name"], tid, t0,
                                    t0 + float(e.get("dur", 0))))
            elif ph == "b":
                begun[(tid, e.get("id"), e["name"])] = float(e["ts"])
            elif ph == "e":
                t0 = begun.pop((tid, e.get("id"), e["name"]), None)
                if t0 is not None:
                    slices.append(Slice(e["name"], tid, t0, float(e["ts"])))
        except (KeyError, TypeError, ValueError):
            die("%s: a %s event lacks a name, ts or args" % (path, ph))
    other = doc.get("otherData", {}) if isinstance(doc, dict) else {}
    return slices, names, other


def thread(names, tid):
    return names.get(tid, "thread %s" % tid)


class Context:
    """The non-lock slices of each thread, to find what held a lock."""

    def __init__(self, slices):
        self.by_tid = {}
        for s in slices:
            if not WAIT_RE.match(s.name) and not HOLD_RE.match(s.name):
                self.by_tid.setdefault(s.tid, []).append(s)
        self.starts = {}
        for tid, lst in self.by_tid.items():
            lst.sort(key=lambda s: (s.t0, -s.t1))
            self.starts[tid] = [s.t0 for s in lst]

    def around(self, h):
        """The name of the innermost non-lock slice on h's thread that
        h began in ("-": none), also for a hold that outlives it."""
        lst = self.by_tid.get(h.tid, [])
        i = bisect.bisect_right(self.starts.get(h.tid, []), h.t0)
        # Slices of one thread nest: the innermost is the last to start
        # among those still open at h's start; look a little way back
        # past the siblings that ended before it.
        for s in reversed(lst[max(0, i - 64):i]):
            if s.t1 > h.t0:
                return s.name
        return "-"


class Index:
    """Slices of one kind sorted by start, for overlap queries."""

    def __init__(self, slices):
        self.s = sorted(slices, key=lambda s: s.t0)
        self.t0 = [s.t0 for s in self.s]
        self.longest = max((s.dur for s in self.s), default=0.0)

    def overlapping(self, w):
        lo = bisect.bisect_left(self.t0, w.t0 - self.longest)
        hi = bisect.bisect_left(self.t0, w.t1)
        return [s for s in self.s[lo:hi]
                if s.t1 > w.t0 and s.tid != w.tid]


def overlap(a, b):
    return min(a.t1, b.t1) - max(a.t0, b.t0)


def covered(w, holds):
    """Microseconds of @w during which one of @holds was held."""
    spans = sorted((max(h.t0, w.t0), min(h.t1, w.t1)) for h in holds)
    total, end = 0.0, w.t0
    for t0, t1 in spans:
        if t1 > end:
            total += t1 - max(t0, end)
            end = t1
    return total


def summary(slices):
    print("slices by name (count, total us, longest us):")
    by = {}
    for s in slices:
        c = by.setdefault(s.name, [0, 0.0, 0.0])
        c[0] += 1
        c[1] += s.dur
        c[2] = max(c[2], s.dur)
    for name in sorted(by, key=lambda n: -by[n][1]):
        c = by[name]
        print("  %-28s %9d %14.3f %12.3f" % (name, c[0], c[1], c[2]))


def blame(slices, names, top):
    """Report the waits of each lock class and side."""
    ctx = Context(slices)
    waits, holds = {}, {}
    for s in slices:
        m = WAIT_RE.match(s.name)
        if m:
            waits.setdefault((m["cls"], m["side"]), []).append(s)
            continue
        m = HOLD_RE.match(s.name)
        if m:
            holds.setdefault((m["cls"], m["side"]), []).append(s)
    for (cls, side), ws in sorted(waits.items()):
        hw = Index(holds.get((cls, "W"), []))
        hr = Index(holds.get((cls, "R"), [])) if side == "W" else Index([])
        ww = Index(waits.get((cls, "W"), [])) if side == "R" else Index([])
        print("\n%s wait %s: %d waits, %.3f us in all, by %s" % (
            cls, side, len(ws), sum(w.dur for w in ws),
            ", ".join("%s %d" % (t, n) for t, n in sorted(
                count_by(ws, lambda w: thread(names, w.tid)).items()))))
        found = blame_side(ws, hw, hr, ww, ctx, names)
        longest(names, found, top)


def blame_side(ws, hw, hr, ww, ctx, names):
    """Blame each of the waits @ws on the conflicting holds in @hw and
    @hr, or on the write waits in @ww; print the sums.  Return the
    list of (wait, hold or None, the slice around the hold)."""
    who, behind, lost, held, found = {}, 0, 0, 0.0, []
    for w in ws:
        cand = hw.overlapping(w) + hr.overlapping(w)
        held += covered(w, cand)
        if cand:
            h = max(cand, key=lambda h: overlap(h, w))
            key = (thread(names, h.tid), h.name, ctx.around(h))
            c = who.setdefault(key, [0, 0.0])
            c[0] += 1
            c[1] += overlap(h, w)
            found.append((w, h, key[2]))
            continue
        if ww.overlapping(w):
            behind += 1
        else:
            lost += 1
        found.append((w, None, None))
    total = sum(w.dur for w in ws)
    print("  of which a conflicting hold was held: %.3f us (%.0f %%)"
          % (held, 100.0 * held / total if total else 0.0))
    print("  blamed on (holder thread, hold, inside): waits, us overlapped")
    for key in sorted(who, key=lambda k: -who[k][0]):
        print("    %-12s %-16s %-16s %7d %14.3f" % (key + tuple(who[key])))
    if behind:
        print("    behind a waiting writer, no hold overlapping: %d" % behind)
    print("    unexplained (the blocker not recorded): %d" % lost)
    return found


def longest(names, found, top):
    """The @top longest waits of @found, (wait, hold or None, inside)."""
    found.sort(key=lambda x: -x[0].dur)
    for w, h, inside in found[:top]:
        print("  longest: %s %.3f us at ts %.3f" % (
            thread(names, w.tid), w.dur, w.t0))
        if h:
            print("    blamed on: %s %s %.3f us at ts %.3f, inside %s" % (
                thread(names, h.tid), h.name, h.dur, h.t0, inside))
        else:
            print("    no conflicting hold recorded meanwhile")


def count_by(items, key):
    out = {}
    for i in items:
        k = key(i)
        out[k] = out.get(k, 0) + 1
    return out


def main(argv):
    top, args = 1, list(argv)
    if args and args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(args) == 3 and args[0] == "--top":
        try:
            top = int(args[1])
        except ValueError:
            top = -1
        if top < 0:
            die("--top: not a count: %s" % args[1])
        args = args[2:]
    if len(args) != 1:
        die("usage: trace-blame.py [--top N] TRACE.json")
    slices, names, other = load(args[0])
    threads = sorted(set(thread(names, s.tid) for s in slices))
    print("%s: %d slices on %d threads (%s)" % (
        args[0], len(slices), len(threads), ", ".join(threads)))
    if other:
        print("recorded %s events, dropped %s, one fault in %s" % (
            other.get("recorded_events", "?"),
            other.get("dropped_events", "?"), other.get("sample", "?")))
    summary(slices)
    blame(slices, names, top)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
