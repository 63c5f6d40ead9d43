#!/bin/sh
# An outside program builds against the build tree through the uninstalled
# pkg-config file (build/meson-uninstalled/), as a developer would, and runs.
# usage: uninstalled_build.sh BUILD_ROOT SOURCE_FILE CC
set -eu
build=$1 src=$2 cc=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=$(PKG_CONFIG_PATH="$build/meson-uninstalled" pkg-config --cflags --libs doca-core)
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Werror "$src" $flags -o "$out/copy_outside"
LD_LIBRARY_PATH="$build" "$out/copy_outside"
