#!/bin/sh
# SPDX-License-Identifier: MIT
# test_trace_blame.sh BIN SCRIPT SCRATCH: test docs/trace-blame.py
# (SCRIPT) on a trace of a short run of tools/multi-fault (BIN) and on a
# hand-made trace whose answer is known, and its refusals of bad input;
# files go to SCRATCH.  Prints "ok N - what" or "not ok N - what" per
# test; exit 1 if any failed.
# shellcheck disable=SC2016 # expect eval()s its single-quoted tests
set -u
bin=${1:?usage: test_trace_blame.sh BIN SCRIPT SCRATCH}
script=${2:?usage: test_trace_blame.sh BIN SCRIPT SCRATCH}
dir=${3:?usage: test_trace_blame.sh BIN SCRIPT SCRATCH}
out=$dir/out err=$dir/err
tap_head=20 # read by tap.sh
export tap_head
# shellcheck source=test/tools/tap.sh
. "$(dirname "$0")/tap.sh"

if ! command -v python3 >/dev/null 2>&1; then
	echo "test_trace_blame: python3 is needed" >&2
	exit 1
fi
if [ ! -x "$bin" ] || [ ! -r "$script" ]; then
	echo "test_trace_blame: no executable $bin or no script $script" >&2
	exit 1
fi
mkdir -p "$dir" || exit 1

# blame ARG...: the script under timeout; stdout in $out, stderr in
# $err, exit status in $rc.
blame() {
	timeout 120 python3 "$script" "$@" >"$out" 2>"$err"
	rc=$?
}

# A trace whose answer is known: faulter 0 waits 10 us for read, 5 of
# them under the writer's write hold inside "munmap" (a name the script
# has no rule for); faulter 1 waits behind the writer's write wait; the
# writer's write wait overlaps, by 3 us, faulter 0's read hold, which
# begins in a fault and outlives it: an async pair, as
# tools/multi-fault/mf_trace.c writes such a slice.
cat >"$dir/known.json" <<'EOF'
{"displayTimeUnit":"ns","traceEvents":[
{"name":"thread_name","ph":"M","ts":0,"pid":1,"tid":1,"args":{"name":"faulter 0"}},
{"name":"thread_name","ph":"M","ts":0,"pid":1,"tid":2,"args":{"name":"faulter 1"}},
{"name":"thread_name","ph":"M","ts":0,"pid":1,"tid":3,"args":{"name":"writer"}},
{"name":"munmap","cat":"span","ph":"X","ts":0.000,"dur":16.000,"pid":1,"tid":3},
{"name":"mmap_lock W","cat":"lock","ph":"X","ts":5.000,"dur":10.000,"pid":1,"tid":3},
{"name":"fault","cat":"fault","ph":"X","ts":8.000,"dur":20.000,"pid":1,"tid":1},
{"name":"mmap_lock wait R","cat":"lock","ph":"X","ts":10.000,"dur":10.000,"pid":1,"tid":1},
{"name":"mmap_lock wait W","cat":"lock","ph":"X","ts":30.000,"dur":4.000,"pid":1,"tid":3},
{"name":"mmap_lock R","cat":"overlap","ph":"b","id":1,"ts":25.000,"pid":1,"tid":1},
{"name":"mmap_lock R","cat":"overlap","ph":"e","id":1,"ts":33.000,"pid":1,"tid":1},
{"name":"mmap_lock wait R","cat":"lock","ph":"X","ts":31.000,"dur":2.000,"pid":1,"tid":2},
{"name":"zap","cat":"span","ph":"X","ts":40.000,"dur":1.000,"pid":1,"tid":1},
{"name":"faults/s","ph":"C","ts":50.000,"pid":1,"tid":0,"args":{"faults/s":1}}
],
"otherData":{"truncated":false,"dropped_events":0,"recorded_events":10,"max_events":100,"sample":1}}
EOF
blame "$dir/known.json"
expect '[ $rc -eq 0 ] && grep -q "^  zap  *1 " "$out"' \
	"known trace: exit 0, a new slice name listed"
expect 'grep -q "^    writer  *mmap_lock W  *munmap  *1  *5.000$" "$out"' \
	"known trace: the read wait blamed on the write hold in munmap"
expect 'grep -q "of which a conflicting hold was held: 5.000 us (42 %)" "$out"' \
	"known trace: 5 of the 12 us of read waits under the write hold"
expect 'grep -q "behind a waiting writer, no hold overlapping: 1$" "$out"' \
	"known trace: a read wait behind a waiting writer"
expect 'grep -q "^    faulter 0  *mmap_lock R  *fault  *1  *3.000$" "$out"' \
	"known trace: the write wait blamed on an async read hold"

# A real trace: one fault in 10 recorded, a writer flat out.
if timeout 60 "$bin" --threads 2 --writer mmap --strategy locked \
	--duration 0.2 --repeat 1 --trace "$dir/run.json" --trace-sample 10 \
	>"$out" 2>"$err"; then
	rc=0
else
	rc=$?
fi
expect '[ $rc -eq 0 ] && [ -s "$dir/run.json" ]' "multi-fault --trace ran"
blame --top 2 "$dir/run.json"
expect '[ $rc -eq 0 ] && grep -q "^  mmap_lock W  *[1-9]" "$out" &&
	grep -q "^  fault  *[1-9]" "$out"' \
	"multi-fault trace: exit 0, write holds and faults counted"
expect 'grep -q "^mmap_lock wait [RW]: [1-9][0-9]* waits" "$out"' \
	"multi-fault trace: waits found and blamed"

# Refusals: one line on stderr, exit 2.
printf 'not json' >"$dir/bad.json"
printf '{"foo":1}' >"$dir/nolist.json"
for args in "" "$dir/missing.json" "$dir/bad.json" "$dir/nolist.json" \
	"--top x $dir/known.json" "a b"; do
	# shellcheck disable=SC2086 # split on purpose
	blame $args
	expect '[ $rc -eq 2 ] && [ "$(wc -l <"$err")" -eq 1 ] &&
		grep -q "^trace-blame: " "$err"' "refused: '$args'"
done
blame --help
expect '[ $rc -eq 0 ] && grep -q "^usage:" "$out"' "--help exits 0"

tap_done
