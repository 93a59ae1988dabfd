#!/bin/sh
# SPDX-License-Identifier: MIT
# The engine is deterministic: the same vcpubench workload and seed give
# the same events, virtual time and counts (the "virtual:" line, with
# the event hash) in two separate processes, ASLR on, and so do 20,000
# PCT schedules with the machine reset between them; another seed gives
# another hash.  And vm/ names what it shares: the fault run's hottest
# lines all have names.
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
[ "$(echo "$a" | grep -c ' seed ')" -eq 3 ] ||
	{ echo "FAIL: expected a virtual line for each workload"; exit 1; }
[ "$a" = "$b" ] || { echo "FAIL: the same seed differs between processes:"; echo "$b"; exit 1; }
[ "$(echo "$a" | grep 'fault seed')" != "$(echo "$c" | grep 'fault seed')" ] ||
	{ echo "FAIL: another seed gave the same fault run"; exit 1; }
[ "$(echo "$a" | grep 'schedules seed' | sed 's/seed 5//')" != \
  "$(echo "$c" | grep 'schedules seed' | sed 's/seed 6//')" ] ||
	{ echo "FAIL: another seed gave the same schedules"; exit 1; }
hot=$(echo "$a" | awk '/ fault seed /{f=1; next} / seed /{f=0} f && /hot line/')
[ -n "$hot" ] || { echo "FAIL: no hot lines for the fault run"; exit 1; }
if echo "$hot" | grep -q '(unnamed)'; then
	echo "FAIL: a hot line of the fault run has no name:"; echo "$hot"; exit 1
fi
echo "PASS: two processes agree, bit for bit; seed 6 differs; hot lines named"
