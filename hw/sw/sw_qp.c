/*
 * hw/sw/sw_qp.c — queue pairs of the software device: SQ/CQ rings, inline
 * execution, flush, fault injection.
 *
 * Rings (sw_ring.h): the SQ carries descriptors by value from the thread
 * running the owning PE to the executor (that same thread inline, the qp's
 * engine thread otherwise); the CQ (engine mode) carries completions from
 * the engine thread back to the PE's thread, both packed (sw_sq.h: two
 * descriptors of a burst to a slot; sw_cq.h: six completions). The
 * producer writes the SQ's descriptors in place; the executor copies each
 * out as it takes it. Inline with no delay
 * and no ring_max, the engine hands a turn's tasks to sw_qp_execute
 * instead (hw_ops.execute): they never pass through the SQ at all.
 *
 * Inline with delay_us, a descriptor waiting for its delay is not work for
 * an armed PE (sw_qp_pending) until it is due: the queue pair's timerfd,
 * its completion channel (notify_fd), is set at each arming to when the
 * first descriptor in the SQ is due (they are due in the order posted: one
 * delay, one clock), so an event-mode PE sleeps through the delay and
 * wakes once for it. Counted as work at every arm, it made a sleeping
 * loop spin through the delay, about 63 000 wake-ups in 300 ms (found by
 * a review).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "actors/hb_annotate.h"
#include "hw/sw/sw.h"
#include "hw/sw/sw_cq.h"

uint64_t sw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The largest ring segment for a queue of depth items (sw_ring.h: rings
 * start small and grow up to it). */
static uint32_t ring_size_for(uint32_t depth)
{
	uint32_t size = 2;

	while (size < depth)
		size <<= 1;
	return size;
}

void sw_qp_free(struct sw_qp *qp)
{
	sw_ring_fini(&qp->sq);
	sw_ring_fini(&qp->cq);
	if (qp->timer_fd >= 0)
		close(qp->timer_fd);
	free(qp);
}

doca_error_t sw_qp_create(struct hw_dev *hw, const struct hw_qp_attr *attr, struct hw_qp **out)
{
	struct sw_dev *dev = (struct sw_dev *)hw;
	uint32_t size = ring_size_for(attr->depth);

	/* ring_max: a ring that cannot grow, as when memory runs out */
	while (dev->params.ring_max != 0 && size > dev->params.ring_max)
		size >>= 1;
	struct sw_qp *qp = aligned_alloc(_Alignof(struct sw_qp), sizeof(*qp));

	if (qp == NULL)
		return DOCA_ERROR_NO_MEMORY;
	hb_private(qp, sizeof(*qp));
	memset(qp, 0, sizeof(*qp));
	qp->timer_fd = -1;
	ready_node_init(&qp->engine_ready);
	/* the CQ is used by engine threads only: all zero (no memory) inline */
	/* an engine's SQ spread (sw_ring_init_spread): the engine reads it in
	 * order on another CPU; inline, the PE's thread reads its own */
	bool sq_ok = dev->nengines > 0 ? sw_ring_init_spread(&qp->sq, size) : sw_ring_init(&qp->sq, size);

	if (!sq_ok || (dev->nengines > 0 && !sw_ring_init(&qp->cq, size))) {
		sw_qp_free(qp);
		return DOCA_ERROR_NO_MEMORY;
	}
	if (dev->nengines == 0 && dev->params.delay_us != 0) {
		qp->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (qp->timer_fd < 0) {
			sw_qp_free(qp);
			return DOCA_ERROR_OPERATING_SYSTEM;
		}
	}
	qp->base.ops = &hw_sw_ops;
	qp->base.runs_in_poll = dev->nengines == 0;
	qp->base.signals_completions = dev->nengines > 0;
	qp->base.reaps_whole = dev->nengines > 0; /* sw_qp_reap: the CQ's entries */
	qp->base.posts_chain = true; /* sw_qp_post_chain: no registration read */
	qp->base.executes_at_once = dev->nengines == 0 && dev->params.delay_us == 0 && dev->params.ring_max == 0;
	/* sw_qp_execute without a fault: nothing but the copies */
	qp->base.copies_plain = qp->base.executes_at_once && (dev->params.fail_every | dev->params.partial_every) == 0;
	/* sw_sq.h: a due time and ring_max's count of descriptors need them alone */
	qp->sq_pack = dev->params.delay_us == 0 && dev->params.ring_max == 0;
	qp->dev = dev;
	qp->wake = attr->wake;
	qp->wake_arg = attr->wake_arg;
	if (dev->nengines > 0) {
		qp->engine = sw_engine_pick(dev);
		sw_engine_attach(qp->engine, qp);
	}
	*out = &qp->base;
	return DOCA_SUCCESS;
}

void sw_qp_destroy(struct hw_qp *hw)
{
	struct sw_qp *qp = (struct sw_qp *)hw;

	if (qp->engine != NULL)
		sw_engine_detach(qp->engine, qp); /* the engine thread frees it */
	else
		sw_qp_free(qp);
}

/* The due time of what is posted now (0: no delay). */
static uint64_t sw_qp_due(const struct sw_qp *qp)
{
	uint32_t delay_us = qp->dev->params.delay_us;

	return delay_us ? sw_now_ns() + (uint64_t)delay_us * 1000u : 0;
}

uint32_t sw_qp_post(struct hw_qp *hw, const struct hw_desc *descs, uint32_t n)
{
	struct sw_qp *qp = (struct sw_qp *)hw;

	return sw_sq_post(&qp->sq, descs, n, sw_qp_due(qp), qp->sq_pack);
}

uint32_t sw_qp_post_chain(struct hw_qp *hw, const void *first, uint32_t n, const struct hw_chain *shape)
{
	struct sw_qp *qp = (struct sw_qp *)hw;
	const void *rec = first;
	uint32_t i = qp->sq_pack ? sw_sq_post_chain_pairs(&qp->sq, &rec, n, shape) : 0;
	uint64_t due = i < n ? sw_qp_due(qp) : 0;

	/* the rest (the room out, a lone last one, a long length, a queue
	 * that does not pack) a slot at a time, as sw_sq_post's loop: the
	 * next two records as descriptors, one or both taken */
	while (i < n) {
		struct hw_desc d[SW_SQ_PACK];
		uint32_t k = n - i < SW_SQ_PACK ? n - i : SW_SQ_PACK, took;
		const void *after = rec;

		for (uint32_t j = 0; j < k; j++, after = hw_chain_next(after, shape))
			d[j] = hw_chain_desc(after, shape);
		took = sw_sq_post_slot(&qp->sq, d, k, due, qp->sq_pack);
		if (took == 0)
			break;
		i += took;
		rec = took == k ? after : hw_chain_next(rec, shape);
	}
	return i;
}

void sw_qp_kick(struct hw_qp *hw)
{
	struct sw_qp *qp = (struct sw_qp *)hw;

	if (qp->engine != NULL)
		sw_engine_signal(qp->engine, qp);
}

uint64_t sw_qp_next_len(struct sw_qp *qp)
{
	return qp->has_held ? qp->held.d.len : sw_sq_next_len(&qp->sq);
}

bool sw_qp_take_due(struct sw_qp *qp, struct sw_desc *out, bool *flushed, uint64_t *now)
{
	if (!qp->has_held) {
		if (!sw_sq_get(&qp->sq, &qp->held))
			return false;
		qp->has_held = true;
		/* acquire: pairs with sw_qp_flush's release. */
		qp->held_flushed = atomic_load_explicit(&qp->flushing, memory_order_acquire);
	}
	/* Inline, a descriptor starts only when executed: one waiting for its
	 * delay is still flushable. An engine thread started it by taking it. */
	if (qp->engine == NULL)
		qp->held_flushed = atomic_load_explicit(&qp->flushing, memory_order_relaxed);
	if (qp->held.due_ns != 0 && !qp->held_flushed) {
		if (*now == 0)
			*now = sw_now_ns();
		if (*now < qp->held.due_ns)
			return false;
	}
	*out = qp->held;
	*flushed = qp->held_flushed;
	qp->has_held = false;
	return true;
}

/* The whole copy, succeeded (no fault configured, not flushed). */
static inline void sw_copy_whole(const struct hw_desc *d, struct hw_cqe *c)
{
	hb_acquire((const void *)(uintptr_t)d->cookie); /* the submitter's writes first */
	memmove(d->dst, d->src, d->len);
	*c = (struct hw_cqe){
		.cookie = d->cookie,
		.bytes = d->len,
		.status = HW_CQE_OK,
		.error = DOCA_SUCCESS,
	};
	hb_release((const void *)(uintptr_t)d->cookie); /* then whoever gets the event */
}

/* A copy with a fault configured, its completion in *c; without the race
 * detector's annotations (the caller's). */
static void sw_execute_faulty(struct sw_dev *dev, const struct hw_desc *d, struct hw_cqe *c)
{
	const struct sw_params *p = &dev->params;
	/* the device-wide counter is a shared cache line: touch it only when a
	 * fault is configured */
	uint64_t k = atomic_fetch_add_explicit(&dev->executed, 1, memory_order_relaxed) + 1u;

	*c = (struct hw_cqe){ .cookie = d->cookie };
	if (p->fail_every != 0 && k % p->fail_every == 0) {
		c->status = HW_CQE_FAILED;
		c->error = DOCA_ERROR_IO_FAILED;
	} else if (p->partial_every != 0 && k % p->partial_every == 0) {
		c->bytes = d->len / 2u;
		memmove(d->dst, d->src, c->bytes);
		c->status = HW_CQE_PARTIAL;
		c->error = DOCA_ERROR_IO_FAILED;
	} else {
		c->bytes = d->len;
		memmove(d->dst, d->src, c->bytes);
		c->status = HW_CQE_OK;
		c->error = DOCA_SUCCESS;
	}
}

static void sw_flushed(const struct hw_desc *d, struct hw_cqe *c)
{
	*c = (struct hw_cqe){ .cookie = d->cookie, .status = HW_CQE_FLUSHED, .error = DOCA_ERROR_SHUTDOWN };
}

void sw_execute(struct sw_dev *dev, const struct hw_desc *d, bool flushed, struct hw_cqe *c)
{
	const struct sw_params *p = &dev->params;

	if (!flushed && (p->fail_every | p->partial_every) == 0) {
		sw_copy_whole(d, c);
		return;
	}
	if (flushed) {
		sw_flushed(d, c);
		return;
	}
	hb_acquire((const void *)(uintptr_t)d->cookie); /* the submitter's writes first */
	sw_execute_faulty(dev, d, c);
	hb_release((const void *)(uintptr_t)d->cookie); /* then whoever gets the event */
}

/* Inline with no delay: execute (or flush) one descriptor at once. */
static inline void sw_run_now(struct sw_qp *qp, const struct hw_desc *d, bool faults, struct hw_cqe *c)
{
	/* acquire: pairs with sw_qp_flush's release. */
	bool flushed = atomic_load_explicit(&qp->flushing, memory_order_acquire);

	if (!flushed && !faults)
		sw_copy_whole(d, c);
	else
		sw_execute(qp->dev, d, flushed, c);
}

uint32_t sw_qp_poll(struct hw_qp *hw, struct hw_cqe *cqes, uint32_t max)
{
	struct sw_qp *qp = (struct sw_qp *)hw;
	uint32_t n = 0;

	if (qp->engine != NULL)
		return sw_cq_poll(&qp->cq, cqes, max);
	const struct sw_params *p = &qp->dev->params;

	if (!qp->has_held && p->delay_us == 0) {
		/* nothing ever waits: execute each descriptor as it comes */
		bool faults = (p->fail_every | p->partial_every) != 0;
		struct sw_desc d;

		while (n < max && sw_sq_get(&qp->sq, &d))
			sw_run_now(qp, &d.d, faults, &cqes[n++]);
		return n;
	}
	uint64_t now = 0;
	struct sw_desc d;
	bool flushed;

	while (n < max && sw_qp_take_due(qp, &d, &flushed, &now))
		sw_execute(qp->dev, &d.d, flushed, &cqes[n++]);
	return n;
}

uint32_t sw_qp_reap(struct hw_qp *hw, void **link, uint32_t next, uint32_t max, void *recs, struct hw_cqe *odd,
		    uint32_t *nodd)
{
	return sw_cq_reap(&((struct sw_qp *)hw)->cq, link, next, max, recs, odd, nodd);
}

uint32_t sw_qp_execute(struct hw_qp *hw, const struct hw_copy *copies, uint32_t n, struct hw_cqe *cqes)
{
	struct sw_qp *qp = (struct sw_qp *)hw;
	const struct sw_params *p = &qp->dev->params;
	/* acquire: pairs with sw_qp_flush's release. Read once: the call
	 * starts its descriptors together, so a flush that comes during it
	 * comes after them (the engine flushes from the turn that executes,
	 * never during a call). */
	bool flushed = atomic_load_explicit(&qp->flushing, memory_order_acquire);

	if (flushed || (p->fail_every | p->partial_every) != 0) {
		for (uint32_t i = 0; i < n; i++) {
			/* no memory registration read; cookie 0 (hw_ops.execute) */
			struct hw_desc d = { .src = copies[i].src, .dst = copies[i].dst, .len = copies[i].len };

			if (flushed)
				sw_flushed(&d, &cqes[i]);
			else
				sw_execute_faulty(qp->dev, &d, &cqes[i]);
		}
		return 0; /* every completion written */
	}
	/* every copy whole: no completion written (hw_ops.execute) */
	for (uint32_t i = 0; i < n; i++)
		memmove(copies[i].dst, copies[i].src, copies[i].len);
	return n;
}

/* Inline: when the first descriptor in the SQ is due; 0 if none is
 * there, or it runs at the next poll whatever the time (no delay, or a
 * flush under way, which executes nothing). */
static uint64_t first_due_ns(struct sw_qp *qp)
{
	if (atomic_load_explicit(&qp->flushing, memory_order_relaxed))
		return 0;
	if (qp->has_held)
		return qp->held.due_ns;
	struct sw_desc d;
	uint16_t tag;

	return sw_sq_peek(&qp->sq, &d, &tag) ? d.due_ns : 0;
}

bool sw_qp_pending(struct hw_qp *hw)
{
	struct sw_qp *qp = (struct sw_qp *)hw;

	if (qp->engine != NULL)
		return sw_ring_ready(&qp->cq);
	if (!qp->has_held && !sw_ring_ready(&qp->sq))
		return false;
	if (qp->timer_fd < 0)
		return true; /* no delay: poll executes it now */
	/* waiting for its delay: not yet (the timer wakes an armed PE) */
	uint64_t due = first_due_ns(qp);

	return due == 0 || sw_now_ns() >= due;
}

int sw_qp_notify_fd(struct hw_qp *hw)
{
	return ((struct sw_qp *)hw)->timer_fd;
}

static doca_error_t timer_set(struct sw_qp *qp, uint64_t at_ns)
{
	/* 0 disarms it, which also drops an expiry not yet read */
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)(at_ns / 1000000000u),
						 .tv_nsec = (long)(at_ns % 1000000000u) } };

	if (timerfd_settime(qp->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
		return DOCA_ERROR_OPERATING_SYSTEM;
	qp->timer_at_ns = at_ns;
	return DOCA_SUCCESS;
}

doca_error_t sw_qp_notify_arm(struct hw_qp *hw)
{
	struct sw_qp *qp = (struct sw_qp *)hw;

	if (qp->timer_fd < 0)
		return DOCA_SUCCESS;
	/* The timer at the first descriptor's due time. None waiting, or one
	 * due already (pending work: the engine fires at once): disarmed, so
	 * a timer that rang, or one set for a descriptor since flushed, does
	 * not wake the PE for nothing. */
	uint64_t want = first_due_ns(qp);

	if (want != 0 && sw_now_ns() >= want)
		want = 0;
	return want != qp->timer_at_ns ? timer_set(qp, want) : DOCA_SUCCESS;
}

void sw_qp_notify_ack(struct hw_qp *hw)
{
	struct sw_qp *qp = (struct sw_qp *)hw;
	uint64_t expiries;

	/* a one-shot timer that rang is disarmed: read, it is not readable */
	if (qp->timer_fd >= 0 && read(qp->timer_fd, &expiries, sizeof(expiries)) == sizeof(expiries))
		qp->timer_at_ns = 0;
}

void sw_qp_flush(struct hw_qp *hw)
{
	struct sw_qp *qp = (struct sw_qp *)hw;

	EXPLORE_POINT(ATOMIC);
	/* release: descriptors the executor takes after this see the flag. */
	atomic_store_explicit(&qp->flushing, true, memory_order_release);
	if (qp->engine != NULL)
		sw_engine_signal(qp->engine, qp);
}
