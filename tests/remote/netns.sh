#!/usr/bin/env bash
# tests/remote/netns.sh REMOTE_TEST CASE... — the remote tests across two
# network namespaces this script makes: a veth pair, private addresses on
# that pair only (10.231.N.1/30 and .2), the exporter inside one namespace
# and the importer inside the other, so the bytes cross a real (virtual)
# link, not loopback. Bounded in time (timeout per case), always cleaned up
# (trap), and "SKIP: netns: <why>" where namespaces cannot be made (not
# root, no iproute2, no CAP_SYS_ADMIN in a container).
set -u
bin=$1
shift
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: netns: making network namespaces needs root (uid $(id -u))"
	exit 0
fi
if ! command -v ip >/dev/null 2>&1; then
	echo "SKIP: netns: no 'ip' command (Debian package iproute2)"
	exit 0
fi
if ! command -v nsenter >/dev/null 2>&1; then
	echo "SKIP: netns: no 'nsenter' command (Debian package util-linux)"
	exit 0
fi
tag="dcf$$"
ns_a="${tag}a"
ns_b="${tag}b"
net="10.231.$(($$ % 250 + 1))"
cleanup() {
	ip netns del "$ns_a" 2>/dev/null
	ip netns del "$ns_b" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM
if ! why=$(ip netns add "$ns_a" 2>&1); then
	echo "SKIP: netns: cannot make a network namespace: $why"
	exit 0
fi
# Entered with nsenter, not `ip netns exec` or `ip -n`: those also remount
# / and /sys, which a chroot (a fresh-machine check) refuses.
in_a="nsenter --net=/run/netns/$ns_a"
in_b="nsenter --net=/run/netns/$ns_b"
if ! why=$($in_a true 2>&1); then
	echo "SKIP: netns: cannot enter the network namespace it made: $why"
	exit 0
fi
set -e
ip netns add "$ns_b"
ip link add "${tag}x" netns "$ns_a" type veth peer name "${tag}y" netns "$ns_b"
$in_a ip addr add "$net.1/30" dev "${tag}x"
$in_b ip addr add "$net.2/30" dev "${tag}y"
$in_a ip link set "${tag}x" up
$in_b ip link set "${tag}y" up
$in_a ip link set lo up
$in_b ip link set lo up
set +e
echo "netns: exporter in $ns_a ($net.1), importer in $ns_b ($net.2), over veth"
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
