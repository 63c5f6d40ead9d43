/*
 * ours_rig.h — the doca objects every "ours" contender needs: a device, a
 * context connected to a PE, one memory carved into source and destination
 * slots of one copy size.
 */
#ifndef OURS_RIG_H
#define OURS_RIG_H

#include "bench.h"

#include <doca_core.h>

struct ours_rig {
	struct doca_dev *dev;
	struct doca_ctx *ctx;
	struct doca_pe *pe;
	struct doca_mem *mem;
	struct doca_buf **src;
	struct doca_buf **dst;
	size_t slots;
	size_t size;
};

/** Options of ours_rig_open beyond the device and the copy size. */
struct ours_rig_conf {
	const char *dev_open;   /**< "sw0", "sw0:engines=1,cpus=1" (same string: same device) */
	size_t slots;           /**< source/destination pairs */
	uint32_t max_tasks;     /**< 0: the default */
	doca_event_cb_t cb;     /**< event callback, or NULL for doca_pe_get_event */
	void *cb_data;
};

/** @return NULL, or why the rig cannot be built (nothing is left open). */
const char *ours_rig_open(struct ours_rig *r, size_t size, const struct ours_rig_conf *conf);
void ours_rig_close(struct ours_rig *r);
/** Exit with a message unless @p err is DOCA_SUCCESS. */
void ours_check(doca_error_t err, const char *what);

/** Submit the copy of slot @p i, tagged with @p tag. */
static inline doca_error_t ours_rig_submit(const struct ours_rig *r, size_t i, uint64_t tag)
{
	struct doca_task_desc desc = {
		.type = DOCA_TASK_COPY,
		.src = r->src[i],
		.dst = r->dst[i],
		.user_data = { .u64 = tag },
	};

	return doca_task_submit(r->ctx, &desc);
}

/** Fill @p n copy descriptors for the slots from *@p slot on (wrapping
 *  around), tagged *@p tag, *@p tag + 1, ...; advance both. */
void ours_rig_descs(const struct ours_rig *r, struct doca_task_desc *descs, unsigned n, size_t *slot,
		    uint64_t *tag);

/** Check and free one event; @return 1 (one task completed). */
static inline unsigned ours_reap(struct doca_event *ev)
{
	if (doca_event_get_status(ev) != DOCA_EVENT_STATUS_SUCCESS)
		bench_fail("a copy failed: %s", doca_error_get_name(doca_event_get_error(ev)));
	doca_event_free(ev);
	return 1;
}

/** One PE turn, then reap every ready event; @return how many. */
static inline uint64_t ours_progress_and_reap(struct doca_pe *pe)
{
	struct doca_event *ev;
	uint64_t done = 0;

	doca_pe_progress(pe);
	while ((ev = doca_pe_get_event(pe)))
		done += ours_reap(ev);
	return done;
}

/** Most events ours_progress_and_reap_bulk takes with one call. */
#define OURS_REAP_BURST 64u

/** One PE turn, then reap every ready event with the burst calls
 *  (doca_pe_get_events_ok, doca_event_free_bulk), as a DPDK application
 *  reaps with rte_dma_completed: each call hands out the events that
 *  succeeded and one error flag, no status read per event; a failed one
 *  stays first in line, and is taken and reported (ours_reap) after the
 *  events before it are freed. @return how many. */
static inline uint64_t ours_progress_and_reap_bulk(struct doca_pe *pe)
{
	struct doca_event *evs[OURS_REAP_BURST];
	uint64_t done = 0;
	uint32_t n;
	bool failed;

	doca_pe_progress(pe);
	while ((n = doca_pe_get_events_ok(pe, evs, OURS_REAP_BURST, &failed)) != 0) {
		doca_event_free_bulk(evs, n);
		done += n;
	}
	if (failed)
		(void)ours_reap(doca_pe_get_event(pe)); /* exits with the event's error */
	return done;
}

#endif /* OURS_RIG_H */
