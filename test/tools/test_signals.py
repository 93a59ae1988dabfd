#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test/tools/test_signals.py - SIGINT and SIGTERM at 50 moments of vCPU runs.

Usage: test_signals.py MULTI_FAULT VCPUBENCH EXPLORE_EXAMPLE

Each run is stopped by a real signal, whose real handler runs: at a
chosen moment of the engine (VMSIM_TEST_SIGNAL_AT=N:SIG makes the
engine raise() it at its N-th event start or switch, docs/vcpu.md
"Signals"), 50 moments over multi-fault --vcpus, vcpubench's three
benchmarks and a vs_explore() search (docs/examples/explore.c); and a
few times from outside, to the process group after a delay, as Ctrl-C
is.  Every run must exit 128 + the signal
(130, 143: not killed by it), print its partial results, and say
nothing of a deadlock, a crash or a sanitizer.
"""
import concurrent.futures
import os
import signal
import subprocess
import sys
import time

MF, VB, EX = sys.argv[1:4]
MF_ARGS = [MF, "--vcpus", "4", "--machine", "ivb-ep-2x10x2",
           "--duration", "0.001", "--repeat", "2", "--strategy", "spf"]
BAD = ("deadlock", "signal 11", "died of signal", "Segmentation",
       "AddressSanitizer", "LeakSanitizer", "runtime error", "core dumped",
       "exited with")
SIGS = {"INT": signal.SIGINT, "TERM": signal.SIGTERM}


def spread(n, last):
    """@n moments from 1 to @last."""
    return [1 + k * (last - 1) // (n - 1) for k in range(n)]


def cases():
    """(name, argv, moment, signal name, what the output must hold)."""
    out = []

    def add(name, argv, events, want):
        for i, n in enumerate(events):
            sig = "INT" if i % 2 == 0 else "TERM"
            out.append((name, argv, n, sig, want))

    # Each of multi-fault's two vCPU runs (a child each) takes ~330,000
    # moments; the signal comes in both, at the same moment of each.
    add("multi-fault", MF_ARGS, spread(16, 300000),
        ["Performance counter stats", "multi-fault: interrupted"])
    add("vcpubench events", [VB, "--bench", "events", "--vcpus", "4",
                             "--work", "20000"], spread(6, 80000),
        ["events: stopped by SIG", "events on 4 vCPUs",
         "vcpubench: interrupted"])
    add("vcpubench fault", [VB, "--bench", "fault", "--vcpus", "4",
                            "--duration", "0.001"], spread(6, 300000),
        ["fault: stopped by SIG", "fault on 4 vCPUs",
         "vcpubench: interrupted"])
    add("vcpubench schedules", [VB, "--bench", "schedules", "--work",
                                "1000"], spread(6, 190000),
        ["schedules: stopped by SIG", "vcpubench: interrupted"])
    add("vs_explore", [EX], spread(16, 16000),
        ["explore: check_then_act: interrupted by SIG"])
    return out


def check(name, rc, sig, text, want):
    """The problems of one run's exit status @rc and output @text."""
    bad = []
    if rc != 128 + SIGS[sig]:
        bad.append("exit status %d, not %d" % (rc, 128 + SIGS[sig]))
    for w in want:
        if w not in text:
            bad.append("no '%s' in its output" % w)
    for b in BAD:
        if b in text:
            bad.append("'%s' in its output" % b)
    return bad


def hooked(case):
    name, argv, n, sig, want = case
    env = dict(os.environ, VMSIM_TEST_SIGNAL_AT="%d:%s" % (n, sig))
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    text = p.stdout.decode(errors="replace")
    label = "%s, SIG%s at moment %d" % (name, sig, n)
    return label, check(name, p.returncode, sig, text, want), text


def killed(case):
    """From outside: the signal to the process group (or with "alone" in
    the name, to the process alone) after @delay s."""
    name, argv, delay, sig, want = case
    p = subprocess.Popen(argv, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True)
    time.sleep(delay)
    if "alone" in name:
        os.kill(p.pid, SIGS[sig])
    else:
        os.killpg(p.pid, SIGS[sig])
    out, _ = p.communicate(timeout=120)
    text = out.decode(errors="replace")
    label = "%s, SIG%s after %.2f s" % (name, sig, delay)
    return label, check(name, p.returncode, sig, text, want), text


def main():
    long_mf = MF_ARGS[:6] + ["0.5"] + MF_ARGS[7:]
    async_cases = [
        ("multi-fault", long_mf, 0.4, "INT",
         ["Performance counter stats", "multi-fault: interrupted"]),
        ("multi-fault", long_mf, 0.7, "TERM",
         ["Performance counter stats", "multi-fault: interrupted"]),
        ("multi-fault, the parent alone", long_mf, 0.5, "TERM",
         ["Performance counter stats", "multi-fault: interrupted"]),
        ("vcpubench events", [VB, "--bench", "events", "--work",
                              "100000000"], 0.2, "TERM",
         ["events: stopped by SIGTERM", "vcpubench: interrupted"]),
        ("vcpubench schedules", [VB, "--bench", "schedules", "--work",
                                 "100000000"], 0.2, "INT",
         ["schedules: stopped by SIGINT", "vcpubench: interrupted"]),
    ]
    failed = 0
    n = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(hooked, cases()))
    runs += [killed(c) for c in async_cases]
    for label, bad, text in runs:
        n += 1
        if bad:
            failed += 1
            print("not ok %d - %s: %s" % (n, label, "; ".join(bad)))
            print("# " + "\n# ".join(text.splitlines()[-15:]))
        else:
            print("ok %d - %s" % (n, label))
    print("%d of %d runs stopped cleanly" % (n - failed, n))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
