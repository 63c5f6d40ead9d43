/*
 * actors/runner.h — "at most one runner" for an actor.
 *
 * An actor's private state (queues, event lists) is touched only by the
 * thread that holds its runner guard. Entering is one CAS from "nobody" to
 * the caller's identity; a second thread is refused, never allowed in.
 * Acquire on enter pairs with release on exit, so each runner sees
 * everything the previous runner wrote.
 *
 * A brief holder (runner_enter_brief: a submit posting straight to the
 * device, a free returning credits) holds the guard for a
 * bounded moment and never calls back into user code; its identity carries
 * a tag bit, and runner_enter waits for it to leave instead of refusing,
 * so taking the guard briefly never turns a legitimate runner's call into
 * a refusal. A brief holder waits for nobody (it gives up if the guard is
 * taken), so the wait cannot deadlock.
 *
 * Parking (the owner fast path, issue 12). The thread that runs an actor
 * in a loop (progress, get, free, submit, progress ...) would pay a CAS
 * and a release store per call. Instead, leaving with runner_exit_park
 * keeps the guard parked for the caller: owner = identity | PARKED, with
 * a parking generation in the top bits (a new one at every parking). A
 * thread's identity is its record (struct runner_thread), which lists the
 * runners whose parked sections the thread is in (`in`, a small stack
 * only that thread writes). The parked owner enters again without a
 * read-modify-write: it pushes the runner on its list, runs the light half
 * of an asymmetric fence (actors/asym_fence.h), and enters if the owner
 * word is still the parked word W it saw (else it pops it and takes the
 * slow way: a CAS from W, or from W | REVOKING, or the ordinary path); the
 * owner ways (runner_owner_enter) push without a look first, and enter if
 * the one look after the light half finds a parked word of theirs. It
 * leaves by popping it, and looks at nothing else. A thread that wants a
 * parked guard (runner_enter only: brief entries give up, their callers
 * have a way around the actor) counts itself in revoke (revokers in
 * flight), marks the owner word itself (a CAS of W to W | REVOKING, the
 * same CAS when it is marked already), runs the heavy half, then looks
 * for the runner in the owner's list:
 *  - absent: the owner is outside, and its next entry sees the mark and
 *    goes the slow way, so the revoker may CAS the owner word from W |
 *    REVOKING to itself; the owner's slow way is a CAS from that word too,
 *    so exactly one of them gets the guard;
 *  - present: the owner is inside: busy, as for a held guard. The mark
 *    stays: the owner's next entry takes the slow way (a CAS, after which
 *    the guard is an ordinary held one and its exit frees it, unless it
 *    parks it again), and the next revoker to come finds the owner outside
 *    and takes it. A brief hold (runner_enter_brief) is listed with a tag,
 *    and the revoker waits for it to end instead, as runner_enter waits
 *    for any brief holder.
 * The owner's entry compares one word, its exit none (the revoke count's
 * two compares that stood there are gone). The count is read only by a
 * parking: a thread that parks while a revoker is in flight gives the
 * guard up at once, so a paused revoker never meets its W | REVOKING come
 * round again with the owner inside (the 16-bit generation wraps after
 * 65 536 parkings: a review found that case in an earlier protocol). The
 * argument, every order in it, is actors/runner.c's "The revoking mark".
 * Why the list is the thread's and not a flag of the actor's: an
 * entry that turns out stale (W replaced between its first look and its
 * push) writes only its own list, never a flag a newer owner is using; the
 * same list tells a parked owner that it re-enters from a callback
 * (nested). Limits: parked
 * sections nest RUNNER_NEST_MAX deep (deeper entries take the slow way);
 * records are recycled when their thread
 * exits (its parked guards are then revoked, or inherited by the next
 * thread given the record, which is safe: the old thread runs none of
 * them).
 *
 * Progress, exactly: runner_enter_brief, runner_exit and
 * runner_exit_park take a bounded number of steps (loads, stores and at
 * most two CAS): wait-free; a thread's first call also takes a mutex to
 * get its record. runner_enter returns after a bounded number of steps
 * (entered, nested or busy; a revocation adds one membarrier system call)
 * unless a brief holder has the guard (held, or parked and in a brief
 * hold): then it spins, yielding the CPU
 * every 64 tries, until the holder leaves — the holder's bounded work (the
 * engine posts at most one chunk of descriptors and rings a doorbell, or
 * returns one burst of credits) plus however long that thread is
 * preempted while holding. A preempted brief holder therefore stalls every
 * runner_enter caller until it runs again: that call is not lock-free.
 */
#ifndef DOCA_RUNNER_H
#define DOCA_RUNNER_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "asym_fence.h"
#include "word_asm.h"
#include "explore.h"
#include "explore_revert.h"
#include "tsan_annotate.h"

struct runner {
	/* NULL, identity, identity | BRIEF, or generation << 48 | identity |
	 * PARKED, that | REVOKING once a revoker marked it */
	_Atomic(const void *) owner;
	/* revokers in flight, RUNNER_REVOKER each (read by a parking: see top) */
	_Atomic uint32_t revoke;
	uint16_t park_gen; /* the last parking's generation (the holder's) */
	/* The owner's claims (engine/event.c, "The owner's plain claim"):
	 * 0 while the parked owner may claim its actor's events plainly;
	 * RUNNER_CLAIMS_SETTING once a claimer outside the guard began to
	 * turn that off, RUNNER_CLAIMS_SET (release) once that claimer's
	 * wait ended (runner_claims_share). Sticky for the actor's life:
	 * reset by runner_reset only. */
	_Atomic uint8_t claims;
#ifdef DOCA_EXPLORE
	_Atomic unsigned explore_holders; /* the explorer's check: never 2 */
#endif
};

/* A thread's identity when it may park (64-aligned: the low bits are free
 * for the tags). Threads without one (past RUNNER_RECORDS_MAX) never park. */
#define RUNNER_NEST_MAX 4u

struct runner_thread {
	/* the runners whose parked sections the thread is in, innermost last
	 * (depth of them); written by the thread only */
	_Atomic(const struct runner *) in[RUNNER_NEST_MAX];
	uint32_t depth;
	struct runner_thread *next_free;
	/* runner_me_owner_way's value at depth 0: the record itself with
	 * runner_owner_way, else its twin (set with it; runner_depth_set) */
	struct runner_thread *way;
} __attribute__((aligned(64)));

/* Records made at most (actors/runner.c: one array; a thread past them
 * runs as its token and never parks). */
#define RUNNER_RECORDS_MAX 4096u

/* Record t's twin: the array's record RUNNER_RECORDS_MAX after it, never
 * a thread's identity (actors/runner.c), so no owner word is a parked
 * word of it and nobody reads its list: runner_me_owner_way's value when
 * t may not take an owner way (one lea). */
static inline struct runner_thread *runner_twin(struct runner_thread *t)
{
	return t + RUNNER_RECORDS_MAX;
}

enum runner_entry {
	RUNNER_ENTERED, /* the caller now runs the actor; call runner_exit */
	RUNNER_NESTED,  /* the caller already runs it (a callback re-entered) */
	RUNNER_BUSY,    /* another thread runs it */
};

#define RUNNER_BRIEF_TAG ((uintptr_t)1)
#define RUNNER_PARKED_TAG ((uintptr_t)2)
/* a parked word a revoker marked (records are 64-aligned: the bit is free
 * in a parked word, the only kind that carries it) */
#define RUNNER_REVOKING_TAG ((uintptr_t)4)
#define RUNNER_REVOKER 1u /* revoke: one revoker from its count to its withdrawal */
#define RUNNER_GEN_SHIFT 48 /* records live below 2^48 (runner_thread_first) */
#define RUNNER_ID_MASK (((uintptr_t)1 << RUNNER_GEN_SHIFT) - 1u)

extern DOCA_TLS struct runner_thread *runner_me;

/* The parked owner's inline ways (engine/event.c doca_event_free,
 * engine/pe.c doca_pe_get_event) are for the kernel's asymmetric fences
 * (asym_fence_kernel: their light fences compiler barriers) with no race
 * detector watching (hb_watching(), else annotations): both fixed before
 * main, so tested as this one flag (actors/runner.c). Hidden, as
 * asym_fence_kernel. */
extern __attribute__((visibility("hidden"))) bool runner_owner_way;
/* runner_me while runner_owner_way and the thread is in no parked
 * section (its depth 0), else a record no thread runs as, whose list
 * nobody reads: the record's twin (runner_twin), or for a thread without
 * a record one twin they share (its initial value): set with runner_me,
 * and with depth (runner_depth_set, its only writer). Never NULL: the
 * owner ways (runner_owner_enter) push their entry on its list before
 * they look at the owner word, and read this one word for the flag, the
 * record and the depth: a twin fails their runner_parked_by, which sends
 * them to the ways that test the flag and the depth themselves. */
extern DOCA_TLS struct runner_thread *runner_me_owner_way;
/* A thread's identity without a record: runner_self_tokens +
 * RUNNER_TOKEN_AT (its low six bits 8: never a record's, 64-aligned;
 * 4-aligned, for the tags; bit 2 clear, so a token plus the PARKED tag is
 * no marked parked word's: runner_parked_by). */
extern DOCA_TLS _Alignas(64) char runner_self_tokens[64];
#define RUNNER_TOKEN_AT 8u

/* The calling thread's record, made on its first call (or NULL). */
struct runner_thread *runner_thread_first(void);
/* fork(): no thread holds the records' lock across it. */
void runner_fork_prepare(void);
void runner_fork_parent(void);
void runner_fork_child(void);

static inline const void *runner_self(void)
{
	struct runner_thread *t = runner_me;

	if (__builtin_expect(t == NULL, 0))
		t = runner_thread_first();
	return t != NULL ? (const void *)t : (const void *)(runner_self_tokens + RUNNER_TOKEN_AT);
}

#ifdef DOCA_EXPLORE
/* The explorer's check of the guard itself: a second holder aborts the
 * schedule (verdict "abort"). */
void runner_explore_two_holders(void);
static inline bool runner_in(struct runner *r)
{
	if (atomic_fetch_add(&r->explore_holders, 1) != 0)
		runner_explore_two_holders();
	return true;
}
static inline void runner_out(struct runner *r)
{
	atomic_fetch_sub(&r->explore_holders, 1);
}
/* The runner's memory is about to be zeroed and handed on (cell_put):
 * nobody may hold it. The zeroing clears the count too, so a holder still
 * inside would otherwise go unseen when the cell's next runner is entered
 * (verdict "abort"). */
void runner_explore_held_when_freed(void);
static inline void runner_explore_retire(struct runner *r)
{
	if (atomic_load(&r->explore_holders) != 0)
		runner_explore_held_when_freed();
}
#else
#define runner_in(r) true
#define runner_out(r) ((void)0)
#define runner_explore_retire(r) ((void)0)
#endif

/* The runner's memory is handed on to a new actor (engine/cells.c,
 * cell_put_keep): nobody holds it and no revoker is in flight, but a
 * thread outside a read-side section may still load its words (a parked
 * owner's getter that checked a handle just before the destroy,
 * engine/pe.c pe_get), so they are reset with atomic stores, never
 * zeroed with plain ones. park_gen goes on counting: only a holder reads
 * it. */
static inline void runner_reset(struct runner *r)
{
	runner_explore_retire(r);
	atomic_store_explicit(&r->owner, NULL, memory_order_relaxed);
	atomic_store_explicit(&r->revoke, 0, memory_order_relaxed);
	atomic_store_explicit(&r->claims, 0, memory_order_relaxed);
#ifdef DOCA_EXPLORE
	atomic_store_explicit(&r->explore_holders, 0, memory_order_relaxed);
#endif
}

static inline const void *runner_tagged(const void *me, uintptr_t tag)
{
	return (const void *)((uintptr_t)me | tag);
}

/* Is cur a parked word of identity me (any generation)? Then me is a
 * record: only threads with one park. False for a NULL @p me (a thread
 * without a record): no owner word is PARKED_TAG alone, since only a
 * record parks, so a caller may test this before it reads me's fields.
 * One 32-bit compare: the low 32 bits of cur are me's plus the PARKED tag
 * (an lea and a cmp, no xor or shift; the generation is above them).
 * Exact, for an owner word cur (NULL, an identity, one with the brief
 * tag, a parked word, one marked) and me a record, a token or NULL. The
 * owner words' low six bits: 000000 (NULL, a record), 000001 (a record's
 * brief hold), 001000 and 001001 (a token, and its brief hold), 000010 (a
 * parked word) and 000110 (one marked). me + PARKED's: 000010 for a
 * record; 001010 for a token, no owner word's (a token at 4 of its block
 * gave 000110, a marked word's: it matched the marked word of any record
 * with its block's low 32 bits, tests/engine/runner_token.c); for NULL,
 * the low 32 bits 2, a parked word of a record whose low 32 bits are 0,
 * which no record has. So only a record me matches, and cur is then
 * gen << 48 | R | PARKED
 * for a record R whose low 32 bits are me's; records are one array of
 * less than 4 GiB (actors/runner.c), so R is me. */
static inline bool runner_parked_by(const void *cur, const void *me)
{
	_Static_assert(RUNNER_GEN_SHIFT >= 32, "the generation is above the compared bits");
	_Static_assert(_Alignof(struct runner_thread) % 64 == 0, "a record's low six bits are 0");
	_Static_assert(RUNNER_TOKEN_AT % 4 == 0 && RUNNER_TOKEN_AT < 64 &&
			       (RUNNER_TOKEN_AT & (RUNNER_PARKED_TAG | RUNNER_REVOKING_TAG)) == 0,
		       "a token is 4-aligned, not a record's, and with PARKED no marked word's");
	return (uint32_t)(uintptr_t)cur == (uint32_t)((uintptr_t)me + RUNNER_PARKED_TAG);
}

/* @p cur, a parked word, without the revoking mark: a thread tests
 * runner_parked_by on it to know its own marked word (the owner ways test
 * cur itself, so a marked word sends them to the slow ways). */
static inline const void *runner_unmarked(const void *cur)
{
	_Static_assert(_Alignof(struct runner_thread) % 8 == 0, "a record's bit 2 is free for the mark");
	return (const void *)((uintptr_t)cur & ~RUNNER_REVOKING_TAG);
}

/* The record whose parked word (marked or not) is @p w. */
static inline struct runner_thread *runner_parked_thread(const void *w)
{
	return (struct runner_thread *)((uintptr_t)w & RUNNER_ID_MASK &
					~(RUNNER_PARKED_TAG | RUNNER_REVOKING_TAG));
}

/* The parked owner's entry compares the guard's owner word in memory
 * under WORD_ASM (actors/word_asm.h), one cmp, where gcc loads an
 * atomic word apart from its compare: the same single-copy atomic load of
 * the aligned word. A volatile asm with a memory clobber keeps the
 * compiler's order around it (after the light half of the fence). */

/* r->owner == cur, loaded relaxed. */
static inline __attribute__((always_inline)) bool runner_owner_is(struct runner *r, const void *cur)
{
#ifdef WORD_ASM
	bool same;

	__asm__ volatile("cmpq %[cur], %[w]" : "=@ccz"(same) : [w] "m"(r->owner), [cur] "r"(cur) : "memory");
	return same;
#else
	return atomic_load_explicit(&r->owner, memory_order_relaxed) == cur;
#endif
}

/* t->depth != 0 (t in a parked section), read by t itself: one cmp with
 * the word in memory under WORD_ASM, where gcc loads it and tests
 * the register (the getters' and the free's owner ways). */
static inline __attribute__((always_inline)) bool runner_nested(const struct runner_thread *t)
{
#ifdef WORD_ASM
	bool nested;

	__asm__("cmpl $0, %[d]" : "=@ccnz"(nested) : [d] "m"(t->depth));
	return nested;
#else
	return t->depth != 0;
#endif
}

/* t, the caller's own record, now in @p d parked sections: depth, and
 * runner_me_owner_way with it (t at 0 with the flag, else its twin), so
 * an owner way that finds the record there needs no look at depth. */
static inline __attribute__((always_inline)) void runner_depth_set(struct runner_thread *t, uint32_t d)
{
	t->depth = d;
	runner_me_owner_way = d == 0 ? t->way : runner_twin(t);
}

/* An entry of a thread's list: the runner, tagged when the hold is brief
 * (added, not or-ed: r's low bit is 0, and an add folds into the lea of
 * the runner's address in its actor). */
static inline const struct runner *runner_entry_of(const struct runner *r, bool brief)
{
	_Static_assert(_Alignof(struct runner) >= 2, "a runner's low address bit is free for the tag");
	return (const struct runner *)((uintptr_t)r + (uintptr_t)brief);
}

/* Is thread t inside a parked section of r? */
static inline bool runner_in_parked(const struct runner *r, const struct runner_thread *t)
{
	for (uint32_t i = 0; i < t->depth; i++)
		if (((uintptr_t)atomic_load_explicit(&t->in[i], memory_order_relaxed) & ~(uintptr_t)1) ==
		    (uintptr_t)r)
			return true;
	return false;
}

static inline __attribute__((always_inline)) bool runner_unpark_at(struct runner *r, const void *cur,
								   struct runner_thread *t, uint32_t d,
								   bool brief, bool kernel);

/* The parked owner t enters W (cur) without a read-modify-write; false
 * (its list restored) if a revocation may be under way: take the slow
 * way. @p kernel: the caller found asym_fence_kernel true
 * (asym_fence_light_known). */
static inline __attribute__((always_inline)) bool runner_unpark_as(struct runner *r, const void *cur,
								   struct runner_thread *t, bool brief,
								   bool kernel)
{
	uint32_t d = t->depth;

	if (d == RUNNER_NEST_MAX)
		return false;
	return runner_unpark_at(r, cur, t, d, brief, kernel);
}

/* The explorer's revert switch unpark_ignores_mark: the owner enters its
 * parked word marked by a revoker too (the protection undone). */
static inline bool runner_explore_ignores_mark(struct runner *r, const void *cur)
{
	return DOCA_REVERTED("unpark_ignores_mark") &&
	       atomic_load_explicit(&r->owner, memory_order_relaxed) == runner_tagged(cur, RUNNER_REVOKING_TAG);
}

/* ... for runner_owner_enter's word cur of t's. */
static inline bool runner_explore_ignores_mark_of(const void *cur, const struct runner_thread *t)
{
	return DOCA_REVERTED("unpark_ignores_mark") && runner_parked_by(runner_unmarked(cur), t);
}

/* runner_unpark_as at @p d, t's depth (below RUNNER_NEST_MAX), which the
 * caller knows: a caller that tested t->depth == 0 (t is in no parked
 * section, so not in one of r: never NESTED) enters at the list's first
 * entry with constant indexes, and leaves by runner_exit_unparked_at(..,
 * 0). */
static inline __attribute__((always_inline)) bool runner_unpark_in(struct runner *r, const void *cur,
								   struct runner_thread *t, uint32_t d,
								   bool brief, bool kernel, bool count)
{
	EXPLORE_POINT(GUARD);
	/* release: a revoker that reads this entry of another runner (the
	 * slot reused) sees our sections of r before it (no instruction more
	 * on x86; a release sequence of the exit's pop would give it in C11,
	 * but not in every model since) */
	atomic_store_explicit(&t->in[d], runner_entry_of(r, brief), memory_order_release);
	if (count)
		runner_depth_set(t, d + 1u);
	asym_fence_light_known(kernel); /* our entry is visible before we load the owner word (see top) */
	EXPLORE_POINT(GUARD);
	/* relaxed: W unmarked is our own parking's (actors/runner.c, "The
	 * revoking mark"); a marked word is not W: the slow way */
	if (runner_owner_is(r, cur) || runner_explore_ignores_mark(r, cur))
		return runner_in(r);
	if (count)
		runner_depth_set(t, d);
	/* release: a revoker that sees us gone sees our last section. */
	atomic_store_explicit(&t->in[d], NULL, memory_order_release);
	return false;
}

static inline __attribute__((always_inline)) bool runner_unpark_at(struct runner *r, const void *cur,
								   struct runner_thread *t, uint32_t d,
								   bool brief, bool kernel)
{
	return runner_unpark_in(r, cur, t, d, brief, kernel, true);
}

/* runner_unpark_at(r, cur, t, 0, ..) without counting the entry in
 * t->depth, for a caller at depth 0 whose section runs nothing that
 * reads depth or pushes an entry (no call, no nested entry, no callback)
 * until it leaves by runner_exit_unparked_first: depth is the thread's
 * own (revokers and quiescers look at the whole list, never at depth), so
 * its stores of 1 and back to 0 would be dead. A way that calls out from
 * inside the section counts the entry first (runner_unparked_first_count),
 * and then leaves as after runner_unpark_at. (A signal handler calling the
 * library is not supported anyway.) */
static inline __attribute__((always_inline)) bool runner_unpark_first(struct runner *r, const void *cur,
								      struct runner_thread *t, bool brief,
								      bool kernel)
{
	return runner_unpark_in(r, cur, t, 0, brief, kernel, false);
}

static inline void runner_unparked_first_count(struct runner_thread *t)
{
	runner_depth_set(t, 1);
}

static inline bool runner_unpark(struct runner *r, const void *cur, struct runner_thread *t, bool brief)
{
	return runner_unpark_as(r, cur, t, brief, false);
}

/* Is the owner word of r, loaded relaxed, a parked word of t's,
 * unmarked (runner_parked_by)? Under WORD_ASM one 32-bit cmp with the
 * word's low half in memory (x86: its first four bytes; the single-copy
 * atomic load of those aligned bytes, all runner_parked_by compares; a
 * relaxed load of part of the word reads one store's bytes), where gcc
 * loads the word apart from its compare. *cur: the word loaded, where it
 * is (without WORD_ASM), else a parked word of t's made from t (the same
 * record: runner_parked_thread). */
static inline __attribute__((always_inline)) bool runner_owner_parked_by(struct runner *r,
									const struct runner_thread *t,
									const void **cur)
{
#ifdef WORD_ASM
	bool same;

	__asm__ volatile("cmpl %[me], %[w]"
			 : "=@ccz"(same)
			 : [w] "m"(r->owner), /* its low four bytes: cmpl */
			   [me] "r"((uint32_t)((uintptr_t)t + RUNNER_PARKED_TAG))
			 : "memory");
	*cur = runner_tagged(t, RUNNER_PARKED_TAG);
	return same;
#else
	*cur = atomic_load_explicit(&r->owner, memory_order_relaxed);
	return runner_parked_by(*cur, t) || runner_explore_ignores_mark_of(*cur, t);
#endif
}

/* The owner ways' entry (engine/pe.c doca_pe_get_event and
 * doca_pe_get_events, engine/event.c doca_event_free, engine/task.c the
 * owner's single submit), runner_unpark_first's with one look: t, the
 * caller's runner_me_owner_way (its record at depth 0 with the flag, else
 * a twin), pushes r (tagged if @p brief) at its list's first index, runs
 * the light half of the fence (the kernel's: t is a record only with the
 * flag), then loads the owner word, and enters if it is a parked word of
 * t's, unmarked, W: true, and the caller leaves by
 * runner_exit_unparked_first (or counts the entry,
 * runner_unparked_first_count, and leaves as after runner_unpark_at).
 * *cur: W (@p loaded), else a parked word of t's (runner_owner_parked_by;
 * runner_exit_from and the others that take W read only its record).
 * Else false, t's list restored: the caller takes its slow way (the
 * general entry looks again). No look before the push: the one after it
 * is the compare the other entries make after their own look and push
 * (actors/runner.c, "One look after the push", says why that is enough).
 * A twin's list is written and nobody reads it; its parked_by fails.
 * The explorer's point before the push is the caller's (it was its look's). */
static inline __attribute__((always_inline)) bool runner_owner_enter(struct runner *r, struct runner_thread *t,
								     bool brief, bool loaded, const void **cur)
{
#ifdef DOCA_EXPLORE
	if (DOCA_REVERTED("owner_way_looks_before_push")) {
		/* the protection undone: the look before the push, none after */
		*cur = atomic_load_explicit(&r->owner, memory_order_relaxed);
		EXPLORE_POINT(GUARD);
		atomic_store_explicit(&t->in[0], runner_entry_of(r, brief), memory_order_release);
		if (runner_parked_by(*cur, t) && runner_in(r))
			return true;
		atomic_store_explicit(&t->in[0], NULL, memory_order_release);
		return false;
	}
#endif
	/* release: as runner_unpark_in's push */
	atomic_store_explicit(&t->in[0], runner_entry_of(r, brief), memory_order_release);
	asym_fence_light_known(true); /* our entry is visible before we load the owner word (see top) */
	EXPLORE_POINT(GUARD);
	/* relaxed: an unmarked parked word of ours is our own last parking's
	 * (actors/runner.c); a marked word fails the compare: the slow way */
	bool mine;

	if (loaded) {
		*cur = atomic_load_explicit(&r->owner, memory_order_relaxed);
		mine = runner_parked_by(*cur, t) || runner_explore_ignores_mark_of(*cur, t);
	} else {
		mine = runner_owner_parked_by(r, t, cur);
	}
	if (mine && runner_in(r))
		return true;
	/* release: a revoker that sees us gone sees our last section. */
	atomic_store_explicit(&t->in[0], NULL, memory_order_release);
	return false;
}

/* runner_enter_parked's slow way: a CAS from the parked word cur, or from
 * cur | REVOKING, to `as` (out of line, actors/runner.c: a revoker marked
 * the word, or the list is full). */
enum runner_entry runner_enter_parked_cas(struct runner *r, const void *cur, const void *as);

/* The caller's parked guard (cur is a parked word of me), entered
 * briefly or not (@p brief: the identity it takes on the slow way is then
 * tagged, made only there); *unparked: cur, if entered by runner_unpark
 * (see runner_enter_from). */
static inline enum runner_entry runner_enter_parked(struct runner *r, const void *cur, const void *me,
						    bool brief, const void **unparked)
{
	struct runner_thread *t = (struct runner_thread *)me;

	if (runner_in_parked(r, t))
		return RUNNER_NESTED; /* a callback of our own section */
	if (runner_unpark(r, cur, t, brief)) {
		*unparked = cur;
		return RUNNER_ENTERED;
	}
	return runner_enter_parked_cas(r, cur, runner_tagged(me, brief ? RUNNER_BRIEF_TAG : 0));
}

/* A revoker counts itself in before it marks the owner word (a parking
 * reads the count: actors/runner.c, "The revoking mark"). */
static inline void runner_revoke_count(struct runner *r)
{
	atomic_fetch_add_explicit(&r->revoke, RUNNER_REVOKER, memory_order_relaxed);
}

/* ... marks the parked word *cur (a marked one is CASed to itself),
 * false with *cur the word found if it changed. (One explorer point for
 * the count and the mark, as for the count alone before the mark: the
 * pinned seeds' schedules stay where they were.) */
static inline bool runner_revoke_mark(struct runner *r, const void **cur)
{
	EXPLORE_POINT(GUARD);
	/* release: a CAS that reads the word from here on (a take, then its
	 * parking) sees our count above */
	return atomic_compare_exchange_strong_explicit(&r->owner, cur, runner_tagged(*cur, RUNNER_REVOKING_TAG),
						       memory_order_release, memory_order_relaxed);
}

/* ... and out after its last CAS. */
static inline void runner_revoke_withdraw(struct runner *r)
{
	/* release: a parking that reads the count gone is after our CAS (see
	 * actors/runner.c) */
	atomic_fetch_sub_explicit(&r->revoke, RUNNER_REVOKER, memory_order_release);
}

/* A quiescer's count (runner_quiesce_begin, the explorer's reverted first
 * versions): counted, and the owner word marked if parked (else CASed to
 * itself, which a later parking's exchange follows), so no runner_unpark
 * succeeds until runner_quiesce_end (its parkings give the guard up). */
static inline void runner_revoke_announce(struct runner *r)
{
	const void *cur = atomic_load_explicit(&r->owner, memory_order_relaxed);

	runner_revoke_count(r);
	for (;;) {
		EXPLORE_POINT(GUARD);
		const void *to = ((uintptr_t)cur & RUNNER_PARKED_TAG) != 0 ? runner_tagged(cur, RUNNER_REVOKING_TAG)
									    : cur;

		/* release: as runner_revoke_mark's */
		if (atomic_compare_exchange_strong_explicit(&r->owner, &cur, to, memory_order_release,
							    memory_order_relaxed))
			return;
	}
}

/* Another thread's parked word (cur, marked or not): revoke it for me
 * (see top). ENTERED, BUSY (its owner is inside), or NESTED meaning "look
 * again" (the owner word changed under us). */
static inline enum runner_entry runner_revoke(struct runner *r, const void *cur, const void *me)
{
	const struct runner_thread *owner = runner_parked_thread(cur);
	unsigned spins = 0;

	runner_revoke_count(r);
	if (!runner_revoke_mark(r, &cur)) {
		runner_revoke_withdraw(r);
		return RUNNER_NESTED;
	}
	cur = runner_tagged(cur, RUNNER_REVOKING_TAG);
	asym_fence_heavy(); /* the mark is visible before we read its list (see top) */
	for (uint32_t i = 0; i < RUNNER_NEST_MAX; i++) {
		EXPLORE_POINT(GUARD);
		/* acquire: pairs with the owner's release when it left. */
		const struct runner *in = atomic_load_explicit(&owner->in[i], memory_order_acquire);

		if (in == r) {
			runner_revoke_withdraw(r); /* the mark stays (see top) */
			return RUNNER_BUSY;
		}
		if (in == runner_entry_of(r, true)) { /* a brief hold: wait for it */
			EXPLORE_YIELD();
			if (++spins % 64u == 0)
				sched_yield(); /* the brief holder may have been preempted */
			i = (uint32_t)-1; /* look at the whole list again */
		}
	}
	EXPLORE_POINT(GUARD);
	/* acq_rel: acquire, the guard's hand-over; release, so a quiescer
	 * whose acquire load reads our word (runner_quiesce_wait: "no
	 * section") also sees the brief sections we waited out above, and
	 * what they wrote (the stop's second count, a switch's pool) */
	bool won = atomic_compare_exchange_strong_explicit(&r->owner, &cur, me, memory_order_acq_rel,
							   memory_order_relaxed) &&
		   runner_in(r);

	runner_revoke_withdraw(r);
	return won ? RUNNER_ENTERED : RUNNER_NESTED;
}

/* Quiescing the parked owner's brief sections (the stop of a context,
 * engine/ctx_run.c; the destroy of a buffer, engine/buf.c). A brief
 * section entered by runner_unpark may run without a read-side section
 * (engine/event.c: doca_event_free's owner way, a doca_event_free_bulk
 * route entered so; engine/task.c: the owner's doca_task_submit), so a
 * grace period does not wait for it. Today's callers wait uncounted
 * (runner_quiesce_fenced, below); runner_quiesce_begin, the first
 * version (explorer revert switches only), counts the caller in revoke
 * and marks the owner word as a revoker does (runner_revoke_announce), so
 * no runner_unpark succeeds until runner_quiesce_end (an owner's entry
 * meanwhile takes the slow way, a CAS, and never the owner way), runs the
 * heavy half of the fence, then waits until the owner of the parked word
 * it finds is in no brief section of r. Why every brief section entered
 * by runner_unpark before the call has then ended, and happens before the
 * caller's next steps: such a section's thread t pushed its entry, ran the
 * light half, and loaded the owner word (its W; for the counted version,
 * a load before our mark, else it saw the mark: no runner_unpark), and by
 * the fence pair our loads after the heavy half see its push or what t
 * wrote later. While t is inside, the owner word is t's parked word W, or
 * W | REVOKING (a revoker finds t inside and leaves it marked; t's own
 * slow way is not taken while t is inside, and nobody else takes it), so
 * we look in t's list: an entry r|brief is
 * waited out (t pops it with a release store, our load acquires), and a
 * value t wrote after its pop (acquired) comes with the section's end too.
 * A section of the caller's own is never brief (the stop runs no brief
 * hold), and a non-brief one (a parked owner's progress or get) is not
 * waited for: its tail holds read-side sections where it needs them, and
 * a progress may run callbacks that wait for the caller. The wait is for
 * brief holds only, which are bounded and wait for nobody who waits for
 * us (at most the allocator, making a pool's chunk, or a leaf lock:
 * engine/ctx_run.c). Never inside a brief hold of r.
 * runner_quiesce_wait is that wait alone: a caller that counted itself in
 * (runner_revoke_announce) and ran a heavy half since, which it needed
 * anyway, calls it after that fence (engine/buf.c, buf_close: the same
 * argument, one fence for two pairs), and runner_quiesce_end after. */
static inline void runner_quiesce_wait(struct runner *r)
{
	unsigned spins = 0;

	EXPLORE_POINT(GUARD);
	const void *cur = atomic_load_explicit(&r->owner, memory_order_acquire);

	if (((uintptr_t)cur & RUNNER_PARKED_TAG) == 0)
		return; /* free, or held by a CAS: no section entered by runner_unpark */
	const struct runner_thread *owner = runner_parked_thread(cur);

	for (uint32_t i = 0; i < RUNNER_NEST_MAX; i++) {
		EXPLORE_POINT(GUARD);
		/* acquire: pairs with the owner's release when it left. */
		if (atomic_load_explicit(&owner->in[i], memory_order_acquire) == runner_entry_of(r, true)) {
			EXPLORE_YIELD();
			if (++spins % 64u == 0)
				sched_yield(); /* the brief holder may have been preempted */
			i = (uint32_t)-1; /* look at the whole list again */
		}
	}
}

/* The uncounted form (a context's stop, engine/ctx_run.c; a buffer's
 * destroy, engine/buf.c): the heavy half, then the wait. The caller's
 * access before the call (a store the sections must see: STOPPING, a
 * kill; or a load that must not see a section's later store unless the
 * wait finds it: the stop's count of credits) pairs with each section's
 * light half; no runner_unpark is refused meanwhile, so the owner keeps
 * its parked guard (engine/task_pool.c, "Why the switcher does not count
 * itself", says what a count costs). */
static inline void runner_quiesce_fenced(struct runner *r)
{
	asym_fence_heavy(); /* the caller's access above is ordered before we read the owner's list */
	runner_quiesce_wait(r);
}

/* runner.claims' states after 0 (struct runner) */
#define RUNNER_CLAIMS_SETTING 1u
#define RUNNER_CLAIMS_SET 2u

/* A claimer outside the guard (one that found it busy: engine/event.c,
 * "The owner's plain claim") turns the parked owner's plain claims off
 * for good and waits out a brief section that may be making one; after
 * it, the caller may claim by CAS. With the claims flag SET (acquire:
 * stored after its setter's wait), at once. Else it stores SETTING (the
 * first such claimer, by CAS) or finds it stored, runs the heavy half of
 * the fence, and waits out the brief sections entered by runner_unpark
 * (runner_quiesce_wait); the one that stored SETTING then stores SET
 * (release). Every claimer that saw SETTING runs its own fence and wait,
 * never waits for SET: a section that loaded 0 before the setter's store
 * became visible to it is ordered before the caller only by a fence
 * pair of the caller's own (librseq's biased lock does the same). The
 * caller holds no brief section (the wait would be for itself, or for
 * an owner whose section waits for nothing, but a rule is simpler); a
 * read-side section is allowed (no brief section waits for a grace
 * period). Not wait-free: a membarrier, and the wait for a brief section
 * in progress, while the flag is not SET. */
static inline void runner_claims_share(struct runner *r)
{
	EXPLORE_POINT(GUARD);
	uint8_t f = atomic_load_explicit(&r->claims, memory_order_acquire);
	bool setter = false;

	if (f == RUNNER_CLAIMS_SET)
		return;
	if (f == 0) {
		/* acq_rel: acquire, a SET found comes with its wait */
		setter = atomic_compare_exchange_strong_explicit(&r->claims, &f, RUNNER_CLAIMS_SETTING,
								 memory_order_acq_rel, memory_order_acquire);
		if (!setter && f == RUNNER_CLAIMS_SET)
			return;
	}
	if (!setter && DOCA_REVERTED("claims_setting_as_set"))
		return; /* the rule undone: SETTING found taken for SET, no fence, no wait */
	if (!DOCA_REVERTED("foreign_claim_no_wait")) {
		asym_fence_heavy(); /* SETTING is visible before we read the owner's list */
		runner_quiesce_wait(r);
	}
	if (setter) {
		EXPLORE_POINT(GUARD);
		/* release: a claimer that reads SET comes after our wait */
		atomic_store_explicit(&r->claims, RUNNER_CLAIMS_SET, memory_order_release);
	}
}

/* Does the parked owner inside its brief section (entered by the owner
 * way, its light half run) claim plainly? The flag loaded after the
 * entry's fence (engine/event.c, "The owner's plain claim"). */
static inline __attribute__((always_inline)) bool runner_claims_plain(struct runner *r)
{
	if (DOCA_REVERTED("holder_ignores_claims"))
		return true; /* the protection undone: plain whatever the flag says */
	return atomic_load_explicit(&r->claims, memory_order_relaxed) == 0;
}

static inline void runner_quiesce_begin(struct runner *r)
{
	runner_revoke_announce(r);
	asym_fence_heavy(); /* our mark is visible before we read the owner's list */
	runner_quiesce_wait(r);
}

/* The end of runner_quiesce_begin's window: runner_unpark may succeed
 * again. The runner's memory must still be its actor's (the caller keeps
 * the actor from being destroyed until this returns). */
static inline void runner_quiesce_end(struct runner *r)
{
	runner_revoke_withdraw(r);
}

/* The caller's own parked word marked by a revoker (cur): NESTED inside
 * one of its sections (a callback), else the slow way's CAS from it. */
static inline enum runner_entry runner_enter_marked(struct runner *r, const void *cur, const void *me, bool brief)
{
	if (runner_in_parked(r, (const struct runner_thread *)me))
		return RUNNER_NESTED;
	return runner_enter_parked_cas(r, cur, runner_tagged(me, brief ? RUNNER_BRIEF_TAG : 0));
}

/* Take the guard, or report who has it. Waits only while a brief holder
 * has it (see "Progress, exactly" above). *unparked (NULL on entry) is
 * set to the parked word W when the caller entered its own parked guard
 * without a read-modify-write: then the owner word was W at the
 * entry, as at the caller's load of it, and it has been W since the
 * caller's parking that wrote it (before this call): a thread that held
 * the guard in between replaced W (or W | REVOKING) by its CAS, and W
 * unmarked comes back only by the caller parking again (a new generation,
 * and not during its call). So no other thread held the guard since
 * before the call, and none holds it until the caller leaves (a revoker
 * finds it inside): the owner word is W or W | REVOKING then, and W names
 * the caller's record, which runner_exit_from uses. */
static inline enum runner_entry runner_enter_from(struct runner *r, const void **unparked)
{
	const void *me = runner_self();
	const void *cur = atomic_load_explicit(&r->owner, memory_order_relaxed);
	unsigned spins = 0;

	if (runner_parked_by(cur, me)) { /* the common case first */
		enum runner_entry e = runner_enter_parked(r, cur, me, false, unparked);

		if (e != RUNNER_BUSY)
			return e;
	} else if (cur == me) {
		return RUNNER_NESTED;
	} else if (runner_parked_by(runner_unmarked(cur), me)) { /* ours, marked */
		enum runner_entry e = runner_enter_marked(r, cur, me, false);

		if (e != RUNNER_BUSY)
			return e;
	}
	for (;;) {
		cur = NULL;
		EXPLORE_POINT(GUARD);
		/* acquire: see the previous runner's writes (its exit released
		 * them); on failure, a parked word we read comes with its
		 * parker's writes (its record's list made), which runner_revoke
		 * reads before its last CAS. */
		if (atomic_compare_exchange_strong_explicit(&r->owner, &cur, me, memory_order_acquire,
							    memory_order_acquire) &&
		    runner_in(r))
			return RUNNER_ENTERED;
		if (((uintptr_t)cur & RUNNER_PARKED_TAG) != 0) {
			enum runner_entry e = runner_revoke(r, cur, me);

			if (e != RUNNER_NESTED)
				return e;
			continue; /* the owner word changed: look again */
		}
		if (((uintptr_t)cur & RUNNER_BRIEF_TAG) == 0)
			return RUNNER_BUSY;
		EXPLORE_YIELD();
		if (++spins % 64u == 0)
			sched_yield(); /* the brief holder may have been preempted */
	}
}

static inline enum runner_entry runner_enter(struct runner *r)
{
	const void *unparked = NULL;

	return runner_enter_from(r, &unparked);
}

/* Take the guard for a bounded moment, or give up at once if it is taken
 * (RUNNER_BUSY; RUNNER_NESTED when the caller already holds it);
 * *unparked as for runner_enter_from. */
static inline enum runner_entry runner_enter_brief_from(struct runner *r, const void **unparked)
{
	const void *me = runner_self();
	const void *cur = atomic_load_explicit(&r->owner, memory_order_relaxed);

	/* the parked owner's case first (the common one; cur == me is not) */
	if (runner_parked_by(cur, me))
		return runner_enter_parked(r, cur, me, true, unparked);
	if (cur == me)
		return RUNNER_NESTED;
	if (runner_parked_by(runner_unmarked(cur), me)) /* ours, marked by a revoker */
		return runner_enter_marked(r, cur, me, true);
	cur = NULL;
	EXPLORE_POINT(GUARD);
	/* acquire: see the previous runner's writes (its exit released them). */
	return atomic_compare_exchange_strong_explicit(&r->owner, &cur,
						       runner_tagged(me, RUNNER_BRIEF_TAG),
						       memory_order_acquire, memory_order_relaxed) &&
		       runner_in(r)
		       ? RUNNER_ENTERED
		       : RUNNER_BUSY;
}

static inline enum runner_entry runner_enter_brief(struct runner *r)
{
	const void *unparked = NULL;

	return runner_enter_brief_from(r, &unparked);
}

/* Thread t leaves its section of r's guard, parked as cur, the entry at
 * @p d of its list (sections nest: ours is the innermost, t->depth is
 * d + 1). */
static inline __attribute__((always_inline)) void runner_exit_parked_in(struct runner *r, const void *cur,
									struct runner_thread *t, uint32_t d,
									bool count)
{
	if (count)
		runner_depth_set(t, d);
	(void)r;
	(void)cur; /* the word stays W, or W | REVOKING: a revoker's next look takes it (see top) */
	/* release: a revoker that sees us gone sees this section. */
	atomic_store_explicit(&t->in[d], NULL, memory_order_release);
	EXPLORE_POINT(GUARD);
}

static inline void runner_exit_parked_at(struct runner *r, const void *cur, struct runner_thread *t, uint32_t d)
{
	runner_exit_parked_in(r, cur, t, d, true);
}

/* Thread t leaves its section of r's guard, parked as cur. */
static inline void runner_exit_parked(struct runner *r, const void *cur, struct runner_thread *t)
{
	runner_exit_parked_at(r, cur, t, t->depth - 1u);
}

/* Leave (after RUNNER_ENTERED). A parked guard stays parked unless a
 * revoker asked for it. */
static inline void runner_exit(struct runner *r)
{
	const void *me = runner_self();
	const void *cur = atomic_load_explicit(&r->owner, memory_order_relaxed);

	runner_out(r);
	EXPLORE_POINT(GUARD);
	if (!runner_parked_by(runner_unmarked(cur), me)) {
		/* release: publish this turn's writes to the next runner. */
		atomic_store_explicit(&r->owner, NULL, memory_order_release);
		return;
	}
	runner_exit_parked(r, cur, (struct runner_thread *)me);
}

/* runner_exit after runner_unpark (cur) by t, when the caller knows t. */
static inline void runner_exit_unparked(struct runner *r, const void *cur, struct runner_thread *t)
{
	runner_out(r);
	EXPLORE_POINT(GUARD);
	runner_exit_parked(r, cur, t);
}

/* ... after runner_unpark_at(r, cur, t, @p d, ..). */
static inline void runner_exit_unparked_at(struct runner *r, const void *cur, struct runner_thread *t, uint32_t d)
{
	runner_out(r);
	EXPLORE_POINT(GUARD);
	runner_exit_parked_at(r, cur, t, d);
}

/* ... after runner_unpark_first(r, cur, t, ..), the entry not counted. */
static inline void runner_exit_unparked_first(struct runner *r, const void *cur, struct runner_thread *t)
{
	runner_out(r);
	EXPLORE_POINT(GUARD);
	runner_exit_parked_in(r, cur, t, 0, false);
}

/* runner_exit after an entry that reported @p unparked (the parked word
 * W, or NULL: then it is runner_exit): W names the caller
 * (runner_enter_from), so neither the caller's identity nor the owner
 * word is read again. Only W's record is read: any parked word of the
 * caller's will do (runner_owner_enter's *cur under WORD_ASM). */
static inline void runner_exit_from(struct runner *r, const void *unparked)
{
	if (unparked == NULL) {
		runner_exit(r);
		return;
	}
	runner_exit_unparked(r, unparked, runner_parked_thread(unparked));
}

/* Leave, keeping the guard parked for the calling thread (see top). */
static inline void runner_exit_park(struct runner *r)
{
	const void *me = runner_self();
	const void *cur = atomic_load_explicit(&r->owner, memory_order_relaxed);

	EXPLORE_POINT(GUARD);
	if (runner_me == NULL || cur != me) {
		runner_exit(r); /* parked already, or held briefly */
		return;
	}
	runner_out(r);
	r->park_gen++;
	const void *w = (const void *)((uintptr_t)r->park_gen << RUNNER_GEN_SHIFT |
				       (uintptr_t)runner_tagged(me, RUNNER_PARKED_TAG));

	/* acq_rel: release, this turn's writes, for a revoker's CAS; acquire,
	 * a revoker's count before its mark or a quiescer's CAS of the held
	 * word, if we read that (actors/runner.c, "The revoking mark") */
	(void)atomic_exchange_explicit(&r->owner, w, memory_order_acq_rel);
	/* acquire: a withdrawal read is after that revoker's last CAS */
	if (atomic_load_explicit(&r->revoke, memory_order_acquire) != 0) {
		/* (the explorer's point only here: a parking with no revoker
		 * in flight keeps its schedules' points where they were) */
		EXPLORE_POINT(GUARD);
		/* a revoker in flight: give the guard up (release: as runner_exit's) */
		(void)atomic_compare_exchange_strong_explicit(&r->owner, &w, NULL, memory_order_release,
							      memory_order_relaxed);
	}
}

/* Give up a guard parked for the caller, if it is and the caller is not
 * inside it (before the caller stops running the actor for a while). */
static inline void runner_unpark_for_others(struct runner *r)
{
	const void *me = runner_self();
	const void *cur = atomic_load_explicit(&r->owner, memory_order_relaxed);

	if (!runner_parked_by(runner_unmarked(cur), me) || runner_in_parked(r, (const struct runner_thread *)me))
		return;
	EXPLORE_POINT(GUARD);
	/* release: the next runner sees what we wrote. */
	(void)atomic_compare_exchange_strong_explicit(&r->owner, &cur, NULL, memory_order_release,
						      memory_order_relaxed);
}

/* True if the caller holds the guard (a parked one only while inside). */
static inline bool runner_is_self(struct runner *r)
{
	const void *me = runner_self();
	const void *cur = atomic_load_explicit(&r->owner, memory_order_relaxed);

	if (cur == me)
		return true;
	return runner_parked_by(runner_unmarked(cur), me) && runner_in_parked(r, (const struct runner_thread *)me);
}

#endif /* DOCA_RUNNER_H */
