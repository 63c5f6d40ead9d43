#!/bin/sh
# `meson install` into a temporary directory, then an outside program is
# built and run against the installed files only: pkg-config reads only the
# installed doca-core.pc (its prefix moved to the temporary root), the
# compiler sees only the installed headers, the loader only the installed
# library. Checks the layout on the way: headers under <includedir>/doca-core/
# and nowhere else, Cflags naming only that directory, a library that needs
# libdoca-core.so.0. Nothing is written outside the temporary directory.
# usage: installed_build.sh BUILD_ROOT SOURCE_FILE INCLUDE_DIR CC
set -eu
build=$1 src=$2 srcinc=$3 cc=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "installed_build: $*" >&2; exit 1; }

root=$tmp/root
meson install -C "$build" --destdir "$root" --no-rebuild --quiet
pcs=$(find "$root" -name 'doca-core*.pc')
[ "$(echo "$pcs" | wc -l)" -eq 1 ] || fail "expected one installed doca-core.pc, found: $pcs"
pc=$pcs

# Only the installed .pc: PKG_CONFIG_PATH names its directory alone (the
# system directories stay, for liburcu, ck, ...); prefix is moved under $root.
export PKG_CONFIG_PATH="${pc%/*}"
prefix=$(pkg-config --variable=prefix doca-core)
pc_query() { pkg-config --define-variable=prefix="$root$prefix" "$@" doca-core; }
[ "$(pc_query --path)" = "$pc" ] || fail "pkg-config found $(pc_query --path), not $pc"
includedir=$(pc_query --variable=includedir)
libdir=$(pc_query --variable=libdir)
cflags=$(pc_query --cflags | sed "s/ *$//")
libs=$(pc_query --libs)
[ "$cflags" = "-I$includedir/doca-core" ] || fail "Cflags are '$cflags', expected only -I$includedir/doca-core"
byhand=$(sed -n 's/^Libs\(\.private\)\{0,1\}://p' "$pc" | tr ' ' '\n' | grep '^-l' | grep -vx -- -ldoca-core || true)
[ -z "$byhand" ] || fail "$pc lists libraries of its dependencies by hand:" $byhand
pc_query --static --libs >/dev/null || fail "pkg-config --static --libs doca-core fails"

# Every public header, under <includedir>/doca-core/ only.
want=$(cd "$srcinc" && ls doca_*.h)
got=$(cd "$includedir/doca-core" && ls)
[ "$got" = "$want" ] || fail "installed headers differ from include/: $got"
stray=$(find "$root" -name 'doca_*.h' ! -path "$includedir/doca-core/*")
[ -z "$stray" ] || fail "headers outside $includedir/doca-core: $stray"

# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Werror "$src" $cflags $libs -o "$tmp/copy_outside"
readelf -d "$tmp/copy_outside" | grep -q 'NEEDED.*\[libdoca-core\.so\.0\]' ||
	fail "the program does not need libdoca-core.so.0"
loaded=$(LD_LIBRARY_PATH="$libdir" ldd "$tmp/copy_outside" | sed -n 's/^[[:space:]]*libdoca-core\.so\.0 => \([^ ]*\) .*/\1/p')
[ "$loaded" = "$libdir/libdoca-core.so.0" ] || fail "the loader picks '$loaded', not the installed library"
LD_LIBRARY_PATH="$libdir" "$tmp/copy_outside"
