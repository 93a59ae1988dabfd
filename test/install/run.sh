#!/bin/sh
# Install vmsim from build dir $1 into a scratch prefix, then build and
# run test/install/consumer.c against it both ways: CMake find_package
# (shared and static) and pkg-config.
set -eu
build=$1
src=$(cd "$(dirname "$0")" && pwd)
work=$build/install-test
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$work/prefix" \
	-DCMAKE_C_FLAGS="${VS_CONSUMER_CFLAGS:-}" >/dev/null
cmake --build "$work/cmake" >/dev/null
export TSAN_OPTIONS="${TSAN_OPTIONS:-} suppressions=$src/tsan.supp"
LD_LIBRARY_PATH="$work/prefix/lib" "$work/cmake/consumer_shared"
"$work/cmake/consumer_static"
pc=$work/prefix/lib/pkgconfig
cc ${VS_CONSUMER_CFLAGS:-} -o "$work/consumer_pc" "$src/consumer.c" \
	$(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs vmsim)
LD_LIBRARY_PATH="$work/prefix/lib" "$work/consumer_pc"
# libvmsim-check: the stress harness, which libvmsim must not carry.
if nm -D "$work/prefix/lib/libvmsim.so" | grep -q ' T vs_stress'; then
	echo "libvmsim.so exports stress symbols" >&2
	exit 1
fi
LD_LIBRARY_PATH="$work/prefix/lib" "$work/cmake/check_consumer_shared"
"$work/cmake/check_consumer_static"
cc ${VS_CONSUMER_CFLAGS:-} -o "$work/check_consumer_pc" \
	"$src/check_consumer.c" \
	$(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs vmsim-check)
LD_LIBRARY_PATH="$work/prefix/lib" "$work/check_consumer_pc"
