/*
 * engine/handle.h — handles that carry a generation.
 *
 * The pointer the application holds is the object's address with the
 * object's generation in the bits a user-space address never uses on the
 * 64-bit targets we build for: the top 16 (user addresses stay below 2^47
 * unless a program maps above it on purpose, and we check every object we
 * hand out) and the low 6 (objects are 64-byte aligned). A destroy or free
 * bumps the object's generation, and its memory is never returned to the
 * allocator while the process runs (engine/cells.c), so a stale handle —
 * freed twice, or kept after its slot was reused — is always recognised and
 * refused, never applied to the new occupant. The generation has 22 bits:
 * an object's cell (context, memory, buffer, device, PE) is retired at its
 * 2^22nd destroy, when the generation goes round to 0, so none of its
 * handles ever looks current again; an event slot is not (its array is
 * its owner's), so an event handle kept over exactly a multiple of 2^22
 * reuses of its slot looks current again, the one case not detected.
 *
 * An object's head keeps its whole current handle, address | tag (the
 * field `handle`, struct handle_head), not the tag alone, so a check is
 * the handle compared with that word (one `cmp` with the word in memory),
 * and handle_of is its load. The word is written whenever the generation
 * changes: a new cell's first (its address, generation 0: cell_get,
 * before the cell is handed out) and every kill (handle_kill: the next
 * generation's handle); a reused cell keeps it. What a concurrent reader
 * can see is what it saw of the tag alone: the word is one aligned 64-bit
 * atomic, stored and loaded whole (relaxed, as the tag was, at the same
 * places), and its address bits are the cell's for as long as the process
 * runs (a cell never moves or goes back to the allocator), so every value
 * it ever holds is the cell's address | one generation's tag: no torn
 * address | tag, and h equals it exactly when h's tag is that generation's
 * (h's address bits are the cell's, as handle_addr(h) is the cell).
 *
 * A buffer's word (engine/engine.h buf_of_folded). A live buffer's head
 * holds its handle folded, h ^ buf_fold_made(its epoch), not h: the fold
 * sets bit 6 and the epoch in bits 7 to 38, the address's bits only, so
 * the tag's bits are h's. A buffer's check is one compare, h ^ the
 * current epoch's fold (g_buf_fold) with the word, and it passes exactly
 * when the old three did (the magic, the epoch, the word):
 *  - h's address bits are the cell's, so a word whose address bits are
 *    the cell's ^ the current fold and whose tag is h's is needed; every
 *    word of another kind's cell, and a buffer cell's word while it is
 *    not a live buffer's (a cell's first, every kill's: handle_kill
 *    stores the plain next handle), has the cell's address bits, unlike
 *    it (the fold is never 0 there): refused (wrong kind, destroyed);
 *  - a live buffer's word has the cell's address ^ its epoch's fold,
 *    equal to the current fold's exactly when the epochs are equal
 *    (fold_made is one to one): an inherited buffer is refused;
 *  - the tags equal exactly when the generations are (handle_tag is one
 *    to one on 22 bits): a stale handle, or another generation's forged
 *    one, is refused; the wrap is the tag's, as before (handle_kill and
 *    cell_retire read the tag's bits, which the fold leaves).
 * The create stores the folded word after the magic and the epoch, and
 * a kill the plain next one, each one whole atomic store, as above; what
 * a concurrent check can see is the old or the new word, as it saw the
 * old or the new magic and tag. The refusal's exact error (handle_refusal)
 * compares with the folded word for a buffer (of the object's epoch) and
 * looks at the magic and the epoch as before.
 *
 * Nothing dereferences a handle: every entry point turns it back into an
 * address with handle_addr first.
 */
#ifndef DOCA_ENGINE_HANDLE_H
#define DOCA_ENGINE_HANDLE_H

#include <stdbool.h>
#include <stdint.h>

_Static_assert(sizeof(uintptr_t) == 8, "handles pack a generation into a 64-bit address");

#define HANDLE_GEN_BITS 22u
#define HANDLE_GEN_MASK ((1u << HANDLE_GEN_BITS) - 1u)
#define HANDLE_LOW_BITS 6u  /* objects are 64-byte aligned */
#define HANDLE_ADDR_BITS 48u
#define HANDLE_ADDR_MASK ((((uintptr_t)1 << HANDLE_ADDR_BITS) - 1u) & ~(uintptr_t)63u)

/* True if obj can carry a generation: aligned and below the tag bits. */
static inline bool handle_fits(const void *obj)
{
	return ((uintptr_t)obj & ~HANDLE_ADDR_MASK) == 0;
}

/* A generation as a handle carries it: its tag, the bits outside the
 * address (0 for generation 0). */
static inline uintptr_t handle_tag(uint32_t gen)
{
	uintptr_t g = gen & HANDLE_GEN_MASK;

	return (g & 63u) | ((g >> HANDLE_LOW_BITS) << HANDLE_ADDR_BITS);
}

static inline uint32_t handle_tag_gen(uintptr_t tag)
{
	return (uint32_t)((tag & 63u) | ((tag >> HANDLE_ADDR_BITS) << HANDLE_LOW_BITS));
}

static inline void *handle_pack(const void *obj, uint32_t gen)
{
	return (void *)((uintptr_t)obj | handle_tag(gen));
}

static inline void *handle_addr(const void *h)
{
	return (void *)((uintptr_t)h & HANDLE_ADDR_MASK);
}

/* A handle's tag (handle_tag) and generation. */
static inline uintptr_t handle_tag_of(const void *h)
{
	return (uintptr_t)h & ~HANDLE_ADDR_MASK;
}

static inline uint32_t handle_gen(const void *h)
{
	return handle_tag_gen(handle_tag_of(h));
}

/* The object behind a handle, typed as the handle (for engine tests that
 * look inside objects). */
#define handle_deref(h) ((__typeof__(h))handle_addr(h))

/* One more refusal of a stale handle (counted for doca_stale_handle_count). */
void handle_count_stale(void);

#endif /* DOCA_ENGINE_HANDLE_H */
