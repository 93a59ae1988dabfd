#!/bin/sh
# SPDX-License-Identifier: MIT
# The engine is deterministic: the same vcpubench workload and seed give
# the same events, virtual time and counts (the "virtual:" line, with
# the event hash) in two separate processes, ASLR on; another seed gives
# another hash.
#
#   test_vcpu_determinism.sh VCPUBENCH
set -eu
bench=$1
run() {
	"$bench" --bench all --vcpus 8 --duration 0.002 --strategy spf \
		--seed "$1" | grep '^virtual:'
}
a=$(run 5)
b=$(run 5)
c=$(run 6)
echo "$a"
[ "$(echo "$a" | grep -c ' seed ')" -eq 2 ] ||
	{ echo "FAIL: expected a virtual line for each workload"; exit 1; }
[ "$a" = "$b" ] || { echo "FAIL: the same seed differs between processes:"; echo "$b"; exit 1; }
[ "$(echo "$a" | grep 'fault seed')" != "$(echo "$c" | grep 'fault seed')" ] ||
	{ echo "FAIL: another seed gave the same fault run"; exit 1; }
echo "PASS: two processes agree, bit for bit; seed 6 differs"
