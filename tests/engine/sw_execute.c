/* tests/engine/sw_execute.c — which software queue pairs tell the engine
 * their execute is a plain copy (hw_qp.copies_plain), and that it is:
 * each copy memmove'd, every one whole, no completion written. The engine
 * makes the copies itself on such a queue pair (engine/pe_progress.c,
 * turn_copy), so this is what it stands in for. */
#include <string.h>

#include <criterion/criterion.h>

#include "hw/sw/sw.h"

static struct hw_qp *qp_open(const char *params, struct hw_dev **dev)
{
	struct hw_qp_attr attr = { .depth = 64 };
	struct hw_qp *qp = NULL;

	cr_assert_eq(hw_sw_ops.open("sw0", params, dev), DOCA_SUCCESS);
	cr_assert_eq(hw_sw_ops.qp_create(*dev, &attr, &qp), DOCA_SUCCESS);
	return qp;
}

static void qp_close(struct hw_dev *dev, struct hw_qp *qp)
{
	hw_sw_ops.qp_destroy(qp);
	hw_sw_ops.close(dev);
}

Test(sw_execute, only_an_at_once_queue_pair_without_faults_copies_plainly)
{
	static const struct {
		const char *params;
		bool at_once, plain;
	} cases[] = {
		{ NULL, true, true },
		{ "fail_every=3", true, false },
		{ "partial_every=2", true, false },
		{ "fail_every=5,partial_every=7", true, false },
		{ "delay_us=10", false, false },
		{ "ring_max=16", false, false },
		{ "engines=1", false, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hw_dev *dev = NULL;
		struct hw_qp *qp = qp_open(cases[i].params, &dev);

		cr_expect_eq(qp->executes_at_once, cases[i].at_once, "%s", cases[i].params);
		cr_expect_eq(qp->copies_plain, cases[i].plain, "%s", cases[i].params);
		qp_close(dev, qp);
	}
}

Test(sw_execute, a_plain_queue_pairs_execute_is_its_copies_and_nothing_else)
{
	enum { N = 3, CAP = 300 };
	static const uint64_t lens[N] = { 64, 1, CAP };
	uint8_t src[N][CAP], dst[N][CAP];
	struct hw_copy copies[N];
	struct hw_cqe cqes[N], untouched[N];
	struct hw_dev *dev = NULL;
	struct hw_qp *qp = qp_open(NULL, &dev);

	cr_assert(qp->copies_plain);
	memset(dst, 0xee, sizeof(dst));
	memset(cqes, 0xa5, sizeof(cqes));
	memcpy(untouched, cqes, sizeof(cqes));
	for (int i = 0; i < N; i++) {
		for (int b = 0; b < CAP; b++)
			src[i][b] = (uint8_t)(i * 31 + b);
		copies[i] = (struct hw_copy){ .src = src[i], .dst = dst[i], .len = lens[i] };
	}
	cr_assert_eq(hw_qp_execute(qp, copies, N, cqes), N); /* every copy whole */
	for (int i = 0; i < N; i++) {
		cr_assert_eq(memcmp(dst[i], src[i], lens[i]), 0, "copy %d", i);
		for (uint64_t b = lens[i]; b < CAP; b++) /* not a byte more */
			cr_assert_eq(dst[i][b], 0xee, "copy %d byte %lu", i, (unsigned long)b);
	}
	cr_assert_eq(memcmp(cqes, untouched, sizeof(cqes)), 0); /* no completion written */
	qp_close(dev, qp);
}
