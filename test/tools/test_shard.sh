#!/bin/sh
# SPDX-License-Identifier: MIT
# Sharding (docs/sharding.md): a multi-fault vCPU sweep with repeats and
# an exploration, each run in 4 shards by GNU parallel and merged, give
# what the unsharded run gives, byte for byte; a bad K/N and shard files
# that do not make one job are refused, naming what is wrong.
#
#   test_shard.sh MULTI_FAULT EXPLORE_BROKEN SCRATCH
#
# EXPLORE_BROKEN is docs/examples/explore.c built with -DBROKEN: its
# exploration fails, at a schedule of one shard, and the merge must
# report that one, as the unsharded run does.
# shellcheck disable=SC2016 # expect eval()s its single-quoted tests
set -u
mf=$1
ex=$2
dir=$3
rm -rf "$dir"
mkdir -p "$dir"
out=$dir/out err=$dir/err
# shellcheck source=test/tools/tap.sh
. "$(dirname "$0")/tap.sh"

if ! command -v parallel >/dev/null 2>&1; then
	echo "FAIL: GNU parallel is not installed: install it (the README's" \
		"install line has it: apt-get install parallel)"
	exit 1
fi

# A sweep of two vCPU counts, two strategies, three repeats: 12 jobs.
set -- --machine ivb-ep-2x10x2 --sweep 1,2 --strategy spf,locked \
	--duration 0.02 --repeat 3
"$mf" "$@" >"$dir/mf.txt" 2>"$err"
rc=$?
cp "$dir/mf.txt" "$out"
expect '[ $rc -eq 0 ] && grep -q "POST/PRE" "$dir/mf.txt"' \
	"the unsharded sweep runs"
parallel --halt now,fail=1 "$mf" "$@" --shard '{}/4' '>' "$dir/mf{}.json" \
	::: 1 2 3 4 >"$out" 2>"$err"
rc=$?
expect '[ $rc -eq 0 ]' "4 shards of the sweep run in parallel"
"$mf" --merge "$dir/mf1.json,$dir/mf2.json,$dir/mf3.json,$dir/mf4.json" \
	>"$dir/mf-merged.txt" 2>"$err"
rc=$?
cp "$dir/mf-merged.txt" "$out"
expect '[ $rc -eq 0 ] && cmp "$dir/mf.txt" "$dir/mf-merged.txt"' \
	"the merge prints what the unsharded sweep prints, byte for byte"
"$mf" --merge "$dir/mf4.json,$dir/mf2.json,$dir/mf1.json,$dir/mf3.json" \
	>"$out" 2>"$err"
rc=$?
expect '[ $rc -eq 0 ] && cmp -s "$dir/mf.txt" "$out"' \
	"the shards' files merge in any order"
VMSIM_SHARD=2/4 "$mf" "$@" >"$out" 2>"$err"
rc=$?
expect '[ $rc -eq 0 ] && cmp -s "$dir/mf2.json" "$out"' \
	"VMSIM_SHARD=2/4 runs what --shard 2/4 runs"

# Refusals, each naming the bad value.
for bad in 0/4 5/4 1/0 x 1/4x; do
	"$mf" "$@" --shard "$bad" >"$out" 2>"$err"
	rc=$?
	expect '[ $rc -eq 2 ] && grep -q "'"'$bad'"'" "$err"' \
		"--shard $bad is refused, naming it"
	VMSIM_SHARD=$bad "$mf" "$@" >"$out" 2>"$err"
	rc=$?
	expect '[ $rc -eq 2 ] && grep -q "VMSIM_SHARD: '"'$bad'"'" "$err"' \
		"VMSIM_SHARD=$bad is refused, naming it"
done
"$mf" --merge "$dir/mf1.json,$dir/mf2.json,$dir/mf4.json" >"$out" 2>"$err"
rc=$?
expect '[ $rc -eq 2 ] && grep -q "shard 3/4 is missing" "$err"' \
	"a missing shard is named"
"$mf" --merge "$dir/mf1.json,$dir/mf2.json,$dir/mf2.json,$dir/mf3.json" \
	>"$out" 2>"$err"
rc=$?
expect '[ $rc -eq 2 ] && grep -q "shard 2/4 is given twice" "$err"' \
	"a shard given twice is named"
"$mf" --machine ivb-ep-2x10x2 --vcpus 1 --strategy spf --duration 0.02 \
	--shard 3/4 >"$dir/other.json" 2>"$err"
"$mf" --merge "$dir/mf1.json,$dir/mf2.json,$dir/other.json,$dir/mf4.json" \
	>"$out" 2>"$err"
rc=$?
expect '[ $rc -eq 2 ] && grep -q "other.json (shard 3/4) is of another job" "$err"' \
	"a shard of another job is named"
"$mf" --threads 1 --duration 0.01 --shard 1/2 >"$out" 2>"$err"
rc=$?
expect '[ $rc -eq 2 ] && grep -q "needs --vcpus" "$err"' \
	"--shard is refused on real threads"

# An exploration that fails (exit 0 when caught): its report on stderr.
"$ex" >"$out" 2>"$dir/x.txt"
rc=$?
cp "$dir/x.txt" "$err"
expect '[ $rc -eq 0 ] && grep -q "fails;" "$dir/x.txt"' \
	"the unsharded exploration finds the bug"
# A shard that does not come upon the bug exits 1: not a failure here.
parallel "VMSIM_SHARD={}/4 VMSIM_SHARD_OUT=$dir/x{}.jsonl $ex" \
	'2>' "$dir/x{}.txt" ::: 1 2 3 4 >"$out" 2>"$err"
expect '[ -s "$dir/x1.jsonl" ] && [ -s "$dir/x2.jsonl" ] &&
	[ -s "$dir/x3.jsonl" ] && [ -s "$dir/x4.jsonl" ]' \
	"4 shards of the exploration run in parallel, each writes its line"
found=$(sed -n 's/.*schedule \([0-9]*\) (pct.*/\1/p' "$dir/x.txt")
owner=$(( (found - 1) % 4 + 1 ))
cp "$dir/x$owner.txt" "$out"
expect 'cmp -s "$dir/x.txt" "$dir/x$owner.txt"' \
	"shard $owner finds schedule $found as the unsharded run does"
others=0
for k in 1 2 3 4; do
	[ "$k" = "$owner" ] && continue
	cmp -s "$dir/x.txt" "$dir/x$k.txt" || others=$((others + 1))
done
expect '[ $others -eq 3 ]' "the other shards report other schedules"
VMSIM_SHARD_MERGE="$dir/x3.jsonl,$dir/x1.jsonl,$dir/x4.jsonl,$dir/x2.jsonl" \
	"$ex" >"$out" 2>"$dir/x-merged.txt"
rc=$?
cp "$dir/x-merged.txt" "$err"
expect '[ $rc -eq 0 ] && cmp "$dir/x.txt" "$dir/x-merged.txt"' \
	"the merge reports what the unsharded exploration reports, byte for byte"
VMSIM_SHARD_MERGE="$dir/x1.jsonl,$dir/x2.jsonl,$dir/x4.jsonl" "$ex" \
	>"$out" 2>"$err"
rc=$?
expect '[ $rc -ne 0 ] && grep -q "shard 3/4 of it is missing" "$err"' \
	"the merge names a missing shard of the exploration"
VMSIM_SHARD=5/4 VMSIM_SHARD_OUT="$dir/bad.jsonl" "$ex" >"$out" 2>"$err"
rc=$?
expect '[ "$rc" -ne 0 ] && grep -q "VMSIM_SHARD: '"'5/4'"'" "$err"' \
	"the exploration refuses VMSIM_SHARD=5/4, naming it"
tap_done
