#!/bin/sh
# SPDX-License-Identifier: MIT
# test_tools.sh BUILD_DIR TOOL...: the option convention
# (tools/common/bench_opts.h) on each TOOL in BUILD_DIR (CMake passes
# every tool of tools/tools.def built here with a man page of its own):
# --help and --version exit 0, a bad or abbreviated option exits 2 with
# one line on stderr; then each tool's own lists and values, and a tiny
# real run of each.
# Prints "ok N - what" or "not ok N - what" per test; exit 1 if any failed.
# shellcheck disable=SC2016 # expect eval()s its single-quoted tests
set -u
build=${1:?usage: test_tools.sh BUILD_DIR TOOL...}
shift
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out err=$tmp/err
# shellcheck source=test/tools/tap.sh
. "$(dirname "$0")/tap.sh"

# run TOOL ARG...: TOOL under a timeout ($limit seconds, 20 unless set);
# stdout in $out, stderr in $err, exit status in $rc.
run() {
	t=$1
	shift
	timeout "${limit:-20}" "$build/$t" "$@" >"$out" 2>"$err"
	rc=$?
}

# refused TOOL ARG...: exit 2 and exactly one line on stderr.
refused() {
	run "$@"
	expect '[ $rc -eq 2 ] && [ "$(grep -c "" "$err")" -eq 1 ] &&
		[ ! -s "$out" ]' "$* is refused with one line"
}

for t in "$@"; do
	if [ ! -x "$build/$t" ]; then
		expect false "$t is built"
		continue
	fi
	run "$t" --help
	expect '[ $rc -eq 0 ] && grep -q "man -l docs/man/$t.1" "$out" &&
		[ -f "$(dirname "$0")/../../docs/man/$t.1" ]' \
		"$t --help exits 0 and names its man page"
	run "$t" -h
	expect '[ $rc -eq 0 ] && grep -q "^usage: $t " "$out"' "$t -h"
	run "$t" --version
	expect '[ $rc -eq 0 ] && grep -Eq "^$t \(vmsim\) [0-9]+\.[0-9]+" "$out"' \
		"$t --version"
	refused "$t" --no-such-option
	refused "$t" -Z
	refused "$t" --json=yes
	refused "$t" an-argument
	# A long option is written in full: --js is not --json.
	refused "$t" --js
	refused "$t" -json
	if [ "$t" != vcpu-calibrate ] && [ "$t" != vcpubench ]; then
		run "$t" --js
		expect 'grep -q -- "--json" "$err"' "$t --js names --json"
	fi
	[ "$t" = vmbench ] && continue
	refused "$t" --duration 0
	refused "$t" --duration 1e3
	refused "$t" --duration -1
	refused "$t" -d
	refused "$t" --threads 0
	refused "$t" --threads 1,,2
	refused "$t" --threads 257
	refused "$t" --threads 2-1
done

# The tools' own lists and values.
refused lockbench --lock rwsem,nosuch
refused lockbench --op read,
refused lockbench --repeat 0
refused lockbench --lock urcu --hooks
refused lockbench --lock urcu,urcu-call --lockstat
refused lockbench --quick --duration 1 --repeat 2
refused faultbench --quick --duration 1
refused uffd-floor --quick --duration 1
refused faultbench --strategy spf,,locked
refused faultbench --mapping both
refused faultbench --writer all,x
refused uffd-floor --uffd-mode uv
refused uffd-floor --strategy all
refused vmbench --bench lookup,,bytes
refused vmbench --bench nosuch
refused multi-fault-ref --threads 1,2
refused vcpu-calibrate --output
refused vcpu-calibrate --output "$tmp/no/such/dir/host"
refused vcpu-calibrate -o "$tmp/host"
refused vcpu-calibrate --out "$tmp/host"
refused vcpu-calibrate --kernel-output
refused vcpu-calibrate --kernel-output "$tmp/no/such/dir/host.kernel"
refused vcpu-calibrate --kernel "$tmp/host.kernel"
# More vCPUs than the fault benchmark's machine has: before any run
# (vcpubench is not built under TSan).
if [ -x "$build/vcpubench" ]; then
	refused vcpubench --vcpus 121
fi

# One tiny real run of each.
run lockbench -d 0.001 -r 1 -l rwsem,urcu -t 1 -o read
expect '[ $rc -eq 0 ] && grep -q "^rwsem  *read" "$out"' "lockbench runs"
run lockbench -d 0.001 -r 2 -l rwsem -t 1 -o read --lockstat --json
expect '[ $rc -eq 0 ] && ! grep -qv "^{.*}$" "$out" &&
	grep -q "\"lockstat\":\"rwsem\"" "$out"' \
	"lockbench --lockstat --json puts the statistics in the JSON"
run vmbench -b pte_walk -j
expect '[ $rc -eq 0 ] && grep -q "^{\"bench\":\"pte_walk\"" "$out"' \
	"vmbench runs"
run faultbench -d 0.001 -r 2 -s locked,spf -t 1 -w none
expect '[ $rc -eq 0 ] && grep -q "spf @1 none / locked @1 none" "$out"' \
	"faultbench runs"
run uffd-floor -d 0.001 -r 1 -t 1 -u sigbus
if [ $rc -eq 1 ] && grep -q "userfaultfd unavailable" "$err"; then
	n=$((n + 1))
	echo "ok $n - uffd-floor runs # SKIP no userfaultfd here"
else
	expect '[ $rc -eq 0 ] && grep -q "vmsim / floor sigbus" "$out"' \
		"uffd-floor runs"
fi
run multi-fault-ref -t 1 -d 0.001 -j
expect '[ $rc -eq 0 ] && grep -q "^{\"impl\":\"ref\",\"threads\":1," "$out"' \
	"multi-fault-ref runs"

# vcpu-calibrate: the keys of the profile format, as the parser reads
# them: the ones it requires are the KEY() rows of vcpu/profile.c's
# table; "numbering" and the cache's two it takes optionally.  The tool reads its
# profile back with that parser before writing it and exits 1 if the
# parser refuses it, so exit 0 is the check that the file loads; here,
# each required key and each optional number (the cache's) once with a
# number (name: host), numbering once with
# one of its two values or left out with a comment saying why,
# prefetch_streams once or, with one CPU, left out likewise,
# prefetch_distance once where prefetch_streams is above 0,
# handoff_same_socket and handoff_other_socket once each and ipi once
# or, with one CPU, left out likewise, and no other line but comments.  The profile in the file, progress on stderr.
# Then on one CPU, where no pair can ping-pong.
keys=$(sed -n 's/^[[:space:]]*KEY("\([a-z_]*\)".*/\1/p' \
	"$(dirname "$0")/../../vcpu/profile.c")
# The optional numeric keys (the cache's), which the tool writes too.
keys="$keys
$(sed -n 's/^[[:space:]]*OPT_KEY("\([a-z_]*\)", T_\(BW\|KIB\|CYCLES\),.*/\1/p' \
	"$(dirname "$0")/../../vcpu/profile.c")"
nkeys=$(echo "$keys" | grep -c .)
expect '[ "$nkeys" -ge 22 ] &&
	echo "$keys" | grep -qx clear_core_bytes_per_cycle &&
	echo "$keys" | grep -qx llc_kib' \
	"the parser's $nkeys numeric and name keys are read from vcpu/profile.c"
# profile_ok FILE: the test above, on FILE.
profile_ok() {
	lines=$nkeys
	for k in $keys; do
		case $k in
		name) re="host" ;;
		*) re="[0-9][0-9.]*" ;;
		esac
		[ "$(grep -c "^$k = $re\$" "$1")" -eq 1 ] || return 1
	done
	case $(grep -c "^numbering = " "$1") in
	0) grep -q "^# numbering: left out" "$1" || return 1 ;;
	1) grep -Eqx "numbering = (socket-major|interleaved)" "$1" ||
		return 1
		lines=$((lines + 1)) ;;
	*) return 1 ;;
	esac
	case $(grep -c "^prefetch_streams = " "$1") in
	0) grep -q "^# prefetch_streams: not measured" "$1" || return 1 ;;
	1) grep -Eqx "prefetch_streams = [0-9]+" "$1" || return 1
		lines=$((lines + 1)) ;;
	*) return 1 ;;
	esac
	# The contended line's keys: once each, or with one CPU left out
	# with a comment saying so.
	case $(grep -c "^handoff_\(same\|other\)_socket = [1-9][0-9]*\$" "$1") in
	0) grep -q "^# handoff_same_socket, handoff_other_socket: not measured" \
		"$1" || return 1 ;;
	2) lines=$((lines + 2)) ;;
	*) return 1 ;;
	esac
	case $(grep -c "^ipi = [1-9][0-9]*\$" "$1") in
	0) grep -q "^# ipi: not measured" "$1" || return 1 ;;
	1) lines=$((lines + 1)) ;;
	*) return 1 ;;
	esac
	# prefetch_distance, 1 to 32, once where there are streams
	if grep -Eqx "prefetch_streams = [1-9][0-9]*" "$1"; then
		grep -Eqx "prefetch_distance = ([1-9]|[12][0-9]|3[0-2])" \
			"$1" || return 1
		lines=$((lines + 1))
	fi
	[ "$(grep -vc '^#' "$1")" -eq "$lines" ]
}
profile=$tmp/host.profile
# A real calibration, however short -d makes it: its memory probe chases
# pointers over 256 MiB, which under ASan took 21 s on a 2-core VM whose
# faults cost 29,000 cycles.
limit=120
kernel=$tmp/host.kernel
run vcpu-calibrate -d 0.005 --output "$profile" --kernel-output "$kernel"
expect '[ $rc -eq 0 ] && [ ! -s "$out" ] && profile_ok "$profile" &&
	grep -q "^vcpu-calibrate: ghz: " "$err" &&
	{ [ "$(nproc)" -lt 2 ] || grep -q "^prefetch_streams = " "$profile"; }' \
	"vcpu-calibrate writes a profile its parser loads, every key once"
# The host kernel's work: comments at the end of the profile, with the
# kernel's release and each figure; and --kernel-output's kernel profile,
# "version = host", every cycles key of vm/kernel.c's table once with a
# number, each replaced one after a comment, which a tool loads by its
# path with vs_kernel_load() (faultbench --kernel refuses a profile that
# does not load, exit 2).
expect 'grep -qx "# The host kernel.s work (for a kernel profile, vmsim/kernel.h):" \
		"$profile" &&
	grep -q "^# Linux $(uname -r)\." "$profile" &&
	grep -q "^# A fault, [0-9]*: " "$profile" &&
	grep -q "^# madvise(MADV_DONTNEED) of 512 faulted pages: [0-9]* a page" \
		"$profile" &&
	grep -q "^# A page zapped, released and freed: [0-9]*, the slope" \
		"$profile" &&
	grep -q "^# A flush.s fixed cost: [0-9]*" "$profile"' \
	"vcpu-calibrate gives the host kernel's work in comments"
ckeys=$(sed -n 's/^[[:space:]]*C("\(cycles_[a-z_]*\)".*/\1/p' \
	"$(dirname "$0")/../../vm/kernel.c")
# kernel_ok FILE: the test above, on FILE.
kernel_ok() {
	[ "$(grep -c "^version = host\$" "$1")" -eq 1 ] || return 1
	[ "$(echo "$ckeys" | grep -c .)" -eq 14 ] || return 1
	for k in $ckeys; do
		[ "$(grep -c "^$k = [0-9][0-9]*\$" "$1")" -eq 1 ] || return 1
	done
	for k in cycles_zap_pte cycles_release cycles_free cycles_pcp_drain \
		cycles_fault cycles_anon cycles_alloc cycles_lru_add \
		cycles_pcp_refill cycles_syscall_mm; do
		grep -q "^# $k: " "$1" &&
			grep -B1 "^$k = " "$1" | head -n 1 | grep -q "^#" ||
			return 1
	done
}
expect '[ -s "$kernel" ] && kernel_ok "$kernel"' \
	"vcpu-calibrate --kernel-output writes every cycles key, version host"
run faultbench -d 0.001 -r 1 -s locked -t 1 -w none --kernel "$kernel"
expect '[ $rc -eq 0 ]' "its kernel profile loads by path (vs_kernel_load)"
if command -v taskset >/dev/null; then
	# The first CPU this shell may run on.
	t=$(taskset -cp $$ | sed 's/.*: //; s/[-,].*//')
	timeout "$limit" taskset -c "$t" "$build/vcpu-calibrate" -d 0.005 \
		>"$out" 2>"$err"
	rc=$?
	expect '[ $rc -eq 0 ] && profile_ok "$out" &&
		grep -q "^# same_socket: no pair of allowed CPUs" "$out" &&
		! grep -q "^prefetch_" "$out"' \
		"vcpu-calibrate on one CPU says no pair was measured"
fi

tap_done
