/*
 * hw/sw/sw.h — the software DMA engine ("sw0"): private structures.
 *
 * Per queue pair an SQ ring of descriptors (two to a slot for a burst,
 * sw_sq.h) and, with engine threads, a CQ ring of completions (six to a
 * slot, sw_cq.h) — the shape of real hardware. Inline mode executes
 * descriptors inside poll (so inside doca_pe_progress, on the PE's thread);
 * engine mode hands each queue pair to one engine thread that executes its
 * SQ and writes its CQ.
 */
#ifndef DOCA_HW_SW_H
#define DOCA_HW_SW_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <urcu/list.h>

#include "actors/ready_set.h"
#include "hw/hw.h"
#include "hw/sw/sw_ring.h"
#include "hw/sw/sw_sq.h"

#define SW_ENGINES_MAX 64u
#define SW_DELAY_US_MAX 10000000u
#define SW_EVERY_MAX 1000000000u
#define SW_RING_MAX_MAX 65536u
/* The keys of the open string, for messages. */
#define SW_PARAM_KEYS "engines, cpus, fail_every, partial_every, delay_us, ring_max"

struct sw_params {
	uint32_t engines;
	uint32_t fail_every;    /* 0: off */
	uint32_t partial_every; /* 0: off */
	uint32_t delay_us;
	uint32_t ring_max;      /* 0: rings grow to the depth; else no further than this (rounded down to a power of two) */
	uint32_t ncpus;         /* 0: engine threads may run on every CPU */
	int cpus[SW_ENGINES_MAX];
};

/* Parse "key=value,..." (NULL or "" is not accepted: no ':' means no params).
 * DOCA_ERROR_INVALID_VALUE on any unknown key, malformed or out-of-range value. */
doca_error_t sw_params_parse(const char *text, struct sw_params *p);

struct sw_engine;

struct sw_dev {
	struct hw_dev base;
	struct sw_params params;
	_Atomic uint64_t executed; /* descriptors executed, for fault injection */
	struct sw_engine *engines;
	uint32_t nengines;
	_Atomic uint32_t next_engine;
};

/* Cache lines: the fields set at create (read by both sides), then the two
 * rings (each keeps its producer's and consumer's fields on lines of their
 * own), then the executor's private state. */
struct sw_qp {
	struct hw_qp base;
	struct sw_dev *dev;
	struct sw_engine *engine; /* NULL: inline */
	hw_wake_fn wake;
	void *wake_arg;
	_Atomic bool flushing;
	bool sq_pack; /* posts pack two descriptors a slot (hw/sw/sw_sq.h) */
	/* Inline with delay_us only (else -1): the completion channel of an
	 * event-mode PE (notify_fd), set at each arming to when the first
	 * descriptor is due; timer_at_ns is what it is set to (0: disarmed).
	 * The PE's thread's, like the SQ's consumer side. */
	int timer_fd;
	uint64_t timer_at_ns;
	struct sw_ring sq; /* producer: the PE's thread; consumer: the executor (sw_sq.h) */
	struct sw_ring cq; /* engine mode only: engine thread → PE's thread, packed (sw_cq.h) */
	/* the executor's: a descriptor taken from the SQ, waiting for its delay */
	_Alignas(64) struct sw_desc held;
	bool has_held;
	bool held_flushed;
	uint32_t idle_passes; /* the executor's passes since it last had work (sw_engine.c) */
	struct cds_list_head change_link; /* engine's add/del lists, engine lock */
	bool attached;                    /* the engine took it off to_add, engine lock */
	/* its node in its engine's ready set (sw_engine.c): signalled by the
	 * PE's thread, released by the engine thread */
	_Alignas(64) struct ready_node engine_ready;
};

extern const struct hw_ops hw_sw_ops;

/* Every copy's memmove (sw_qp.c's and the engine threads') called without
 * the PLT's jump: an indirect call through the GOT, as -fno-plt makes it
 * (one instruction less per copy, whatever its length). Making the small
 * ones inline instead (33 to 64 bytes as two 32-byte halves, loaded
 * before stored) measured no better at 64 B and cost 3 per longer copy
 * (the length's test). */
#if defined(__GNUC__) && !defined(__clang__)
extern __typeof__(memmove) memmove __attribute__((noplt));
#endif

/* Queue-pair ops (sw_qp.c). */
doca_error_t sw_qp_create(struct hw_dev *hw, const struct hw_qp_attr *attr, struct hw_qp **out);
void sw_qp_destroy(struct hw_qp *qp);
uint32_t sw_qp_post(struct hw_qp *qp, const struct hw_desc *descs, uint32_t n);
uint32_t sw_qp_post_chain(struct hw_qp *qp, const void *first, uint32_t n, const struct hw_chain *shape);
void sw_qp_kick(struct hw_qp *qp);
uint32_t sw_qp_poll(struct hw_qp *qp, struct hw_cqe *cqes, uint32_t max);
/* Engine mode only (hw_qp.reaps_whole). */
uint32_t sw_qp_reap(struct hw_qp *qp, void **link, uint32_t next, uint32_t max, void *recs, struct hw_cqe *odd,
		    uint32_t *nodd);
uint32_t sw_qp_execute(struct hw_qp *qp, const struct hw_copy *copies, uint32_t n, struct hw_cqe *cqes);
bool sw_qp_pending(struct hw_qp *qp);
int sw_qp_notify_fd(struct hw_qp *qp);
doca_error_t sw_qp_notify_arm(struct hw_qp *qp);
void sw_qp_notify_ack(struct hw_qp *qp);
void sw_qp_flush(struct hw_qp *qp);

/* Execute (or flush) one descriptor, filling its completion. */
void sw_execute(struct sw_dev *dev, const struct hw_desc *d, bool flushed, struct hw_cqe *c);
/* The length of the descriptor sw_qp_take_due would look at next (0 if
 * none is there): the executor's peek. */
uint64_t sw_qp_next_len(struct sw_qp *qp);
/* Take the next descriptor whose delay has passed; *now caches the clock.
 * With delay_us or a descriptor held only (an engine thread without a
 * delay peeks and takes in place, sw_engine.c). */
bool sw_qp_take_due(struct sw_qp *qp, struct sw_desc *out, bool *flushed, uint64_t *now);
uint64_t sw_now_ns(void);
void sw_qp_free(struct sw_qp *qp);

/* Engine threads (sw_engine.c). */
doca_error_t sw_engines_start(struct sw_dev *dev);
void sw_engines_stop(struct sw_dev *dev);
/* The engine thread that serves the next new qp (round robin). */
struct sw_engine *sw_engine_pick(struct sw_dev *dev);
void sw_engine_attach(struct sw_engine *e, struct sw_qp *qp);
void sw_engine_detach(struct sw_engine *e, struct sw_qp *qp);
/* After posting to qp's SQ or flagging its flush (engine mode): the engine
 * visits qp, and wakes if it sleeps. Thread safety: any thread, after the
 * posts it follows (hw_ops.kick). */
void sw_engine_signal(struct sw_engine *e, struct sw_qp *qp);

#endif /* DOCA_HW_SW_H */
