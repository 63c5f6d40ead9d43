/*
 * peer_fabric.h — the raw libfabric RMA peer of `doca_bench remote`
 * (peer_fabric.c) and the target process both contenders write into
 * (remote_target.c).
 */
#ifndef PEER_FABRIC_H
#define PEER_FABRIC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/** Where the raw peer writes: the target's endpoint, key and base. */
struct fabric_raw_addr {
	uint8_t addr[64];
	size_t addr_len;
	uint64_t key;
	uint64_t base;
};

/** The target process: a doca exporter and a raw libfabric target. */
struct remote_target {
	pid_t pid;
	int to_child;  /* closed: the child ends */
	uint8_t desc[512]; /* the doca descriptor */
	size_t desc_len;
	struct fabric_raw_addr raw;
};

/** Bytes of each target memory (enough for every case's slots). */
#define REMOTE_TARGET_LEN (16u << 20)
/** The device both sides open (doca) and the provider the raw peer uses. */
#define REMOTE_DEV "fab0"
#define REMOTE_PROV "tcp;ofi_rxm"

/** Fork the target (pinned to the other CPU); NULL or why not. */
const char *remote_target_start(struct remote_target *t);
void remote_target_stop(struct remote_target *t);

/* peer_fabric.c: the raw target side (used by the target process). */
struct fabric_side;
/** Open an endpoint + MR of len bytes the peers may write and read; NULL or why not. */
const char *fabric_target_open(struct fabric_side **s, size_t len, struct fabric_raw_addr *out);
/** Progress the target (read its CQ). */
void fabric_target_progress(struct fabric_side *s);
void fabric_side_close(struct fabric_side *s);

#endif /* PEER_FABRIC_H */
