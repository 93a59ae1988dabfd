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

# --help: exit 0, every flag named (not just as the prefix of another).
run 10 --help
missing=
for f in --backing --uffd-mode --strategy --lock --threads --duration \
	--quick --repeat --writer --writer-rate --seed --json --lockstat \
	--trace --trace-sample --sweep --plot; do
	grep -Eq -- "$f([^a-z-]|\$)" "$out" || missing="$missing $f"
done
echo "missing:${missing:- none}" >"$chk"
expect '[ $rc -eq 0 ] && [ -z "$missing" ]' "--help names every flag" \
	"$chk" "$err"

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
bad_value --writer-rate --writer-rate x
bad_value --seed --seed x
bad_value --uffd-mode --uffd-mode foo
bad_value --plot --plot "$dir/nosweep.svg"
bad_value --bogus --bogus
bad_value extra extra

# valid: WHAT KIND FILE SECONDS ARG...: exit 0 and FILE passes the check.
valid() {
	what=$1 kind=$2 file=$3 t=$4
	shift 4
	run "$t" "$@"
	if [ $rc -ne 0 ]; then
		not_ok "$what" "$err"
	elif python3 "$check" "$kind" "$file" 2>"$chk"; then
		ok "$what"
	else
		not_ok "$what" "$chk"
	fi
}
valid "--json: valid JSON lines" json "$out" 120 \
	--backing sim --strategy all --threads 2 --duration 1 --json
rm -f "$dir/t.json" "$dir/p.svg"
valid "--trace: a valid Chrome trace" trace "$dir/t.json" 120 \
	--backing sim --strategy locked --threads 2 --duration 1 \
	--writer mmap --trace "$dir/t.json"
valid "--plot: a well-formed SVG" svg "$dir/p.svg" 120 \
	--backing sim --strategy all --sweep 1,2 --duration 0.5 \
	--plot "$dir/p.svg"

# End to end, 1 s of each backing.
run 60 --backing sim --threads 2 --duration 1
expect '[ $rc -eq 0 ] && grep -q page-faults "$out" &&
	grep -q "seconds time elapsed" "$out"' "sim: 1 s run" "$out" "$err"
run 60 --backing native --threads 2 --duration 1
expect '[ $rc -eq 0 ] && grep -q page-faults "$out"' "native: 1 s run" \
	"$out" "$err"
for m in sigbus threads uv; do
	run 60 --backing uffd --uffd-mode $m --threads 2 --duration 1
	if [ $rc -eq 1 ] && grep -q userfaultfd "$err"; then
		echo "SKIP uffd: $(grep userfaultfd "$err" | head -n 1)"
		continue
	fi
	expect '[ $rc -eq 0 ] && grep -q page-faults "$out"' \
		"uffd --uffd-mode $m: 1 s run" "$out" "$err"
done

run 60 --backing sim --threads 2 --duration 1 --lockstat
expect '[ $rc -eq 0 ] && grep -Eq "class name|mmap_lock" "$out"' \
	"--lockstat: a lock_stat table" "$out" "$err"

echo "1..$n"
[ $failed -eq 0 ]
