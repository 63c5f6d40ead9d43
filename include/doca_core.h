/**
 * @file doca_core.h
 * @brief Umbrella header of doca-core: the DOCA Core programming model
 *        (Context, Device, Memory, Buffer, Task, Event, Progress Engine) as a
 *        multithreaded actor-model offload engine.
 *
 * "Context owns the boundary, Device the capability, Memory the space,
 * Buffer the data, PE the progress, Event the result."
 *
 * Lifecycle: create ctx → open dev, bind → create mem → create buf →
 * connect PE, start ctx → submit → progress + get event + free event →
 * stop ctx → destroy buf → destroy mem → close dev → destroy ctx.
 * Every misuse of that order is an error code, never undefined behaviour.
 * That includes handles already destroyed: handles carry a generation, so
 * a stale one is refused (DOCA_ERROR_INVALID_VALUE, logged, counted by
 * doca_stale_handle_count) even once a new object lives at its address.
 * The generation has 22 bits. A context's, memory's, buffer's, device's or
 * PE's memory is retired at its 2^22nd (4 194 304th) destroy, when its
 * generation would start again (one object's memory kept per 2^22
 * destroys), so those handles are refused for ever. The limit is events':
 * an event handle kept while its slot was reused exactly a multiple of
 * 2^22 times looks current again and reaches the event then there. Event
 * slots are reused fastest (one use per task; the pool hands the last
 * freed slot out first), so a double free of an event long after the
 * first one is the likely case: it is caught unless the slot's use count
 * since then is such a multiple.
 *
 * fork(): a child may call exit() and may create and use objects of its
 * own. Every call that takes a handle inherited from the parent returns
 * DOCA_ERROR_BAD_STATE in the child (doca_pe_progress returns 0,
 * doca_pe_get_event NULL, doca_event_free refuses, the event getters
 * return their neutral values: doca_event_get_error DOCA_ERROR_INVALID_VALUE)
 * and changes nothing;
 * a call that also names another handle that is NULL or invalid may
 * answer DOCA_ERROR_INVALID_VALUE for that one instead.
 */
#ifndef DOCA_CORE_H
#define DOCA_CORE_H

#include "doca_error.h"
#include "doca_types.h"
#include "doca_dev.h"
#include "doca_ctx.h"
#include "doca_mem.h"
#include "doca_buf.h"
#include "doca_pe.h"
#include "doca_task.h"
#include "doca_event.h"
#include "doca_log.h"

#endif /* DOCA_CORE_H */
