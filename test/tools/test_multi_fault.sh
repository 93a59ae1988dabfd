#!/bin/sh
# SPDX-License-Identifier: MIT
# test_multi_fault.sh BIN SCRATCH: test tools/multi-fault (BIN), writing
# its files in SCRATCH: options and bad values, the JSON, trace and SVG
# it writes (checked by check_output.py), and a 1 s run of each backing.
# Prints "ok N - what" or "not ok N - what" per test; exit 1 if any failed.
# shellcheck disable=SC2016 # expect eval()s its single-quoted tests
set -u
bin=${1:?usage: test_multi_fault.sh BIN SCRATCH}
dir=${2:?usage: test_multi_fault.sh BIN SCRATCH}
check="$(dirname "$0")/check_output.py"
out=$dir/out err=$dir/err chk=$dir/check
n=0 failed=0

if ! command -v python3 >/dev/null 2>&1; then
	echo "test_multi_fault: python3 is needed to check the output" >&2
	exit 1
fi
if [ ! -x "$bin" ]; then
	echo "test_multi_fault: no executable $bin" >&2
	exit 1
fi
mkdir -p "$dir" || exit 1

# run SECONDS ARG...: BIN ARG... under timeout; stdout in $out, stderr
# in $err, exit status in $rc.
run() {
	t=$1
	shift
	timeout "$t" "$bin" "$@" >"$out" 2>"$err"
	rc=$?
}

ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

# not_ok WHAT [FILE...]: a failure, with the exit status and the head of
# each FILE as comments.
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	shift
	if [ $rc -eq 124 ]; then echo "# timed out"; else echo "# exit $rc"; fi
	for f in "$@"; do
		head -n 5 "$f" | sed 's/^/# /'
	done
}

# expect COND WHAT [FILE...]: ok if the shell test COND succeeds.
expect() {
	c=$1
	shift
	if eval "$c"; then ok "$1"; else not_ok "$@"; fi
}

# --help: exit 0, every flag named (not just as the prefix of another),
# and the man page.
run 10 --help
missing=
for f in --backing --uffd-mode --strategy --lock --threads --duration \
	--quick --repeat --writer --writer-rate --seed --json --lockstat \
	--trace --trace-sample --trace-slow-us --sweep --plot; do
	grep -Eq -- "$f([^a-z-]|\$)" "$out" || missing="$missing $f"
done
echo "missing:${missing:- none}" >"$chk"
expect '[ $rc -eq 0 ] && [ -z "$missing" ] && grep -q "man multi-fault" "$out"' \
	"--help names every flag and the man page" "$chk" "$err"

run 10 --version
expect '[ $rc -eq 0 ] && grep -q "^multi-fault (vmsim) [0-9]" "$out"' \
	"--version" "$out" "$err"

# bad_value NAME ARG...: exit 2 with one line on stderr that says NAME.
bad_value() {
	name=$1
	shift
	run 10 "$@"
	expect '[ $rc -eq 2 ] && [ "$(grep -c "" "$err")" -eq 1 ] &&
		grep -Fq -- "$name" "$err"' "bad: $* exits 2 naming $name" \
		"$err"
}
bad_value --backing --backing foo
bad_value --strategy --strategy foo
bad_value --lock --lock foo
bad_value --threads --threads 0
bad_value --threads --threads x
bad_value --duration --duration -1
bad_value --duration --duration abc
bad_value --repeat --repeat 0
bad_value --writer --writer foo
bad_value --writer-rate --writer mmap --writer-rate x
bad_value --seed --writer mmap --seed x
bad_value --uffd-mode --backing uffd --uffd-mode foo
bad_value --trace-slow-us --trace "$dir/x.json" --trace-slow-us x
bad_value --sweep --sweep 1,,2
bad_value --sweep --sweep 1,
bad_value --sweep --sweep 0,2
bad_value --bogus --bogus
bad_value --duration --dur 1
bad_value --trace-slow-us --trace "$dir/x.json" --trace-slow-us
bad_value extra extra

# Flags that do not apply to the others given: refused, never ignored.
bad_value --strategy --backing native --strategy spf
bad_value --lock --backing native --lock rwsem
bad_value --lockstat --backing native --lockstat
bad_value --trace --backing native --trace "$dir/x.json"
bad_value --uffd-mode --uffd-mode sigbus
bad_value --trace-sample --trace-sample 5
bad_value --trace-slow-us --trace-slow-us 5
bad_value --trace-sample --backing uffd --trace "$dir/x.json" --trace-sample 5
bad_value --plot --threads 2 --plot "$dir/nosweep.svg"
bad_value /nonexistent/p.svg --sweep 1,2 --plot /nonexistent/p.svg
bad_value --threads --threads 2 --sweep 1,2
bad_value --writer-rate --writer-rate 5
bad_value --writer-rate --writer none --writer-rate 5
bad_value --seed --seed 3
bad_value --seed --writer fork --seed 3
bad_value --quick --quick --duration 1 --repeat 2

# checked WHAT KIND FILE [CHECK-OPTION...]: the last run exited 0 and
# FILE passes check_output.py KIND with the CHECK-OPTIONs.
checked() {
	what=$1 kind=$2 file=$3
	shift 3
	if [ $rc -ne 0 ]; then
		not_ok "$what" "$err"
	elif python3 "$check" "$kind" "$file" "$@" 2>"$chk"; then
		ok "$what"
	else
		not_ok "$what" "$chk"
	fi
}
run 120 --backing sim --strategy all --threads 2 --duration 0.5 --repeat 2 \
	--json --lockstat
checked "--json --lockstat: JSON lines with the lock statistics, ratios" \
	json "$out" --lockstat --vs-pre
rm -f "$dir/t.json" "$dir/r.json" "$dir/p.svg" "$dir/q.svg"
# The fork writer holds the mmap_lock long: faults wait behind it.  One
# fault in a million sampled: what is kept beyond it is the slow ones.
# The default kernel (6.18) zaps under the VMA's lock, which the trace
# does not show: no mmap_lock hold is asked of the zap.
run 120 --backing sim --strategy locked --threads 2 --duration 1 \
	--writer fork --trace "$dir/t.json" --trace-sample 1000000 \
	--trace-slow-us 50
checked "--trace: zap, writer and setup slices; slow faults kept" trace \
	"$dir/t.json" --slow 50 --zap-vma-lock --slices \
	"MADV_DONTNEED zap,fork,setup: mmap*,teardown: munmap"
# Interleaved: the runs' setups go locked spf pervma, locked spf pervma.
run 60 --backing sim --strategy all --threads 1 --duration 0.2 --repeat 2 \
	--trace "$dir/r.json"
checked "--repeat: the configurations interleaved in rounds" trace \
	"$dir/r.json" --rounds 2
run 120 --backing sim --strategy all --sweep 1,2,4 --duration 0.3 \
	--plot "$dir/p.svg"
checked "--plot: ticks at 1,2,4, log2 axis" svg "$dir/p.svg" \
	--ticks 1,2,4 --log2
run 120 --backing sim --strategy locked --sweep 3,1 --duration 0.3 \
	--plot "$dir/q.svg"
checked "--plot: ticks at 1,3, linear axis" svg "$dir/q.svg" --ticks 1,3

# The block says mean or sum of each figure; --strategy all and --lock
# all end with one summary table, a row per configuration.
run 60 --backing sim --threads 2 --duration 0.5 --repeat 2 --writer mmap
expect '[ $rc -eq 0 ] && grep -q "page-faults  *mean of 2" "$out" &&
	grep -q "writer mmap, sum of 2" "$out" &&
	grep -q "seconds time elapsed  *mean of 2" "$out" &&
	[ "$(grep -c "Summary of 3 configurations, 2 rounds" "$out")" -eq 1 ] &&
	[ "$(grep -Ec "^ +2  rwsem +(locked|spf|pervma) " "$out")" -eq 3 ] &&
	grep -Eq "spf .* [0-9.]+x \([0-9.]+\.\.[0-9.]+\)\$" "$out"' \
	"--strategy all: labelled blocks, one summary with POST/PRE ranges" \
	"$out" "$err"
run 60 --backing sim --strategy locked --lock all --threads 1 --duration 0.2
expect '[ $rc -eq 0 ] &&
	[ "$(grep -c "Summary of 5 configurations" "$out")" -eq 1 ] &&
	[ "$(grep -Ec "^ +1  [a-z]+ +locked " "$out")" -eq 5 ]' \
	"--lock all: one summary table" "$out" "$err"

# End to end, 1 s of each other backing.
run 60 --backing native --threads 2 --duration 1
expect '[ $rc -eq 0 ] && grep -q page-faults "$out"' "native: 1 s run" \
	"$out" "$err"
for m in sigbus threads uv; do
	run 60 --backing uffd --uffd-mode $m --strategy locked --threads 2 \
		--duration 1
	if [ $rc -eq 1 ] && grep -q userfaultfd "$err"; then
		echo "SKIP uffd: $(grep userfaultfd "$err" | head -n 1)"
		continue
	fi
	expect '[ $rc -eq 0 ] && grep -q page-faults "$out"' \
		"uffd --uffd-mode $m: 1 s run" "$out" "$err"
done

run 60 --backing sim --strategy locked --threads 2 --duration 0.5 --lockstat
expect '[ $rc -eq 0 ] && grep -q "lock_stat, sum of 1" "$out" &&
	grep -q "mmap_lock-R" "$out"' "--lockstat: a lock_stat table" \
	"$out" "$err"

echo "1..$n"
[ $failed -eq 0 ]
