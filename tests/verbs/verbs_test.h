/*
 * tests/verbs/verbs_test.h — helpers shared by the verbs backend's unit
 * tests: the fixture that installs the fake device and checks, after every
 * test, that nothing leaked and no verbs rule was broken; and one-line
 * set-ups of a device, a memory registration and a queue pair.
 */
#ifndef DOCA_TESTS_VERBS_TEST_H
#define DOCA_TESTS_VERBS_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "hw/hw.h"
#include "hw/verbs/verbs_internal.h"
#include "tests/verbs/fake_verbs.h"

/** Fixture init: a fresh fake with one default device, "mlx5_0". */
void vt_setup(void);
/** Fixture fini: uninstall the fake. */
void vt_teardown(void);
/** Assert that no fake object is alive and no verbs rule was broken. */
void vt_assert_clean(void);

/*
 * A Criterion test that ends with vt_assert_clean() (Criterion 2.4 does not
 * fail a test whose .fini asserts, so the check runs in the test itself).
 */
#define VT_TEST(suite, name)                                \
	static void vt_body_##suite##_##name(void);          \
	Test(suite, name)                                    \
	{                                                    \
		vt_body_##suite##_##name();                  \
		vt_assert_clean();                           \
	}                                                    \
	static void vt_body_##suite##_##name(void)
/** Drop the fake's state (after a test that leaks on purpose). */
void vt_reset_fake(void);

/** Open a device through hw_verbs_ops; asserts success. */
struct hw_dev *vt_open(const char *name);
/** Register memory; asserts success. */
struct hw_mr *vt_register(struct hw_dev *dev, void *addr, size_t len, uint32_t access);
/** Create a queue pair of @p depth; asserts success. */
struct hw_qp *vt_qp_create(struct hw_dev *dev, uint32_t depth);

/** A device, a queue pair and a source and destination registration. */
struct vt_rig {
	struct hw_dev *dev;
	struct hw_qp *qp;
	struct verbs_qp *vqp; /* the backend's view of qp */
	uint8_t src[4096];
	uint8_t dst[4096];
	struct hw_mr *src_mr; /* HW_ACCESS_READ */
	struct hw_mr *dst_mr; /* HW_ACCESS_WRITE */
};

/** Open "mlx5_0", register src (READ) and dst (WRITE), create a QP of @p depth. */
void vt_rig_up(struct vt_rig *rig, uint32_t depth);
/** Destroy the QP, deregister, close: the reverse order. */
void vt_rig_down(struct vt_rig *rig);
/** A copy of @p len bytes at @p offset of src → dst, with cookie @p cookie. */
struct hw_desc vt_desc(const struct vt_rig *rig, uint64_t cookie, size_t offset, size_t len);
/** Post one descriptor; asserts it was accepted. */
void vt_post1(struct vt_rig *rig, uint64_t cookie, size_t offset, size_t len);
/** Poll until @p want completions arrived (or 100 empty polls); returns how many. */
uint32_t vt_poll_all(struct hw_qp *qp, struct hw_cqe *cqes, uint32_t want);

#endif /* DOCA_TESTS_VERBS_TEST_H */
