/*
 * hw/fabric/fabric_map.c — the fab0 open string
 * ("prov=NAME,addr=IPv4,port=N,retry_ms=N"), the fi_getinfo hints it
 * makes, the error mapping, and two small helpers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hw/fabric/fabric_internal.h"
#include "hw/hw_errno.h"
#include "hw/hw_parse.h"

/*
 * libfabric error of an operation or its completion → doca_error_t
 * (a registration's: fab_reg_errno_to_doca, below)
 *
 *   FI_E* / errno                               doca                why
 *   ------------------------------------------  ------------------  --------------------------
 *   ECONNRESET ECONNREFUSED ECONNABORTED ENOTCONN CONNECTION_RESET  the peer is gone or never
 *   EPIPE EHOSTUNREACH ENETUNREACH ETIMEDOUT EIO                     answered (tcp reports a
 *   FI_EOTHER, FI_ECANCELED otherwise                                dead peer as EIO)
 *   EACCES EPERM FI_EKEYREJECTED,               NOT_PERMITTED       the key or access was refused
 *   FI_ECANCELED with prov_errno ENOENT/EACCES                      (1.17 tcp: ECANCELED, prov
 *                                                                   errno ENOENT: unknown key)
 *   ENOMEM                                      NO_MEMORY
 *   EOPNOTSUPP ENOSYS                           NOT_SUPPORTED
 *   anything else                               DRIVER
 */
doca_error_t fab_errno_to_doca(int err, int prov_errno)
{
	switch (err) {
	case ECONNRESET:
	case ECONNREFUSED:
	case ECONNABORTED:
	case ENOTCONN:
	case EPIPE:
	case EHOSTUNREACH:
	case ENETUNREACH:
	case ETIMEDOUT:
	case EIO:
	case FI_EOTHER:
		return DOCA_ERROR_CONNECTION_RESET;
	case FI_ECANCELED: /* tcp: the target refused the key (ENOENT), or the connection died */
		return prov_errno == ENOENT || prov_errno == EACCES ? DOCA_ERROR_NOT_PERMITTED
								    : DOCA_ERROR_CONNECTION_RESET;
	case EACCES:
	case EPERM:
	case FI_EKEYREJECTED: /* = EKEYREJECTED */
		return DOCA_ERROR_NOT_PERMITTED;
	case ENOMEM:
		return DOCA_ERROR_NO_MEMORY;
	case EOPNOTSUPP:
	case ENOSYS:
		return DOCA_ERROR_NOT_SUPPORTED;
	default:
		return DOCA_ERROR_DRIVER;
	}
}

/* A registration's failure (fi_mr_reg: positive FI_E* / errno) →
 * doca_error_t: what doca_mem_create / doca_mem_export document (the
 * driver's answer: DRIVER, NOT_PERMITTED, NOT_SUPPORTED, or NO_MEMORY).
 * No peer takes part in a registration, so none of the completions'
 * connection errors applies: an EIO or ETIMEDOUT of the driver is DRIVER,
 * not CONNECTION_RESET (a review). */
doca_error_t fab_reg_errno_to_doca(int err)
{
	return hw_driver_errno_to_doca(err);
}

/* The keys, in the order of their bits in parse_pair's *seen. */
static const char *const fab_keys[] = { "prov", "addr", "port", "retry_ms" };

static bool parse_pair(const char *key, size_t klen, const char *val, size_t vlen,
		       struct fab_params *p, uint32_t *seen)
{
	uint32_t v;
	struct in_addr ia;

#define KEY_IS(k) (klen == strlen(k) && memcmp(key, k, klen) == 0)
	for (uint32_t i = 0; i < sizeof(fab_keys) / sizeof(fab_keys[0]); i++) {
		if (!KEY_IS(fab_keys[i]))
			continue;
		if (*seen & (1u << i)) { /* ambiguous, as on sw0: never "the last wins" */
			hw_diag("'%s' is given twice", fab_keys[i]);
			return false;
		}
		*seen |= 1u << i;
	}
	if (KEY_IS("prov")) {
		if (vlen == 0 || vlen >= sizeof(p->prov)) {
			hw_diag("prov: a libfabric provider name of 1..%zu characters, e.g. tcp;ofi_rxm",
				sizeof(p->prov) - 1);
			return false;
		}
		memcpy(p->prov, val, vlen);
		p->prov[vlen] = '\0';
		return true;
	}
	if (KEY_IS("addr")) {
		if (vlen == 0 || vlen >= sizeof(p->addr)) {
			hw_diag("addr: an IPv4 address of this host, e.g. 127.0.0.1");
			return false;
		}
		memcpy(p->addr, val, vlen);
		p->addr[vlen] = '\0';
		if (inet_pton(AF_INET, p->addr, &ia) != 1 || ia.s_addr == htonl(INADDR_ANY)) {
			hw_diag("addr: '%s' is not an IPv4 address an endpoint can bind (not 0.0.0.0)",
				p->addr);
			return false;
		}
		return true;
	}
	if (KEY_IS("port")) {
		if (!hw_parse_u32(val, vlen, 65535, &v)) {
			hw_diag("port: 0..65535 (0: an ephemeral port)");
			return false;
		}
		p->port = (uint16_t)v;
		return true;
	}
	if (KEY_IS("retry_ms")) {
		if (!hw_parse_u32(val, vlen, 600000, &v) || v == 0) {
			hw_diag("retry_ms: 1..600000 (how long an operation may be refused or in flight)");
			return false;
		}
		p->retry_ms = v;
		return true;
	}
#undef KEY_IS
	hw_diag("unknown key '%.*s' (fab0 knows prov, addr, port, retry_ms)", (int)klen, key);
	return false;
}

doca_error_t fab_params_parse(const char *params, struct fab_params *p)
{
	uint32_t seen = 0;

	*p = (struct fab_params){ .retry_ms = FAB_RETRY_MS_DEFAULT };
	snprintf(p->prov, sizeof(p->prov), "%s", FAB_PROV_DEFAULT);
	snprintf(p->addr, sizeof(p->addr), "%s", FAB_ADDR_DEFAULT);
	if (params == NULL || *params == '\0')
		return DOCA_SUCCESS; /* (the engine refuses "fab0:") */
	/* every item up to the end, an empty one too: a trailing comma is
	 * an empty item, refused like the one between two commas */
	for (const char *s = params;;) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		const char *eq = memchr(s, '=', len);

		if (eq == NULL) {
			hw_diag("'%.*s' is not KEY=VALUE", (int)len, s);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (!parse_pair(s, (size_t)(eq - s), eq + 1, len - (size_t)(eq - s) - 1u, p, &seen))
			return DOCA_ERROR_INVALID_VALUE;
		if (end == NULL)
			return DOCA_SUCCESS;
		s = end + 1;
	}
}

struct fi_info *fab_hints(const struct fab_params *p)
{
	struct fi_info *hints = fi_allocinfo();

	if (hints == NULL)
		return NULL;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	/* What this backend can do: register local buffers, name remote
	 * memory by virtual address or offset, take provider keys. */
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
	hints->fabric_attr->prov_name = strdup(p->prov);
	if (hints->fabric_attr->prov_name == NULL) {
		fi_freeinfo(hints);
		return NULL;
	}
	return hints;
}

uint64_t fab_wire_hash(const void *bytes, size_t n)
{
	const uint8_t *b = bytes;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

uint64_t fab_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
