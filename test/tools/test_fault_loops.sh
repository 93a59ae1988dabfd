#!/bin/sh
# SPDX-License-Identifier: MIT
# test_fault_loops.sh BUILD_DIR: faultbench and uffd-floor, whose loop
# is vs_workload_run() (vmsim/workload.h) with a workload of their own,
# end to end: every row measured and its counters consistent (a fault a
# page written to, the writer's pairs counted), the target lines of the
# man pages, --mapping shared, --kernel, and SIGINT ending a run early
# with status 130.  python3 reads the JSON.
# Prints "ok N - what" or "not ok N - what" per test; exit 1 if any failed.
# shellcheck disable=SC2016 # expect eval()s its single-quoted tests
set -u
build=${1:?usage: test_fault_loops.sh BUILD_DIR}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out err=$tmp/err
# shellcheck source=test/tools/tap.sh
. "$(dirname "$0")/tap.sh"

# run TOOL ARG...: TOOL under a 60 s timeout; stdout in $out, stderr in
# $err, exit status in $rc.
run() {
	t=$1
	shift
	timeout 60 "$build/$t" "$@" >"$out" 2>"$err"
	rc=$?
}

# json PYTHON: run the check PYTHON on the JSON objects of $out (a list
# "o"); it raises or fails an assert when they are wrong.
json() {
	python3 -c '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
exec(sys.argv[2])
' "$out" "$1" >>"$err" 2>&1
}

# ---- faultbench --------------------------------------------------------

run faultbench -d 0.05 -r 2 -s all -t 1,2 -w all -j
expect '[ $rc -eq 0 ] && json "
rows = [x for x in o if \"strategy\" in x]
assert len(rows) == 12, len(rows)
for r in rows:
    assert r[\"rounds\"] == 2 and r[\"faults\"] > 0, r
    assert r[\"faults\"] == r[\"pages\"], r
    assert r[\"pages\"] % 512 == 0, r
    assert r[\"ns_per_fault\"] > 0 and r[\"faults_per_s\"] > 0, r
    assert (\"writer_ops\" in r) == (r[\"writer\"] == \"mmap\"), r
    assert r.get(\"writer_ops\", 1) > 0, r
    assert r[\"locked\"] + r[\"spf_success\"] + r[\"vma_lock_success\"] >= r[\"faults\"], r
targets = [x for x in o if \"target\" in x]
assert len(targets) == 7, [t[\"target\"] for t in targets]
assert any(x.get(\"writer_hold\") == \"rwsem\" for x in o)
"' "faultbench: every row, a fault a page, the writer's pairs, 7 targets"

run faultbench -d 0.05 -r 1 -s all -t 1,2 -w all
expect '[ $rc -eq 0 ] &&
	grep -Eq "^  locked @1 none ns/fault +=  *[0-9.]+ \([0-9.]+\.\.[0-9.]+\) \(<= 200\.00\) (PASS|MISS)$" "$out" &&
	grep -q "^  spf @1 none / locked @1 none ns/fault " "$out" &&
	grep -q "^  pervma @1 mmap / locked @1 mmap faults/s " "$out" &&
	grep -q "^  spf @2 none / locked @2 none faults/s " "$out" &&
	grep -q "^host work for the model in the steady state" "$out" &&
	grep -q "^  mmap_lock write hold (mean of the holds):" "$out"' \
	"faultbench: the target lines, host work and writer hold"

# 6.4: a kernel not the default that has a per-VMA lock (3.18 has none).
run faultbench -d 0.05 -r 1 -s pervma -t 2 -w none --mapping shared \
	--kernel 6.4 -j
expect '[ $rc -eq 0 ] && json "
r = o[0]
assert r[\"mapping\"] == \"shared\" and r[\"threads\"] == 2, r
assert r[\"faults\"] == r[\"pages\"] == r[\"vma_lock_success\"], r
"' "faultbench: --mapping shared --kernel 6.4, pervma on two threads"

# SIGINT during the first of 3 rounds of 5 s: out at once, status 130.
timeout 60 "$build/faultbench" -d 5 -r 3 -s locked -t 1 -w none \
	>"$out" 2>"$err" &
pid=$!
sleep 1
kill -INT "$pid"
wait "$pid"
rc=$?
expect '[ $rc -eq 130 ] && grep -q "interrupted" "$err" &&
	grep -q "^locked rwsem      1 none " "$out"' \
	"faultbench: SIGINT ends the measurement, status 130"

# ---- uffd-floor ----------------------------------------------------------

run uffd-floor -d 0.05 -r 2 -t 1,2 -j
if [ $rc -eq 1 ] && grep -q "userfaultfd unavailable" "$err"; then
	n=$((n + 1))
	echo "ok $n - uffd-floor # SKIP no userfaultfd here"
else
	expect '[ $rc -eq 0 ] && json "
rows = [x for x in o if \"impl\" in x]
assert len(rows) == 8, len(rows)
for r in rows:
    assert r[\"rounds\"] == 2 and r[\"pages\"] > 0, r
    assert r[\"pages\"] % 512 == 0, r
    assert r[\"ns_per_fault\"] > 0 and r[\"faults_per_s\"] > 0, r
    assert (\"strategy\" in r) == (r[\"impl\"] == \"vmsim\"), r
targets = [x for x in o if \"target\" in x]
assert len(targets) == 4, targets
"' "uffd-floor: every row of both modes, both implementations"

	run uffd-floor -d 0.05 -r 1 -t 1 -u sigbus,threads -s pervma \
		--kernel 6.4
	expect '[ $rc -eq 0 ] &&
		grep -Eq "^  vmsim / floor sigbus  @1   = .*\(>= 0\.80\) (PASS|MISS)$" "$out" &&
		grep -Eq "^  vmsim / floor threads @1   = .*\(>= 0\.80\) (PASS|MISS)$" "$out"' \
		"uffd-floor: the target lines, --strategy pervma --kernel 6.4"

	timeout 60 "$build/uffd-floor" -d 5 -r 3 -t 1 -u sigbus \
		>"$out" 2>"$err" &
	pid=$!
	sleep 1
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	expect '[ $rc -eq 130 ] && grep -q "interrupted" "$err"' \
		"uffd-floor: SIGINT ends the measurement, status 130"
fi

tap_done
