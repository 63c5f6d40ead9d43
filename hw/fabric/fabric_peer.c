/*
 * hw/fabric/fabric_peer.c — the exporters a fab0 device imports from (see
 * struct fab_peer): one AV entry per address.
 */
#include <stdlib.h>
#include <string.h>

#include "hw/fabric/fabric_internal.h"

struct fab_peer *fab_peer_get(struct fab_dev *dev, const uint8_t *addr, size_t len)
{
	struct fab_peer *p;
	fi_addr_t fa;

	pthread_mutex_lock(&dev->peer_lock);
	for (p = dev->peers; p != NULL; p = p->next)
		if (p->addr_len == len && memcmp(p->addr, addr, len) == 0)
			break;
	if (p == NULL && (p = calloc(1, sizeof(*p))) != NULL) {
		if (fi_av_insert(dev->av, addr, 1, &fa, 0, NULL) != 1) {
			free(p);
			p = NULL;
		} else {
			memcpy(p->addr, addr, len);
			p->addr_len = len;
			p->fa = fa;
			atomic_init(&p->dead_until_ns, 0);
			p->next = dev->peers;
			dev->peers = p;
		}
	}
	pthread_mutex_unlock(&dev->peer_lock);
	return p;
}

void fab_peers_free(struct fab_dev *dev)
{
	while (dev->peers != NULL) {
		struct fab_peer *p = dev->peers;

		dev->peers = p->next;
		free(p);
	}
}
