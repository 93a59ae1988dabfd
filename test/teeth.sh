#!/bin/sh
# teeth.sh build SRC BUILD [VARIANT]: make the build BUILD/teeth[-VARIANT]
# that has every planted bug compiled in (-DVS_BROKEN=env), each off
# until the environment variable VS_BROKEN names it.  VARIANT is "" (the
# plain build, with vmsim-test-vcpu too), "lockdep" (-DVS_LOCKDEP=ON) or
# a VS_SANITIZE value.  The CTest test teeth-build[-VARIANT] runs it, the
# fixture every teeth test of that variant requires.
#
# teeth.sh SRC BUILD NAME SUITE [VARIANT]: run SUITE of vmsim-test with
# the planted bug NAME on, in that build.  Passes only if the suite
# fails: a suite that cannot catch the bug it exists for has no teeth
# (SUITE may name several, each SUITE or SUITE/CASE: all must fail).
# test/CMakeLists.txt runs it for each entry of sync/broken.def.  With
# TEETH_EXE=vmsim-test-vcpu (and VS_TEST_VCPUS) the suite runs on
# virtual CPUs instead (vmsim/vcpu.h).
set -u
[ $# -ge 3 ] || {
	echo "usage: teeth.sh build SRC BUILD [VARIANT]" >&2
	echo "       teeth.sh SRC BUILD NAME SUITE [VARIANT]" >&2
	exit 2
}
if [ "$1" = build ]; then
	src=$2 build=$3 variant=${4:-}
	dir=$build/teeth${variant:+-$variant}
	lockdep=OFF sanitize='' targets=vmsim-test
	case $variant in
	"")	targets="vmsim-test vmsim-test-vcpu" ;;
	lockdep) lockdep=ON ;;
	*)	sanitize=$variant ;;
	esac
	mkdir -p "$dir"
	# The log is shown only when the build fails.
	# shellcheck disable=SC2086 # $targets: one word per target
	if ! cmake -S "$src" -B "$dir" -DVS_BROKEN=env -DVS_BUILD_TOOLS=OFF \
		-DVS_WERROR=OFF -DVS_LOCKDEP=$lockdep -DVS_SANITIZE="$sanitize" \
		>"$dir/build.log" 2>&1 ||
	   ! cmake --build "$dir" --target $targets -j2 >>"$dir/build.log" 2>&1
	then
		tail -n 30 "$dir/build.log"
		exit 1
	fi
	exit 0
fi
src=$1 build=$2 name=$3 suite=$4 variant=${5:-}
exe=${TEETH_EXE:-vmsim-test}
dir=$build/teeth${variant:+-$variant}
[ -x "$dir/test/$exe" ] || {
	echo "teeth: no $dir/test/$exe (test teeth-build${variant:+-$variant})"
	exit 1
}
# SUITE may be a comma-separated list, each SUITE or SUITE/CASE: every
# one must fail with the bug.  At the default scale always: a smaller
# VS_TEST_SCALE would explore fewer schedules than catch the bug.
unset VS_TEST_SCALE
status=0
for item in $(echo "$suite" | tr , ' '); do
	s=${item%%/*}
	unset CK_RUN_CASE	# an empty one would run no case at all
	[ "$s" = "$item" ] || export CK_RUN_CASE="${item#*/}"
	VS_BROKEN=$name CK_RUN_SUITE=$s CK_VERBOSITY=normal timeout 240 \
		"$dir/test/$exe" >"$dir/teeth-$name-$exe.out" 2>&1
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
	     ! grep -q ':[FE]:' "$dir/teeth-$name-$exe.out"; then
		echo "teeth: '$item' ($exe) ended with status $rc and no" \
		     "failed test: not a catch; its last lines:"
		tail -n 5 "$dir/teeth-$name-$exe.out"
		status=1
	else
		echo "teeth: planted bug '$name' caught by '$item' ($exe):"
		# How: the first failure Check reports (its first 3 lines).
		grep -m 1 -A 2 ':[FE]:' "$dir/teeth-$name-$exe.out"
	fi
done
exit $status
