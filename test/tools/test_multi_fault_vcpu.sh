#!/bin/sh
# SPDX-License-Identifier: MIT
# multi-fault's vCPU mode (--vcpus, --machine): the output is the same,
# byte for byte, in two runs, whether the repeats run one at a time
# (taskset -c 0) or side by side, and wherever the binaries, the current
# directory, the environment and the profile's file are; it has the
# perf-stat lines of the original (page-faults, cache-misses) and the
# breakdown; JSON, --sweep with --plot, --lockstat, a writer and --trace
# work (the trace in virtual time, the same bytes in every run); bad
# options are refused.
#
#   test_multi_fault_vcpu.sh MULTI_FAULT CHECK_OUTPUT_PY SCRATCH
set -eu
mf=$1
check=$2
dir=$3
rm -rf "$dir"
mkdir -p "$dir"
fail() { echo "FAIL: $*"; exit 1; }

small="--vcpus 4 --machine ivb-ep-2x10x2 --duration 0.002 --repeat 2"
# shellcheck disable=SC2086 # one word per option
"$mf" $small >"$dir/a.txt"
# shellcheck disable=SC2086
"$mf" $small >"$dir/b.txt"
# shellcheck disable=SC2086
taskset -c 0 "$mf" $small >"$dir/c.txt"
cat "$dir/a.txt"
cmp -s "$dir/a.txt" "$dir/b.txt" || fail "two runs differ"
cmp -s "$dir/a.txt" "$dir/c.txt" || fail "one at a time differs from two at once"
for want in "page-faults " "cache-misses" "line-transfers" \
	"where a fault's virtual cycles went" "of which mmap_lock" \
	"clearing and copying pages" "spinning" "the zap:" "seconds virtual time" "POST/PRE" \
	"multi-fault --vcpus 4 --machine ivb-ep-2x10x2 --strategy pervma"; do
	grep -q -- "$want" "$dir/a.txt" || fail "no '$want' in the output"
done

# Nor does anything outside the options change a figure (docs/tutorial.md
# compares its outputs byte for byte on any machine): the binaries copied
# to a directory with a longer name, run from another directory, with a
# 5000-byte environment variable and the profile given by path (a longer
# argv) print the same, the path in the command lines aside.
long="$dir/a-much-longer-directory-name-for-the-binaries-xyz"
mkdir -p "$long"
cp "$mf" "$(dirname "$mf")/multi-fault-vcpu" "$long/"
prof=$(cd "$(dirname "$check")/../../profiles" && pwd)/ivb-ep-2x10x2.profile
big=$(head -c 5000 /dev/zero | tr '\0' a)
# shellcheck disable=SC2086
(cd / && env X="$big" "$long/multi-fault" \
	$(echo "$small" | sed "s#ivb-ep-2x10x2#$prof#") >"$dir/d.txt")
sed "s#$prof#ivb-ep-2x10x2#" "$dir/d.txt" >"$dir/e.txt"
grep -q "$prof" "$dir/d.txt" || fail "the path is not in the command lines"
cmp -s "$dir/a.txt" "$dir/e.txt" || {
	diff "$dir/a.txt" "$dir/e.txt"
	fail "another directory, environment or argv changed the output"
}

# --seconds-as scales page-faults by the rate: 60 s of it.
"$mf" --vcpus 2 --duration 0.002 --strategy spf --seconds-as 60 --json \
	>"$dir/s.json"
python3 - "$dir/s.json" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
assert r["machine"] == "ivb-ep-2x10x2" and r["vcpus"] == 2, r
assert r["seconds_as"] == 60, r
# cache-misses count the lines of clears that missed the L3 too, so they
# may outnumber the line transfers; the kernel's instructions are charged.
assert r["cache_misses"] > 0 and r["line_transfers"] > 0, r
assert r["cycles"]["kernel"] > 0, r
c = r["cycles"]
parts = (c["lines"] + c["clear"] + c["fault"] + c["kernel"] + c["irq"] +
         c["syscall"] + c["futex"])
assert 0 < parts <= c["all"] * 1.000001, c
assert c["zap"] > 0 and c["named"], c
PY

# JSON with lock statistics, a sweep with its plot, a writer.
"$mf" --sweep 1,2 --machine ivb-ep-2x10x2 --duration 0.002 \
	--strategy locked,spf --lockstat --json --plot "$dir/p.svg" \
	>"$dir/j.json"
python3 "$check" json "$dir/j.json" --lockstat --vs-pre
python3 "$check" svg "$dir/p.svg" --ticks 1,2 --log2
"$mf" --vcpus 3 --duration 0.002 --strategy pervma --writer mmap \
	>"$dir/w.txt"
grep -q 'writer mmap, sum of 1: [1-9]' "$dir/w.txt" ||
	fail "the writer did nothing: $(grep writer "$dir/w.txt")"

# --trace: a process per repeat, a track per vCPU, in virtual time; the
# same bytes in two runs and one at a time.
tr="--vcpus 4 --duration 0.002 --repeat 2 --strategy locked,spf"
# shellcheck disable=SC2086
"$mf" $tr --trace "$dir/t1.json" >"$dir/t1.txt"
# shellcheck disable=SC2086
"$mf" $tr --trace "$dir/t2.json" >/dev/null
# shellcheck disable=SC2086
taskset -c 0 "$mf" $tr --trace "$dir/t3.json" >/dev/null
cmp -s "$dir/t1.json" "$dir/t2.json" || fail "two traces differ"
cmp -s "$dir/t1.json" "$dir/t3.json" ||
	fail "the trace one at a time differs from two at once"
grep -q "page-faults " "$dir/t1.txt" || fail "no perf-stat block with --trace"
# The default kernel (6.18) zaps under the VMA's lock, which the trace
# does not show: no mmap_lock hold is asked of the zap.
python3 "$check" trace "$dir/t1.json" --vcpus 4 --processes 4 \
	--zap-vma-lock \
	--slices "MADV_DONTNEED zap,mmap_lock R,setup: mmap,teardown: munmap"
grep -q '"spf rwsem 4 vCPUs, repeat 2"' "$dir/t1.json" ||
	fail "no process named 'spf rwsem 4 vCPUs, repeat 2'"
# Slow in virtual microseconds; the writer's track and operations.
"$mf" --vcpus 3 --duration 0.002 --strategy locked --writer mmap \
	--trace "$dir/w.json" --trace-sample 1000000 --trace-slow-us 5 \
	>/dev/null
python3 "$check" trace "$dir/w.json" --vcpus 3 --processes 1 --slow 5 \
	--zap-vma-lock --slices "mmap,MADV_DONTNEED zap"
grep -q '"writer, vCPU 3"' "$dir/w.json" || fail "no writer track"

# Refused, with the option named.
refuse() {
	want=$1
	shift
	if "$mf" "$@" >"$dir/e.out" 2>"$dir/e.err"; then
		fail "accepted: $*"
	fi
	grep -q -- "$want" "$dir/e.err" || {
		cat "$dir/e.err"
		fail "'$*' did not name $want"
	}
}
refuse --vcpus --vcpus 41 --machine ivb-ep-2x10x2
refuse --machine --vcpus 2 --machine no-such-machine
refuse --backing --vcpus 2 --backing native
refuse --trace --machine host --compare-real --trace "$dir/t.json"
refuse --threads --machine flat --threads 2
refuse --vcpus --machine flat
echo "PASS: deterministic, parallel-invariant, complete, traced," \
	"refuses bad options"
