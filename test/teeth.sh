#!/bin/sh
# teeth.sh SRC BUILD NAME SUITE [SANITIZE]: run SUITE of vmsim-test with
# the planted bug NAME on, in the build BUILD/teeth[-SANITIZE] that has
# every bug compiled in (-DVS_BROKEN=env, and -DVS_SANITIZE=SANITIZE if
# given; made by the first teeth test, reused by the others), the bug
# chosen by the environment variable VS_BROKEN=NAME.  Passes only if the
# suite fails: a suite that cannot catch the bug it exists for has no
# teeth (SUITE may name several, each SUITE or SUITE/CASE: all must
# fail).  test/CMakeLists.txt runs it for each entry of
# sync/broken.def.  With TEETH_EXE=vmsim-test-vcpu (and VS_TEST_VCPUS)
# the suite runs on virtual CPUs instead (sync/vcpu.h).
set -u
src=$1 build=$2 name=$3 suite=$4 sanitize=${5:-}
exe=${TEETH_EXE:-vmsim-test}
dir=$build/teeth${sanitize:+-$sanitize}
cmake -S "$src" -B "$dir" -DVS_BROKEN=env -DVS_BUILD_TOOLS=OFF \
	-DVS_SANITIZE="$sanitize" -DVS_WERROR=OFF >/dev/null || exit 1
cmake --build "$dir" --target "$exe" -j2 >/dev/null || exit 1
# SUITE may be a comma-separated list, each SUITE or SUITE/CASE: every
# one must fail with the bug.
status=0
for item in $(echo "$suite" | tr , ' '); do
	s=${item%%/*}
	unset CK_RUN_CASE	# an empty one would run no case at all
	[ "$s" = "$item" ] || export CK_RUN_CASE="${item#*/}"
	VS_BROKEN=$name CK_RUN_SUITE=$s CK_VERBOSITY=normal timeout 240 \
		"$dir/test/$exe" >"$dir/teeth-$name.out" 2>&1
	rc=$?
	if [ $rc -eq 77 ]; then
		echo "teeth: suite '$item' cannot run here (skipped)"
		[ $status -eq 0 ] && exit 77	# not if one was NOT caught
		exit 1
	fi
	# Caught: Check reported a failed or crashed test.  Not a timeout,
	# nor a program that died before a test ran (rc 124, or 128 and up).
	if [ $rc -eq 0 ]; then
		echo "teeth: planted bug '$name' was NOT caught by '$item' ($exe)"
		status=1
	elif [ $rc -eq 124 ] || [ $rc -ge 128 ] ||
	     ! grep -q ':[FE]:' "$dir/teeth-$name.out"; then
		echo "teeth: '$item' ($exe) ended with status $rc and no" \
		     "failed test: not a catch; its last lines:"
		tail -n 5 "$dir/teeth-$name.out"
		status=1
	else
		echo "teeth: planted bug '$name' caught by '$item' ($exe):"
		# How: the first failure Check reports (its first 3 lines).
		grep -m 1 -A 2 ':[FE]:' "$dir/teeth-$name.out"
	fi
done
exit $status
