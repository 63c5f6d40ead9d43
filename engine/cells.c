/*
 * engine/cells.c — memory a stale handle may still point into.
 *
 * Objects named by handles (engine/handle.h) live in cells: 64-byte aligned
 * blocks in power-of-two size classes, per kind of object, that go back to
 * a free list of their kind and class when their object is gone, never to
 * the allocator, so reading a stale handle's magic and generation is always
 * a read of live memory of the same kind. A free cell keeps its handle head
 * (the list is an array beside the cells, not links inside them), so the
 * next object's generation continues from the last one's, until it would
 * go round: an object cell is then retired (cell_retire); the rest is
 * zeroed, so a free cell keeps no other object reachable (a leak checker
 * must see an application's forgotten memory as lost, not as reachable
 * from a destroyed buffer's cell). An events array is scrubbed by its
 * owner (engine/ctx_run.c), its slots keeping their generations. The
 * memory held is the peak number of live objects of each size; it stays
 * reachable from the lists, so leak checkers do not count it.
 *
 * Why cell_put's zeroing races with no reader (C11: no plain write meets
 * another thread's access of the same bytes):
 *  - it skips the handle head, the only words a stale handle's check reads
 *    (handle_obj, handle_refusal: relaxed atomics, also outside read-side
 *    sections), and the head is written only by atomic stores;
 *  - it skips the words a kind keeps (cell_put_keep: a PE's runner guard,
 *    whose parked owner's getter loads them outside a read-side section,
 *    engine/pe.c pe_get; a context's state and PE and a buffer's context
 *    and role words, src_ctx and dst_ctx, which the owner's submit loads
 *    so, engine/task.c), which the caller
 *    reset with atomic stores before the put; the retired list's link goes
 *    after them;
 *  - the rest of a cell is read only through a handle checked inside a
 *    read-side section (HANDLE_READ, pe_lookup_lock, ...), under the lock
 *    that the destroy takes to kill the handle, or under a guard the
 *    destroy must take first (a parked PE owner's getter: engine/pe.c
 *    says why it never holds it in a cell being put back), or in a brief
 *    section of that guard the destroy waits out (a buffer the owner's
 *    submit checks: engine/buf.c, buf_quiesce_owner), and every
 *    object's cell is put back from its doca_call_rcu callback, after a
 *    grace period and after the kill, so no such reader can still be
 *    there; the other puts are of cells a failed create never published.
 * A reader that breaks this is a use after free whether or not the cell
 * was zeroed. A PE's put resets the explorer's count of its runner's
 * holders with the guard's other words, after checking that it is 0
 * (runner_reset, runner_explore_retire).
 *
 * Slow path only (creating and destroying objects, starting and retiring
 * runs): one mutex.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cells.h"
#include "engine/engine.h"

#define CELL_MIN_SHIFT 6u
#define CELL_CLASSES 40u

struct cell_class {
	void **free;   /* cells ready for reuse */
	size_t count;
	size_t cap;
};

static pthread_mutex_t cells_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cell_class classes[CELL_KINDS][CELL_CLASSES]; /* cells_lock */
/* Cells never reused: object cells whose generation went round
 * (cell_retire) and cells a full free list could not take (cell_put),
 * linked through the first bytes a put zeroes, after the handle head and
 * the words the kind keeps (zeroed in an object cell; in an events array,
 * slot 0's fields after its head, which no handle reads once the array is
 * put back); cells_lock. */
#define CELL_KEEP_MAX (((size_t)1 << CELL_MIN_SHIFT) - sizeof(void *))
static void *retired;

/* Keep cell @p p out of use, and reachable, for as long as the process
 * runs, linked at byte @p link (cells_lock held). */
static void retired_push_locked(void *p, size_t link)
{
	memcpy((char *)p + link, &retired, sizeof(retired));
	retired = p;
}

static unsigned cell_class_of(size_t size)
{
	unsigned c = 0;

	while (((size_t)1 << (c + CELL_MIN_SHIFT)) < size)
		c++;
	return c;
}

void *cell_get(enum cell_kind kind, size_t size)
{
	unsigned c = cell_class_of(size);
	void *p = NULL;

	if (c >= CELL_CLASSES)
		return NULL;
	pthread_mutex_lock(&cells_lock);
	if (classes[kind][c].count != 0)
		p = classes[kind][c].free[--classes[kind][c].count];
	pthread_mutex_unlock(&cells_lock);
	if (p != NULL)
		return p;
	p = doca_zalloc((size_t)1 << (c + CELL_MIN_SHIFT));
	if (p != NULL && !handle_fits(p)) {
		doca_log(DOCA_LOG_ERROR, "an object at %p lies above the range handles can tag", p);
		abort();
	}
	/* a new object cell's head holds its generation 0's handle, the
	 * cell's address (engine/handle.h), before any thread can know the
	 * cell; an events array's slots keep their own (ev->gs) */
	if (p != NULL && kind != CELL_EVENTS)
		atomic_store_explicit(&((struct handle_head *)p)->handle, (uintptr_t)p, memory_order_relaxed);
	return p;
}

/* A destroyed object's cell whose generation went round to 0 (its 2^22nd
 * destroy): a handle of its first object would name the next one, so it
 * is kept out of use, its head dead, for as long as the process runs (one
 * cell per 2^22 destroys of objects in it). Only an object's kill wraps a
 * generation: a cell a failed create gives back is dead at 0 only if it
 * was retired already, and a retired cell is never handed out. */
static bool cell_retire(enum cell_kind kind, void *p, size_t link)
{
	const struct handle_head *o = p;

	if (kind == CELL_EVENTS || head_load(&o->magic) != MAGIC_DEAD ||
	    handle_tag_of((const void *)atomic_load_explicit(&o->handle, memory_order_relaxed)) != 0)
		return false;
	pthread_mutex_lock(&cells_lock);
	retired_push_locked(p, link);
	pthread_mutex_unlock(&cells_lock);
	return true;
}

void cell_put_keep(enum cell_kind kind, void *p, size_t size, size_t keep)
{
	struct cell_class *k = &classes[kind][cell_class_of(size)];

	if (p == NULL)
		return;
	if (keep < sizeof(struct handle_head) || keep > CELL_KEEP_MAX || keep % sizeof(void *) != 0 ||
	    keep > size) {
		doca_log(DOCA_LOG_ERROR, "cell_put_keep: %zu bytes kept of a %zu-byte cell", keep, size);
		abort();
	}
	if (kind != CELL_EVENTS)
		memset((char *)p + keep, 0, size - keep);
	if (cell_retire(kind, p, keep))
		return;
	pthread_mutex_lock(&cells_lock);
	if (k->count == k->cap) {
		size_t cap = k->cap != 0 ? k->cap * 2 : 16;
		void **grown = realloc(k->free, cap * sizeof(*grown));

		if (grown == NULL) {
			/* keep the cell out of use rather than free it (a stale
			 * handle may still read it), on the retired list, where
			 * it stays reachable: dropped, a leak checker saw it lost */
			retired_push_locked(p, keep);
			pthread_mutex_unlock(&cells_lock);
			return;
		}
		k->free = grown;
		k->cap = cap;
	}
	k->free[k->count++] = p;
	pthread_mutex_unlock(&cells_lock);
}

void cell_put(enum cell_kind kind, void *p, size_t size)
{
	cell_put_keep(kind, p, size, sizeof(struct handle_head));
}

/* fork(): the free lists are copied whole, never in the middle of a put. */
void cells_fork_prepare(void)
{
	pthread_mutex_lock(&cells_lock);
}

void cells_fork_parent(void)
{
	pthread_mutex_unlock(&cells_lock);
}

void cells_after_fork_child(void)
{
	pthread_mutex_unlock(&cells_lock); /* prepare's, on this thread (see reader_fork_child) */
}
