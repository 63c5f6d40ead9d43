/*
 * ours_rig.c — build and tear down the doca objects of one contender, in the
 * order the seed prescribes (and its reverse).
 */
#include "ours_rig.h"

#include <stdlib.h>
#include <string.h>

void ours_check(doca_error_t err, const char *what)
{
	if (err != DOCA_SUCCESS)
		bench_fail("%s: %s (%s)", what, doca_error_get_name(err), doca_error_get_descr(err));
}

void ours_rig_descs(const struct ours_rig *r, struct doca_task_desc *descs, unsigned n, size_t *slot,
		    uint64_t *tag)
{
	/* the slot and the tag in locals, stored once: descs[i].user_data is
	 * a uint64_t, as *tag and *slot are, so gcc loaded both back after
	 * each descriptor's stores (a store-to-load forward in series with the
	 * next descriptor, ~18 instructions a descriptor) */
	size_t s = *slot;
	uint64_t t = *tag;

	for (unsigned i = 0; i < n; i++) {
		descs[i] = (struct doca_task_desc){
			.type = DOCA_TASK_COPY,
			.src = r->src[s],
			.dst = r->dst[s],
			.user_data = { .u64 = t++ },
		};
		s = s + 1 == r->slots ? 0 : s + 1;
	}
	*slot = s;
	*tag = t;
}

static void make_buffers(struct ours_rig *r, uint64_t seed)
{
	void *base;

	r->src = calloc(r->slots, sizeof(*r->src));
	r->dst = calloc(r->slots, sizeof(*r->dst));
	if (!r->src || !r->dst)
		bench_fail("out of memory");
	ours_check(doca_mem_create(r->ctx, 2 * r->slots * r->size,
				   DOCA_ACCESS_FLAG_READ | DOCA_ACCESS_FLAG_WRITE, &r->mem),
		   "doca_mem_create");
	ours_check(doca_mem_get_addr(r->mem, &base), "doca_mem_get_addr");
	bench_fill(base, 2 * r->slots * r->size, seed);
	for (size_t i = 0; i < r->slots; i++) {
		ours_check(doca_buf_create(r->mem, i * r->size, r->size, &r->src[i]), "doca_buf_create");
		ours_check(doca_buf_create(r->mem, (r->slots + i) * r->size, r->size, &r->dst[i]),
			   "doca_buf_create");
	}
}

const char *ours_rig_open(struct ours_rig *r, size_t size, const struct ours_rig_conf *conf)
{
	memset(r, 0, sizeof(*r));
	r->size = size;
	r->slots = conf->slots;
	if (doca_dev_open(conf->dev_open, &r->dev) != DOCA_SUCCESS)
		return "doca_dev_open failed";
	ours_check(doca_ctx_create(&r->ctx), "doca_ctx_create");
	ours_check(doca_ctx_set_dev(r->ctx, r->dev), "doca_ctx_set_dev");
	if (conf->max_tasks)
		ours_check(doca_ctx_set_max_tasks(r->ctx, conf->max_tasks), "doca_ctx_set_max_tasks");
	if (conf->cb) {
		ours_check(doca_ctx_set_user_data(r->ctx, (union doca_data){ .ptr = conf->cb_data }),
			   "doca_ctx_set_user_data");
		ours_check(doca_ctx_set_event_cb(r->ctx, conf->cb), "doca_ctx_set_event_cb");
	}
	make_buffers(r, size ^ 0x5eed);
	ours_check(doca_pe_create(&r->pe), "doca_pe_create");
	ours_check(doca_pe_connect_ctx(r->pe, r->ctx), "doca_pe_connect_ctx");
	ours_check(doca_ctx_start(r->ctx), "doca_ctx_start");
	return NULL;
}

/* Stop (everything was reaped, so it completes at once), check that every
 * slot was copied, then undo the rest
 * in reverse order: the device closes before its context is destroyed. */
void ours_rig_close(struct ours_rig *r)
{
	ours_check(doca_ctx_stop(r->ctx), "doca_ctx_stop");
	for (size_t i = 0; i < r->slots; i++) {
		void *src, *dst;

		ours_check(doca_buf_get_data(r->src[i], &src), "doca_buf_get_data");
		ours_check(doca_buf_get_data(r->dst[i], &dst), "doca_buf_get_data");
		if (memcmp(src, dst, r->size))
			bench_fail("doca: slot %zu's destination differs from its source", i);
		ours_check(doca_buf_destroy(r->src[i]), "doca_buf_destroy");
		ours_check(doca_buf_destroy(r->dst[i]), "doca_buf_destroy");
	}
	ours_check(doca_mem_destroy(r->mem), "doca_mem_destroy");
	ours_check(doca_dev_close(r->dev), "doca_dev_close");
	ours_check(doca_ctx_destroy(r->ctx), "doca_ctx_destroy");
	ours_check(doca_pe_destroy(r->pe), "doca_pe_destroy");
	free(r->src);
	free(r->dst);
	memset(r, 0, sizeof(*r));
}
