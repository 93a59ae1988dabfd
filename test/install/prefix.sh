#!/bin/sh
# Install vmsim from build dir $1 into the scratch prefix $2 (emptied
# first) and print its absolute path: the install every test of an
# installed vmsim starts from (test/install/run.sh, the docs' build
# lines: test/tools/doc_build_lines.py).
set -eu
rm -rf "$2"
cmake --install "$1" --prefix "$2" >/dev/null
cd "$2" && pwd
