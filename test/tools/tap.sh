# shellcheck shell=sh
# SPDX-License-Identifier: MIT
# tap.sh: what the tools' test scripts share, sourced by them.  The
# script sets $out and $err (files) and $rc (an exit status) before
# each expect; tap_head is how many lines of each a failure shows.
# Prints "ok N - what" or "not ok N - what" per test, TAP style.
# shellcheck disable=SC2154 # $out and $err are the sourcing script's
n=0 failed=0 rc=0 tap_head=${tap_head:-3}

# expect COND WHAT: ok if the shell test COND succeeds; else the exit
# status and the head of stdout and stderr as comments.
expect() {
	n=$((n + 1))
	if eval "$1"; then
		echo "ok $n - $2"
		return
	fi
	failed=$((failed + 1))
	echo "not ok $n - $2"
	echo "# exit $rc"
	head -n "$tap_head" "$out" "$err" | sed 's/^/# /'
}

# tap_done: the plan line; exit 1 if any test failed.
tap_done() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
}
