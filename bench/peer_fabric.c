/*
 * peer_fabric.c — the raw libfabric RMA loop that `doca_bench remote`
 * judges doca's fab0 against: the same provider (tcp;ofi_rxm, FI_EP_RDM),
 * the same hints, domain threading, CQ (FI_CQ_FORMAT_CONTEXT, FI_WAIT_FD)
 * and operation flags as hw/fabric (fi_writemsg with FI_COMPLETION |
 * FI_DELIVERY_COMPLETE), one endpoint, no engine: submit, fi_cq_read.
 * Also the raw target the target process serves (fabric_target_*).
 */
#include "bench.h"
#include "peer_fabric.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>

#define FAB_BATCH 64

struct fabric_side {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_mr *mr;
	void *buf;
	void *desc;
};

void fabric_side_close(struct fabric_side *s)
{
	if (!s)
		return;
	if (s->mr)
		fi_close(&s->mr->fid);
	if (s->ep)
		fi_close(&s->ep->fid);
	if (s->cq)
		fi_close(&s->cq->fid);
	if (s->av)
		fi_close(&s->av->fid);
	if (s->domain)
		fi_close(&s->domain->fid);
	if (s->fabric)
		fi_close(&s->fabric->fid);
	if (s->info)
		fi_freeinfo(s->info);
	free(s->buf);
	free(s);
}

/* An endpoint on 127.0.0.1 (ephemeral port) and an MR over len bytes with
 * `access`; NULL or why not. */
static const char *side_open(struct fabric_side **out, size_t len, uint64_t access)
{
	struct fi_info *hints = fi_allocinfo();
	struct fabric_side *s = calloc(1, sizeof(*s));
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .size = 1024, .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_FD };
	const char *why = NULL;

	if (!hints || !s)
		bench_fail("out of memory");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
	hints->fabric_attr->prov_name = strdup(REMOTE_PROV);
	if (fi_getinfo(FI_VERSION(1, 9), "127.0.0.1", "0", FI_SOURCE, hints, &s->info))
		why = "fi_getinfo: no " REMOTE_PROV " with RDM RMA here";
	else if (fi_fabric(s->info->fabric_attr, &s->fabric, NULL) ||
		 fi_domain(s->fabric, s->info, &s->domain, NULL) ||
		 fi_av_open(s->domain, &av_attr, &s->av, NULL) ||
		 fi_cq_open(s->domain, &cq_attr, &s->cq, NULL) ||
		 fi_endpoint(s->domain, s->info, &s->ep, NULL) || fi_ep_bind(s->ep, &s->av->fid, 0) ||
		 fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV) || fi_enable(s->ep))
		why = "cannot open a " REMOTE_PROV " endpoint";
	else if (!(s->buf = bench_alloc_aligned(len)))
		bench_fail("out of memory");
	else if (fi_mr_reg(s->domain, s->buf, len, access, 0, 0x5a5a0000u + access, 0, &s->mr, NULL))
		why = "fi_mr_reg failed";
	fi_freeinfo(hints);
	if (why) {
		fabric_side_close(s);
		return why;
	}
	memset(s->buf, 0, len);
	s->desc = fi_mr_desc(s->mr);
	*out = s;
	return NULL;
}

const char *fabric_target_open(struct fabric_side **out, size_t len, struct fabric_raw_addr *a)
{
	const char *why = side_open(out, len, FI_REMOTE_READ | FI_REMOTE_WRITE);

	if (why)
		return why;
	a->addr_len = sizeof(a->addr);
	if (fi_getname(&(*out)->ep->fid, a->addr, &a->addr_len))
		return "fi_getname failed";
	a->key = fi_mr_key((*out)->mr);
	a->base = ((*out)->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)(*out)->buf : 0;
	return NULL;
}

void fabric_target_progress(struct fabric_side *s)
{
	struct fi_cq_entry e[FAB_BATCH];
	struct fi_cq_err_entry err;

	if (fi_cq_read(s->cq, e, FAB_BATCH) == -FI_EAVAIL)
		fi_cq_readerr(s->cq, &err, 0);
}

/* ---- the initiator contender ---- */

struct peer_fabric {
	const struct remote_target *target;
	struct fabric_side *side;
	fi_addr_t peer;
	size_t size, slots, next;
	uint64_t stash; /* completions read while a submit waited for room */
	struct fi_context2 ctx[FAB_BATCH * 16];
	double *lat;
};

static uint64_t cq_take(struct peer_fabric *p)
{
	struct fi_cq_entry e[FAB_BATCH];
	ssize_t n = fi_cq_read(p->side->cq, e, FAB_BATCH);

	if (n > 0)
		return (uint64_t)n;
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err = { 0 };

		fi_cq_readerr(p->side->cq, &err, 0);
		bench_fail("raw libfabric write failed: %s", fi_strerror(err.err));
	}
	return 0;
}

static void fab_submit(void *q, unsigned n)
{
	struct peer_fabric *p = q;

	for (unsigned i = 0; i < n; i++) {
		size_t slot = p->next++ % p->slots;
		struct iovec iov = { .iov_base = (char *)p->side->buf + slot * p->size, .iov_len = p->size };
		struct fi_rma_iov rma = { .addr = p->target->raw.base + slot * p->size, .len = p->size,
					  .key = p->target->raw.key };
		struct fi_msg_rma msg = { .msg_iov = &iov, .desc = &p->side->desc, .iov_count = 1,
					  .addr = p->peer, .rma_iov = &rma, .rma_iov_count = 1,
					  .context = &p->ctx[p->next % (FAB_BATCH * 16)] };
		ssize_t rc;

		while ((rc = fi_writemsg(p->side->ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE)) == -FI_EAGAIN)
			p->stash += cq_take(p);
		if (rc)
			bench_fail("fi_writemsg: %s", fi_strerror((int)-rc));
	}
}

static uint64_t fab_reap(void *q, unsigned max)
{
	struct peer_fabric *p = q;
	uint64_t n = p->stash + cq_take(p);

	(void)max;
	p->stash = 0;
	return n;
}

static const char *fab_setup(struct bench_contender *c, const struct bench_case *bc)
{
	struct peer_fabric *p = c->priv;
	const struct bench_queue q = { fab_submit, fab_reap, p };
	const char *why;

	p->size = bc->size;
	p->slots = bench_slots(bc->size, bc->depth);
	p->next = 0;
	p->stash = 0;
	if ((why = side_open(&p->side, p->slots * p->size, FI_READ | FI_WRITE)))
		return why;
	bench_fill(p->side->buf, p->slots * p->size, bc->seed);
	if (fi_av_insert(p->side->av, p->target->raw.addr, 1, &p->peer, 0, NULL) != 1)
		return "fi_av_insert of the target failed";
	bench_pump(&q, 1, 1, 1, 0, 1); /* connect, untimed */
	return NULL;
}

static void fab_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
		    struct bench_measure *m)
{
	struct peer_fabric *p = c->priv;
	const struct bench_queue q = { fab_submit, fab_reap, p };
	uint64_t t0 = bench_now_ns(), deadline = t0 + (uint64_t)(seconds * 1e9);

	if (bc->depth == 1) {
		if (!p->lat && !(p->lat = malloc(BENCH_LAT_CAP * sizeof(*p->lat))))
			bench_fail("out of memory");
		m->n_lat = bench_latency_loop(&q, p->lat, BENCH_LAT_CAP, deadline, &m->ns);
		m->lat_ns = p->lat;
		m->tasks = m->n_lat;
	} else {
		m->tasks = bench_pump(&q, bc->batch, bc->depth, UINT64_MAX, deadline, 1);
		m->ns = bench_now_ns() - t0;
	}
	m->bytes = m->tasks * bc->size;
}

static void fab_teardown(struct bench_contender *c)
{
	struct peer_fabric *p = c->priv;

	fabric_side_close(p->side);
	p->side = NULL;
	free(p->lat);
	p->lat = NULL;
}

static const struct bench_contender_ops fab_ops = { fab_setup, fab_run, fab_teardown };

void peer_fabric_contender(struct bench_contender *c, const struct remote_target *t)
{
	struct peer_fabric *p = calloc(1, sizeof(*p));

	if (!p)
		bench_fail("out of memory");
	p->target = t;
	*c = (struct bench_contender){ .name = "libfabric-raw", .ops = &fab_ops, .priv = p };
}
