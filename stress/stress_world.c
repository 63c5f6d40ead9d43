/*
 * stress/stress_world.c — the world the stress programs race: PEs and the
 * threads that run them, units (ctx + device + memories + buffers), slots,
 * submitters, the intruder, and the end-of-run invariants.
 *
 * How "exactly one event" is proven: a slot (one src and one dst region)
 * has at most one task in flight. Its owner stores the task's tag (slot
 * index << 32 | generation) in slot->inflight before submitting; a refused
 * submission takes the tag back with a CAS, an event takes it with a CAS.
 * A second event, or an event for a refused task, finds its tag gone and is
 * a violation; an accepted task whose event never comes leaves its tag in
 * place, found at the end. Each task copies a pattern derived from its tag
 * into a dst region poisoned before the submit, so the handler can check
 * the exact bytes the event claims and that nothing beyond them was written.
 */
#include "stress_common.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define MAX_LEN 4096u
#define IDLE_DEADLINE_NS (60ull * 1000 * 1000 * 1000)
#define EVENT_WAIT_MS 1000

enum fault { FAULT_FAIL = 1u << 0, FAULT_PARTIAL = 1u << 1 };

enum misuse { MISUSE_NONE, MISUSE_FLAG, MISUSE_NO_READ, MISUSE_SHORT_DST, MISUSE_COUNT };

struct slot {
	struct unit *u;
	uint32_t index;            /* in stress.slots */
	uint32_t submitter;        /* its owner when nothing is in flight */
	size_t off;                /* region in the unit's memories */
	size_t dst_len;            /* len, or shorter for a partial slot */
	bool partial;
	/* the unit's current incarnation (written by the controller under the
	 * unit lock while the ctx is IDLE) */
	struct doca_buf *src, *dst;
	uint8_t *src_data, *dst_data;
	/* the task in flight (written by the owner before the submit) */
	struct doca_ctx *ctx;
	unsigned faults;
	_Atomic uint64_t inflight; /* its tag, 0 when none */
	atomic_uint gen;
	atomic_ulong accepted, events;
};

struct pe_run {
	struct stress *s;
	unsigned id;
	struct pe_spec spec;
	struct doca_pe *pe;
	pthread_t thread;
	atomic_bool quit;
	int stop_fd;
	atomic_ulong cycles;
};

struct unit {
	struct stress *s;
	unsigned id;
	pthread_rwlock_t lock; /* submitters (read) vs object rebuilds (write) */
	struct pe_run *run;
	struct doca_ctx *ctx;
	struct doca_dev *dev;
	unsigned faults;
	struct doca_mem *msrc, *mdst;
	struct slot *slots;
	unsigned nslots;
	char name[16];                /* "unit N", for reports */
	struct stress_reports reports;
	atomic_ulong rebuilds;
};

struct counters {
	atomic_ulong accepted, again, bad_state, misuse_refused;
	atomic_ulong ev_ok, ev_io_failed, ev_flushed, ev_partial_io, ev_partial_short;
	atomic_ulong cb_stops, resubmits, intruder_turns;
};

struct stress {
	const struct stress_cfg *cfg;
	struct stress_opts opts;
	struct pe_run *runs;
	struct unit *units;
	struct slot *slots;
	unsigned nslots;
	atomic_bool running;
	int cpus[64];
	int ncpus;
	struct counters c;
};

/* ---- per-thread randomness (PE threads, callbacks) ---- */

static atomic_ulong rng_streams = 1000;
static _Thread_local struct rng tl_rng;
static _Thread_local bool tl_rng_ready;

static struct rng *thread_rng(const struct stress *s)
{
	if (!tl_rng_ready) {
		rng_init(&tl_rng, s->opts.seed, atomic_fetch_add(&rng_streams, 1));
		tl_rng_ready = true;
	}
	return &tl_rng;
}

/* ---- submitting ---- */

static unsigned faults_of(const char *open_string)
{
	unsigned f = 0;

	if (strstr(open_string, "fail_every=") != NULL)
		f |= FAULT_FAIL;
	if (strstr(open_string, "partial_every=") != NULL)
		f |= FAULT_PARTIAL;
	return f;
}

static struct doca_task_desc slot_desc(const struct slot *sl, uint64_t tag, enum misuse m)
{
	struct doca_task_desc d = {
		.type = DOCA_TASK_COPY,
		.src = sl->src,
		.dst = sl->dst,
		.user_data = { .u64 = tag },
		.flags = sl->partial ? DOCA_TASK_FLAG_ALLOW_PARTIAL : 0,
	};

	if (m == MISUSE_FLAG)
		d.flags |= 1u << 7;
	else if (m == MISUSE_NO_READ)
		d.src = sl->dst; /* the dst memory is WRITE only */
	else if (m == MISUSE_SHORT_DST)
		d.flags = 0;
	return d;
}

static enum misuse pick_misuse(const struct stress *s, const struct slot *sl, struct rng *r)
{
	if (!rng_pct(r, s->cfg->misuse_pct))
		return MISUSE_NONE;
	enum misuse m = (enum misuse)(1 + rng_below(r, MISUSE_COUNT - 1));

	return m == MISUSE_SHORT_DST && !sl->partial ? MISUSE_FLAG : m;
}

static void count_refusal(struct stress *s, doca_error_t err, enum misuse m)
{
	if (err == DOCA_ERROR_BAD_STATE)
		atomic_fetch_add_explicit(&s->c.bad_state, 1, memory_order_relaxed);
	else if (err == DOCA_ERROR_AGAIN && m == MISUSE_NONE)
		atomic_fetch_add_explicit(&s->c.again, 1, memory_order_relaxed);
	else if (m == MISUSE_NO_READ && err == DOCA_ERROR_NOT_PERMITTED)
		atomic_fetch_add_explicit(&s->c.misuse_refused, 1, memory_order_relaxed);
	else if (m != MISUSE_NONE && m != MISUSE_NO_READ && err == DOCA_ERROR_INVALID_VALUE)
		atomic_fetch_add_explicit(&s->c.misuse_refused, 1, memory_order_relaxed);
	else
		stress_violation("submit (misuse %d) returned %s", (int)m, doca_error_get_name(err));
}

/* Submit the next task of @p sl; the caller owns the slot. */
static doca_error_t slot_submit(struct stress *s, struct slot *sl, struct rng *r)
{
	uint8_t buf[MAX_LEN];
	uint32_t gen = atomic_fetch_add_explicit(&sl->gen, 1, memory_order_relaxed) + 1;
	uint64_t tag;
	enum misuse m = pick_misuse(s, sl, r);

	if (gen == 0)
		gen = atomic_fetch_add_explicit(&sl->gen, 1, memory_order_relaxed) + 1;
	tag = (uint64_t)sl->index << 32 | gen;
	stress_pattern(tag, buf, s->cfg->len);
	memcpy(sl->src_data, buf, s->cfg->len);
	memset(sl->dst_data, STRESS_POISON, sl->dst_len);
	sl->ctx = sl->u->ctx;
	sl->faults = sl->u->faults;

	struct doca_task_desc d = slot_desc(sl, tag, m);

	/* release: the event handler sees the pattern, ctx and faults. */
	atomic_store_explicit(&sl->inflight, tag, memory_order_release);
	doca_error_t err = doca_task_submit(sl->ctx, &d);

	if (err == DOCA_SUCCESS) {
		if (m != MISUSE_NONE)
			stress_violation("slot %u: invalid submission (misuse %d) accepted", sl->index, (int)m);
		atomic_fetch_add_explicit(&sl->accepted, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->c.accepted, 1, memory_order_relaxed);
		return err;
	}
	uint64_t expect = tag;

	if (!atomic_compare_exchange_strong(&sl->inflight, &expect, 0))
		stress_violation("slot %u: refused task %#llx (%s) got an event", sl->index,
				 (unsigned long long)tag, doca_error_get_name(err));
	count_refusal(s, err, m);
	return err;
}

/* ---- events ---- */

static void check_bytes(const struct slot *sl, uint64_t tag, size_t good, const char *what)
{
	uint8_t want[MAX_LEN];

	stress_pattern(tag, want, good);
	if (memcmp(sl->dst_data, want, good) != 0)
		stress_violation("slot %u tag %#llx: %s but the first %zu bytes are wrong", sl->index,
				 (unsigned long long)tag, what, good);
	if (!stress_all_poison(sl->dst_data + good, sl->dst_len - good))
		stress_violation("slot %u tag %#llx: %s but bytes beyond the first %zu were written",
				 sl->index, (unsigned long long)tag, what, good);
}

/* Check status, error, byte count and data of one event against its slot. */
static void check_outcome(struct stress *s, const struct slot *sl, uint64_t tag,
			  const struct doca_event *ev)
{
	enum doca_event_status st = doca_event_get_status(ev);
	doca_error_t err = doca_event_get_error(ev);
	size_t bytes = doca_event_get_bytes(ev);
	size_t full = sl->dst_len < s->cfg->len ? sl->dst_len : s->cfg->len;

	if (st == DOCA_EVENT_STATUS_SUCCESS && err == DOCA_SUCCESS && bytes == full && !sl->partial) {
		check_bytes(sl, tag, bytes, "SUCCESS");
		atomic_fetch_add_explicit(&s->c.ev_ok, 1, memory_order_relaxed);
	} else if (st == DOCA_EVENT_STATUS_PARTIAL && err == DOCA_ERROR_TOO_BIG && sl->partial &&
		   bytes == full) {
		check_bytes(sl, tag, bytes, "PARTIAL (short dst)");
		atomic_fetch_add_explicit(&s->c.ev_partial_short, 1, memory_order_relaxed);
	} else if (st == DOCA_EVENT_STATUS_PARTIAL && err == DOCA_ERROR_IO_FAILED &&
		   (sl->faults & FAULT_PARTIAL) && bytes < full) {
		check_bytes(sl, tag, bytes, "PARTIAL (injected)");
		atomic_fetch_add_explicit(&s->c.ev_partial_io, 1, memory_order_relaxed);
	} else if (st == DOCA_EVENT_STATUS_FAILURE && err == DOCA_ERROR_SHUTDOWN && bytes == 0) {
		check_bytes(sl, tag, 0, "FAILURE (flushed)");
		atomic_fetch_add_explicit(&s->c.ev_flushed, 1, memory_order_relaxed);
	} else if (st == DOCA_EVENT_STATUS_FAILURE && err == DOCA_ERROR_IO_FAILED &&
		   (sl->faults & FAULT_FAIL)) {
		atomic_fetch_add_explicit(&s->c.ev_io_failed, 1, memory_order_relaxed);
	} else {
		stress_violation("slot %u tag %#llx: unexpected outcome status %d error %s bytes %zu "
				 "(len %zu, dst %zu, partial %d, faults %#x)",
				 sl->index, (unsigned long long)tag, (int)st, doca_error_get_name(err),
				 bytes, s->cfg->len, sl->dst_len, sl->partial, sl->faults);
	}
}

/* The slot of a task tag; NULL (and a violation) if that task is not in flight. */
static struct slot *tag_slot(struct stress *s, uint64_t tag)
{
	uint32_t index = (uint32_t)(tag >> 32);

	if (index >= s->nslots) {
		stress_violation("event with unknown tag %#llx", (unsigned long long)tag);
		return NULL;
	}
	struct slot *sl = &s->slots[index];
	uint64_t cur = atomic_load_explicit(&sl->inflight, memory_order_acquire);

	if (cur != tag) {
		stress_violation("slot %u: event for tag %#llx, in flight %#llx (duplicate or refused)",
				 index, (unsigned long long)tag, (unsigned long long)cur);
		return NULL;
	}
	return sl;
}

/* The event's slot, after checking it names the slot's ctx and a copy. */
static struct slot *event_slot(struct stress *s, const struct doca_event *ev, uint64_t *tag)
{
	*tag = doca_event_get_user_data(ev).u64;
	struct slot *sl = tag_slot(s, *tag);

	if (sl != NULL && (doca_event_get_ctx(ev) != sl->ctx || doca_event_get_type(ev) != DOCA_TASK_COPY))
		stress_violation("slot %u: event names another ctx or type", sl->index);
	return sl;
}

/* From an event callback: maybe stop the ctx, maybe resubmit the slot.
 * Returns true if the slot went back in flight. */
static bool callback_extras(struct stress *s, struct slot *sl, struct doca_ctx *ctx)
{
	struct rng *r = thread_rng(s);

	if (s->cfg->cb_stop_permille && rng_below(r, 1000) < s->cfg->cb_stop_permille) {
		/* this event is outstanding, so the ctx cannot go IDLE here */
		stress_expect_in(doca_ctx_stop(ctx), "doca_ctx_stop from an event callback", 1,
				 DOCA_ERROR_IN_PROGRESS);
		atomic_fetch_add_explicit(&s->c.cb_stops, 1, memory_order_relaxed);
	}
	if (!atomic_load_explicit(&s->running, memory_order_relaxed) || !rng_pct(r, s->cfg->cb_resubmit_pct))
		return false;
	atomic_fetch_add_explicit(&s->c.resubmits, 1, memory_order_relaxed);
	slot_submit(s, sl, r);
	return true;
}

static atomic_bool sabotaged;

/* --sabotage, once per run: LOST drops an event (returns true), DATA flips
 * a dst byte of a successful copy before the check, DUP has the caller handle the tag again. */
static bool sabotage(struct stress *s, struct doca_event *ev, bool owned, bool *dup)
{
	if (s->opts.sabotage == SABOTAGE_NONE ||
	    (s->opts.sabotage == SABOTAGE_DATA && doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS) ||
	    atomic_exchange(&sabotaged, true))
		return false;
	uint64_t tag = doca_event_get_user_data(ev).u64;

	if (s->opts.sabotage == SABOTAGE_LOST) {
		if (owned)
			doca_event_free(ev);
		return true;
	}
	if (s->opts.sabotage == SABOTAGE_DATA)
		s->slots[(uint32_t)(tag >> 32) % s->nslots].dst_data[0] ^= 1;
	*dup = s->opts.sabotage == SABOTAGE_DUP;
	return false;
}

/* Release the slot of a handled task (unless a callback resubmitted it). */
static void slot_release(struct slot *sl, uint64_t tag)
{
	uint64_t expect = tag;

	/* release: the owner may refill the slot once it sees 0. */
	if (!atomic_compare_exchange_strong_explicit(&sl->inflight, &expect, 0, memory_order_release,
						     memory_order_relaxed))
		stress_violation("slot %u: tag %#llx changed while its event was handled", sl->index,
				 (unsigned long long)tag);
}

/* Handle one event (PE thread). @p owned: from doca_pe_get_event, so free it. */
static void on_event(struct stress *s, struct doca_event *ev, bool owned)
{
	uint64_t tag;
	bool dup = false;

	if (sabotage(s, ev, owned, &dup))
		return;
	struct slot *sl = event_slot(s, ev, &tag);

	if (sl == NULL) {
		if (owned)
			doca_event_free(ev);
		return;
	}
	atomic_fetch_add_explicit(&sl->events, 1, memory_order_relaxed);
	check_outcome(s, sl, tag, ev);
	if (owned) {
		/* Release the slot first: once the event is freed the ctx may go
		 * IDLE (a stop on another thread finds nothing outstanding) and a
		 * rebuild then expects every slot of the unit released. */
		slot_release(sl, tag);
		doca_event_free(ev);
	} else if (!callback_extras(s, sl, doca_event_get_ctx(ev))) {
		slot_release(sl, tag);
	}
	if (dup)
		(void)tag_slot(s, tag); /* the same task's event a second time */
}

static void event_cb(struct doca_event *ev, union doca_data ud)
{
	struct unit *u = ud.ptr;

	on_event(u->s, ev, false);
}

static void state_cb(struct doca_ctx *ctx, union doca_data ud, enum doca_ctx_state prev,
		     enum doca_ctx_state next)
{
	struct unit *u = ud.ptr;

	stress_report(&u->reports, u->name, prev, next);
	(void)ctx;
}

/* ---- PE threads ---- */

/* One turn plus reaping; returns the events seen. */
static uint32_t pe_turn(struct pe_run *pr)
{
	struct doca_event *ev;
	uint32_t n = doca_pe_progress(pr->pe);

	while ((ev = doca_pe_get_event(pr->pe)) != NULL) {
		on_event(pr->s, ev, true);
		n++;
	}
	return n;
}

static void *poll_main(void *arg)
{
	struct pe_run *pr = arg;

	while (!atomic_load(&pr->quit))
		if (pe_turn(pr) == 0)
			sched_yield();
	return NULL;
}

static int event_epoll(struct pe_run *pr, int *pe_fd)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event a = { .events = EPOLLIN, .data.u32 = 0 };
	struct epoll_event b = { .events = EPOLLIN, .data.u32 = 1 };

	STRESS_OK(doca_pe_get_notification_handle(pr->pe, pe_fd));
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, *pe_fd, &a) != 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, pr->stop_fd, &b) != 0)
		stress_fatal("epoll set-up failed: %s", strerror(errno));
	return ep;
}

/* Slept EVENT_WAIT_MS without a wake: was work pending all along? */
static void check_lost_wakeup(struct pe_run *pr, int pe_fd)
{
	struct pollfd p = { .fd = pe_fd, .events = POLLIN };

	if (poll(&p, 1, 0) == 1)
		return; /* a wake-up arrived just now */
	STRESS_OK(doca_pe_clear_notification(pr->pe));
	uint32_t n = pe_turn(pr);

	if (n != 0)
		stress_violation("PE %u (event mode): slept %d ms while %u events were pending (lost wake-up)",
				 pr->id, EVENT_WAIT_MS, n);
}

static void *event_main(void *arg)
{
	struct pe_run *pr = arg;
	struct epoll_event evs[2];
	int pe_fd;
	int ep = event_epoll(pr, &pe_fd);

	while (!atomic_load(&pr->quit)) {
		while (pe_turn(pr) != 0)
			;
		STRESS_OK(doca_pe_request_notification(pr->pe));
		int n = epoll_wait(ep, evs, 2, EVENT_WAIT_MS);

		if (n == 0)
			check_lost_wakeup(pr, pe_fd);
		else if (n < 0 && errno != EINTR)
			stress_fatal("epoll_wait: %s", strerror(errno));
		STRESS_OK(doca_pe_clear_notification(pr->pe));
	}
	close(ep);
	return NULL;
}

static int pick_cpu(struct pe_run *pr)
{
	struct rng *r = thread_rng(pr->s);
	unsigned k = rng_below(r, (uint32_t)pr->s->ncpus + 1);

	return k == 0 ? -1 : pr->s->cpus[k - 1];
}

/* Take the PE back from its worker, progress it here a while, hand it back. */
static void worker_cycle(struct pe_run *pr)
{
	struct rng *r = thread_rng(pr->s);
	uint64_t until = stress_now_ns() + rng_below(r, 3000) * 1000ull;

	STRESS_OK(doca_pe_stop_run(pr->pe));
	stress_expect_in(doca_pe_stop_run(pr->pe), "second doca_pe_stop_run", 1, DOCA_ERROR_BAD_STATE);
	while (stress_now_ns() < until)
		if (pe_turn(pr) == 0)
			sched_yield();
	STRESS_OK(doca_pe_run_on_cpu(pr->pe, pick_cpu(pr)));
	stress_expect_in(doca_pe_run_on_cpu(pr->pe, -1), "second doca_pe_run_on_cpu", 1,
			 DOCA_ERROR_BAD_STATE);
	atomic_fetch_add(&pr->cycles, 1);
}

static void *worker_manager_main(void *arg)
{
	struct pe_run *pr = arg;
	unsigned mean = pr->s->cfg->worker_cycle_ms;

	STRESS_OK(doca_pe_run_on_cpu(pr->pe, pick_cpu(pr)));
	while (!atomic_load(&pr->quit)) {
		stress_sleep_us(mean ? 1000u * (1 + rng_below(thread_rng(pr->s), 2 * mean)) : 10000u);
		if (mean && !atomic_load(&pr->quit))
			worker_cycle(pr);
	}
	STRESS_OK(doca_pe_stop_run(pr->pe));
	return NULL;
}

static void pe_start(struct stress *s, struct pe_run *pr, unsigned id)
{
	static void *(*const mains[])(void *) = { poll_main, event_main, worker_manager_main };

	pr->s = s;
	pr->id = id;
	pr->spec = s->cfg->pes[id];
	pr->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (pr->stop_fd < 0 || !STRESS_OK(doca_pe_create(&pr->pe)))
		stress_fatal("PE %u: set-up failed", id);
	if (pthread_create(&pr->thread, NULL, mains[pr->spec.mode], pr) != 0)
		stress_fatal("pthread_create failed");
}

static void pe_quit(struct pe_run *pr)
{
	uint64_t one = 1;

	atomic_store(&pr->quit, true);
	if (write(pr->stop_fd, &one, sizeof(one)) != sizeof(one))
		stress_fatal("eventfd write: %s", strerror(errno));
	pthread_join(pr->thread, NULL);
	close(pr->stop_fd);
}

/* ---- units ---- */

static uint32_t pick_max_tasks(const struct stress_cfg *cfg, struct rng *r)
{
	return cfg->max_tasks_lo + rng_below(r, cfg->max_tasks_hi - cfg->max_tasks_lo + 1);
}

static void unit_open_dev(struct unit *u, struct rng *r)
{
	const struct stress_cfg *cfg = u->s->cfg;
	const char *name = r ? cfg->devs[rng_below(r, cfg->ndevs)] : cfg->devs[u->id % cfg->ndevs];

	if (!STRESS_OK(doca_dev_open(name, &u->dev)))
		stress_fatal("unit %u: cannot open %s", u->id, name);
	u->faults = faults_of(name);
	STRESS_OK(doca_ctx_set_dev(u->ctx, u->dev));
}

static void unit_make_ctx(struct unit *u, struct rng *r)
{
	union doca_data ud = { .ptr = u };

	if (!STRESS_OK(doca_ctx_create(&u->ctx)))
		stress_fatal("unit %u: cannot create a ctx", u->id);
	stress_reports_reset(&u->reports);
	STRESS_OK(doca_ctx_set_user_data(u->ctx, ud));
	STRESS_OK(doca_ctx_set_state_changed_cb(u->ctx, state_cb));
	STRESS_OK(doca_ctx_set_max_tasks(u->ctx, pick_max_tasks(u->s->cfg, r)));
	if (u->run->spec.callbacks)
		STRESS_OK(doca_ctx_set_event_cb(u->ctx, event_cb));
	STRESS_OK(doca_pe_connect_ctx(u->run->pe, u->ctx));
	stress_expect_in(doca_pe_connect_ctx(u->run->pe, u->ctx), "second doca_pe_connect_ctx", 1,
			 DOCA_ERROR_NOT_PERMITTED);
}

static void unit_make_mems(struct unit *u)
{
	size_t bytes = (size_t)u->nslots * u->s->cfg->len;

	if (!STRESS_OK(doca_mem_create(u->ctx, bytes, DOCA_ACCESS_FLAG_READ, &u->msrc)) ||
	    !STRESS_OK(doca_mem_create(u->ctx, bytes, DOCA_ACCESS_FLAG_WRITE, &u->mdst)))
		stress_fatal("unit %u: cannot create memories", u->id);
}

static void unit_make_bufs(struct unit *u, struct rng *r)
{
	size_t len = u->s->cfg->len;

	for (unsigned i = 0; i < u->nslots; i++) {
		struct slot *sl = &u->slots[i];
		void *p;

		sl->dst_len = sl->partial ? 1 + rng_below(r, (uint32_t)len - 1) : len;
		if (!STRESS_OK(doca_buf_create(u->msrc, sl->off, len, &sl->src)) ||
		    !STRESS_OK(doca_buf_create(u->mdst, sl->off, sl->dst_len, &sl->dst)))
			stress_fatal("unit %u: cannot create buffers", u->id);
		STRESS_OK(doca_buf_get_data(sl->src, &p));
		sl->src_data = p;
		STRESS_OK(doca_buf_get_data(sl->dst, &p));
		sl->dst_data = p;
	}
}

static void unit_destroy_bufs(struct unit *u)
{
	for (unsigned i = 0; i < u->nslots; i++) {
		struct slot *sl = &u->slots[i];

		if (atomic_load(&sl->inflight) != 0)
			stress_violation("unit %u slot %u: still in flight on an IDLE ctx", u->id, sl->index);
		STRESS_OK(doca_buf_destroy(sl->src));
		STRESS_OK(doca_buf_destroy(sl->dst));
		sl->src = sl->dst = NULL;
	}
}

static void unit_destroy_mems(struct unit *u)
{
	STRESS_OK(doca_mem_destroy(u->msrc));
	STRESS_OK(doca_mem_destroy(u->mdst));
	u->msrc = u->mdst = NULL;
}

static void unit_start(struct unit *u)
{
	if (STRESS_OK(doca_ctx_start(u->ctx)))
		stress_reports_started(&u->reports);
}

static void unit_init(struct stress *s, struct unit *u, unsigned id, struct rng *r)
{
	const struct stress_cfg *cfg = s->cfg;

	u->s = s;
	u->id = id;
	snprintf(u->name, sizeof(u->name), "unit %u", id);
	u->run = &s->runs[id % cfg->npes];
	u->nslots = cfg->submitters * cfg->slots;
	u->slots = &s->slots[id * u->nslots];
	pthread_rwlockattr_t attr;

	pthread_rwlockattr_init(&attr);
	/* writer preference, or a busy reader pool starves the rebuilds */
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&u->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	for (unsigned i = 0; i < u->nslots; i++) {
		struct slot *sl = &u->slots[i];

		sl->u = u;
		sl->index = id * u->nslots + i;
		sl->submitter = i / cfg->slots;
		sl->off = (size_t)i * cfg->len;
		sl->partial = rng_pct(r, cfg->partial_pct);
	}
	unit_make_ctx(u, r);
	unit_open_dev(u, NULL);
	unit_make_mems(u);
	unit_make_bufs(u, r);
	unit_start(u);
}

void unit_toggle(struct unit *u)
{
	enum doca_ctx_state st;

	STRESS_OK(doca_ctx_get_state(u->ctx, &st));
	if (st == DOCA_CTX_STATE_RUNNING)
		/* an event callback may have stopped it meanwhile */
		stress_expect_in(doca_ctx_stop(u->ctx), "doca_ctx_stop", 3, DOCA_SUCCESS,
				 DOCA_ERROR_IN_PROGRESS, DOCA_ERROR_BAD_STATE);
	else if (st == DOCA_CTX_STATE_IDLE)
		unit_start(u); /* only the controller starts: it must succeed */
	else if (st == DOCA_CTX_STATE_STARTING)
		stress_violation("unit %u: STARTING seen outside doca_ctx_start", u->id);
}

bool unit_quiesce(struct unit *u)
{
	uint64_t deadline = stress_now_ns() + IDLE_DEADLINE_NS;
	enum doca_ctx_state st;

	/* a live ctx with memories can never be destroyed */
	stress_expect_in(doca_ctx_destroy(u->ctx), "doca_ctx_destroy of a ctx with memories", 2,
			 DOCA_ERROR_BAD_STATE, DOCA_ERROR_IN_USE);
	stress_expect_in(doca_ctx_stop(u->ctx), "doca_ctx_stop", 3, DOCA_SUCCESS, DOCA_ERROR_IN_PROGRESS,
			 DOCA_ERROR_BAD_STATE);
	for (;;) {
		STRESS_OK(doca_ctx_get_state(u->ctx, &st));
		if (st == DOCA_CTX_STATE_IDLE)
			return true;
		if (stress_now_ns() > deadline) {
			stress_violation("unit %u: still %s 60 s after doca_ctx_stop", u->id,
					 stress_state_names[st & 3]);
			return false;
		}
		stress_sleep_us(200);
	}
}

/* The reverse-order rules, checked while the objects exist. */
static void unit_check_order_rules(struct unit *u, unsigned depth)
{
	if (depth >= 1)
		stress_expect_in(doca_mem_destroy(u->msrc), "doca_mem_destroy with buffers", 1,
				 DOCA_ERROR_IN_USE);
	if (depth >= 2)
		stress_expect_in(doca_dev_close(u->dev), "doca_dev_close with memories", 1,
				 DOCA_ERROR_IN_USE);
}

void unit_rebuild(struct unit *u, struct rng *r, unsigned depth)
{
	if (!unit_quiesce(u))
		return;
	pthread_rwlock_wrlock(&u->lock);
	unit_check_order_rules(u, depth);
	unit_destroy_bufs(u);
	if (depth >= 1)
		unit_destroy_mems(u);
	if (depth >= 2) {
		STRESS_OK(doca_dev_close(u->dev));
		u->dev = NULL;
	}
	if (depth >= 3) {
		STRESS_OK(doca_ctx_destroy(u->ctx));
		unit_make_ctx(u, r);
	} else if (depth >= 1) {
		STRESS_OK(doca_ctx_set_max_tasks(u->ctx, pick_max_tasks(u->s->cfg, r)));
	}
	if (depth >= 2)
		unit_open_dev(u, r);
	if (depth >= 1)
		unit_make_mems(u);
	unit_make_bufs(u, r);
	unit_start(u);
	pthread_rwlock_unlock(&u->lock);
	atomic_fetch_add(&u->rebuilds, 1);
}

static void unit_teardown(struct unit *u)
{
	unit_destroy_bufs(u);
	unit_destroy_mems(u);
	STRESS_OK(doca_dev_close(u->dev));
	STRESS_OK(doca_ctx_destroy(u->ctx));
	pthread_rwlock_destroy(&u->lock);
}

/* ---- submitters and the intruder ---- */

struct submitter {
	struct stress *s;
	unsigned id;
	pthread_t thread;
	struct rng r;
};

static void *submitter_main(void *arg)
{
	struct submitter *sub = arg;
	struct stress *s = sub->s;
	const struct stress_cfg *cfg = s->cfg;

	while (atomic_load_explicit(&s->running, memory_order_relaxed)) {
		struct unit *u = &s->units[rng_below(&sub->r, cfg->units)];
		struct slot *sl = &u->slots[sub->id * cfg->slots + rng_below(&sub->r, cfg->slots)];

		/* acquire: pairs with the handler's release of the slot. */
		if (atomic_load_explicit(&sl->inflight, memory_order_acquire) != 0) {
			sched_yield();
			continue;
		}
		if (cfg->lifecycle)
			pthread_rwlock_rdlock(&u->lock);
		doca_error_t err = slot_submit(s, sl, &sub->r);

		if (cfg->lifecycle)
			pthread_rwlock_unlock(&u->lock);
		if (err != DOCA_SUCCESS && rng_pct(&sub->r, 50))
			sched_yield();
	}
	return NULL;
}

/* Tries to progress PEs it does not own (only PEs whose contexts all use
 * callbacks, so no event ever waits for doca_event_free on a thread that
 * might be refused). Each call either runs one turn or is refused. */
static void *intruder_main(void *arg)
{
	struct stress *s = arg;
	struct rng *r = thread_rng(s);

	while (atomic_load_explicit(&s->running, memory_order_relaxed)) {
		struct pe_run *pr = &s->runs[rng_below(r, s->cfg->npes)];

		if (pr->spec.callbacks && pr->spec.mode != PE_EVENT) {
			(void)doca_pe_progress(pr->pe);
			atomic_fetch_add_explicit(&s->c.intruder_turns, 1, memory_order_relaxed);
		}
		stress_sleep_us(20);
	}
	return NULL;
}

/* ---- the run ---- */

static void find_cpus(struct stress *s)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		stress_fatal("sched_getaffinity: %s", strerror(errno));
	for (int c = 0; c < CPU_SETSIZE && s->ncpus < 64; c++)
		if (CPU_ISSET(c, &set))
			s->cpus[s->ncpus++] = c;
}

struct stress *stress_create(const struct stress_cfg *cfg, const struct stress_opts *o)
{
	struct stress *s = calloc(1, sizeof(*s));
	struct rng r;

	if (s == NULL || cfg->len == 0 || cfg->len > MAX_LEN || cfg->npes == 0 || cfg->units == 0 ||
	    cfg->max_tasks_lo == 0 || cfg->max_tasks_hi < cfg->max_tasks_lo)
		stress_fatal("bad configuration");
	s->cfg = cfg;
	s->opts = *o;
	stress_watchdog(o->seconds);
	find_cpus(s);
	rng_init(&r, o->seed, 0);
	s->nslots = cfg->units * cfg->submitters * cfg->slots;
	s->slots = calloc(s->nslots, sizeof(*s->slots));
	s->runs = calloc(cfg->npes, sizeof(*s->runs));
	s->units = calloc(cfg->units, sizeof(*s->units));
	if (s->slots == NULL || s->runs == NULL || s->units == NULL)
		stress_fatal("out of memory");
	atomic_store(&s->running, true);
	for (unsigned i = 0; i < cfg->npes; i++)
		pe_start(s, &s->runs[i], i);
	for (unsigned i = 0; i < cfg->units; i++)
		unit_init(s, &s->units[i], i, &r);
	return s;
}

bool stress_running(const struct stress *s)
{
	return atomic_load_explicit(&s->running, memory_order_relaxed);
}

unsigned stress_units(const struct stress *s)
{
	return s->cfg->units;
}

struct unit *stress_unit(struct stress *s, unsigned i)
{
	return &s->units[i];
}

static void check_slots(struct stress *s)
{
	for (unsigned i = 0; i < s->nslots; i++) {
		struct slot *sl = &s->slots[i];
		unsigned long a = atomic_load(&sl->accepted), e = atomic_load(&sl->events);

		if (atomic_load(&sl->inflight) != 0 || a != e)
			stress_violation("slot %u: %lu accepted, %lu events, in flight %#llx", i, a, e,
					 (unsigned long long)atomic_load(&sl->inflight));
	}
}

static void check_units(struct stress *s)
{
	for (unsigned i = 0; i < s->cfg->units; i++)
		stress_reports_check(&s->units[i].reports, s->units[i].name);
}

static void check_counters(struct stress *s)
{
	struct counters *c = &s->c;
	unsigned long events = atomic_load(&c->ev_ok) + atomic_load(&c->ev_io_failed) +
			       atomic_load(&c->ev_flushed) + atomic_load(&c->ev_partial_io) +
			       atomic_load(&c->ev_partial_short);

	if (events != atomic_load(&c->accepted))
		stress_violation("%lu tasks accepted but %lu events checked", atomic_load(&c->accepted),
				 events);
	if (atomic_load(&c->accepted) == 0)
		stress_violation("no task was accepted: the run proved nothing");
}

static void summary(struct stress *s, double secs)
{
	struct counters *c = &s->c;
	unsigned long starts = 0, rebuilds = 0, cycles = 0;

	for (unsigned i = 0; i < s->cfg->units; i++) {
		starts += atomic_load(&s->units[i].reports.starts);
		rebuilds += atomic_load(&s->units[i].rebuilds);
	}
	for (unsigned i = 0; i < s->cfg->npes; i++)
		cycles += atomic_load(&s->runs[i].cycles);
	printf("  accepted %lu → events: %lu ok, %lu partial (short dst), %lu partial (injected), "
	       "%lu failed (injected), %lu flushed\n",
	       atomic_load(&c->accepted), atomic_load(&c->ev_ok), atomic_load(&c->ev_partial_short),
	       atomic_load(&c->ev_partial_io), atomic_load(&c->ev_io_failed), atomic_load(&c->ev_flushed));
	printf("  refused: %lu AGAIN, %lu BAD_STATE, %lu invalid on purpose\n", atomic_load(&c->again),
	       atomic_load(&c->bad_state), atomic_load(&c->misuse_refused));
	printf("  %lu starts, %lu rebuilds, %lu stops from callbacks, %lu resubmits from callbacks, "
	       "%lu worker cycles, %lu intruder calls\n",
	       starts, rebuilds, atomic_load(&c->cb_stops), atomic_load(&c->resubmits), cycles,
	       atomic_load(&c->intruder_turns));
	printf("%s: %s seed=%llu %.1fs accepted=%lu violations=%lu\n", s->cfg->name,
	       stress_violation_count() ? "FAIL" : "PASS", (unsigned long long)s->opts.seed, secs,
	       atomic_load(&c->accepted), stress_violation_count());
}

static void stop_load(struct stress *s, struct submitter *subs, pthread_t intruder)
{
	atomic_store(&s->running, false);
	for (unsigned i = 0; i < s->cfg->submitters; i++)
		pthread_join(subs[i].thread, NULL);
	if (s->cfg->intruder)
		pthread_join(intruder, NULL);
}

static void teardown(struct stress *s)
{
	for (unsigned i = 0; i < s->cfg->units; i++)
		if (!unit_quiesce(&s->units[i]))
			stress_fatal("unit %u never became IDLE: cannot tear down", i);
	for (unsigned i = 0; i < s->cfg->npes; i++)
		pe_quit(&s->runs[i]);
	check_slots(s);
	check_units(s);
	check_counters(s);
	for (unsigned i = 0; i < s->cfg->units; i++)
		unit_teardown(&s->units[i]);
	for (unsigned i = 0; i < s->cfg->npes; i++)
		STRESS_OK(doca_pe_destroy(s->runs[i].pe));
}

int stress_run(struct stress *s, void (*controller)(struct stress *s, struct rng *r))
{
	const struct stress_cfg *cfg = s->cfg;
	struct submitter *subs = calloc(cfg->submitters, sizeof(*subs));
	pthread_t intruder = 0;
	uint64_t start = stress_now_ns();
	uint64_t deadline = start + (uint64_t)(s->opts.seconds * 1e9);
	struct rng r;

	if (subs == NULL)
		stress_fatal("out of memory");
	rng_init(&r, s->opts.seed, 1);
	for (unsigned i = 0; i < cfg->submitters; i++) {
		subs[i] = (struct submitter){ .s = s, .id = i };
		rng_init(&subs[i].r, s->opts.seed, 100 + i);
		if (pthread_create(&subs[i].thread, NULL, submitter_main, &subs[i]) != 0)
			stress_fatal("pthread_create failed");
	}
	if (cfg->intruder && pthread_create(&intruder, NULL, intruder_main, s) != 0)
		stress_fatal("pthread_create failed");
	while (stress_now_ns() < deadline)
		controller(s, &r);
	stop_load(s, subs, intruder);
	teardown(s);
	summary(s, (double)(stress_now_ns() - start) / 1e9);

	int status = stress_violation_count() ? 1 : 0;

	free(subs);
	free(s->slots);
	free(s->runs);
	free(s->units);
	free(s);
	return status;
}
