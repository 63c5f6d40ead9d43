/*
 * hw/fabric/fabric_peer.c — the exporters a fab0 device imports from (see
 * struct fab_peer): one AV entry per address, counted by the remote
 * memories that use it and removed with the last of them, so importing
 * descriptors of ever new (possibly forged) addresses grows nothing once
 * their memories are destroyed (a review found one peer kept per address
 * until the device closed).
 */
#include <stdlib.h>
#include <string.h>

#include "hw/fabric/fabric_internal.h"

doca_error_t fab_peer_get(struct fab_dev *dev, const uint8_t *addr, size_t len,
			  struct fab_peer **out)
{
	doca_error_t err = DOCA_SUCCESS;
	struct fab_peer *p;
	fi_addr_t fa;

	pthread_mutex_lock(&dev->peer_lock);
	for (p = dev->peers; p != NULL; p = p->next)
		if (p->addr_len == len && memcmp(p->addr, addr, len) == 0)
			break;
	if (p != NULL) {
		p->refs++;
	} else if ((p = calloc(1, sizeof(*p))) == NULL) {
		hw_diag("no memory for the descriptor's peer");
		err = DOCA_ERROR_NO_MEMORY;
	} else {
		int rc = fi_av_insert(dev->av, addr, 1, &fa, 0, NULL);

		if (rc != 1) {
			free(p);
			p = NULL;
			hw_diag("the descriptor's address is refused by the address vector");
			err = rc == -FI_ENOMEM ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_INVALID_VALUE;
		} else {
			memcpy(p->addr, addr, len);
			p->addr_len = len;
			p->fa = fa;
			p->refs = 1;
			atomic_init(&p->dead_until_ns, 0);
			p->next = dev->peers;
			dev->peers = p;
			dev->npeers++;
		}
	}
	pthread_mutex_unlock(&dev->peer_lock);
	*out = p;
	return err;
}

void fab_peer_put(struct fab_dev *dev, struct fab_peer *peer)
{
	pthread_mutex_lock(&dev->peer_lock);
	if (--peer->refs == 0) {
		struct fab_peer **pp = &dev->peers;

		while (*pp != peer)
			pp = &(*pp)->next;
		*pp = peer->next;
		dev->npeers--;
		/* nothing uses its entry any more: no memory names it, and so
		 * no operation is queued or in flight to it (a buffer of the
		 * memory stays IN_USE until its task completes). The slot
		 * is free for the next peer, which may be another exporter:
		 * rxm closes the endpoints' connections of the address it
		 * removes (test_fab_unit: av_slot_used_again_reaches_the_new_peer).
		 * Its result is dropped: libfabric 1.17's rxm refuses only
		 * flags, and a refusal would leave one entry behind for that
		 * address, nothing a caller could act on. */
		(void)fi_av_remove(dev->av, &peer->fa, 1, 0);
		free(peer);
	}
	pthread_mutex_unlock(&dev->peer_lock);
}

void fab_peers_free(struct fab_dev *dev)
{
	while (dev->peers != NULL) {
		struct fab_peer *p = dev->peers;

		dev->peers = p->next;
		free(p);
	}
	dev->npeers = 0;
}
