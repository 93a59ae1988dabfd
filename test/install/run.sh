#!/bin/sh
# Install vmsim from build dir $1 into a scratch prefix, then build and
# run test/install/consumer.c against it (and, where the vCPU build is
# installed, docs/examples/explore.c): with CMake find_package
# (shared and static), and with pkg-config, whose Libs carry an rpath to
# the prefix's library directory, as README tells a user who installs
# into a prefix the dynamic loader does not search.  No
# LD_LIBRARY_PATH: each program must find the library it was linked
# against by itself, and ldd must show it is the one in the prefix.
set -eu
build=$1
src=$(cd "$(dirname "$0")" && pwd)
work=$build/install-test
rm -rf "$work"
prefix=$("$src/prefix.sh" "$build" "$work/prefix")
unset LD_LIBRARY_PATH
export TSAN_OPTIONS="${TSAN_OPTIONS:-} suppressions=$src/tsan.supp"

# $1 must load libvmsim.so from the scratch prefix, then run clean.
run_shared() {
	lib=$(ldd "$1" | awk '/libvmsim\.so/ { print $3 }')
	case $lib in
	"$prefix"/*) ;;
	*)	echo "install: $1 loads libvmsim from '$lib'," \
			"not from $prefix" >&2
		exit 1 ;;
	esac
	"$1"
}

cmake -S "$src" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_C_FLAGS="${VS_CONSUMER_CFLAGS:-}" \
	-DVS_EXPLORE_EXAMPLE="$src/../../docs/examples/explore.c" >/dev/null
cmake --build "$work/cmake" >/dev/null
run_shared "$work/cmake/consumer_shared"
"$work/cmake/consumer_static"

PKG_CONFIG_PATH=$(find "$prefix" -name vmsim.pc -printf '%h')
export PKG_CONFIG_PATH
libdir=$(pkg-config --variable=libdir vmsim)
# shellcheck disable=SC2046,SC2086 # compiler flags are meant to split
cc ${VS_CONSUMER_CFLAGS:-} -o "$work/consumer_pc" "$src/consumer.c" \
	$(pkg-config --cflags --libs vmsim)
run_shared "$work/consumer_pc"

# The installed tools find the installed profiles, wherever the prefix
# is: a profile only the prefix has, found with no VMSIM_PROFILE_PATH.
if [ -x "$prefix/bin/vcpubench" ]; then
	cp "$prefix/share/vmsim/profiles/flat.profile" \
		"$prefix/share/vmsim/profiles/only-installed.profile"
	env -u VMSIM_PROFILE_PATH "$prefix/bin/vcpubench" --vcpus 2 \
		--machine only-installed --bench events --duration 0.01 \
		>/dev/null || {
		echo "install: vcpubench does not find the installed" \
			"profiles" >&2
		exit 1
	}
fi

# libvmsim-check: the stress harness, which libvmsim must not carry.
if nm -D "$libdir/libvmsim.so" | grep -q ' T vs_stress'; then
	echo "install: libvmsim.so exports stress symbols" >&2
	exit 1
fi
run_shared "$work/cmake/check_consumer_shared"
"$work/cmake/check_consumer_static"
# shellcheck disable=SC2046,SC2086 # compiler flags are meant to split
cc ${VS_CONSUMER_CFLAGS:-} -o "$work/check_consumer_pc" \
	"$src/check_consumer.c" \
	$(pkg-config --cflags --libs vmsim-check)
run_shared "$work/check_consumer_pc"

# The vCPU build (VS_VCPU_INSTALLED=1; not built under TSan):
# docs/examples/explore.c, which exits 0 when its protocol passes 1,000
# schedules, through CMake and through pkg-config.
if [ "${VS_VCPU_INSTALLED:-0}" = 1 ]; then
	for f in libvmsim-vcpu.a libvmsim-check-vcpu.a pkgconfig/vmsim-vcpu.pc; do
		[ -f "$libdir/$f" ] || {
			echo "install: $libdir/$f is missing" >&2
			exit 1
		}
	done
	"$work/cmake/explore_consumer" 2>/dev/null
	# shellcheck disable=SC2046,SC2086 # compiler flags are meant to split
	cc ${VS_CONSUMER_CFLAGS:-} -o "$work/explore_pc" \
		"$src/../../docs/examples/explore.c" \
		$(pkg-config --cflags --libs vmsim-vcpu)
	"$work/explore_pc" 2>/dev/null
fi
