#!/bin/sh
# `meson setup` on a machine without Criterion: the library, its modules and
# the examples build, meson says the tests are off, and an example runs on
# the result; -Dtests=enabled then fails naming Criterion. Criterion is made
# unfindable by a pkg-config directory holding every .pc of this machine but
# criterion.pc (PKG_CONFIG_LIBDIR), checked before it is used.
# usage: no_criterion_build.sh SOURCE_ROOT CC
set -eu
src=$1 cc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "no_criterion_build: $*" >&2; exit 1; }

mkdir "$tmp/pc"
for dir in $(pkg-config --variable pc_path pkg-config | tr ':' ' '); do
	for f in "$dir"/*.pc; do
		[ -e "$f" ] && [ "${f##*/}" != criterion.pc ] && [ ! -e "$tmp/pc/${f##*/}" ] &&
			ln -s "$f" "$tmp/pc/"
	done
done
unset PKG_CONFIG_PATH
export PKG_CONFIG_LIBDIR="$tmp/pc"
pkg-config --exists liburcu || fail "the pkg-config directory lost liburcu"
! pkg-config --exists criterion || fail "criterion is still findable"

CC=$cc meson setup "$tmp/b" "$src" -Dbench=false >"$tmp/setup.log" 2>&1 ||
	{ cat "$tmp/setup.log"; fail "meson setup failed without Criterion"; }
msg='WARNING: tests: off: Criterion (libcriterion-dev) not found; the library, its modules and the examples are built (-Dtests=enabled requires the tests)'
msg=$(printf '%s' "$msg" | sed 's/[().]/\\&/g') # as an extended regular expression
grep -qxE "(.*/)?meson\.build:[0-9]+: $msg" "$tmp/setup.log" || { cat "$tmp/setup.log"; fail "no line: $msg"; }
ninja -C "$tmp/b" >"$tmp/build.log" 2>&1 || { tail -n 40 "$tmp/build.log"; fail "the build failed"; }
for f in libdoca-core.so.0 examples/seed_lifecycle; do
	[ -e "$tmp/b/$f" ] || fail "not built: $f"
done
[ ! -e "$tmp/b/tests" ] || fail "tests/ was configured although Criterion is missing"
[ "$(meson test -C "$tmp/b" --list 2>/dev/null | grep -c '^doca-core:unit')" -eq 0 ] ||
	fail "unit tests are defined without Criterion"
"$tmp/b/examples/seed_lifecycle" >/dev/null || fail "seed_lifecycle failed on the build"

CC=$cc meson setup "$tmp/b2" "$src" -Dtests=enabled >"$tmp/setup2.log" 2>&1 &&
	fail "-Dtests=enabled succeeded without Criterion"
grep -q 'Dependency "criterion" not found' "$tmp/setup2.log" ||
	{ cat "$tmp/setup2.log"; fail "-Dtests=enabled failed without naming criterion"; }
echo "no_criterion_build: built without Criterion, tests off, -Dtests=enabled refused"
