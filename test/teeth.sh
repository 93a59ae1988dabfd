#!/bin/sh
# teeth.sh SRC BUILD NAME SUITE [SANITIZE]: build vmsim with the planted
# bug NAME (-DVS_BROKEN=NAME, and -DVS_SANITIZE=SANITIZE if given) in
# BUILD/teeth[-SANITIZE] and run SUITE of vmsim-test there.  Passes only
# if the suite fails: a suite that cannot catch the bug it exists for
# has no teeth (SUITE may name several, each SUITE or SUITE/CASE: all
# must fail).  test/CMakeLists.txt runs it for each entry of
# sync/broken.def.  With TEETH_EXE=vmsim-test-vcpu (and VS_TEST_VCPUS)
# the suite runs on virtual CPUs instead (sync/vcpu.h).
set -u
src=$1 build=$2 name=$3 suite=$4 sanitize=${5:-}
exe=${TEETH_EXE:-vmsim-test}
dir=$build/teeth${sanitize:+-$sanitize}
cmake -S "$src" -B "$dir" -DVS_BROKEN="$name" -DVS_BUILD_TOOLS=OFF \
	-DVS_SANITIZE="$sanitize" -DVS_WERROR=OFF >/dev/null || exit 1
cmake --build "$dir" --target "$exe" -j2 >/dev/null || exit 1
# SUITE may be a comma-separated list, each SUITE or SUITE/CASE: every
# one must fail.
status=0
for item in $(echo "$suite" | tr , ' '); do
	s=${item%%/*}
	unset CK_RUN_CASE	# an empty one would run no case at all
	[ "$s" = "$item" ] || export CK_RUN_CASE="${item#*/}"
	CK_RUN_SUITE=$s CK_VERBOSITY=normal timeout 240 \
		"$dir/test/$exe" >"$dir/teeth.out" 2>&1
	rc=$?
	if [ $rc -eq 77 ]; then
		echo "teeth: suite '$item' cannot run here (skipped)"
		[ $status -eq 0 ] && exit 77	# not if one was NOT caught
		exit 1
	fi
	if [ $rc -eq 0 ]; then
		echo "teeth: planted bug '$name' was NOT caught by '$item' ($exe)"
		status=1
	else
		echo "teeth: planted bug '$name' caught by '$item' ($exe):"
		# How: the first failure Check reports (its first 3 lines).
		grep -m 1 -A 2 ':[FE]:' "$dir/teeth.out"
	fi
done
exit $status
