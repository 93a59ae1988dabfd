#!/bin/sh
# teeth.sh SRC BUILD NAME SUITE [SANITIZE]: build vmsim with the planted
# bug NAME (-DVS_BROKEN=NAME, and -DVS_SANITIZE=SANITIZE if given) in
# BUILD/teeth[-SANITIZE] and run SUITE of vmsim-test there.  Passes only
# if the suite fails: a suite that cannot catch the bug it exists for
# has no teeth.  test/CMakeLists.txt runs it for each entry of
# sync/broken.def.  With TEETH_EXE=vmsim-test-vcpu (and VS_TEST_VCPUS)
# the suite runs on virtual CPUs instead (sync/vcpu.h).
set -u
src=$1 build=$2 name=$3 suite=$4 sanitize=${5:-}
exe=${TEETH_EXE:-vmsim-test}
dir=$build/teeth${sanitize:+-$sanitize}
cmake -S "$src" -B "$dir" -DVS_BROKEN="$name" -DVS_BUILD_TOOLS=OFF \
	-DVS_SANITIZE="$sanitize" -DVS_WERROR=OFF >/dev/null || exit 1
cmake --build "$dir" --target "$exe" -j2 >/dev/null || exit 1
CK_RUN_SUITE=$suite CK_VERBOSITY=silent timeout 240 \
	"$dir/test/$exe" >/dev/null 2>&1
rc=$?
if [ $rc -eq 77 ]; then
	echo "teeth: suite '$suite' cannot run here (skipped)"
	exit 77
fi
if [ $rc -eq 0 ]; then
	echo "teeth: planted bug '$name' was NOT caught by suite '$suite' ($exe)"
	exit 1
fi
echo "teeth: planted bug '$name' caught by suite '$suite' ($exe)"
