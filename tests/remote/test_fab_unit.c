/*
 * tests/remote/test_fab_unit.c — fab0's slow path driven directly (the
 * module's objects linked in), for what the public API cannot show: how
 * many peers a device keeps, the error of an allocation inside the
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
	static const struct { int err; doca_error_t want; } cases[] = {
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
