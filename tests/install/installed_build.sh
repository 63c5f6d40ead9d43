#!/bin/sh
# `meson install` into a temporary directory, then an outside program is
# built and run against the installed files only: pkg-config reads only the
# installed doca-core.pc (its prefix moved to the temporary root), the
# compiler sees only the installed headers, the loader only the installed
# library. Checks the layout on the way: headers under <includedir>/doca-core/
# and nowhere else, Cflags naming only that directory, a library that needs
# libdoca-core.so.0; the library finds the verbs module the install put in
# <libdir>/doca-core/ (beside itself, no environment variable), and names
# that directory when the module is gone. Nothing is written outside the
# temporary directory.
# usage: installed_build.sh BUILD_ROOT SOURCE_FILE LIST_SOURCE_FILE INCLUDE_DIR CC
set -eu
build=$1 src=$2 listsrc=$3 srcinc=$4 cc=$5
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
libs=$(echo "$libs" | sed "s/ *$//")
[ "$libs" = "-L$libdir -ldoca-core" ] || fail "Libs are '$libs', expected only -L$libdir -ldoca-core"
byhand=$(sed -n 's/^Libs\(\.private\)\{0,1\}://p' "$pc" | tr ' ' '\n' | grep '^-l' | grep -vx -- -ldoca-core || true)
[ -z "$byhand" ] || fail "$pc lists libraries of its dependencies by hand:" $byhand
static=$(pc_query --static --libs) || fail "pkg-config --static --libs doca-core fails"
case " $static " in
*" -lurcu-cds "*) ;;
*) fail "pkg-config --static --libs lacks the library's dependencies: $static" ;;
esac
case "$static" in
*ibverbs* | *nl-3*) fail "pkg-config --static --libs names rdma-core: $static" ;;
esac

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

# The modules of the install, found beside the library.
"$cc" -std=c11 -Wall -Wextra -Werror "$listsrc" $cflags $libs -o "$tmp/list_devices"
list() { env -u DOCA_CORE_MODULE_DIR LD_LIBRARY_PATH="$libdir" "$tmp/list_devices"; }
if [ -e "$build/hw/libdoca-core-verbs.so" ]; then
	module=$libdir/doca-core/libdoca-core-verbs.so
	[ -f "$module" ] || fail "the verbs module is not installed as $module"
	out=$(list)
	case "$out" in
	*unavailable*) fail "the installed library does not load its module: $out" ;;
	esac
	mv "$module" "$tmp/"
	out=$(list)
	want=$(printf 'verbs verbs unavailable: libdoca-core-verbs.so not found in %s/doca-core, %s' \
		"$libdir" "$prefix/${libdir#"$root$prefix/"}/doca-core" | cut -c1-$((12 + 127))) # "verbs verbs " + caps (127 bytes at most)
	[ "$(echo "$out" | sed -n 2p)" = "$want" ] ||
		fail "without its module the library lists '$(echo "$out" | sed -n 2p)', expected '$want'"
fi
