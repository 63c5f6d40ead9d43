/*
 * stress/stress_pool_share_race.c — the task pool's switch from the
 * owner's plain updates to the CAS, on the hardware, for as long as asked.
 *
 * While only the PE's thread (the owner, holding the PE's guard) takes
 * credits, the context's task pool takes them with plain loads and
 * stores of taken. The first submit from another thread switches it to
 * CAS for the rest of the run: a heavy fence (membarrier), a wait for the
 * owner's busy flag and for its brief sections (engine/task_pool.c,
 * "Without a read-modify-write ...", "The parked owner's brief
 * sections"). A missing fence or wait there loses an owner's take (more
 * than max_tasks accepted, a credit counted out twice). The explorer is sequentially consistent
 * and the owner's way is off under a race detector, so that shows only on
 * the hardware; and the switch happens once in a run, so every round is a
 * new context (a new pool) on a new PE.
 *
 * Each round: a context of max_tasks N (2..32) on a new PE that this
 * thread (the owner) runs. The owner keeps the pool busy: it submits
 * copies (doca_task_submit, doca_task_submit_batch or both, drawn per
 * round), progresses, takes events (doca_pe_get_event,
 * doca_pe_get_events or both) and frees some of them (doca_event_free,
 * doca_event_free_bulk or both), keeping the others for a while, so it
 * also meets a full pool. Meanwhile the foreign thread, once it saw the
 * owner's traffic running (its step count move within 50 µs of a look:
 * both threads on a CPU then) and after a short random spin, makes the
 * round's first submits from outside the guard (1..8 copies, each
 * accepted or AGAIN, prepared before): its first one switches the pool.
 * In half the rounds it first stalls the owner with a signal (SIGUSR1),
 * whose handler spins wherever it found the owner inside one of its pool
 * calls (perhaps between a plain update's load and its store) until that
 * first submit returned or 200 µs passed: a preemption at a random
 * instruction of a submit or a free (under TSan, at the next point where
 * TSan delivers signals), which the switch must wait out (its waits are
 * what the bound ends in the correct code). A handler that finds the
 * owner outside its pool calls returns at once, and the foreign thread
 * signals again, for up to 200 µs: stalled there, the owner would race
 * nothing (it did so in nine of ten stalled rounds).
 * In a third of the rounds a third thread revokes the owner's parked
 * guard during the race: one doca_pe_try_progress (allowed from any
 * thread, include/doca_pe.h: it takes the PE over while the owner is
 * outside its calls, is refused with IN_USE while the owner is inside
 * one; retried on IN_USE). The owner runs its traffic until the others
 * are done, a few turns more, then drains every event of both sides.
 *
 * Checks, exact:
 * - every accepted task, the owner's and the foreign thread's (tagged by
 *   round, side and sequence in its user data), gets exactly one event,
 *   a success, and its own destination holds its own source's bytes
 *   (distinct per task); a refused one gets none;
 * - no submit is refused with AGAIN while fewer than N credits can be
 *   out. The owner counts its own exactly; the other side's are bounded
 *   from above by counters each side publishes around its calls (tried
 *   before the call, refused and freed after it), so the bound never
 *   undercounts. Not checked once the third thread may have revoked the
 *   guard, until an owner turn that starts after both the revoke and the
 *   foreign thread's submits ended: the owner's frees then go through the
 *   mailbox and come back at a turn, or, while another thread is
 *   preempted inside its marking of the context ready (a foreign submit),
 *   at the first turn after that mark completes (include/doca_event.h): a
 *   legal late credit;
 * - no owner submit is accepted while the owner alone holds N tasks;
 * - no free is refused (doca_stale_handle_count does not move);
 * - after the race, every event freed and one more turn: the context
 *   accepts exactly N new copies and refuses the next with AGAIN (a lost
 *   credit shows as fewer, a doubled one as N + 1), from the owner or the
 *   foreign thread (drawn per round), and their events are checked too;
 * - everything tears down (context stop and destroy succeed).
 * The summary counts the rounds, those in which an owner's pool call
 * (submit or free) and the foreign thread's first submit were in progress
 * at one moment, the later to begin beginning before the other returned
 * (overlap; stress_overlap, stress_common.h), those in which the
 * owner's stall spanned that whole submit (stalled), and those in which
 * the third thread's progress ran (revoked). Under fewer than 10 %
 * overlapping rounds the run says so with a WARNING: line (a pass that
 * tested little, not a failure).
 *
 *   stress_pool_share_race [--seconds S] [--seed N] [--sabotage lost|dup]
 *
 * --sabotage lost: the owner counts one of its events freed without
 * freeing it (a lost credit; freed after the count so the round
 * completes); dup: the owner takes one of its event's tally twice and
 * frees it twice (a doubled event and a doubled free); each in its first
 * free of one of its own events in the round. Either must be reported.
 */
#include "stress_common.h"

#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_N 32u
#define LEN 64u
#define OWNER_PAIRS (MAX_N + 1u)                 /* N outstanding and a probe's */
#define FOREIGN_MAX 8u                           /* foreign submits per round */
#define FOREIGN_PAIR0 OWNER_PAIRS
#define PAIRS (OWNER_PAIRS + FOREIGN_MAX)
#define SEQ_BITS 16u
/* owner tasks per round: enough that the owner's traffic, which runs
 * until the foreign thread's submits are done, does not run out while
 * that thread waits (LIVE_WAIT_MAX_NS) */
#define MAX_SEQ (1u << SEQ_BITS)
#define HELD_MAX (2u * (MAX_N + FOREIGN_MAX) + 8u) /* events taken, not freed */
#define BURST 4u                                 /* descriptors per batch, events per get */
#define SPIN_MAX 1500u

_Static_assert(PAIRS <= STRESS_RIG_PAIRS_MAX, "the rig holds every pair");

/* A task's user data: its round, its side and its sequence in the round. */
enum side { SIDE_OWNER, SIDE_FOREIGN, SIDE_FINAL };
#define SIDE_SHIFT SEQ_BITS
#define ROUND_SHIFT (SEQ_BITS + 2u)

static uint64_t tag_of(unsigned long round, enum side side, uint32_t seq)
{
	return (uint64_t)round << ROUND_SHIFT | (uint64_t)side << SIDE_SHIFT | seq;
}

enum mix { MIX_ONE, MIX_MANY, MIX_BOTH }; /* single calls, burst calls, both */

/* One round's plan, written by the owner before it posts a helper's
 * semaphore (which orders it before the helper's reads). */
struct round {
	unsigned long round;
	struct stress_rig *rig;
	uint32_t n;
	bool revoke;      /* the third thread revokes the guard this round */
	bool final;       /* the foreign thread's command: the after-race count */
	uint32_t fcount;  /* the foreign thread's submits */
	/* the foreign thread stalls the owner with a signal wherever it is
	 * (perhaps inside a plain update) and switches while it waits */
	bool stall;
	unsigned fspin, rspin;
};

static struct round cur;
/* The owner's steps so far (its store only). The foreign thread starts
 * its race only once it saw the count move within LIVE_NS of a look:
 * both threads were on a CPU then. A go alone is not enough under load:
 * the thread spinning on it is often off the CPU when it comes, and by
 * the time it runs the owner may be off (on a 2-CPU machine running
 * other builds a go took 1.4 ms on average to be seen, the switching
 * submit 0.2 ms), and its submit then races nothing. */
static atomic_ulong owner_steps;
#define LIVE_NS 50000u
/* the longest wait for a live owner (on one CPU the two never run at
 * once): then it races anyway */
#define LIVE_WAIT_MAX_NS 20000000u
/* the round the foreign thread may start (its race, or with cur.final
 * its count): it spins on it, as stress_claim_race's freer does */
static atomic_ulong foreign_go;
static sem_t revoker_go;
static atomic_bool quit;

/* Published around the calls, reset by the owner before each round's go.
 * The owner's: */
static atomic_ulong o_tried;   /* descriptors, added before each submit call */
static atomic_ulong o_refused; /* descriptors refused, added after the call */
static atomic_ulong o_freed;   /* own events freed, added after the free call */
static atomic_ulong x_freed;   /* the foreign thread's events freed, after the call */
static atomic_ulong regained;  /* the round whose revoke a later owner turn undid */
/* The foreign thread's: */
static atomic_ulong f_tried, f_refused;
static atomic_uint f_accepted[FOREIGN_MAX]; /* 1: its submit i was accepted */
static atomic_ulong f_done;
/* The owner's submit and free calls against the foreign thread's first
 * submit: the round's race happened if they overlapped. */
static struct stress_overlap switch_race;
/* The final count's, by the foreign thread: how many it got accepted,
 * and the round whose count it finished. */
static atomic_uint final_accepted;
static atomic_ulong final_done;
/* The stall's: the owner's thread, the round whose signal handler is
 * running, the round whose first foreign submit returned, and the
 * rounds the stall spanned that submit. */
static pthread_t owner_thread;
static atomic_ulong stall_in, first_done;
/* the handler's runs so far, and the owner's mark of its pool calls
 * (its submit and free calls: its window of switch_race), which only
 * the owner's thread writes and reads, its handler included */
static atomic_ulong stall_signals;
static volatile sig_atomic_t owner_in_call;
static unsigned long stalled_rounds; /* the foreign thread's */
/* The revoker's: */
static atomic_ulong revoke_started, revoke_done, revoke_ran;

static void fill_source(struct stress_rig *r, unsigned pair, uint64_t tag)
{
	stress_pattern(tag, stress_rig_src(r, pair), LEN);
	memset(stress_rig_dst(r, pair), STRESS_POISON, LEN);
}

static struct doca_task_desc desc_of(struct stress_rig *r, unsigned pair, uint64_t tag)
{
	return (struct doca_task_desc){ .type = DOCA_TASK_COPY, .src = r->src[pair], .dst = r->dst[pair],
					.user_data.u64 = tag };
}

/* Could an AGAIN at this moment be a late credit rather than a lost one?
 * Only after the third thread began its revoke, until an owner turn that
 * started after the revoke and the foreign thread's submits ended
 * (@p regained_before: seen before the call; owner_turn). */
static bool again_is_exact(bool regained_before)
{
	return !cur.revoke || regained_before || atomic_load(&revoke_started) != cur.round;
}

/* ---- the foreign thread ---- */

/* The after-race count from this side: exactly n accepted, then AGAIN. */
static void foreign_final(void)
{
	struct stress_rig *r = cur.rig;
	uint32_t i;

	for (i = 0; i <= cur.n; i++) {
		uint64_t tag = tag_of(cur.round, SIDE_FINAL, i);
		struct doca_task_desc d = desc_of(r, i, tag);

		fill_source(r, i, tag);
		doca_error_t e = doca_task_submit(r->ctx, &d);

		if (e == DOCA_ERROR_AGAIN)
			break;
		if (!stress_expect_in(e, "the foreign final doca_task_submit", 1, DOCA_SUCCESS))
			break;
	}
	atomic_store(&final_accepted, i);
}

/* The owner's stall: at whatever instruction the signal found it, until
 * the first foreign submit returned or STALL_MAX_NS passed (the switch
 * waits for an owner inside a plain update: the bound ends that wait). */
#define STALL_MAX_NS 200000u

static void stall_handler(int sig)
{
	unsigned long round = cur.round;
	uint64_t end = stress_now_ns() + STALL_MAX_NS;

	(void)sig;
	if (!owner_in_call) {
		atomic_fetch_add(&stall_signals, 1); /* not here: signal again */
		return;
	}
	atomic_store(&stall_in, round);
	atomic_fetch_add(&stall_signals, 1);
	while (atomic_load(&first_done) != round && stress_now_ns() < end)
		;
	atomic_store(&stall_in, 0);
}

/* Signal the owner until its handler stalls it inside a pool call, for
 * at most STALL_MAX_NS, each time waiting until the handler ran. */
static void stall_owner(void)
{
	uint64_t end = stress_now_ns() + STALL_MAX_NS;

	while (atomic_load(&stall_in) != cur.round && stress_now_ns() < end) {
		unsigned long ran = atomic_load(&stall_signals);

		if (pthread_kill(owner_thread, SIGUSR1) != 0)
			stress_fatal("pthread_kill");
		while (atomic_load(&stall_signals) == ran && atomic_load(&stall_in) != cur.round &&
		       stress_now_ns() < end)
			;
	}
}

/* Spin until the owner's step count moves within LIVE_NS of a look at
 * it (or LIVE_WAIT_MAX_NS passed): the owner is running its traffic
 * now, and so is this thread. */
static void await_live_owner(void)
{
	uint64_t start = stress_now_ns(), t0 = start;
	unsigned long s0 = atomic_load_explicit(&owner_steps, memory_order_relaxed);

	for (;;) {
		unsigned long s = atomic_load_explicit(&owner_steps, memory_order_relaxed);
		uint64_t now = stress_now_ns();

		if (s != s0 && now - t0 <= LIVE_NS)
			return;
		if (now - start > LIVE_WAIT_MAX_NS)
			return;
		if (s != s0 || now - t0 > LIVE_NS) { /* one of us was away: look again */
			s0 = s;
			t0 = now;
		}
	}
}

static void foreign_race(void)
{
	struct stress_rig *r = cur.rig;
	uint32_t accepted = 0;
	struct doca_task_desc d[FOREIGN_MAX];

	/* everything but the calls before the race */
	for (uint32_t i = 0; i < cur.fcount; i++) {
		uint64_t tag = tag_of(cur.round, SIDE_FOREIGN, i);

		fill_source(r, FOREIGN_PAIR0 + i, tag);
		d[i] = desc_of(r, FOREIGN_PAIR0 + i, tag);
	}
	await_live_owner();
	stress_spin(cur.fspin);
	if (cur.stall)
		stall_owner();
	for (uint32_t i = 0; i < cur.fcount; i++) {
		unsigned long refused_b = atomic_load(&o_refused), freed_b = atomic_load(&o_freed),
			      xfreed_b = atomic_load(&x_freed);
		bool regained_b = atomic_load(&regained) == cur.round;

		atomic_fetch_add(&f_tried, 1);
		if (i == 0)
			stress_overlap_enter(&switch_race, cur.round);
		doca_error_t e = doca_task_submit(r->ctx, &d[i]);

		if (i == 0) {
			stress_overlap_exit(&switch_race);
			stalled_rounds += atomic_load(&stall_in) == cur.round;
			atomic_store(&first_done, cur.round);
		}
		if (e == DOCA_SUCCESS) {
			atomic_store(&f_accepted[i], 1);
			accepted++;
		} else if (e == DOCA_ERROR_AGAIN) {
			atomic_fetch_add(&f_refused, 1);
			/* the owner's credits: what it tried since, less what it
			 * had been refused and had freed before our call */
			unsigned long owner = atomic_load(&o_tried) - refused_b - freed_b;
			unsigned long mine = accepted - xfreed_b;

			if (again_is_exact(regained_b) && owner + mine < cur.n)
				stress_violation("round %lu: foreign submit %u refused with AGAIN while at most %lu of "
						 "max_tasks %u were out (owner ≤ %lu, foreign %lu)",
						 cur.round, i, owner + mine, cur.n, owner, mine);
		} else {
			stress_expect_in(e, "the foreign doca_task_submit", 2, DOCA_SUCCESS, DOCA_ERROR_AGAIN);
		}
		stress_spin(cur.fspin / 8);
	}
}

static void *foreign_main(void *unused)
{
	unsigned long seen = 0;

	(void)unused;
	for (;;) {
		unsigned long g = stress_await_go(&foreign_go, seen, &quit);

		if (g == seen)
			return NULL;
		seen = g;
		if (cur.final) {
			foreign_final();
			atomic_store(&final_done, cur.round);
		} else {
			foreign_race();
			atomic_store(&f_done, cur.round);
		}
	}
}

/* ---- the third thread: one revoke of the owner's parked guard ---- */

static void *revoker_main(void *unused)
{
	(void)unused;
	for (;;) {
		sem_wait(&revoker_go);
		if (atomic_load(&quit))
			return NULL;
		stress_spin(cur.rspin);
		atomic_store(&revoke_started, cur.round);
		for (unsigned tries = 0; tries < 100000; tries++) {
			uint32_t evs;
			doca_error_t e = doca_pe_try_progress(cur.rig->pe, &evs);

			if (e == DOCA_SUCCESS) {
				atomic_store(&revoke_ran, cur.round);
				break;
			}
			if (!stress_expect_in(e, "the third thread's doca_pe_try_progress", 2, DOCA_SUCCESS,
					      DOCA_ERROR_IN_USE))
				break;
			stress_spin(16);
		}
		atomic_store(&revoke_done, cur.round);
	}
}

/* ---- the owner ---- */

struct held {
	struct doca_event *ev;
	enum side side;
	uint32_t seq;
};

/* The owner's view of one round. */
struct owner {
	struct stress_rig *r;
	struct rng *g;
	uint32_t n;
	enum mix submit, get, free;
	unsigned keep_pct;
	enum sabotage sab;
	bool sabotaged;
	struct doca_event *lost; /* the lost sabotage's event, freed after the count */
	uint32_t seq;            /* owner tasks submitted (accepted or not) */
	uint8_t state[MAX_SEQ];  /* OUT, GOT, FREED or 0 */
	uint8_t pair[MAX_SEQ];
	unsigned free_pairs[OWNER_PAIRS], nfree_pairs;
	uint32_t out;            /* own tasks accepted, events not freed */
	unsigned fgot[FOREIGN_MAX];
	uint32_t fgot_total;
	struct held held[HELD_MAX];
	uint32_t nheld;
	bool regained;           /* an owner turn ran after the revoke ended */
	unsigned long accepted;
};

enum { TASK_OUT = 1, TASK_GOT, TASK_FREED };

/* One event taken: its tally, its status and its bytes. */
static void owner_take(struct owner *o, struct doca_event *ev)
{
	uint64_t tag = doca_event_get_user_data(ev).u64;
	unsigned long round = (unsigned long)(tag >> ROUND_SHIFT);
	enum side side = (enum side)((tag >> SIDE_SHIFT) & 3u);
	uint32_t seq = (uint32_t)(tag & ((1u << SEQ_BITS) - 1u));
	unsigned pair = 0;
	bool ok = round == cur.round;

	if (ok && side == SIDE_OWNER) {
		ok = seq < o->seq && o->state[seq] == TASK_OUT;
		if (ok) {
			o->state[seq] = TASK_GOT;
			pair = o->pair[seq];
		}
	} else if (ok && side == SIDE_FOREIGN) {
		ok = seq < FOREIGN_MAX && o->fgot[seq]++ == 0;
		o->fgot_total += ok;
		pair = FOREIGN_PAIR0 + seq;
	} else {
		ok = false;
	}
	if (!ok) {
		stress_violation("round %lu: event with tag %#llx: not a task of this round awaiting its one event "
				 "(a doubled or foreign event)", cur.round, (unsigned long long)tag);
		return;
	}
	if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS)
		stress_violation("round %lu: event with tag %#llx: status %d", cur.round, (unsigned long long)tag,
				 (int)doca_event_get_status(ev));
	uint8_t want[LEN];

	stress_pattern(tag, want, LEN);
	if (memcmp(stress_rig_dst(o->r, pair), want, LEN) != 0)
		stress_violation("round %lu: event with tag %#llx: its destination does not hold its source's bytes",
				 cur.round, (unsigned long long)tag);
	if (o->nheld == HELD_MAX)
		stress_fatal("round %lu: %u events held: far more tasks accepted than max_tasks %u", cur.round,
			     o->nheld, o->n);
	o->held[o->nheld++] = (struct held){ .ev = ev, .side = side, .seq = seq };
}

static bool owner_turn(struct owner *o)
{
	uint32_t evs;
	/* a turn regains exactness only once nobody can still be marking the
	 * context ready: after the revoke and after the foreign thread's
	 * last submit (a submitter preempted inside its mark holds the
	 * mailbox's credits back past the turn: include/doca_event.h) */
	bool revoking = cur.revoke &&
			(atomic_load(&revoke_done) != cur.round || atomic_load(&f_done) != cur.round);
	doca_error_t e = doca_pe_try_progress(o->r->pe, &evs);

	/* IN_USE: the third thread is inside its turn */
	if (cur.revoke ? !stress_expect_in(e, "the owner's doca_pe_try_progress", 2, DOCA_SUCCESS, DOCA_ERROR_IN_USE)
		       : !STRESS_OK(e))
		return false;
	if (e == DOCA_SUCCESS && cur.revoke && !revoking && !o->regained) {
		o->regained = true;
		atomic_store(&regained, cur.round);
	}
	return e == DOCA_SUCCESS;
}

static void owner_get(struct owner *o)
{
	bool many = o->get == MIX_MANY || (o->get == MIX_BOTH && rng_pct(o->g, 50));

	if (many) {
		struct doca_event *evs[BURST];
		uint32_t room = HELD_MAX - o->nheld < BURST ? HELD_MAX - o->nheld : BURST;
		uint32_t got = doca_pe_get_events(o->r->pe, evs, room);

		for (uint32_t i = 0; i < got; i++)
			owner_take(o, evs[i]);
		return;
	}
	for (unsigned i = 0; i < BURST; i++) {
		struct doca_event *ev = doca_pe_get_event(o->r->pe);

		if (ev == NULL)
			return;
		owner_take(o, ev);
	}
}

/* After the free call: the slot's pair back, the counters published. */
static void owner_freed(struct owner *o, const struct held *h)
{
	if (h->side == SIDE_OWNER) {
		o->state[h->seq] = TASK_FREED;
		o->free_pairs[o->nfree_pairs++] = o->pair[h->seq];
		o->out--;
		atomic_fetch_add(&o_freed, 1);
	} else {
		atomic_fetch_add(&x_freed, 1);
	}
}

/* Free the first @p k held events (the rest move down); the first call
 * with one of the owner's own events among them carries the round's
 * sabotage. */
static void owner_free(struct owner *o, uint32_t k)
{
	struct doca_event *evs[HELD_MAX];
	uint32_t victim = HELD_MAX;

	if (k == 0)
		return;
	for (uint32_t i = 0; i < k; i++)
		evs[i] = o->held[i].ev;
	if (o->sab != SABOTAGE_NONE && !o->sabotaged) {
		for (uint32_t i = 0; i < k && victim == HELD_MAX; i++)
			if (o->held[i].side == SIDE_OWNER)
				victim = i;
		if (victim < HELD_MAX) {
			o->sabotaged = true;
			if (o->sab == SABOTAGE_LOST) {
				o->lost = evs[victim];
				evs[victim] = NULL; /* freed by nobody: NULL is ignored */
			} else {
				owner_take(o, evs[victim]); /* its tally a second time */
			}
		}
	}
	bool bulk = o->free == MIX_MANY || (o->free == MIX_BOTH && rng_pct(o->g, 50));

	stress_overlap_enter(&switch_race, cur.round);
	owner_in_call = 1;
	if (bulk) {
		doca_event_free_bulk(evs, k);
	} else {
		for (uint32_t i = 0; i < k; i++)
			doca_event_free(evs[i]);
	}
	if (victim < HELD_MAX && o->sab == SABOTAGE_DUP)
		doca_event_free(evs[victim]); /* a second free of it */
	owner_in_call = 0;
	stress_overlap_exit(&switch_race);
	for (uint32_t i = 0; i < k; i++)
		owner_freed(o, &o->held[i]);
	memmove(o->held, o->held + k, (o->nheld - k) * sizeof(o->held[0]));
	o->nheld -= k;
}

/* Submit up to a burst of copies (fewer when fewer pairs are free); when
 * the owner alone holds N, one probe that must be refused. */
static void owner_submit(struct owner *o)
{
	struct doca_task_desc d[BURST];
	uint32_t seq0 = o->seq, k;
	bool probe = o->out >= o->n;
	bool many = o->submit == MIX_MANY || (o->submit == MIX_BOTH && rng_pct(o->g, 50));

	if (probe)
		k = 1;
	else
		k = many ? 1 + rng_below(o->g, BURST) : 1;
	if (k > o->n - o->out && !probe)
		k = o->n - o->out;
	if (k > o->nfree_pairs)
		k = o->nfree_pairs;
	if (o->seq + k > MAX_SEQ)
		k = MAX_SEQ - o->seq;
	if (k == 0)
		return;
	for (uint32_t i = 0; i < k; i++) {
		unsigned pair = o->free_pairs[--o->nfree_pairs];
		uint64_t tag = tag_of(cur.round, SIDE_OWNER, seq0 + i);

		o->pair[seq0 + i] = (uint8_t)pair;
		fill_source(o->r, pair, tag);
		d[i] = desc_of(o->r, pair, tag);
	}
	o->seq += k;
	unsigned long frefused_b = atomic_load(&f_refused);
	bool regained_b = o->regained;
	uint32_t accepted = 0;
	doca_error_t e;

	atomic_fetch_add(&o_tried, k);
	stress_overlap_enter(&switch_race, cur.round);
	owner_in_call = 1;
	if (many && !probe) {
		e = doca_task_submit_batch(o->r->ctx, d, k, &accepted);
	} else {
		e = doca_task_submit(o->r->ctx, &d[0]);
		accepted = e == DOCA_SUCCESS;
	}
	owner_in_call = 0;
	stress_overlap_exit(&switch_race);
	atomic_fetch_add(&o_refused, k - accepted);
	for (uint32_t i = 0; i < accepted; i++)
		o->state[seq0 + i] = TASK_OUT;
	for (uint32_t i = k; i-- > accepted;)
		o->free_pairs[o->nfree_pairs++] = o->pair[seq0 + i];
	o->out += accepted;
	o->accepted += accepted;
	if (probe && accepted != 0)
		stress_violation("round %lu: an owner submit accepted while the owner alone held max_tasks %u "
				 "(more than max_tasks out)", cur.round, o->n);
	if (e == DOCA_ERROR_AGAIN) {
		/* the foreign credits: tried since, less refused before */
		unsigned long foreign = atomic_load(&f_tried) - frefused_b - atomic_load(&x_freed);

		if (again_is_exact(regained_b) && o->out + foreign < o->n)
			stress_violation("round %lu: owner submit refused with AGAIN while at most %lu of max_tasks "
					 "%u were out (owner %u, foreign ≤ %lu)",
					 cur.round, o->out + foreign, o->n, o->out, foreign);
	} else if (e != DOCA_SUCCESS) {
		stress_expect_in(e, "the owner's submit", 2, DOCA_SUCCESS, DOCA_ERROR_AGAIN);
	}
}

/* One step of the owner's traffic: submit, turn, take, free some (all
 * in the @p drain). */
static void owner_step(struct owner *o, bool drain)
{
	atomic_store_explicit(&owner_steps, atomic_load_explicit(&owner_steps, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	if (!drain)
		owner_submit(o);
	owner_turn(o);
	owner_get(o);
	uint32_t k = o->nheld;

	if (!drain && rng_pct(o->g, o->keep_pct))
		k = rng_below(o->g, k + 1);
	owner_free(o, k);
}

static uint32_t foreign_accepted_total(void)
{
	uint32_t n = 0;

	for (unsigned i = 0; i < FOREIGN_MAX; i++)
		n += atomic_load(&f_accepted[i]);
	return n;
}

/* The after-race count: n copies accepted, the next refused with AGAIN,
 * by the owner or the foreign thread; their events checked and freed. */
static unsigned long final_count(struct owner *o, bool by_foreign)
{
	uint32_t n = o->n, accepted = 0;

	if (by_foreign) {
		cur.final = true;
		atomic_store(&foreign_go, 2 * cur.round + 1); /* its loads of cur come after it */
		while (atomic_load(&final_done) != cur.round)
			;
		cur.final = false;
		accepted = atomic_load(&final_accepted);
	} else {
		for (; accepted <= n; accepted++) {
			uint64_t tag = tag_of(cur.round, SIDE_FINAL, accepted);
			struct doca_task_desc d = desc_of(o->r, accepted, tag);

			fill_source(o->r, accepted, tag);
			doca_error_t e = doca_task_submit(o->r->ctx, &d);

			if (e == DOCA_ERROR_AGAIN)
				break;
			if (!stress_expect_in(e, "the owner's final doca_task_submit", 1, DOCA_SUCCESS))
				break;
		}
	}
	if (accepted != n)
		stress_violation("round %lu: after the race the context accepted %u copies of max_tasks %u before "
				 "AGAIN (%s, by the %s)", cur.round, accepted, n,
				 accepted < n ? "a credit lost" : "a credit doubled", by_foreign ? "foreign thread" : "owner");
	if (o->lost != NULL)
		doca_event_free(o->lost); /* the lost sabotage's, so the round completes */
	/* their events: each its own, in any order */
	struct doca_event *evs[MAX_N + 1];
	uint32_t got = 0;
	bool seen[MAX_N + 1] = { false };

	for (unsigned tries = 0; got < accepted; tries++) {
		if (tries == 1000000)
			stress_fatal("round %lu: %u of %u final events after a million turns", cur.round, got, accepted);
		(void)doca_pe_progress(o->r->pe);
		got += doca_pe_get_events(o->r->pe, evs + got, accepted - got);
	}
	for (uint32_t i = 0; i < got; i++) {
		uint64_t tag = doca_event_get_user_data(evs[i]).u64;
		uint32_t seq = (uint32_t)(tag & ((1u << SEQ_BITS) - 1u));
		uint8_t want[LEN];

		stress_pattern(tag, want, LEN);
		if (tag != tag_of(cur.round, SIDE_FINAL, seq) || seq >= accepted || seen[seq] ||
		    doca_event_get_status(evs[i]) != DOCA_EVENT_STATUS_SUCCESS ||
		    memcmp(stress_rig_dst(o->r, seq), want, LEN) != 0)
			stress_violation("round %lu: final event with tag %#llx: not its own one successful event "
					 "with its own bytes", cur.round, (unsigned long long)tag);
		else
			seen[seq] = true;
	}
	if (rng_pct(o->g, 50)) {
		doca_event_free_bulk(evs, got);
	} else {
		for (uint32_t i = 0; i < got; i++)
			doca_event_free(evs[i]);
	}
	return accepted;
}

/* One round (see the top). @return its accepted copies. */
static unsigned long one_round(struct rng *g, unsigned long round, enum sabotage sab, unsigned long *overlaps,
			       unsigned long *revokes)
{
	static struct owner o;
	struct stress_rig r;
	uint32_t n = 2 + rng_below(g, MAX_N - 1);

	stress_rig_up(&r, n, PAIRS, LEN);
	memset(&o, 0, sizeof(o));
	o.r = &r;
	o.g = g;
	o.n = n;
	o.submit = (enum mix)rng_below(g, 3);
	o.get = (enum mix)rng_below(g, 3);
	o.free = (enum mix)rng_below(g, 3);
	o.keep_pct = rng_below(g, 90);
	o.sab = sab;
	for (unsigned i = 0; i < OWNER_PAIRS; i++)
		o.free_pairs[o.nfree_pairs++] = i;
	cur = (struct round){ .round = round,
			      .rig = &r,
			      .n = n,
			      .revoke = rng_below(g, 3) == 0,
			      .fcount = 1 + rng_below(g, FOREIGN_MAX),
			      .stall = rng_pct(g, 50),
			      .fspin = rng_below(g, SPIN_MAX),
			      .rspin = rng_below(g, SPIN_MAX) };
	atomic_store(&o_tried, 0);
	atomic_store(&o_refused, 0);
	atomic_store(&o_freed, 0);
	atomic_store(&x_freed, 0);
	atomic_store(&f_tried, 0);
	atomic_store(&f_refused, 0);
	for (unsigned i = 0; i < FOREIGN_MAX; i++)
		atomic_store(&f_accepted[i], 0);
	uint64_t stale = doca_stale_handle_count();

	/* a few owner steps first: the stack holds returned slots when the
	 * foreign thread comes */
	for (unsigned i = rng_below(g, 4); i > 0; i--)
		owner_step(&o, false);
	atomic_store(&foreign_go, 2 * round); /* the helpers' loads of cur come after it and the post */
	if (cur.revoke)
		sem_post(&revoker_go);
	while (atomic_load(&f_done) != round || (cur.revoke && atomic_load(&revoke_done) != round))
		owner_step(&o, false);
	for (unsigned i = 1 + rng_below(g, 8); i > 0; i--)
		owner_step(&o, false);
	/* the drain: every event of both sides */
	uint32_t want_foreign = foreign_accepted_total();

	for (unsigned tries = 0; o.out != 0 || o.fgot_total != want_foreign || o.nheld != 0; tries++) {
		if (tries == 1000000)
			stress_fatal("round %lu: owner %u out, foreign %u of %u events after a million turns", round,
				     o.out, o.fgot_total, want_foreign);
		owner_step(&o, true);
	}
	for (unsigned i = 0; i < FOREIGN_MAX; i++)
		if (o.fgot[i] != atomic_load(&f_accepted[i]))
			stress_violation("round %lu: foreign task %u: %s, %u events", round, i,
					 atomic_load(&f_accepted[i]) ? "accepted" : "refused", o.fgot[i]);
	if (!owner_turn(&o)) /* nobody else runs the PE now: the mailbox drained */
		stress_violation("round %lu: the owner's turn after the race was refused", round);
	if (doca_stale_handle_count() != stale)
		stress_violation("round %lu: %llu frees refused: none should be", round,
				 (unsigned long long)(doca_stale_handle_count() - stale));
	unsigned long accepted = o.accepted + want_foreign + final_count(&o, rng_pct(g, 50));

	*overlaps += stress_overlap_seen(&switch_race, round); /* the foreign exit came before its f_done */
	*revokes += cur.revoke && atomic_load(&revoke_ran) == round;
	stress_rig_down(&r);
	return accepted;
}

/* The owner (this thread) and the foreign thread on two different CPUs
 * of the ones this process may use, if it may use two: the owner on the
 * CPU it is running on, the foreign thread on the next one allowed (so
 * two runs at once spread out on a larger machine). A scheduler that
 * queues both on one CPU (its load balance counts threads, and there
 * are others) lets them run only one after the other, and their race
 * then happens only at a preemption: on a 2-CPU machine with two busy
 * loops, 54-62 % of the rounds overlapped pinned, 38-51 % not. The
 * revoker stays free. */
static void pin_racers(pthread_t foreign)
{
	cpu_set_t allowed, one;
	int here = sched_getcpu(), next = -1;

	if (here < 0 || sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) < 2 ||
	    !CPU_ISSET(here, &allowed))
		return;
	for (int i = 1; i < CPU_SETSIZE && next < 0; i++)
		if (CPU_ISSET((here + i) % CPU_SETSIZE, &allowed))
			next = (here + i) % CPU_SETSIZE;
	CPU_ZERO(&one);
	CPU_SET(here, &one);
	if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0)
		return;
	CPU_ZERO(&one);
	CPU_SET(next, &one);
	(void)pthread_setaffinity_np(foreign, sizeof(one), &one);
}

/* The library aborts on a broken invariant it sees (a slot returned
 * twice): say in which round, then abort as it asked. */
static void abort_handler(int sig)
{
	char msg[96] = "FATAL: the library aborted in round ";
	size_t len = strlen(msg);
	char digits[24];
	size_t nd = 0;

	for (unsigned long v = cur.round; nd == 0 || v != 0; v /= 10)
		digits[nd++] = (char)('0' + v % 10);
	while (nd > 0)
		msg[len++] = digits[--nd];
	msg[len++] = '\n';
	if (write(2, msg, len) < 0)
		_exit(1);
	signal(sig, SIG_DFL);
	raise(sig);
}

int main(int argc, char **argv)
{
	struct stress_opts o;
	struct rng g;
	pthread_t foreign, revoker;
	unsigned long accepted = 0, round = 0, overlaps = 0, revokes = 0;

	stress_parse_kinds(argc, argv, &o, STRESS_KIND(SABOTAGE_LOST) | STRESS_KIND(SABOTAGE_DUP));
	stress_watchdog(o.seconds);
	rng_init(&g, o.seed, 0);
	owner_thread = pthread_self();
	struct sigaction sa = { .sa_handler = stall_handler, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		stress_fatal("sigaction");
	signal(SIGABRT, abort_handler);
	if (sem_init(&revoker_go, 0, 0) != 0 ||
	    pthread_create(&foreign, NULL, foreign_main, NULL) != 0 ||
	    pthread_create(&revoker, NULL, revoker_main, NULL) != 0)
		stress_fatal("sem_init or pthread_create");
	pin_racers(foreign);
	uint64_t end = stress_now_ns() + (uint64_t)(o.seconds * 1e9);

	do
		accepted += one_round(&g, ++round, o.sabotage, &overlaps, &revokes);
	while (stress_now_ns() < end && stress_violation_count() == 0);
	atomic_store(&quit, true);
	sem_post(&revoker_go);
	pthread_join(foreign, NULL);
	pthread_join(revoker, NULL);
	bool pass = stress_violation_count() == 0;

	printf("stress_pool_share_race: %s seed=%llu %.1fs accepted=%lu violations=%lu rounds=%lu overlap=%lu "
	       "stalled=%lu revoked=%lu\n",
	       pass ? "PASS" : "FAIL", (unsigned long long)o.seed, o.seconds, accepted, stress_violation_count(), round,
	       overlaps, stalled_rounds, revokes);
	stress_overlap_report("stress_pool_share_race", overlaps, round);
	return pass ? 0 : 1;
}
