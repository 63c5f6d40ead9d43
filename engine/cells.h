/*
 * engine/cells.h — type-stable memory for objects named by handles
 * (engine/cells.c).
 */
#ifndef DOCA_ENGINE_CELLS_H
#define DOCA_ENGINE_CELLS_H

#include <stddef.h>

/* Cells of one kind are reused only by that kind, so a stale handle finds
 * an object of its own type (or a dead one) behind it. */
enum cell_kind { CELL_CTX, CELL_MEM, CELL_BUF, CELL_EVENTS, CELL_PE, CELL_DEV, CELL_KINDS };

/* A 64-byte aligned cell of at least size bytes: a new one, all zero, or a
 * reused one, zero but for its handle head (an object's generation; an
 * events array as its owner scrubbed it) and the words its put kept
 * (cell_put_keep). NULL when out of memory. */
void *cell_get(enum cell_kind kind, size_t size);
/* Give a cell of that size back for reuse (never to the allocator). */
void cell_put(enum cell_kind kind, void *p, size_t size);
/* cell_put, zeroing only from byte @p keep on (a multiple of 8, from the
 * handle head's end to 56): the bytes before it are words another thread
 * may load outside a read-side section, which the caller has reset with
 * atomic stores (engine/cells.c). The next cell_get hands them out as
 * they were left. */
void cell_put_keep(enum cell_kind kind, void *p, size_t size, size_t keep);
/* fork(): the lock is held across the copy (prepare, parent), and made
 * anew in the child. */
void cells_fork_prepare(void);
void cells_fork_parent(void);
void cells_after_fork_child(void);

#endif /* DOCA_ENGINE_CELLS_H */
