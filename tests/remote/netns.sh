#!/usr/bin/env bash
# tests/remote/netns.sh REMOTE_TEST CASE... — the remote tests across two
# network namespaces this script makes: a veth pair, private addresses on
# that pair only (10.231.N.1/30 and .2), the exporter inside one namespace
# and the importer inside the other, so the bytes cross a real (virtual)
# link, not loopback. Bounded in time (timeout per case), always cleaned up
# (trap), and "SKIP: netns: <why>" where namespaces cannot be made (not
# root, no iproute2, no CAP_SYS_ADMIN in a container).
#
# Each namespace is held by a process of its own (`unshare --net sleep`)
# and entered with nsenter: nothing is mounted (`ip netns add` bind-mounts
# /run/netns, and `ip netns exec` / `ip -n` remount / and /sys, which a
# chroot refuses), and killing the two holders removes both namespaces and
# the veth pair with them.
set -u
bin=$1
shift
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: netns: making network namespaces needs root (uid $(id -u))"
	exit 0
fi
for tool in ip unshare nsenter; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: netns: no '$tool' command (Debian packages iproute2, util-linux)"
		exit 0
	fi
done
if ! why=$(unshare --net true 2>&1); then
	echo "SKIP: netns: cannot make a network namespace: $why"
	exit 0
fi
tag="dcf$$"
net="10.231.$(($$ % 250 + 1))"
pid_a=""
pid_b=""
cleanup() {
	[ -n "$pid_a" ] && kill "$pid_a" 2>/dev/null
	[ -n "$pid_b" ] && kill "$pid_b" 2>/dev/null
	wait 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM
unshare --net sleep 900 &
pid_a=$!
unshare --net sleep 900 &
pid_b=$!
# unshare has switched namespace once its /proc entry says so (bounded wait)
self_ns=$(readlink /proc/self/ns/net)
for _ in $(seq 100); do
	a=$(readlink "/proc/$pid_a/ns/net" 2>/dev/null)
	b=$(readlink "/proc/$pid_b/ns/net" 2>/dev/null)
	[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$self_ns" ] && [ "$b" != "$self_ns" ] && break
	sleep 0.05
done
if [ "$a" = "$self_ns" ] || [ "$b" = "$self_ns" ] || [ -z "$a" ] || [ -z "$b" ]; then
	echo "FAIL: netns: the namespace holders did not enter their namespaces"
	exit 1
fi
in_a="nsenter --net=/proc/$pid_a/ns/net"
in_b="nsenter --net=/proc/$pid_b/ns/net"
set -e
ip link add "${tag}x" netns "$pid_a" type veth peer name "${tag}y" netns "$pid_b"
$in_a ip addr add "$net.1/30" dev "${tag}x"
$in_b ip addr add "$net.2/30" dev "${tag}y"
$in_a ip link set "${tag}x" up
$in_b ip link set "${tag}y" up
$in_a ip link set lo up
$in_b ip link set lo up
set +e
echo "netns: exporter in $a ($net.1), importer in $b ($net.2), over veth"
rc=0
for c in "$@"; do
	REMOTE_EXPORTER_PREFIX="$in_a" REMOTE_EXPORTER_DEV="fab0:addr=$net.1" \
		REMOTE_IMPORTER_DEV="fab0:addr=$net.2,retry_ms=1500" \
		timeout 100 $in_b "$bin" "$c"
	r=$?
	echo "netns: $c: exit $r"
	[ $r -eq 0 ] || rc=1
done
exit $rc
