/*
 * hw/fabric/fabric_mr.c — memories on fab0: a local memory is one fi_mr
 * with local access only (queue pairs' domain); each export is one more
 * fi_mr of the region (service domain) with
 * exactly the remote access asked for (least privilege) and a key never
 * used before in this process (the provider's, or a 64-bit counter from a
 * random start), revoked by fi_close when the memory is destroyed; an
 * import checks every field of the descriptor before it makes anything.
 */
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "hw/fabric/fabric_internal.h"

/* HW_ACCESS_* of a local buffer → the local FI_* access it needs: a copy
 * source is what an fi_write sends (FI_WRITE); a copy destination is where
 * an fi_read lands (FI_READ). */
static uint64_t local_access(uint32_t hw)
{
	return ((hw & HW_ACCESS_READ) ? FI_WRITE : 0) | ((hw & HW_ACCESS_WRITE) ? FI_READ : 0);
}

/* HW_ACCESS_* granted to a peer → FI_REMOTE_*. */
static uint64_t remote_access(uint32_t hw)
{
	return ((hw & HW_ACCESS_READ) ? FI_REMOTE_READ : 0) |
	       ((hw & HW_ACCESS_WRITE) ? FI_REMOTE_WRITE : 0);
}

/* The address is a struct sockaddr_in as fi_getname wrote it: port and
 * address in network order, but the family in the host's. The wire carries
 * the family little-endian, like every other field, so a descriptor means
 * the same on a host of the other byte order: @p to_wire converts the
 * host's to the wire's, else back. (A no-op on little-endian hosts.) */
static void wire_family_swap(struct fab_wire *w, bool to_wire)
{
	uint16_t family;

	_Static_assert(offsetof(struct sockaddr_in, sin_family) == 0 &&
			       sizeof(((struct sockaddr_in *)0)->sin_family) == sizeof(family),
		       "the family is the address's first two bytes");
	memcpy(&family, w->addr, sizeof(family));
	family = to_wire ? htole16(family) : le16toh(family);
	memcpy(w->addr, &family, sizeof(family));
}

/* A key we request (the provider does not pick them) is random: the key
 * is all that stands between a peer and an export it was not given (a
 * forger re-hashes a descriptor with another key and access; with keys
 * from a counter, a READ descriptor's key + 1 wrote the memory through its
 * WRITE export, found by a review). 64 random bits are never met again in
 * practice, so a descriptor of an earlier registration does not reach a
 * later one either; a key the domain holds already is drawn again. */
#define MR_KEY_TRIES 8

static doca_error_t mr_reg(struct fab_dev *dev, struct fid_domain *domain, void *addr, size_t len,
			   uint64_t access, struct fid_mr **mr)
{
	int rc = -FI_ENOKEY;

	for (int i = 0; i < MR_KEY_TRIES && rc == -FI_ENOKEY; i++) {
		uint64_t key = 0;

		if (!dev->prov_key && getrandom(&key, sizeof(key), 0) != (ssize_t)sizeof(key)) {
			hw_diag("getrandom: %s: no key to register memory with", strerror(errno));
			*mr = NULL;
			return DOCA_ERROR_OPERATING_SYSTEM;
		}
		rc = fi_mr_reg(domain, addr, len, access, 0, key & dev->key_mask, 0, mr, NULL);
	}
	if (rc != 0) {
		*mr = NULL;
		return fab_reg_errno_to_doca(-rc);
	}
	return DOCA_SUCCESS;
}

doca_error_t fab_mem_register(struct hw_dev *hw, void *addr, size_t len, uint32_t access,
			      struct hw_mr **out)
{
	struct fab_dev *dev = fab_dev_of(hw);
	struct fab_mr *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return DOCA_ERROR_NO_MEMORY;
	doca_error_t err = mr_reg(dev, dev->domain, addr, len, local_access(access), &m->mr);

	if (err != DOCA_SUCCESS) {
		free(m);
		return err;
	}
	m->hw = (struct hw_mr){ .addr = addr, .len = len, .access = access };
	m->dev = dev;
	m->desc = fi_mr_desc(m->mr);
	*out = &m->hw;
	return DOCA_SUCCESS;
}

void fab_mem_deregister(struct hw_mr *hw)
{
	struct fab_mr *m = fab_mr_of(hw);

	/* Revoke every export before the region can go back to the allocator:
	 * a peer's later access finds no key. An access already under way is
	 * not stopped by that (tcp checks the key when an operation starts and
	 * then moves its bytes over later progress calls; a review saw 33 MB
	 * land after the destroy, and a READ send what the application wrote
	 * after it): the service endpoint, whose progress moves them, is
	 * closed with its connections and made again on the same address,
	 * under the lock of whoever progresses it. Peers' operations in
	 * flight on this device's other exports fail too (the connection is
	 * reset); their next ones connect again. */
	if (m->nexports != 0) {
		pthread_mutex_lock(&m->dev->serve_lock);
		for (uint32_t i = 0; i < m->nexports; i++)
			fi_close(&m->exports[i].mr->fid);
		(void)fab_service_renew(m->dev); /* failed: the next export tries again */
		pthread_mutex_unlock(&m->dev->serve_lock);
	}
	if (m->mr != NULL)
		fi_close(&m->mr->fid);
	if (m->remote)
		fab_peer_put(m->dev, m->peer);
	free(m);
}

doca_error_t fab_mem_export(struct hw_mr *hw, uint32_t access, const void **desc, size_t *len)
{
	struct fab_mr *m = fab_mr_of(hw);
	struct fab_dev *dev = m->dev;

	if (m->remote)
		return DOCA_ERROR_NOT_SUPPORTED;
	for (uint32_t i = 0; i < m->nexports; i++) {
		if (m->exports[i].access == access) {
			*desc = &m->exports[i].wire;
			*len = sizeof(m->exports[i].wire);
			return DOCA_SUCCESS;
		}
	}
	if (m->nexports == FAB_EXPORTS_MAX)
		return DOCA_ERROR_FULL; /* unreachable: three distinct non-empty subsets */
	pthread_mutex_lock(&dev->serve_lock);
	uint64_t due = dev->renew_after_ns;
	doca_error_t made = dev->ep == NULL ? fab_service_renew(dev) : DOCA_SUCCESS;

	if (made != DOCA_SUCCESS)
		dev->renew_after_ns = due; /* a refused export leaves the PE's retries as they were */
	pthread_mutex_unlock(&dev->serve_lock);
	/* the service endpoint is gone: its address cannot be bound for now
	 * (INVALID_VALUE from fab_ep_make) or another error (hw_diag says why) */
	if (made != DOCA_SUCCESS)
		return made == DOCA_ERROR_INVALID_VALUE ? DOCA_ERROR_AGAIN : made;
	struct fab_export *x = &m->exports[m->nexports];
	doca_error_t err = mr_reg(dev, dev->sdomain, hw->addr, hw->len, remote_access(access), &x->mr);

	if (err != DOCA_SUCCESS)
		return err;
	x->access = access;
	struct fab_wire *w = &x->wire;

	memset(w, 0, sizeof(*w));
	w->magic = htole32(FAB_WIRE_MAGIC);
	w->version = htole16(FAB_WIRE_VERSION);
	w->size = htole16((uint16_t)sizeof(*w));
	memcpy(w->prov, dev->params.prov, strlen(dev->params.prov)); /* < FAB_PROV_MAX, zero-padded */
	w->addr_len = htole32((uint32_t)dev->name_len);
	memcpy(w->addr, dev->name, dev->name_len);
	wire_family_swap(w, true);
	w->base = htole64(dev->virt_addr ? (uint64_t)(uintptr_t)hw->addr : 0);
	w->len = htole64((uint64_t)hw->len);
	w->key = htole64(fi_mr_key(x->mr));
	w->access = htole32(access);
	w->generation = htole64(atomic_fetch_add(&dev->next_gen, 1));
	w->check = htole64(fab_wire_hash(w, offsetof(struct fab_wire, check)));
	m->nexports++;
	atomic_store_explicit(&dev->exported, true, memory_order_relaxed);
	*desc = w;
	*len = sizeof(*w);
	return DOCA_SUCCESS;
}

/* Every field of a descriptor this device can use; false (hw_diag says
 * which) otherwise. */
static bool wire_valid(const struct fab_dev *dev, const struct fab_wire *w)
{
	uint32_t addr_len = le32toh(w->addr_len);
	uint32_t access = le32toh(w->access);
	uint64_t base = le64toh(w->base), len = le64toh(w->len);

	if (le32toh(w->magic) != FAB_WIRE_MAGIC || le16toh(w->size) != sizeof(*w)) {
		hw_diag("not a doca-core memory descriptor");
		return false;
	}
	if (le16toh(w->version) != FAB_WIRE_VERSION) {
		hw_diag("descriptor version %u, this library reads %u", le16toh(w->version),
			FAB_WIRE_VERSION);
		return false;
	}
	if (le64toh(w->check) != fab_wire_hash(w, offsetof(struct fab_wire, check))) {
		hw_diag("descriptor damaged (its check does not match)");
		return false;
	}
	if (memchr(w->prov, '\0', sizeof(w->prov)) == NULL ||
	    strcmp(w->prov, dev->params.prov) != 0) {
		hw_diag("descriptor of provider '%.*s', this device is '%s'", (int)sizeof(w->prov),
			w->prov, dev->params.prov);
		return false;
	}
	/* the address is inserted into the device's address vector as it is:
	 * only the format the device was opened with (FI_SOCKADDR_IN), or
	 * rxm's vector refuses every later insert (a review's forged family) */
	struct sockaddr_in sin;

	_Static_assert(sizeof(sin) <= sizeof(w->addr), "a descriptor holds an IPv4 address");
	memcpy(&sin, w->addr, sizeof(sin));
	sin.sin_family = le16toh(sin.sin_family); /* little-endian on the wire (wire_family_swap) */
	if (addr_len != sizeof(sin) || sin.sin_family != AF_INET) {
		hw_diag("descriptor address is not an IPv4 socket address (family %u, %u bytes)",
			(unsigned)sin.sin_family, addr_len);
		return false;
	}
	if (addr_len == 0 || addr_len != dev->name_len || len == 0 || base > UINT64_MAX - len ||
	    access == 0 || (access & ~(uint32_t)(HW_ACCESS_READ | HW_ACCESS_WRITE)) != 0 ||
	    w->reserved != 0 || len > SIZE_MAX / 2) {
		hw_diag("descriptor fields out of range");
		return false;
	}
	return true;
}

doca_error_t fab_mem_import(struct hw_dev *hw, const void *desc, size_t len, struct hw_mr **out)
{
	struct fab_dev *dev = fab_dev_of(hw);
	struct fab_wire w;

	if (desc == NULL || len != sizeof(w)) {
		hw_diag("a descriptor of %zu bytes: this library's are %zu", len, sizeof(w));
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(&w, desc, sizeof(w));
	if (!wire_valid(dev, &w))
		return DOCA_ERROR_INVALID_VALUE;
	wire_family_swap(&w, false); /* the address as this host's fi_av_insert reads it */
	struct fab_peer *peer;
	doca_error_t err = fab_peer_get(dev, w.addr, le32toh(w.addr_len), &peer);

	if (err != DOCA_SUCCESS)
		return err;
	struct fab_mr *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		fab_peer_put(dev, peer);
		return DOCA_ERROR_NO_MEMORY;
	}
	/* A descriptor just received says the exporter lives: end a hold-down. */
	atomic_store_explicit(&peer->dead_until_ns, 0, memory_order_relaxed);
	m->hw = (struct hw_mr){ .addr = NULL, .len = (size_t)le64toh(w.len),
				.access = le32toh(w.access) };
	m->dev = dev;
	m->remote = true;
	m->peer = peer;
	m->base = le64toh(w.base);
	m->key = le64toh(w.key);
	*out = &m->hw;
	return DOCA_SUCCESS;
}
