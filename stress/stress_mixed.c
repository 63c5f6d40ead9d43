/*
 * stress/stress_mixed.c — owner-path and foreign submitters on one context
 * while stops race them.
 *
 * One context on one polled PE. The owner thread runs the PE
 * (doca_pe_progress) and is also a submitter of that context
 * (doca_task_submit and doca_task_submit_batch); it reaps every event
 * (doca_pe_get_event or doca_pe_get_events), checks it, and frees it
 * (doca_event_free, doca_event_free_bulk) or hands it to a foreign thread.
 * Two foreign threads submit into the same context at the same time, singly
 * and in batches, and free the events handed to them (singly or in bulk).
 * The controller (main thread) stops the context (doca_ctx_stop; the owner
 * progresses until the state is IDLE), sometimes destroys and recreates
 * the buffers (and the memories, and a new task pool size) while IDLE,
 * starts it again, and now and then asks the owner for a credit probe.
 * The device is sw0 (inline), or sw0:engines=N with --engines N.
 *
 * What is checked, exactly:
 * - One event per accepted task: every task has a unique tag (slot << 32 |
 *   generation) in its user data and in its slot's in-flight word; its
 *   event takes the tag back with a CAS, a refusal takes it back too. A
 *   second event, or an event of a refused task, finds the tag gone; a lost
 *   one leaves it in place (checked at every probe and at the end), and per
 *   slot accepted == events at the end.
 * - Outcomes: SUCCESS with every byte of the task's pattern; or, only after
 *   a stop began, FAILURE / DOCA_ERROR_SHUTDOWN with 0 bytes and the dst
 *   untouched. Nothing else.
 * - Refusals: only DOCA_ERROR_AGAIN or DOCA_ERROR_BAD_STATE. The controller
 *   counts phases (0: started, 1: stopping, 2: stopped, 3: starting) in
 *   `phase`; a call that saw the same phase count before and after ran
 *   entirely in that phase: in phase 0 BAD_STATE is a violation, in phase 2
 *   anything but BAD_STATE is.
 * - Credits, both ways, all the time. `lo` counts tasks certainly holding a
 *   credit (added after the submit returned, taken off before the free
 *   begins): it may never exceed max_tasks (no task beyond the pool).
 *   `hi` (low 32 bits) counts tasks that may hold one (added before the
 *   submit, taken off after a refusal, or once the credit is certainly
 *   back: on the owner's thread as soon as its free returns (it keeps the
 *   PE's runner guard parked, actors/runner.h); a foreign free after it
 *   returned and then a turn of the owner ran in which the freeing thread
 *   pushed nothing and which no other thread's signal was half done at,
 *   see owner_progress; with --engines, only at rest). Its high 32 bits
 *   count credit returns. A call refused with AGAIN during which no credit
 *   returned saw hi only grow, so hi after the call bounds the credits out
 *   when the pool was found empty: it must be ≥ max_tasks plus the call's
 *   own refused tasks. Returns are counted on the owner's thread only, so
 *   every owner AGAIN is checked; foreign ones when no return raced them
 *   (counted).
 * - Credits at rest: a probe parks the foreign threads (a handshake, not a
 *   sleep), reaps until every accepted task's event is freed, then demands
 *   hi == 0 and lo == 0 exactly and every slot free, submits max_tasks + 1
 *   tasks (one batch, or one by one) without progressing: exactly max_tasks
 *   accepted, then DOCA_ERROR_AGAIN. At every IDLE lo ≤ 0 (a submitter may
 *   count its task after its event was freed, never one still held).
 * - Progress: the owner's doca_pe_try_progress returns DOCA_SUCCESS, never
 *   anything else (no other thread runs the PE; a foreign free goes around
 *   the guard the owner keeps parked).
 * - Stops: the first stop returns SUCCESS (then the state is IDLE at once)
 *   or IN_PROGRESS; a second one BAD_STATE after SUCCESS, IN_PROGRESS or
 *   BAD_STATE after IN_PROGRESS; IDLE is reached within 60 s; state reports
 *   come in order and balance the starts; mem destroy with buffers is
 *   IN_USE; every object is destroyed with DOCA_SUCCESS; no stale handle
 *   was ever freed (doca_stale_handle_count unchanged); ASan finds no leak.
 *
 *   stress_mixed [--engines N] [--seconds S] [--seed N] [--sabotage lost|dup|data]
 */
#include "stress_common.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FOREIGNERS 2
#define SLOTS_PER_THREAD 24u
#define NSLOTS ((1 + FOREIGNERS) * SLOTS_PER_THREAD) /* thread 0 is the owner */
#define LEN 128u
#define MAX_TASKS_LO 8u
#define MAX_TASKS_HI 64u /* < NSLOTS: a probe needs max_tasks + 1 free slots */
#define GROUP 16u        /* tasks per submitting step, at most */
#define REAP 32u         /* events per doca_pe_get_events, at most */
#define INBOX 16u        /* events handed to one foreign thread, at most */
#define DEADLINE_NS (60ull * 1000 * 1000 * 1000)
#define CREDIT_RETURN(k) (((uint64_t)1 << 32) - (k)) /* hi: one more return, k fewer out */

enum phase { PHASE_STARTED, PHASE_STOPPING, PHASE_STOPPED, PHASE_STARTING };

struct slot {
	uint32_t index;
	uint32_t gen;              /* its submitter's */
	unsigned phase_seq;        /* phase count before its task was submitted */
	struct doca_buf *src, *dst; /* remade by the controller while IDLE, lock held */
	uint8_t *src_data, *dst_data;
	_Atomic uint64_t inflight; /* its task's tag, 0 when none */
	atomic_ulong accepted, events;
};

struct foreigner {
	struct mix *m;
	unsigned id;
	pthread_t thread;
	struct rng r;
	_Atomic(struct doca_event *) inbox[INBOX]; /* the owner fills, this thread empties */
	atomic_uint parked;                        /* the pause it is parked in */
	atomic_uint in_call; /* odd while in a call that may push into its mailbox shard */
	atomic_ulong freed;  /* events it freed */
	unsigned long applied; /* the owner's: of those, how many a turn certainly drained */
};

struct counters {
	atomic_ulong accepted_owner, accepted_foreign, batches, bad_state;
	atomic_ulong again_owner, again_foreign, again_foreign_checked;
	atomic_ulong ev_ok, ev_flushed, freed_owner, freed_bulk, handed;
	atomic_ulong probes, stops_idle, stops_stopping, rebuilds, mem_rebuilds;
};

struct mix {
	struct stress_opts o;
	char dev_name[32];
	unsigned engines;       /* --engines */
	struct doca_pe *pe;
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	struct doca_mem *msrc, *mdst;
	uint32_t max_tasks;     /* set while IDLE with the lock held for writing */
	pthread_rwlock_t lock;  /* submitters (read) vs buffer rebuilds (write) */
	struct slot slots[NSLOTS];
	struct foreigner f[FOREIGNERS];
	atomic_uint phase;      /* enum phase = phase & 3 */
	_Atomic uint64_t hi;    /* see the opening comment */
	atomic_long lo;
	atomic_ulong foreign_freed;
	/* the owner's: */
	unsigned long owner_freed;   /* events it freed */
	unsigned long handed;        /* events it handed to foreign threads */
	unsigned long owner_applied; /* of its frees, how many a later turn drained */
	atomic_uint pause;      /* odd: foreign threads park */
	atomic_uint probe_req, probe_done;
	atomic_bool load;       /* submitters submit */
	atomic_bool quit;
	atomic_bool sabotaged;
	struct stress_reports reports;
	struct counters c;
};

static void count(atomic_ulong *c, unsigned long n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* ---- submitting ---- */

/* Give @p sl a new task: its pattern in src, poison in dst, its tag in flight. */
static struct doca_task_desc slot_arm(struct slot *sl, unsigned phase_seq)
{
	if (++sl->gen == 0)
		sl->gen = 1;
	uint64_t tag = (uint64_t)sl->index << 32 | sl->gen;

	stress_pattern(tag, sl->src_data, LEN);
	memset(sl->dst_data, STRESS_POISON, LEN);
	sl->phase_seq = phase_seq;
	/* release: the owner's event check sees the pattern and phase_seq */
	atomic_store_explicit(&sl->inflight, tag, memory_order_release);
	return (struct doca_task_desc){
		.type = DOCA_TASK_COPY,
		.src = sl->src,
		.dst = sl->dst,
		.user_data = { .u64 = tag },
	};
}

/* A refused task: its tag leaves the slot, and no event may have taken it. */
static void slot_disarm(struct slot *sl, uint64_t tag, doca_error_t err)
{
	uint64_t expect = tag;

	if (!atomic_compare_exchange_strong(&sl->inflight, &expect, 0))
		stress_violation("slot %u: refused task %#llx (%s) got an event", sl->index,
				 (unsigned long long)tag, doca_error_get_name(err));
}

/* Check a refusal (or acceptance) against the phase the call ran in. */
static void check_phase(struct mix *m, unsigned seq_before, unsigned seq_after, uint32_t accepted,
			doca_error_t err, bool owner)
{
	if (err != DOCA_SUCCESS && err != DOCA_ERROR_AGAIN && err != DOCA_ERROR_BAD_STATE)
		stress_violation("%s submit returned %s", owner ? "owner" : "foreign", doca_error_get_name(err));
	if (seq_before != seq_after)
		return;
	if ((seq_after & 3) == PHASE_STARTED && err == DOCA_ERROR_BAD_STATE)
		stress_violation("%s submit refused with BAD_STATE while the ctx was RUNNING throughout",
				 owner ? "owner" : "foreign");
	if ((seq_after & 3) == PHASE_STOPPED && (accepted != 0 || err != DOCA_ERROR_BAD_STATE))
		stress_violation("%s submit after doca_ctx_stop returned: %u accepted, %s",
				 owner ? "owner" : "foreign", accepted, doca_error_get_name(err));
}

/* AGAIN: with no credit returned during the call, hi after it bounds the
 * credits out when the pool was found empty (see the opening comment). */
static void check_again(struct mix *m, uint64_t v1, uint64_t v2, uint32_t refused, bool owner)
{
	count(owner ? &m->c.again_owner : &m->c.again_foreign, 1);
	if (v1 >> 32 != v2 >> 32) {
		if (owner)
			stress_violation("a credit returned during an owner submit");
		return;
	}
	if (!owner)
		count(&m->c.again_foreign_checked, 1);
	if ((uint32_t)v2 < m->max_tasks + refused)
		stress_violation("%s submit refused with AGAIN while at most %u of %u credits were out",
				 owner ? "owner" : "foreign", (uint32_t)v2 - refused, m->max_tasks);
}

/* One submit call of @p n armed tasks (n == 1 and !batch: doca_task_submit),
 * accounted and checked. The caller holds m->lock for reading. Returns
 * how many were accepted; *err_out gets the call's result. */
static uint32_t submit_call(struct mix *m, struct slot **sls, const struct doca_task_desc *d, uint32_t n,
			    bool batch, bool owner, unsigned seq_before, doca_error_t *err_out)
{
	uint32_t a = 0;
	uint64_t v1 = atomic_fetch_add(&m->hi, n) + n;
	doca_error_t err = batch ? doca_task_submit_batch(m->ctx, d, n, &a) : doca_task_submit(m->ctx, d);
	uint64_t v2 = atomic_load(&m->hi);
	unsigned seq_after = atomic_load(&m->phase);

	if (!batch && err == DOCA_SUCCESS)
		a = 1;
	if ((err == DOCA_SUCCESS) != (a == n) || a > n)
		stress_violation("submit of %u returned %s with %u accepted", n, doca_error_get_name(err), a);
	if (a != 0) {
		long held = atomic_fetch_add(&m->lo, (long)a) + (long)a;

		if (held > (long)m->max_tasks)
			stress_violation("%ld tasks hold credits, max_tasks is %u", held, m->max_tasks);
		for (uint32_t i = 0; i < a; i++)
			count(&sls[i]->accepted, 1);
		count(owner ? &m->c.accepted_owner : &m->c.accepted_foreign, a);
	}
	check_phase(m, seq_before, seq_after, a, err, owner);
	if (err == DOCA_ERROR_AGAIN)
		check_again(m, v1, v2, n - a, owner);
	else if (err == DOCA_ERROR_BAD_STATE)
		count(&m->c.bad_state, 1);
	for (uint32_t i = a; i < n; i++)
		slot_disarm(sls[i], d[i].user_data.u64, err);
	if (a != n)
		atomic_fetch_sub(&m->hi, n - a); /* refused: never held a credit */
	*err_out = err;
	return a;
}

/* Submit tasks for the @p n free slots @p sls: one batch, or one by one.
 * Holds m->lock for reading. Returns how many were accepted. */
static uint32_t submit_slots(struct mix *m, struct slot **sls, uint32_t n, bool batch, bool owner,
			     doca_error_t *last_err)
{
	struct doca_task_desc d[MAX_TASKS_HI + 1];
	uint32_t accepted = 0;

	*last_err = DOCA_SUCCESS;
	pthread_rwlock_rdlock(&m->lock);
	unsigned seq = atomic_load(&m->phase);

	for (uint32_t i = 0; i < n; i++)
		d[i] = slot_arm(sls[i], seq);
	if (batch) {
		count(&m->c.batches, 1);
		accepted = submit_call(m, sls, d, n, true, owner, seq, last_err);
	} else {
		for (uint32_t i = 0; i < n; i++)
			accepted += submit_call(m, &sls[i], &d[i], 1, false, owner, seq, last_err);
	}
	pthread_rwlock_unlock(&m->lock);
	return accepted;
}

/* Up to @p want free slots among @p nslots from @p first, in random order. */
static uint32_t free_slots(struct mix *m, struct rng *r, uint32_t first, uint32_t nslots, uint32_t want,
			   struct slot **out)
{
	uint32_t n = 0, start = rng_below(r, nslots);

	for (uint32_t i = 0; i < nslots && n < want; i++) {
		struct slot *sl = &m->slots[first + (start + i) % nslots];

		/* acquire: pairs with the owner's release of the slot */
		if (atomic_load_explicit(&sl->inflight, memory_order_acquire) == 0)
			out[n++] = sl;
	}
	return n;
}

/* One submitting step of thread @p t (0: the owner); the last result
 * (AGAIN when all its slots are busy). */
static doca_error_t submit_step(struct mix *m, struct rng *r, unsigned t)
{
	struct slot *sls[GROUP];
	uint32_t n = free_slots(m, r, t * SLOTS_PER_THREAD, SLOTS_PER_THREAD, 1 + rng_below(r, GROUP), sls);
	doca_error_t err = DOCA_ERROR_AGAIN;

	if (n != 0)
		submit_slots(m, sls, n, rng_pct(r, 50), t == 0, &err);
	return err;
}

/* ---- events (the owner) ---- */

/* Check one event and release its slot; false if it is not a task in flight. */
static bool check_event(struct mix *m, struct doca_event *ev)
{
	uint64_t tag = doca_event_get_user_data(ev).u64;
	uint32_t index = (uint32_t)(tag >> 32);

	if (index >= NSLOTS) {
		stress_violation("event with unknown tag %#llx", (unsigned long long)tag);
		return false;
	}
	struct slot *sl = &m->slots[index];
	uint64_t cur = atomic_load_explicit(&sl->inflight, memory_order_acquire);

	if (cur != tag) {
		stress_violation("slot %u: event for tag %#llx, in flight %#llx (duplicate or refused)", index,
				 (unsigned long long)tag, (unsigned long long)cur);
		return false;
	}
	if (doca_event_get_ctx(ev) != m->ctx || doca_event_get_type(ev) != DOCA_TASK_COPY)
		stress_violation("slot %u: event names another ctx or type", index);

	enum doca_event_status st = doca_event_get_status(ev);
	doca_error_t err = doca_event_get_error(ev);
	size_t bytes = doca_event_get_bytes(ev);
	uint8_t want[LEN];

	stress_pattern(tag, want, LEN);
	if (m->o.sabotage == SABOTAGE_DATA && st == DOCA_EVENT_STATUS_SUCCESS &&
	    !atomic_exchange(&m->sabotaged, true))
		sl->dst_data[0] ^= 1;
	if (st == DOCA_EVENT_STATUS_SUCCESS && err == DOCA_SUCCESS && bytes == LEN) {
		if (memcmp(sl->dst_data, want, LEN) != 0)
			stress_violation("slot %u tag %#llx: SUCCESS but the bytes are wrong", index,
					 (unsigned long long)tag);
		count(&m->c.ev_ok, 1);
	} else if (st == DOCA_EVENT_STATUS_FAILURE && err == DOCA_ERROR_SHUTDOWN && bytes == 0) {
		if (!stress_all_poison(sl->dst_data, LEN))
			stress_violation("slot %u tag %#llx: flushed but its dst was written", index,
					 (unsigned long long)tag);
		/* submitted before a stop began or while one ran: the phase moved
		 * on, or is still that stop's */
		if (atomic_load(&m->phase) == sl->phase_seq && (sl->phase_seq & 3) != PHASE_STOPPING)
			stress_violation("slot %u tag %#llx: flushed, but no stop began since its submit", index,
					 (unsigned long long)tag);
		count(&m->c.ev_flushed, 1);
	} else {
		stress_violation("slot %u tag %#llx: unexpected outcome status %d error %s bytes %zu", index,
				 (unsigned long long)tag, (int)st, doca_error_get_name(err), bytes);
	}
	count(&sl->events, 1);
	uint64_t expect = tag;

	/* release: the slot's submitter may refill it once it sees 0 */
	if (!atomic_compare_exchange_strong_explicit(&sl->inflight, &expect, 0, memory_order_release,
						     memory_order_relaxed))
		stress_violation("slot %u: tag %#llx changed while its event was handled", index,
				 (unsigned long long)tag);
	return true;
}

/* Hand @p ev to a foreign thread; false if the chosen inbox is full. */
static bool hand_over(struct mix *m, struct rng *r, struct doca_event *ev)
{
	struct foreigner *f = &m->f[rng_below(r, FOREIGNERS)];

	for (unsigned i = 0; i < INBOX; i++)
		if (atomic_load_explicit(&f->inbox[i], memory_order_relaxed) == NULL) {
			atomic_fetch_sub(&m->lo, 1); /* before its free begins */
			m->handed++;
			count(&m->c.handed, 1);
			/* release: the foreign thread frees an event this thread is done with */
			atomic_store_explicit(&f->inbox[i], ev, memory_order_release);
			return true;
		}
	return false;
}

/* Free @p n events on the owner's thread: it keeps the PE's runner guard
 * parked (actors/runner.h), so their credits are back at once. */
static void owner_free(struct mix *m, struct doca_event **evs, uint32_t n)
{
	atomic_fetch_sub(&m->lo, (long)n);
	if (n == 1) {
		doca_event_free(evs[0]);
		count(&m->c.freed_owner, 1);
	} else {
		doca_event_free_bulk(evs, n);
		count(&m->c.freed_bulk, n);
	}
	m->owner_freed += n;
	m->owner_applied += n;
	atomic_fetch_add(&m->hi, CREDIT_RETURN(n));
}

/* --sabotage lost|dup, once: drop an event's check, or check it twice. */
static bool sabotage_event(struct mix *m, struct doca_event *ev)
{
	if ((m->o.sabotage != SABOTAGE_LOST && m->o.sabotage != SABOTAGE_DUP) ||
	    atomic_exchange(&m->sabotaged, true))
		return check_event(m, ev);
	if (m->o.sabotage == SABOTAGE_LOST)
		return true; /* never checked: its slot keeps the tag */
	bool ok = check_event(m, ev);

	(void)check_event(m, ev); /* the same event a second time */
	return ok;
}

/* One doca_pe_try_progress, and the frees it certainly drained taken off
 * hi: those whose call returned before the turn began, from a thread that
 * made no call pushing into its mailbox shard during the turn (a free
 * queued behind its own next push, stopped between its two steps, waits
 * for it: actors/mailbox.c), while no other thread was in the middle of
 * signalling the context when the turn began: not the other foreign
 * thread (in no call then), not the controller (the phase was STARTED),
 * and no engine thread (none: with --engines, foreign frees are taken off
 * only at rest, owner_witness). A signaller stopped between marking the
 * context ready and queuing it delays the context's visit until it runs
 * again, and a free that finds the mark meanwhile counts on that visit
 * (actors/ready_set.h, doca_event_free). The owner's own pushes and
 * signals are never half done during its turn. */
static void owner_progress(struct mix *m)
{
	unsigned seq[FOREIGNERS], busy = 0;
	unsigned long freed[FOREIGNERS], own = m->owner_freed, k;
	uint32_t events;
	bool signals_done = m->engines == 0 && (atomic_load(&m->phase) & 3) == PHASE_STARTED;

	for (unsigned i = 0; i < FOREIGNERS; i++) {
		seq[i] = atomic_load(&m->f[i].in_call);
		freed[i] = atomic_load(&m->f[i].freed);
		busy += seq[i] % 2;
	}
	doca_error_t err = doca_pe_try_progress(m->pe, &events);

	/* never refused: the owner keeps the guard parked, and a foreign free
	 * goes around it (through the mailbox) */
	if (!stress_expect_in(err, "owner doca_pe_try_progress", 1, DOCA_SUCCESS))
		return;
	k = own - m->owner_applied;
	m->owner_applied = own;
	for (unsigned i = 0; i < FOREIGNERS && signals_done && busy == 0; i++)
		if (atomic_load(&m->f[i].in_call) == seq[i]) {
			k += freed[i] - m->f[i].applied;
			m->f[i].applied = freed[i];
		}
	if (k != 0)
		atomic_fetch_add(&m->hi, CREDIT_RETURN(k));
}

/* Frees not yet known to be drained. */
static unsigned long frees_undrained(struct mix *m)
{
	unsigned long n = m->owner_freed - m->owner_applied;

	for (unsigned i = 0; i < FOREIGNERS; i++)
		n += atomic_load(&m->f[i].freed) - m->f[i].applied;
	return n;
}

/* One turn: progress, reap, check and route every event. @p handoff:
 * events may go to foreign threads. Returns the events reaped. */
static uint32_t owner_turn(struct mix *m, struct rng *r, bool handoff)
{
	struct doca_event *evs[REAP], *bulk[REAP];
	uint32_t total = 0;

	owner_progress(m);
	for (;;) {
		uint32_t n, nbulk = 0;

		if (rng_pct(r, 50)) {
			n = doca_pe_get_events(m->pe, evs, 1 + rng_below(r, REAP));
		} else {
			evs[0] = doca_pe_get_event(m->pe);
			n = evs[0] != NULL;
		}
		if (n == 0)
			return total;
		total += n;
		for (uint32_t i = 0; i < n; i++) {
			struct doca_event *ev = evs[i];
			unsigned route = rng_below(r, 100);

			if (!sabotage_event(m, ev) || route < 45)
				owner_free(m, &ev, 1);
			else if (route < 80 || !handoff || !hand_over(m, r, ev))
				bulk[nbulk++] = ev;
		}
		if (nbulk != 0)
			owner_free(m, bulk, nbulk);
	}
}

/* Every foreign free so far is drained: take them off hi. */
static void certify_foreign_frees(struct mix *m)
{
	unsigned long n = 0;

	for (unsigned i = 0; i < FOREIGNERS; i++) {
		unsigned long freed = atomic_load(&m->f[i].freed);

		n += freed - m->f[i].applied;
		m->f[i].applied = freed;
	}
	if (n != 0)
		atomic_fetch_add(&m->hi, CREDIT_RETURN(n));
}

/* At rest, with foreign frees not known to be drained: one task of the
 * owner's, turned until its event is back. Its event comes from a visit
 * of the context that began after the frees' pushes (their threads are
 * parked), and a visit drains the mailbox before it polls, so their
 * credits are back then, whatever signal of another thread (an engine
 * thread's) was half done. Until a credit is free the submit is refused
 * (AGAIN, checked as any other) and the owner turns again. */
static void owner_witness(struct mix *m, struct rng *r, uint64_t deadline)
{
	struct slot *sl;
	doca_error_t err;

	if (free_slots(m, r, 0, NSLOTS, 1, &sl) != 1) {
		stress_violation("probe: no free slot for the witness task");
		return;
	}
	while (submit_slots(m, &sl, 1, false, true, &err) != 1) {
		owner_turn(m, r, false);
		if (stress_now_ns() > deadline)
			stress_fatal("probe: after 60 s the witness task is still refused (%s)",
				     doca_error_get_name(err));
	}
	while (atomic_load(&sl->inflight) != 0) {
		if (owner_turn(m, r, false) == 0)
			sched_yield();
		if (stress_now_ns() > deadline)
			stress_fatal("probe: after 60 s the witness task has no event");
	}
	certify_foreign_frees(m);
}

/* Park the foreign threads, reap everything, check credits at rest, then
 * submit max_tasks + 1 tasks without progressing: exactly max_tasks fit. */
static void owner_probe(struct mix *m, struct rng *r)
{
	unsigned pause = atomic_fetch_add(&m->pause, 1) + 1; /* odd: park */
	uint64_t deadline = stress_now_ns() + DEADLINE_NS;
	struct slot *sls[MAX_TASKS_HI + 1];
	doca_error_t err;
	bool parked = false;

	/* until every event is freed, then every foreign free drained */
	while (!parked || atomic_load(&m->lo) > 0 || atomic_load(&m->foreign_freed) != m->handed) {
		parked = true;
		for (unsigned i = 0; i < FOREIGNERS; i++)
			parked = parked && atomic_load(&m->f[i].parked) == pause;
		if (owner_turn(m, r, false) == 0)
			sched_yield();
		if (stress_now_ns() > deadline)
			stress_fatal("probe: after 60 s %ld tasks accepted without their event freed, "
				     "%lu of %lu handed events freed, %lu frees not drained, "
				     "foreign threads parked: %d",
				     atomic_load(&m->lo), atomic_load(&m->foreign_freed), m->handed,
				     frees_undrained(m), parked);
	}
	if (frees_undrained(m) != 0)
		owner_witness(m, r, deadline);
	if ((uint32_t)atomic_load(&m->hi) != 0 || atomic_load(&m->lo) != 0)
		stress_violation("probe: at rest %u tasks may and %ld certainly hold credits (want 0 and 0)",
				 (uint32_t)atomic_load(&m->hi), atomic_load(&m->lo));
	uint32_t busy = 0;

	for (uint32_t i = 0; i < NSLOTS; i++)
		busy += atomic_load(&m->slots[i].inflight) != 0;
	if (busy != 0)
		stress_violation("probe: at rest %u slots still have a task in flight", busy);
	uint32_t n = m->max_tasks + 1; /* stable: the controller waits for this probe */
	if (free_slots(m, r, 0, NSLOTS, n, sls) == n) {
		bool batch = rng_pct(r, 50);
		uint32_t a = submit_slots(m, sls, n, batch, true, &err);

		if (a != m->max_tasks || err != DOCA_ERROR_AGAIN)
			stress_violation("probe (%s): %u of %u accepted, then %s; want %u, then AGAIN",
					 batch ? "batch" : "one by one", a, n, doca_error_get_name(err),
					 m->max_tasks);
	}
	atomic_fetch_add(&m->pause, 1);
	count(&m->c.probes, 1);
}

static void *owner_main(void *arg)
{
	struct mix *m = arg;
	struct rng r;

	rng_init(&r, m->o.seed, 10);
	while (!atomic_load(&m->quit)) {
		unsigned req = atomic_load(&m->probe_req);

		if (req != atomic_load_explicit(&m->probe_done, memory_order_relaxed)) {
			owner_probe(m, &r);
			atomic_store(&m->probe_done, req);
			continue;
		}
		if (atomic_load_explicit(&m->load, memory_order_relaxed) && rng_pct(&r, 70))
			submit_step(m, &r, 0);
		if (owner_turn(m, &r, true) == 0)
			sched_yield();
	}
	return NULL;
}

/* ---- foreign threads ---- */

/* Free every event handed to @p f, singly or in bulk. */
static void foreign_free_inbox(struct mix *m, struct foreigner *f)
{
	struct doca_event *evs[INBOX];
	uint32_t n = 0;

	for (unsigned i = 0; i < INBOX; i++) {
		/* acquire: pairs with the owner's hand-over */
		struct doca_event *ev = atomic_exchange_explicit(&f->inbox[i], NULL, memory_order_acquire);

		if (ev != NULL)
			evs[n++] = ev;
	}
	if (n == 0)
		return;
	atomic_fetch_add(&f->in_call, 1);
	if (rng_pct(&f->r, 50))
		doca_event_free_bulk(evs, n);
	else
		for (uint32_t i = 0; i < n; i++)
			doca_event_free(evs[i]);
	atomic_fetch_add(&f->freed, n);
	atomic_fetch_add(&f->in_call, 1);
	atomic_fetch_add(&m->foreign_freed, n);
}

static void *foreign_main(void *arg)
{
	struct foreigner *f = arg;
	struct mix *m = f->m;

	while (!atomic_load(&m->quit)) {
		unsigned pause = atomic_load(&m->pause);

		foreign_free_inbox(m, f);
		if (pause & 1) {
			atomic_store(&f->parked, pause);
			while (atomic_load(&m->pause) == pause && !atomic_load(&m->quit))
				sched_yield();
			continue;
		}
		if (atomic_load_explicit(&m->load, memory_order_relaxed)) {
			atomic_fetch_add(&f->in_call, 1);
			doca_error_t err = submit_step(m, &f->r, 1 + f->id);

			atomic_fetch_add(&f->in_call, 1);
			if (err != DOCA_SUCCESS)
				sched_yield(); /* let the owner reap, or the controller restart */
		} else {
			sched_yield();
		}
	}
	foreign_free_inbox(m, f);
	return NULL;
}

/* ---- the controller ---- */

static void state_cb(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev,
		     enum doca_ctx_state next)
{
	struct mix *m = ud.ptr;

	stress_report(&m->reports, "ctx", prev, next);
	(void)ctx;
}

static void make_mems(struct mix *m)
{
	if (!STRESS_OK(doca_mem_create(m->ctx, NSLOTS * LEN, DOCA_ACCESS_FLAG_READ, &m->msrc)) ||
	    !STRESS_OK(doca_mem_create(m->ctx, NSLOTS * LEN, DOCA_ACCESS_FLAG_WRITE, &m->mdst)))
		stress_fatal("cannot create memories");
}

static void make_bufs(struct mix *m)
{
	for (uint32_t i = 0; i < NSLOTS; i++) {
		struct slot *sl = &m->slots[i];
		void *p;

		if (!STRESS_OK(doca_buf_create(m->msrc, i * LEN, LEN, &sl->src)) ||
		    !STRESS_OK(doca_buf_create(m->mdst, i * LEN, LEN, &sl->dst)))
			stress_fatal("cannot create buffers");
		STRESS_OK(doca_buf_get_data(sl->src, &p));
		sl->src_data = p;
		STRESS_OK(doca_buf_get_data(sl->dst, &p));
		sl->dst_data = p;
	}
}

static void destroy_bufs(struct mix *m)
{
	for (uint32_t i = 0; i < NSLOTS; i++) {
		struct slot *sl = &m->slots[i];

		if (atomic_load(&sl->inflight) != 0)
			stress_violation("slot %u: still in flight on an IDLE ctx", i);
		STRESS_OK(doca_buf_destroy(sl->src));
		STRESS_OK(doca_buf_destroy(sl->dst));
		sl->src = sl->dst = NULL;
	}
}

static void destroy_mems(struct mix *m)
{
	STRESS_OK(doca_mem_destroy(m->msrc));
	STRESS_OK(doca_mem_destroy(m->mdst));
}

static void start(struct mix *m)
{
	atomic_fetch_add(&m->phase, 1); /* → STARTING */
	if (STRESS_OK(doca_ctx_start(m->ctx)))
		stress_reports_started(&m->reports);
	atomic_fetch_add(&m->phase, 1); /* → STARTED */
}

/* Stop, check both stop results, wait until IDLE (the owner progresses). */
static void stop(struct mix *m)
{
	enum doca_ctx_state st;
	uint64_t deadline = stress_now_ns() + DEADLINE_NS;

	atomic_fetch_add(&m->phase, 1); /* → STOPPING */
	doca_error_t first = doca_ctx_stop(m->ctx);

	atomic_fetch_add(&m->phase, 1); /* → STOPPED */
	if (first == DOCA_SUCCESS) {
		count(&m->c.stops_idle, 1);
		STRESS_OK(doca_ctx_get_state(m->ctx, &st));
		if (st != DOCA_CTX_STATE_IDLE)
			stress_violation("doca_ctx_stop returned SUCCESS but the state is %s",
					 stress_state_names[st & 3]);
		stress_expect_in(doca_ctx_stop(m->ctx), "second doca_ctx_stop after SUCCESS", 1,
				 DOCA_ERROR_BAD_STATE);
	} else if (stress_expect_in(first, "doca_ctx_stop", 1, DOCA_ERROR_IN_PROGRESS)) {
		count(&m->c.stops_stopping, 1);
		stress_expect_in(doca_ctx_stop(m->ctx), "second doca_ctx_stop after IN_PROGRESS", 2,
				 DOCA_ERROR_IN_PROGRESS, DOCA_ERROR_BAD_STATE);
	}
	for (;;) {
		STRESS_OK(doca_ctx_get_state(m->ctx, &st));
		if (st == DOCA_CTX_STATE_IDLE)
			break;
		if (stress_now_ns() > deadline)
			stress_fatal("still %s 60 s after doca_ctx_stop: %ld accepted tasks without their "
				     "event freed, %lu of %lu handed events freed",
				     stress_state_names[st & 3], atomic_load(&m->lo),
				     atomic_load(&m->foreign_freed),
				     atomic_load(&m->c.handed));
		stress_sleep_us(100);
	}
	/* lo is a lower bound: a submitter may count its task after the event is freed */
	if (atomic_load(&m->lo) > 0)
		stress_violation("IDLE while %ld accepted tasks have not had their event freed",
				 atomic_load(&m->lo));
}

/* While IDLE: new buffers; sometimes new memories and a new task pool size. */
static void rebuild(struct mix *m, struct rng *r)
{
	bool mems = rng_pct(r, 40);

	pthread_rwlock_wrlock(&m->lock);
	stress_expect_in(doca_mem_destroy(m->msrc), "doca_mem_destroy with buffers", 1, DOCA_ERROR_IN_USE);
	destroy_bufs(m);
	if (mems) {
		destroy_mems(m);
		make_mems(m);
		m->max_tasks = MAX_TASKS_LO + rng_below(r, MAX_TASKS_HI - MAX_TASKS_LO + 1);
		STRESS_OK(doca_ctx_set_max_tasks(m->ctx, m->max_tasks));
		count(&m->c.mem_rebuilds, 1);
	}
	make_bufs(m);
	pthread_rwlock_unlock(&m->lock);
	count(&m->c.rebuilds, 1);
}

/* Ask the owner for a probe and wait for it (the owner parks the others). */
static void probe(struct mix *m)
{
	unsigned req = atomic_fetch_add(&m->probe_req, 1) + 1;

	while (atomic_load(&m->probe_done) != req)
		stress_sleep_us(100);
}

static void cycle(struct mix *m, struct rng *r)
{
	stress_sleep_us(rng_below(r, 3000));
	if (rng_pct(r, 25))
		probe(m);
	stop(m);
	if (rng_pct(r, 30))
		rebuild(m, r);
	start(m);
}

/* ---- set-up, checks, teardown ---- */

static void setup(struct mix *m, struct rng *r)
{
	union doca_data ud = { .ptr = m };

	stress_reports_reset(&m->reports);
	atomic_store(&m->phase, PHASE_STOPPED);
	pthread_rwlockattr_t attr;

	pthread_rwlockattr_init(&attr);
	/* writer preference: submitters refused while IDLE would starve a rebuild */
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&m->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	m->max_tasks = MAX_TASKS_LO + rng_below(r, MAX_TASKS_HI - MAX_TASKS_LO + 1);
	for (uint32_t i = 0; i < NSLOTS; i++)
		m->slots[i].index = i;
	if (!STRESS_OK(doca_pe_create(&m->pe)) || !STRESS_OK(doca_ctx_create(&m->ctx)) ||
	    !STRESS_OK(doca_dev_open(m->dev_name, &m->dev)))
		stress_fatal("set-up failed");
	STRESS_OK(doca_ctx_set_dev(m->ctx, m->dev));
	STRESS_OK(doca_ctx_set_user_data(m->ctx, ud));
	STRESS_OK(doca_ctx_set_state_changed_cb(m->ctx, state_cb));
	STRESS_OK(doca_ctx_set_max_tasks(m->ctx, m->max_tasks));
	STRESS_OK(doca_pe_connect_ctx(m->pe, m->ctx));
	make_mems(m);
	make_bufs(m);
	atomic_fetch_add(&m->phase, 1); /* STOPPED → STARTING: start() moves on from there */
	if (STRESS_OK(doca_ctx_start(m->ctx)))
		stress_reports_started(&m->reports);
	atomic_fetch_add(&m->phase, 1);
}

static void check_end(struct mix *m)
{
	struct counters *c = &m->c;
	unsigned long accepted = atomic_load(&c->accepted_owner) + atomic_load(&c->accepted_foreign);
	unsigned long events = atomic_load(&c->ev_ok) + atomic_load(&c->ev_flushed);
	unsigned long freed = atomic_load(&c->freed_owner) + atomic_load(&c->freed_bulk) +
			      atomic_load(&m->foreign_freed);

	for (uint32_t i = 0; i < NSLOTS; i++) {
		struct slot *sl = &m->slots[i];
		unsigned long a = atomic_load(&sl->accepted), e = atomic_load(&sl->events);

		if (atomic_load(&sl->inflight) != 0 || a != e)
			stress_violation("slot %u: %lu accepted, %lu events, in flight %#llx", i, a, e,
					 (unsigned long long)atomic_load(&sl->inflight));
	}
	if (events != accepted || freed != accepted)
		stress_violation("%lu tasks accepted, %lu events checked, %lu freed", accepted, events, freed);
	/* everything is back: count the foreign frees the owner had not */
	certify_foreign_frees(m);
	if ((uint32_t)atomic_load(&m->hi) != 0 || atomic_load(&m->lo) != 0)
		stress_violation("at the end %u tasks may and %ld certainly hold credits (want 0 and 0)",
				 (uint32_t)atomic_load(&m->hi), atomic_load(&m->lo));
	if (atomic_load(&c->accepted_owner) == 0 || atomic_load(&c->accepted_foreign) == 0 ||
	    atomic_load(&c->stops_idle) + atomic_load(&c->stops_stopping) < 2)
		stress_violation("the run proved nothing: %lu owner and %lu foreign tasks accepted, %lu stops",
				 atomic_load(&c->accepted_owner), atomic_load(&c->accepted_foreign),
				 atomic_load(&c->stops_idle) + atomic_load(&c->stops_stopping));
	stress_reports_check(&m->reports, "ctx");
}

static void teardown(struct mix *m)
{
	destroy_bufs(m);
	destroy_mems(m);
	STRESS_OK(doca_dev_close(m->dev));
	STRESS_OK(doca_ctx_destroy(m->ctx));
	STRESS_OK(doca_pe_destroy(m->pe));
	pthread_rwlock_destroy(&m->lock);
}

static void summary(struct mix *m, double secs, uint64_t stale)
{
	struct counters *c = &m->c;

	printf("  device %s; accepted %lu from the owner, %lu from foreign threads (%lu batch calls)\n",
	       m->dev_name, atomic_load(&c->accepted_owner), atomic_load(&c->accepted_foreign),
	       atomic_load(&c->batches));
	printf("  events: %lu ok, %lu flushed; freed: %lu singly and %lu in bulk by the owner, "
	       "%lu handed to foreign threads\n",
	       atomic_load(&c->ev_ok), atomic_load(&c->ev_flushed), atomic_load(&c->freed_owner),
	       atomic_load(&c->freed_bulk), atomic_load(&c->handed));
	printf("  refused: %lu BAD_STATE, %lu AGAIN on the owner (all checked), %lu AGAIN foreign "
	       "(%lu checked)\n",
	       atomic_load(&c->bad_state), atomic_load(&c->again_owner), atomic_load(&c->again_foreign),
	       atomic_load(&c->again_foreign_checked));
	printf("  %lu stops to IDLE at once, %lu through STOPPING, %lu probes, %lu rebuilds (%lu with "
	       "memories), %llu stale frees\n",
	       atomic_load(&c->stops_idle), atomic_load(&c->stops_stopping), atomic_load(&c->probes),
	       atomic_load(&c->rebuilds), atomic_load(&c->mem_rebuilds), (unsigned long long)stale);
	printf("stress_mixed: %s seed=%llu %.1fs accepted=%lu violations=%lu\n",
	       stress_violation_count() ? "FAIL" : "PASS", (unsigned long long)m->o.seed, secs,
	       atomic_load(&c->accepted_owner) + atomic_load(&c->accepted_foreign), stress_violation_count());
}

/* Take --engines N out of argv (stress_parse_kinds knows the common options). */
static unsigned take_engines(int *argc, char **argv)
{
	unsigned engines = 0;
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--engines") == 0 && i + 1 < *argc) {
			char *end;

			engines = (unsigned)strtoul(argv[++i], &end, 10);
			if (*end != '\0' || engines > 8) {
				fprintf(stderr, "stress_mixed: --engines takes 0..8\n");
				exit(2);
			}
			continue;
		}
		argv[out++] = argv[i];
	}
	*argc = out;
	return engines;
}

int main(int argc, char **argv)
{
	static struct mix mix;
	struct mix *m = &mix;
	unsigned engines = take_engines(&argc, argv);
	struct rng r;
	pthread_t owner;

	stress_parse_kinds(argc, argv, &m->o,
			   STRESS_KIND(SABOTAGE_LOST) | STRESS_KIND(SABOTAGE_DUP) | STRESS_KIND(SABOTAGE_DATA));
	if (engines != 0)
		printf("replay adds: --engines %u\n", engines);
	m->engines = engines;
	snprintf(m->dev_name, sizeof(m->dev_name), engines ? "sw0:engines=%u" : "sw0", engines);
	stress_watchdog(m->o.seconds);
	rng_init(&r, m->o.seed, 0);

	uint64_t stale0 = doca_stale_handle_count();
	uint64_t t0 = stress_now_ns(), deadline = t0 + (uint64_t)(m->o.seconds * 1e9);

	setup(m, &r);
	atomic_store(&m->load, true);
	for (unsigned i = 0; i < FOREIGNERS; i++) {
		struct foreigner *f = &m->f[i];

		f->m = m;
		f->id = i;
		rng_init(&f->r, m->o.seed, 100 + i);
		if (pthread_create(&f->thread, NULL, foreign_main, f) != 0)
			stress_fatal("pthread_create failed");
	}
	if (pthread_create(&owner, NULL, owner_main, m) != 0)
		stress_fatal("pthread_create failed");
	while (stress_now_ns() < deadline)
		cycle(m, &r);
	atomic_store(&m->load, false);
	stop(m);
	atomic_store(&m->quit, true);
	for (unsigned i = 0; i < FOREIGNERS; i++)
		pthread_join(m->f[i].thread, NULL);
	pthread_join(owner, NULL);
	check_end(m);
	teardown(m);

	uint64_t stale = doca_stale_handle_count() - stale0;

	if (stale != 0)
		stress_violation("%llu stale or double event frees", (unsigned long long)stale);
	summary(m, (double)(stress_now_ns() - t0) / 1e9, stale);
	return stress_violation_count() ? 1 : 0;
}
