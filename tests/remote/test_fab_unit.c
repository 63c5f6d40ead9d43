/*
 * tests/remote/test_fab_unit.c — fab0's slow path driven directly (the
 * module's objects linked in), for what the public API cannot show: how
 * many peers a device keeps and which AV slot a new one gets (and that
 * its traffic reaches it), the error of an allocation inside the
 * backend (calloc is wrapped: -Wl,--wrap=calloc), and the error of a
 * registration the provider refuses (the domain's fi_ops_mr replaced).
 * One process, no exporter child: a device imports its own exports.
 * Without libfabric's tcp;ofi_rxm every test skips.
 */
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include <criterion/criterion.h>

#include "hw/fabric/fabric_internal.h"

/* ---- calloc failure injection (this executable's calls only) ---- */

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

/* 0: off; k: the k-th calloc of this thread from now fails */
static _Thread_local unsigned calloc_fail_in;

void *__wrap_calloc(size_t n, size_t size)
{
	if (calloc_fail_in != 0 && --calloc_fail_in == 0)
		return NULL;
	return __real_calloc(n, size);
}

/* ---- fi_fabric refused (-Wl,--wrap=fi_fabric) ---- */

int __real_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
int __wrap_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);

static int fabric_errno; /* 0: off; else fi_fabric returns its negation */

int __wrap_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	return fabric_errno != 0 ? -fabric_errno : __real_fi_fabric(attr, fabric, context);
}

/* ---- a device and one export of its own ---- */

static struct hw_dev *hw;
static struct hw_mr *local;
static uint8_t region[4096] __attribute__((aligned(64)));
static struct fab_wire genuine;

static void setup(void)
{
	const void *desc;
	size_t len;

	if (fab_open(FAB_DEVICE_NAME, NULL, &hw) != DOCA_SUCCESS) {
		hw = NULL;
		return;
	}
	cr_assert_eq(fab_mem_register(hw, region, sizeof(region), HW_ACCESS_READ | HW_ACCESS_WRITE,
				      &local), DOCA_SUCCESS);
	cr_assert_eq(fab_mem_export(local, HW_ACCESS_READ, &desc, &len), DOCA_SUCCESS);
	cr_assert_eq(len, sizeof(genuine));
	memcpy(&genuine, desc, sizeof(genuine));
}

static void teardown(void)
{
	if (hw == NULL)
		return;
	fab_mem_deregister(local);
	fab_close(hw);
}

#define NEED_FAB0()                                                                               \
	do {                                                                                       \
		if (hw == NULL)                                                                    \
			cr_skip_test("no fab0 here (libfabric's tcp;ofi_rxm is missing)");         \
	} while (0)

/* The genuine descriptor with another port (a different exporter to the
 * importer), its check made again: what a forger can make at will. */
static void forge_port(uint16_t port, struct fab_wire *w)
{
	*w = genuine;
	memcpy(w->addr + offsetof(struct sockaddr_in, sin_port), &(uint16_t){ htons(port) },
	       sizeof(uint16_t));
	w->check = htole64(fab_wire_hash(w, offsetof(struct fab_wire, check)));
}

/* The device's peers, counted on its list; checked against npeers. */
static size_t peers_now(void)
{
	struct fab_dev *dev = fab_dev_of(hw);
	size_t n = 0;

	for (struct fab_peer *p = dev->peers; p != NULL; p = p->next)
		n++;
	cr_assert_eq(n, dev->npeers);
	return n;
}

TestSuite(fab_unit, .init = setup, .fini = teardown);

/* A peer lives while a remote memory names it: one per distinct address
 * (two imports of one address share it), and none once they are all
 * destroyed, however many addresses were imported (a review: every forged
 * address kept one peer and one AV entry until the device closed). */
Test(fab_unit, peers_live_while_their_memories_do)
{
	enum { N = 64 };
	struct hw_mr *mrs[N], *twice[2];
	struct fab_wire w;

	NEED_FAB0();
	for (unsigned i = 0; i < N; i++) {
		forge_port((uint16_t)(20000 + i), &w);
		cr_assert_eq(fab_mem_import(hw, &w, sizeof(w), &mrs[i]), DOCA_SUCCESS, "import %u", i);
	}
	cr_assert_eq(peers_now(), N);
	for (unsigned i = 0; i < 2; i++)
		cr_assert_eq(fab_mem_import(hw, &genuine, sizeof(genuine), &twice[i]), DOCA_SUCCESS);
	cr_assert_eq(peers_now(), N + 1);
	cr_assert_eq(fab_mr_of(twice[0])->peer, fab_mr_of(twice[1])->peer);
	fab_mem_deregister(twice[0]);
	cr_assert_eq(peers_now(), N + 1, "the other memory of that address still uses its peer");
	fab_mem_deregister(twice[1]);
	for (unsigned i = 0; i < N; i++)
		fab_mem_deregister(mrs[i]);
	cr_assert_eq(peers_now(), 0);
}

/* Import and destroy, each time a new address: the peers never grow past
 * the memories alive (one), and the AV entries removed are usable again. */
Test(fab_unit, hostile_addresses_grow_nothing)
{
	struct hw_mr *mr;
	struct fab_wire w;

	NEED_FAB0();
	for (unsigned i = 0; i < 2000; i++) {
		forge_port((uint16_t)(30000 + i), &w);
		cr_assert_eq(fab_mem_import(hw, &w, sizeof(w), &mr), DOCA_SUCCESS, "import %u", i);
		cr_assert_eq(peers_now(), 1);
		fab_mem_deregister(mr);
	}
	cr_assert_eq(peers_now(), 0);
}

/* For k = 1, 2, ... the k-th allocation of an import fails: it returns
 * DOCA_ERROR_NO_MEMORY (not INVALID_VALUE, "refused by the address
 * vector", a review), writes no out-parameter and leaves no peer; the
 * first k it never reaches ends the loop with a working import. */
Test(fab_unit, import_out_of_memory_is_no_memory)
{
	struct hw_mr *mr = NULL;
	unsigned k;

	NEED_FAB0();
	for (k = 1;; k++) {
		calloc_fail_in = k;
		doca_error_t err = fab_mem_import(hw, &genuine, sizeof(genuine), &mr);
		bool reached = calloc_fail_in == 0;

		calloc_fail_in = 0;
		if (!reached) {
			cr_assert_eq(err, DOCA_SUCCESS, "k=%u: %s", k, doca_error_get_name(err));
			break;
		}
		cr_assert_eq(err, DOCA_ERROR_NO_MEMORY, "k=%u: %s", k, doca_error_get_name(err));
		cr_assert_null(mr, "k=%u: a refused import wrote its out-parameter", k);
		cr_assert_eq(peers_now(), 0, "k=%u: a refused import left a peer", k);
	}
	cr_assert_gt(k, 2, "both allocations of an import were tried");
	cr_assert_eq(peers_now(), 1);
	fab_mem_deregister(mr);
	cr_assert_eq(peers_now(), 0);
}

/* ---- registrations the provider refuses ---- */

/* A provider's errno and the doca_error_t it must come back as. */
struct errno_case {
	int err;
	doca_error_t want;
};

static int reg_errno; /* what the replaced fi_ops_mr.reg returns, negated */

static int reg_refused(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset,
		       uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
	(void)fid, (void)buf, (void)len, (void)access, (void)offset;
	(void)requested_key, (void)flags, (void)mr, (void)context;
	return -reg_errno;
}

/* Each provider errno of a failed registration, through doca_mem_create's
 * path (the local domain) and doca_mem_export's (the service domain): the
 * error include/doca_mem.h documents (DRIVER for what the driver alone
 * explains: EIO, ETIMEDOUT came back as CONNECTION_RESET, a review), and
 * nothing made. */
Test(fab_unit, refused_registration_errors)
{
	static const struct errno_case cases[] = {
		{ EIO, DOCA_ERROR_DRIVER },          { ETIMEDOUT, DOCA_ERROR_DRIVER },
		{ ECONNRESET, DOCA_ERROR_DRIVER },   { EINVAL, DOCA_ERROR_DRIVER },
		{ ENOMEM, DOCA_ERROR_NO_MEMORY },    { EACCES, DOCA_ERROR_NOT_PERMITTED },
		{ EOPNOTSUPP, DOCA_ERROR_NOT_SUPPORTED },
	};
	struct fab_dev *dev;
	struct hw_mr *mr;

	NEED_FAB0();
	dev = fab_dev_of(hw);
	struct fi_ops_mr *ops = dev->domain->mr, *sops = dev->sdomain->mr;
	struct fi_ops_mr refusing = *ops, srefusing = *sops;

	refusing.reg = reg_refused;
	srefusing.reg = reg_refused;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const void *desc = NULL;
		size_t len = 0;

		reg_errno = cases[i].err;
		mr = NULL;
		dev->domain->mr = &refusing;
		doca_error_t err = fab_mem_register(hw, region, sizeof(region), HW_ACCESS_READ, &mr);

		dev->domain->mr = ops;
		cr_assert_eq(err, cases[i].want, "register, errno %d: %s", cases[i].err,
			     doca_error_get_name(err));
		cr_assert_null(mr);
		/* a new access set: a new registration in the service domain */
		dev->sdomain->mr = &srefusing;
		err = fab_mem_export(local, HW_ACCESS_WRITE, &desc, &len);
		dev->sdomain->mr = sops;
		cr_assert_eq(err, cases[i].want, "export, errno %d: %s", cases[i].err,
			     doca_error_get_name(err));
		cr_assert_null(desc);
		cr_assert_eq(fab_mr_of(local)->nexports, 1, "a refused export made one");
	}
	/* and both work again */
	const void *desc;
	size_t len;

	cr_assert_eq(fab_mem_register(hw, region, sizeof(region), HW_ACCESS_READ, &mr), DOCA_SUCCESS);
	fab_mem_deregister(mr);
	cr_assert_eq(fab_mem_export(local, HW_ACCESS_WRITE, &desc, &len), DOCA_SUCCESS);
}

/* ---- a stalled operation whose endpoint cannot be replaced ---- */

static void no_wake(void *arg, hw_unread_fn unread, const void *cq)
{
	(void)arg, (void)unread, (void)cq;
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int cq_open_refused(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq,
			   void *context)
{
	(void)domain, (void)attr, (void)cq, (void)context;
	return -FI_ENOMEM;
}

/* One turn of a PE in event mode on @p qp, as engine/pe.c does: poll;
 * unless work is left, arm and sleep on the notification fd (at most
 * 50 ms). Completions go to *got (at most one expected). */
static void pe_turn(struct hw_qp *qp, struct hw_cqe *got, unsigned *ngot)
{
	struct hw_cqe cqes[4];
	struct epoll_event ev;
	uint32_t n = fab_poll(qp, cqes, 4);

	for (uint32_t i = 0; i < n; i++) {
		cr_assert_lt(*ngot, 1u, "one completion expected");
		got[(*ngot)++] = cqes[i];
	}
	if (fab_pending(qp))
		return;
	cr_assert_eq(fab_notify_arm(qp), DOCA_SUCCESS);
	if (fab_pending(qp))
		return;
	(void)epoll_wait(fab_notify_fd(qp), &ev, 1, 50);
	fab_notify_ack(qp);
}

/* An operation in flight to an exporter that stopped serving (its device
 * never polled again) passes its deadline while the importer's endpoint
 * cannot be replaced (no memory for a CQ): a PE in event mode sleeps
 * between the attempts, a backoff as for a refusal, and the operation
 * fails with CONNECTION_RESET once a CQ can be made. Before, the poll left
 * the expiry at the past deadline, the arm left the timer that rang as it
 * was (unread), and the PE woke at once for as long as the CQ could not be
 * made (a review; thousands of wake-ups in 300 ms). */
Test(fab_unit, stalled_unreplaceable_endpoint_sleeps)
{
	static uint8_t dst[4096] __attribute__((aligned(64)));
	struct hw_qp_attr attr = { .depth = 8, .wake = no_wake };
	struct hw_dev *imp;
	struct hw_mr *dmr, *rmr;
	struct hw_qp *qa, *qb;
	struct hw_cqe got[1];
	unsigned ngot = 0;

	NEED_FAB0();
	memset(region, 0x5a, sizeof(region));
	cr_assert_eq(fab_open(FAB_DEVICE_NAME, "retry_ms=100", &imp), DOCA_SUCCESS);
	cr_assert_eq(fab_mem_register(imp, dst, sizeof(dst), HW_ACCESS_READ | HW_ACCESS_WRITE, &dmr),
		     DOCA_SUCCESS);
	cr_assert_eq(fab_mem_import(imp, &genuine, sizeof(genuine), &rmr), DOCA_SUCCESS);
	cr_assert_eq(fab_qp_create(hw, &attr, &qa), DOCA_SUCCESS); /* serves the export while polled */
	cr_assert_eq(fab_qp_create(imp, &attr, &qb), DOCA_SUCCESS);

	/* A first READ, the exporter served: the connection is made. */
	struct hw_desc d = { .cookie = 1, .src = NULL, .dst = dst, .len = 2048, .src_mr = rmr,
			     .dst_mr = dmr };

	cr_assert_eq(fab_post(qb, &d, 1), 1u);
	fab_doorbell(qb);
	for (uint64_t until = ms_now() + 5000; ngot == 0 && ms_now() < until;) {
		struct hw_cqe none[4];

		cr_assert_eq(fab_poll(qa, none, 4), 0u);
		pe_turn(qb, got, &ngot);
	}
	cr_assert_eq(ngot, 1u);
	cr_assert_eq(got[0].cookie, 1u);
	cr_assert_eq(got[0].status, HW_CQE_OK, "%s", doca_error_get_name(got[0].error));
	cr_assert_eq(dst[0], 0x5a);

	/* The exporter stops serving; a second READ is taken by the provider
	 * and never completes, and no CQ can be made on the importer. */
	struct fab_dev *idev = fab_dev_of(imp);
	struct fi_ops_domain *ops = idev->domain->ops, refusing = *ops;

	refusing.cq_open = cq_open_refused;
	idev->domain->ops = &refusing;
	memset(dst + 2048, 0xee, 2048);
	d = (struct hw_desc){ .cookie = 2, .src = (void *)(uintptr_t)2048, .dst = dst + 2048, .len = 2048,
			      .src_mr = rmr, .dst_mr = dmr };
	ngot = 0;
	cr_assert_eq(fab_post(qb, &d, 1), 1u);
	fab_doorbell(qb);
	cr_assert_eq(fab_in_flight(fab_qp_of(qb)), 1u, "the provider took the READ");
	/* 100 ms to its deadline, then 300 ms of failed replacements: with a
	 * backoff of at most 10 ms, a few dozen turns */
	unsigned turns = 0;

	for (uint64_t until = ms_now() + 400; ms_now() < until; turns++)
		pe_turn(qb, got, &ngot);
	idev->domain->ops = ops;
	cr_assert_eq(ngot, 0u, "nothing completes while the endpoint cannot be replaced");
	cr_assert_lt(turns, 150u, "the PE spun: %u turns in 400 ms", turns);

	/* A CQ can be made again: the READ fails, its bytes untouched. */
	for (uint64_t until = ms_now() + 2000; ngot == 0 && ms_now() < until;)
		pe_turn(qb, got, &ngot);
	cr_assert_eq(ngot, 1u);
	cr_assert_eq(got[0].cookie, 2u);
	cr_assert_eq(got[0].status, HW_CQE_FAILED);
	cr_assert_eq(got[0].error, DOCA_ERROR_CONNECTION_RESET, "%s", doca_error_get_name(got[0].error));
	for (size_t i = 2048; i < sizeof(dst); i++)
		cr_assert_eq(dst[i], 0xee, "byte %zu written", i);

	fab_qp_destroy(qb);
	fab_qp_destroy(qa);
	fab_mem_deregister(rmr);
	fab_mem_deregister(dmr);
	fab_close(imp);
}

/* ---- an address-vector slot used again ---- */

/* The first index in [from, to) of @p p whose byte is not @p v, or to. */
static size_t first_not(const uint8_t *p, size_t from, size_t to, uint8_t v)
{
	while (from < to && p[from] == v)
		from++;
	return from;
}

/* Post @p d on @p qp and poll it, and the exporters' queue pairs @p serve
 * (their polls serve peers), until its one completion: returned. */
static struct hw_cqe run_one(struct hw_qp *qp, const struct hw_desc *d, struct hw_qp *const *serve,
			     unsigned nserve)
{
	struct hw_cqe got[4];
	uint32_t n = 0;

	cr_assert_eq(fab_post(qp, d, 1), 1u);
	fab_doorbell(qp);
	for (uint64_t until = ms_now() + 10000; n == 0 && ms_now() < until;) {
		for (unsigned i = 0; i < nserve; i++) {
			struct hw_cqe none[4];

			cr_assert_eq(fab_poll(serve[i], none, 4), 0u, "an exporter completed something");
		}
		n = fab_poll(qp, got, 4);
	}
	cr_assert_eq(n, 1u, "one completion for cookie %llu", (unsigned long long)d->cookie);
	cr_assert_eq(got[0].cookie, d->cookie);
	return got[0];
}

/* A peer removed (its last remote memory destroyed) frees its AV slot; the
 * next exporter imported, another endpoint, lands in the same slot. Its
 * READ and WRITE reach it, byte for byte, and nothing of the first
 * exporter's memory changes: a connection the importer's endpoint kept
 * for the old address under that slot must not carry the new peer's
 * traffic. */
Test(fab_unit, av_slot_used_again_reaches_the_new_peer)
{
	static uint8_t region_b[4096] __attribute__((aligned(64)));
	static uint8_t dst[4096] __attribute__((aligned(64)));
	struct hw_qp_attr attr = { .depth = 8, .wake = no_wake };
	struct hw_dev *imp, *hb;
	struct hw_mr *mb, *dmr, *rmr;
	struct hw_qp *qa, *qx, *qi;
	const void *desc;
	size_t len;
	struct fab_wire wa, wb;

	NEED_FAB0();
	memset(region, 0xa1, sizeof(region));
	memset(region_b, 0xb2, sizeof(region_b));
	cr_assert_eq(fab_open(FAB_DEVICE_NAME, NULL, &hb), DOCA_SUCCESS);
	cr_assert_eq(fab_mem_register(hb, region_b, sizeof(region_b), HW_ACCESS_READ | HW_ACCESS_WRITE,
				      &mb), DOCA_SUCCESS);
	cr_assert_eq(fab_mem_export(local, HW_ACCESS_READ | HW_ACCESS_WRITE, &desc, &len), DOCA_SUCCESS);
	memcpy(&wa, desc, sizeof(wa));
	cr_assert_eq(fab_mem_export(mb, HW_ACCESS_READ | HW_ACCESS_WRITE, &desc, &len), DOCA_SUCCESS);
	memcpy(&wb, desc, sizeof(wb));
	cr_assert_neq(memcmp(wa.addr, wb.addr, sizeof(wa.addr)), 0, "two exporters, two addresses");
	cr_assert_eq(fab_open(FAB_DEVICE_NAME, "retry_ms=2000", &imp), DOCA_SUCCESS);
	cr_assert_eq(fab_mem_register(imp, dst, sizeof(dst), HW_ACCESS_READ | HW_ACCESS_WRITE, &dmr),
		     DOCA_SUCCESS);
	cr_assert_eq(fab_qp_create(hw, &attr, &qa), DOCA_SUCCESS);
	cr_assert_eq(fab_qp_create(hb, &attr, &qx), DOCA_SUCCESS);
	cr_assert_eq(fab_qp_create(imp, &attr, &qi), DOCA_SUCCESS);
	struct hw_qp *serve[] = { qa, qx };

	/* exporter A: a READ and a WRITE, so the importer's endpoint is
	 * connected to it under the slot */
	cr_assert_eq(fab_mem_import(imp, &wa, sizeof(wa), &rmr), DOCA_SUCCESS);
	fi_addr_t slot = fab_mr_of(rmr)->peer->fa;
	struct hw_desc d = { .cookie = 1, .src = (void *)(uintptr_t)0, .dst = dst, .len = 4096,
			     .src_mr = rmr, .dst_mr = dmr };
	struct hw_cqe c = run_one(qi, &d, serve, 2);

	cr_assert_eq(c.status, HW_CQE_OK, "READ from A: %s", doca_error_get_name(c.error));
	cr_assert_eq(first_not(dst, 0, sizeof(dst), 0xa1), sizeof(dst), "READ from A");
	memset(dst, 0x3c, 2048);
	d = (struct hw_desc){ .cookie = 2, .src = dst, .dst = (void *)(uintptr_t)0, .len = 2048,
			      .src_mr = dmr, .dst_mr = rmr };
	c = run_one(qi, &d, serve, 2);
	cr_assert_eq(c.status, HW_CQE_OK, "WRITE to A: %s", doca_error_get_name(c.error));
	cr_assert(first_not(region, 0, 2048, 0x3c) == 2048 &&
		  first_not(region, 2048, sizeof(region), 0xa1) == sizeof(region), "WRITE to A");

	/* A's last remote memory goes: its peer and AV entry with it */
	fab_mem_deregister(rmr);
	cr_assert_eq(fab_dev_of(imp)->npeers, 0u);

	/* exporter B, in the same slot */
	cr_assert_eq(fab_mem_import(imp, &wb, sizeof(wb), &rmr), DOCA_SUCCESS);
	cr_assert_eq(fab_mr_of(rmr)->peer->fa, slot, "B did not land in A's old slot");
	memset(dst, 0, sizeof(dst));
	d = (struct hw_desc){ .cookie = 3, .src = (void *)(uintptr_t)0, .dst = dst, .len = 4096,
			      .src_mr = rmr, .dst_mr = dmr };
	c = run_one(qi, &d, serve, 2);
	cr_assert_eq(c.status, HW_CQE_OK, "READ from B: %s", doca_error_get_name(c.error));
	cr_assert_eq(c.bytes, 4096u);
	cr_assert_eq(first_not(dst, 0, sizeof(dst), 0xb2), sizeof(dst), "READ from B");
	memset(dst, 0x7e, 1024);
	d = (struct hw_desc){ .cookie = 4, .src = dst, .dst = (void *)(uintptr_t)512, .len = 1024,
			      .src_mr = dmr, .dst_mr = rmr };
	c = run_one(qi, &d, serve, 2);
	cr_assert_eq(c.status, HW_CQE_OK, "WRITE to B: %s", doca_error_get_name(c.error));
	cr_assert_eq(c.bytes, 1024u);
	cr_assert(first_not(region_b, 0, 512, 0xb2) == 512 && first_not(region_b, 512, 1536, 0x7e) == 1536 &&
		  first_not(region_b, 1536, sizeof(region_b), 0xb2) == sizeof(region_b), "WRITE to B");
	cr_assert(first_not(region, 0, 2048, 0x3c) == 2048 &&
		  first_not(region, 2048, sizeof(region), 0xa1) == sizeof(region), "A's memory changed");

	fab_qp_destroy(qi);
	fab_qp_destroy(qx);
	fab_qp_destroy(qa);
	fab_mem_deregister(rmr);
	fab_mem_deregister(dmr);
	fab_mem_deregister(mb);
	fab_close(imp);
	fab_close(hb);
}

/* ---- an export while the service endpoint cannot be made again ---- */

static int ep_errno; /* what the replaced fi_ops_domain.endpoint returns, negated */

static int endpoint_refused(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep,
			    void *context)
{
	(void)domain, (void)info, (void)ep, (void)context;
	return -ep_errno;
}

/* A memory's destroy remakes the service endpoint; when the provider
 * refuses the endpoint, the next export makes it again and says why not:
 * DOCA_ERROR_AGAIN only when the address cannot be bound for now (the
 * port taken: include/doca_mem.h), the driver's error otherwise, as for a
 * registration. Every refusal of the endpoint was AGAIN, "retry later",
 * also for an EINVAL or ENOSYS no retry mends (a review). Each refused
 * export writes nothing and makes nothing; once the provider makes
 * endpoints again, the export succeeds. */
Test(fab_unit, export_without_service_endpoint_errors)
{
	static const struct errno_case cases[] = {
		{ EADDRINUSE, DOCA_ERROR_AGAIN },      { EADDRNOTAVAIL, DOCA_ERROR_AGAIN },
		{ EACCES, DOCA_ERROR_AGAIN },          { ENOMEM, DOCA_ERROR_NO_MEMORY },
		{ EINVAL, DOCA_ERROR_DRIVER },         { EIO, DOCA_ERROR_DRIVER },
		{ EPERM, DOCA_ERROR_NOT_PERMITTED },   { ENOSYS, DOCA_ERROR_NOT_SUPPORTED },
		{ EOPNOTSUPP, DOCA_ERROR_NOT_SUPPORTED },
	};
	static uint8_t other[4096] __attribute__((aligned(64)));
	struct fab_dev *dev;
	struct hw_mr *mr;
	const void *desc;
	size_t len;

	NEED_FAB0();
	dev = fab_dev_of(hw);
	struct fi_ops_domain *ops = dev->sdomain->ops, refusing = *ops;

	refusing.endpoint = endpoint_refused;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* an exported memory destroyed while endpoints are refused:
		 * the service endpoint is gone */
		cr_assert_eq(fab_mem_register(hw, other, sizeof(other), HW_ACCESS_READ, &mr), DOCA_SUCCESS);
		cr_assert_eq(fab_mem_export(mr, HW_ACCESS_READ, &desc, &len), DOCA_SUCCESS);
		ep_errno = cases[i].err;
		dev->sdomain->ops = &refusing;
		fab_mem_deregister(mr);
		cr_assert_null(dev->ep, "errno %d: the endpoint was made", cases[i].err);
		desc = &ep_errno;
		len = 77;
		doca_error_t err = fab_mem_export(local, HW_ACCESS_WRITE, &desc, &len);

		dev->sdomain->ops = ops;
		cr_assert_eq(err, cases[i].want, "errno %d: %s", cases[i].err, doca_error_get_name(err));
		cr_assert(desc == &ep_errno && len == 77, "errno %d: a refused export wrote its out-parameters",
			  cases[i].err);
		cr_assert_eq(fab_mr_of(local)->nexports, 1, "errno %d: a refused export made one", cases[i].err);
		cr_assert_null(dev->ep);
	}
	cr_assert_eq(fab_mem_export(local, HW_ACCESS_WRITE, &desc, &len), DOCA_SUCCESS);
	cr_assert_not_null(dev->ep);
	cr_assert_eq(fab_mr_of(local)->nexports, 2);
}

/* ---- a broken endpoint that cannot be replaced ---- */

/* Poll @p qp and the exporters' @p serve for @p ms: the completions made
 * meanwhile into got (at most cap), counted. */
static unsigned poll_for(struct hw_qp *qp, struct hw_qp *const *serve, unsigned nserve, uint64_t ms,
			 struct hw_cqe *got, unsigned cap)
{
	unsigned n = 0;

	for (uint64_t until = ms_now() + ms; ms_now() < until;) {
		struct hw_cqe cqes[4];

		for (unsigned i = 0; i < nserve; i++)
			cr_assert_eq(fab_poll(serve[i], cqes, 4), 0u, "an exporter completed something");
		uint32_t k = fab_poll(qp, cqes, 4);

		for (uint32_t i = 0; i < k; i++) {
			cr_assert_lt(n, cap, "more completions than expected");
			got[n++] = cqes[i];
		}
	}
	return n;
}

/* A failed RMA marks the endpoint broken (1.17's tcp target closes the
 * connection after refusing a key); it is replaced once idle, but not
 * while no CQ can be made (no memory). Meanwhile issue() goes on with the
 * old endpoint: a task to another exporter, whose connection it still
 * has, is done; a task to the exporter that closed its connection fails
 * with CONNECTION_RESET (issued once more, on the same endpoint: that
 * second failure is final), one event each and nothing after; once a CQ
 * can be made the endpoint is replaced and the same exporter is read
 * again, byte for byte. */
Test(fab_unit, broken_endpoint_not_replaceable_one_event_each)
{
	static uint8_t region_b[4096] __attribute__((aligned(64)));
	static uint8_t dst[4096] __attribute__((aligned(64)));
	struct hw_qp_attr attr = { .depth = 8, .wake = no_wake };
	struct hw_dev *imp, *hb;
	struct hw_mr *mb, *dmr, *ra, *rbad, *rb;
	struct hw_qp *qa, *qx, *qi;
	struct hw_cqe c, got[4];
	const void *desc;
	size_t len;
	struct fab_wire w = genuine;

	NEED_FAB0();
	memset(region, 0xa1, sizeof(region));
	memset(region_b, 0xb2, sizeof(region_b));
	cr_assert_eq(fab_open(FAB_DEVICE_NAME, NULL, &hb), DOCA_SUCCESS);
	cr_assert_eq(fab_mem_register(hb, region_b, sizeof(region_b), HW_ACCESS_READ, &mb), DOCA_SUCCESS);
	cr_assert_eq(fab_mem_export(mb, HW_ACCESS_READ, &desc, &len), DOCA_SUCCESS);
	cr_assert_eq(fab_open(FAB_DEVICE_NAME, "retry_ms=500", &imp), DOCA_SUCCESS);
	cr_assert_eq(fab_mem_register(imp, dst, sizeof(dst), HW_ACCESS_READ | HW_ACCESS_WRITE, &dmr),
		     DOCA_SUCCESS);
	cr_assert_eq(fab_mem_import(imp, &genuine, sizeof(genuine), &ra), DOCA_SUCCESS);
	cr_assert_eq(fab_mem_import(imp, desc, len, &rb), DOCA_SUCCESS);
	w.key = htole64(le64toh(w.key) + 1u); /* a key A never gave */
	w.check = htole64(fab_wire_hash(&w, offsetof(struct fab_wire, check)));
	cr_assert_eq(fab_mem_import(imp, &w, sizeof(w), &rbad), DOCA_SUCCESS);
	cr_assert_eq(fab_qp_create(hw, &attr, &qa), DOCA_SUCCESS);
	cr_assert_eq(fab_qp_create(hb, &attr, &qx), DOCA_SUCCESS);
	cr_assert_eq(fab_qp_create(imp, &attr, &qi), DOCA_SUCCESS);
	struct hw_qp *serve[] = { qa, qx };
	struct fab_qp *q = fab_qp_of(qi);

	/* connected to both exporters */
	struct hw_desc d = { .cookie = 1, .src = NULL, .dst = dst, .len = 4096, .src_mr = ra, .dst_mr = dmr };

	c = run_one(qi, &d, serve, 2);
	cr_assert_eq(c.status, HW_CQE_OK, "READ from A: %s", doca_error_get_name(c.error));
	d = (struct hw_desc){ .cookie = 2, .src = NULL, .dst = dst, .len = 4096, .src_mr = rb, .dst_mr = dmr };
	c = run_one(qi, &d, serve, 2);
	cr_assert_eq(c.status, HW_CQE_OK, "READ from B: %s", doca_error_get_name(c.error));
	/* A refuses a key and closes its connection: the endpoint is broken */
	d = (struct hw_desc){ .cookie = 3, .src = NULL, .dst = dst, .len = 4096, .src_mr = rbad, .dst_mr = dmr };
	c = run_one(qi, &d, serve, 2);
	cr_assert_eq(c.status, HW_CQE_FAILED);
	cr_assert_eq(c.error, DOCA_ERROR_NOT_PERMITTED, "%s", doca_error_get_name(c.error));
	cr_assert(q->ep_broken);

	/* no CQ can be made: the endpoint cannot be replaced */
	struct fab_dev *idev = fab_dev_of(imp);
	struct fi_ops_domain *ops = idev->domain->ops, refusing = *ops;
	struct fid_ep *old_ep = q->ep;

	refusing.cq_open = cq_open_refused;
	idev->domain->ops = &refusing;
	memset(dst, 0, sizeof(dst));
	d = (struct hw_desc){ .cookie = 4, .src = NULL, .dst = dst, .len = 4096, .src_mr = rb, .dst_mr = dmr };
	c = run_one(qi, &d, serve, 2);
	cr_assert_eq(c.status, HW_CQE_OK, "READ from B on the old endpoint: %s", doca_error_get_name(c.error));
	cr_assert_eq(c.bytes, 4096u);
	cr_assert_eq(first_not(dst, 0, sizeof(dst), 0xb2), sizeof(dst), "READ from B");
	memset(dst, 0, sizeof(dst));
	d = (struct hw_desc){ .cookie = 5, .src = NULL, .dst = dst, .len = 4096, .src_mr = ra, .dst_mr = dmr };
	c = run_one(qi, &d, serve, 2);
	cr_assert_eq(c.status, HW_CQE_FAILED);
	cr_assert_eq(c.error, DOCA_ERROR_CONNECTION_RESET, "%s", doca_error_get_name(c.error));
	cr_assert_eq(poll_for(qi, serve, 2, 600, got, 4), 0u, "an event after the task's one");
	cr_assert_eq(q->ep, old_ep, "the endpoint was replaced without a CQ");
	cr_assert_eq(fab_in_flight(q), 0u);
	cr_assert_eq(q->nagain, 0u);
	cr_assert_eq(first_not(dst, 0, sizeof(dst), 0), sizeof(dst), "a failed READ wrote");

	/* CQs again: the next issue replaces the endpoint, and A is read */
	idev->domain->ops = ops;
	c = run_one(qi, &d, serve, 2);
	cr_assert_eq(c.status, HW_CQE_OK, "READ from A on a new endpoint: %s", doca_error_get_name(c.error));
	cr_assert_neq(q->ep, old_ep);
	cr_assert_eq(first_not(dst, 0, sizeof(dst), 0xa1), sizeof(dst), "READ from A");

	fab_qp_destroy(qi);
	fab_qp_destroy(qx);
	fab_qp_destroy(qa);
	fab_mem_deregister(ra);
	fab_mem_deregister(rb);
	fab_mem_deregister(rbad);
	fab_mem_deregister(dmr);
	fab_mem_deregister(mb);
	fab_close(imp);
	fab_close(hb);
}

/* ---- an open whose provider refuses its fabric ---- */

/* fi_getinfo found the provider, then fi_fabric refuses: the driver's
 * error (include/doca_dev.h), as for a registration; INVALID_VALUE is for
 * the open string ("a provider libfabric does not have"), which was fine.
 * Every refusal but ENOMEM was INVALID_VALUE (a review). Nothing made:
 * the out-parameter is not written, and the next open works. */
Test(fab_unit, refused_fabric_open_errors)
{
	static const struct errno_case cases[] = {
		{ EIO, DOCA_ERROR_DRIVER },          { EINVAL, DOCA_ERROR_DRIVER },
		{ ENOMEM, DOCA_ERROR_NO_MEMORY },    { EPERM, DOCA_ERROR_NOT_PERMITTED },
		{ ENOSYS, DOCA_ERROR_NOT_SUPPORTED },
	};
	struct hw_dev *dev;

	NEED_FAB0();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		dev = (struct hw_dev *)&fabric_errno;
		fabric_errno = cases[i].err;
		doca_error_t err = fab_open(FAB_DEVICE_NAME, NULL, &dev);

		fabric_errno = 0;
		cr_assert_eq(err, cases[i].want, "errno %d: %s", cases[i].err, doca_error_get_name(err));
		cr_assert_eq(dev, (struct hw_dev *)&fabric_errno, "errno %d: a refused open wrote its out-parameter",
			     cases[i].err);
	}
	cr_assert_eq(fab_open(FAB_DEVICE_NAME, NULL, &dev), DOCA_SUCCESS);
	fab_close(dev);
}
