/*
 * engine/live.h — how many objects of each kind are alive: counted where a
 * create succeeds and where a destroy succeeds (one line each), reported at
 * exit, and the reclaimer thread ends after the last one goes (engine/rcu.c).
 */
#ifndef DOCA_ENGINE_LIVE_H
#define DOCA_ENGINE_LIVE_H

#include <stdbool.h>
#include <stddef.h>

enum live_kind { LIVE_DEV, LIVE_CTX, LIVE_MEM, LIVE_BUF, LIVE_PE, LIVE_KINDS };

/* A create of `kind` succeeded (`bytes`: a memory's length, else 0). */
void live_created(enum live_kind kind, size_t bytes);

/* A destroy of `kind` succeeded, after the object was handed to the
 * reclaimer (so the last object of all lets the reclaimer thread end once
 * it has run every deferred free, engine/rcu.c). */
void live_destroyed(enum live_kind kind, size_t bytes);

/* fork() child: the inherited objects are the parent's (and refused here). */
/* True while no object of the library lives (engine/rcu.c). Thread
 * safety: any thread. */
bool live_none(void);
void live_after_fork_child(void);

#endif /* DOCA_ENGINE_LIVE_H */
