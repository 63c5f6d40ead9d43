/*
 * tests/verbs/verbs_test.c — the shared fixture and set-up helpers of the
 * verbs backend's unit tests (see verbs_test.h).
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "tests/verbs/verbs_test.h"

void vt_setup(void)
{
	fake_verbs_install();
	fake_verbs_add_device("mlx5_0", NULL);
}

void vt_teardown(void)
{
	fake_verbs_uninstall();
}

void vt_assert_clean(void)
{
	cr_assert_eq(fake_verbs_live(), 0, "%u verbs objects leaked", fake_verbs_live());
	cr_assert_eq(fake_verbs_violations(), 0, "verbs rules broken: %s",
		     fake_verbs_violation_text());
}

void vt_reset_fake(void)
{
	fake_verbs_uninstall();
	fake_verbs_install();
}

struct hw_dev *vt_open(const char *name)
{
	struct hw_dev *dev = NULL;
	doca_error_t err = hw_verbs_ops.open(name, NULL, &dev);

	cr_assert_eq(err, DOCA_SUCCESS, "open(%s): %d", name, err);
	cr_assert_not_null(dev);
	return dev;
}

struct hw_mr *vt_register(struct hw_dev *dev, void *addr, size_t len, uint32_t access)
{
	struct hw_mr *mr = NULL;
	doca_error_t err = hw_verbs_ops.mem_register(dev, addr, len, access, &mr);

	cr_assert_eq(err, DOCA_SUCCESS, "mem_register: %d", err);
	return mr;
}

struct hw_qp *vt_qp_create(struct hw_dev *dev, uint32_t depth)
{
	struct hw_qp_attr attr = { .depth = depth };
	struct hw_qp *qp = NULL;
	doca_error_t err = hw_verbs_ops.qp_create(dev, &attr, &qp);

	cr_assert_eq(err, DOCA_SUCCESS, "qp_create: %d", err);
	cr_assert_eq(qp->ops, &hw_verbs_ops);
	return qp;
}

void vt_rig_up(struct vt_rig *rig, uint32_t depth)
{
	for (size_t i = 0; i < sizeof(rig->src); i++)
		rig->src[i] = (uint8_t)(i * 7 + 1);
	memset(rig->dst, 0, sizeof(rig->dst));
	rig->dev = vt_open("mlx5_0");
	rig->src_mr = vt_register(rig->dev, rig->src, sizeof(rig->src), HW_ACCESS_READ);
	rig->dst_mr = vt_register(rig->dev, rig->dst, sizeof(rig->dst), HW_ACCESS_WRITE);
	rig->qp = vt_qp_create(rig->dev, depth);
	rig->vqp = verbs_qp_of(rig->qp);
}

void vt_rig_down(struct vt_rig *rig)
{
	hw_verbs_ops.qp_destroy(rig->qp);
	hw_verbs_ops.mem_deregister(rig->dst_mr);
	hw_verbs_ops.mem_deregister(rig->src_mr);
	hw_verbs_ops.close(rig->dev);
}

struct hw_desc vt_desc(const struct vt_rig *rig, uint64_t cookie, size_t offset, size_t len)
{
	return (struct hw_desc){ .cookie = cookie,
				 .src = (void *)(rig->src + offset),
				 .dst = (void *)(rig->dst + offset),
				 .len = len,
				 .src_mr = rig->src_mr,
				 .dst_mr = rig->dst_mr };
}

void vt_post1(struct vt_rig *rig, uint64_t cookie, size_t offset, size_t len)
{
	struct hw_desc d = vt_desc(rig, cookie, offset, len);

	cr_assert_eq(hw_qp_post(rig->qp, &d, 1), 1);
}

uint32_t vt_poll_all(struct hw_qp *qp, struct hw_cqe *cqes, uint32_t want)
{
	uint32_t got = 0;

	for (int idle = 0; got < want && idle < 100;) {
		uint32_t n = hw_qp_poll(qp, cqes + got, want - got);

		got += n;
		idle = n ? 0 : idle + 1;
	}
	return got;
}
