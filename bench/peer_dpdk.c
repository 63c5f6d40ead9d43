/*
 * peer_dpdk.c — DPDK dmadev with the dma_skeleton software device: copies
 * executed by the skeleton's worker thread, pinned to the other CPU through
 * the vdev's lcore= option. EAL runs without hugepages, PCI or shared
 * config files (--in-memory clashes with --no-huge's legacy memory mode).
 * The skeleton memcpy()s IOVAs as virtual addresses, so plain heap buffers
 * serve as source and destination.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

#ifdef BENCH_HAVE_DPDK
/* dmadev is still "experimental" in 22.11 */
#define ALLOW_EXPERIMENTAL_API 1
#include <rte_dmadev.h>
#include <rte_eal.h>
#include <rte_log.h>

#include <glob.h>

struct peer_dpdk {
	bool latency;
	uint8_t *src, *dst;
	size_t slots, slot, size;
	double *lat;
};

static int eal_state; /* 0: not tried, 1: up, -1: failed */
static int16_t dev_id = -1;

/* The skeleton plugin of the installed DPDK ABI (pmds-23.0/ for 22.11). */
static bool find_skeleton(char *path, size_t cap)
{
	glob_t g;
	bool found = !glob(BENCH_DPDK_LIBDIR "/dpdk/pmds-*/librte_dma_skeleton.so*", 0, NULL, &g) &&
		     g.gl_pathc > 0;

	if (found)
		snprintf(path, cap, "%s", g.gl_pathv[0]);
	globfree(&g);
	return found;
}

static const char *eal_up(void)
{
	char vdev[64], pmd[512];
	char *argv[] = { "doca_bench", "--no-huge", "--no-pci", "--no-shconf", "-m", "128",
			 "-l", "0", vdev, "-d", pmd, "--log-level=*:error", NULL };

	if (eal_state)
		return eal_state > 0 ? NULL : "rte_eal_init failed (see the EAL log above)";
	eal_state = -1;
	snprintf(vdev, sizeof(vdev), "--vdev=dma_skeleton0,lcore=%d", BENCH_OTHER_CPU);
	if (bench_cpu_count() < 2)
		return "needs two CPUs (the skeleton worker runs on the other one)";
	if (!find_skeleton(pmd, sizeof(pmd)))
		return "no dma_skeleton plugin (apt-get install librte-dma-skeleton23)";
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0)
		return "rte_eal_init failed (see the EAL log above)";
	dev_id = (int16_t)rte_dma_get_dev_id_by_name("dma_skeleton0");
	if (dev_id < 0)
		return "no dma_skeleton0 device (is librte-dma-skeleton23 installed?)";
	eal_state = 1;
	return NULL;
}

static uint16_t ring_size(unsigned depth)
{
	uint16_t n = 32; /* the skeleton's minimum; it keeps one slot empty */

	while (n < depth + 1)
		n *= 2;
	return n;
}

static const char *dpdk_setup(struct bench_contender *c, const struct bench_case *bc)
{
	struct peer_dpdk *p = c->priv;
	const char *why = eal_up();
	struct rte_dma_conf conf = { .nb_vchans = 1 };
	struct rte_dma_vchan_conf vconf = {
		.direction = RTE_DMA_DIR_MEM_TO_MEM,
		.nb_desc = ring_size(bc->depth),
	};

	if (why)
		return why;
	if (rte_dma_configure(dev_id, &conf) || rte_dma_vchan_setup(dev_id, 0, &vconf))
		return "configuring dma_skeleton0 failed";
	p->slots = p->latency ? 1 : bench_slots(bc->size, bc->depth);
	p->slot = 0;
	p->size = bc->size;
	p->src = bench_alloc_aligned(p->slots * bc->size);
	p->dst = bench_alloc_aligned(p->slots * bc->size);
	bench_fill(p->src, p->slots * bc->size, bc->seed);
	if (p->latency && !p->lat && !(p->lat = malloc(BENCH_LAT_CAP * sizeof(*p->lat))))
		bench_fail("out of memory");
	return NULL;
}

static void dpdk_teardown(struct bench_contender *c)
{
	struct peer_dpdk *p = c->priv;

	if (memcmp(p->src, p->dst, p->slots * p->size))
		bench_fail("dma_skeleton0: a destination differs from its source");
	free(p->src);
	free(p->dst);
}

static void dpdk_submit_burst(void *q, unsigned n)
{
	struct peer_dpdk *p = q;
	uint64_t flags = n == 1 ? RTE_DMA_OP_FLAG_SUBMIT : 0;

	for (unsigned i = 0; i < n; i++) {
		if (rte_dma_copy(dev_id, 0, (rte_iova_t)(uintptr_t)(p->src + p->slot * p->size),
				 (rte_iova_t)(uintptr_t)(p->dst + p->slot * p->size), (uint32_t)p->size,
				 flags) < 0)
			bench_fail("rte_dma_copy refused a copy");
		p->slot = p->slot + 1 == p->slots ? 0 : p->slot + 1;
	}
	if (!flags)
		rte_dma_submit(dev_id, 0);
}

static uint64_t dpdk_reap(void *q, unsigned max)
{
	uint16_t last;
	bool error = false;
	uint16_t n = rte_dma_completed(dev_id, 0, (uint16_t)max, &last, &error);

	if (error)
		bench_fail("dma_skeleton0 reported a failed copy");
	return n;
}

/*
 * The skeleton's worker thread exists from rte_dma_start to rte_dma_stop,
 * and while idle it wakes every ~10 us (rte_delay_us_sleep) on the other
 * CPU, preempting whatever runs there: left running between repetitions it
 * would steal CPU 1 from the doca engine thread measured next. So the
 * device runs only around its own measurement (start and stop untimed).
 */
static void dpdk_start(void)
{
	if (rte_dma_start(dev_id))
		bench_fail("rte_dma_start(dma_skeleton0) failed");
}

static void dpdk_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
		     struct bench_measure *m)
{
	struct peer_dpdk *p = c->priv;
	const struct bench_queue q = { dpdk_submit_burst, dpdk_reap, p };
	uint64_t t0;

	dpdk_start();
	t0 = bench_now_ns();
	m->tasks = bench_pump(&q, bc->batch, bc->depth, UINT64_MAX, t0 + (uint64_t)(seconds * 1e9),
			      bench_clock_every(bc));
	m->ns = bench_now_ns() - t0;
	m->bytes = m->tasks * bc->size;
	rte_dma_stop(dev_id);
}

static void dpdk_latency_run(struct bench_contender *c, const struct bench_case *bc, double seconds,
			     struct bench_measure *m)
{
	struct peer_dpdk *p = c->priv;
	const struct bench_queue q = { dpdk_submit_burst, dpdk_reap, p };

	dpdk_start();
	m->n_lat = bench_latency_loop(&q, p->lat, BENCH_LAT_CAP,
				      bench_now_ns() + (uint64_t)(seconds * 1e9), &m->ns);
	rte_dma_stop(dev_id);
	m->lat_ns = p->lat;
	m->tasks = m->n_lat;
	m->bytes = m->n_lat * bc->size;
}

void peer_dpdk_cleanup(void)
{
	if (eal_state > 0) {
		rte_dma_close(dev_id);
		rte_eal_cleanup();
	}
	eal_state = 0;
}

static const struct bench_contender_ops dpdk_ops = { dpdk_setup, dpdk_run, dpdk_teardown };
static const struct bench_contender_ops dpdk_latency_ops = { dpdk_setup, dpdk_latency_run, dpdk_teardown };

void peer_dpdk_contender(struct bench_contender *c, bool latency)
{
	struct peer_dpdk *p = calloc(1, sizeof(*p));

	if (!p)
		bench_fail("out of memory");
	p->latency = latency;
	*c = (struct bench_contender){ .name = "dpdk-skeleton", .ops = latency ? &dpdk_latency_ops : &dpdk_ops,
				       .priv = p };
}
#else
static const char *dpdk_setup(struct bench_contender *c, const struct bench_case *bc)
{
	return "libdpdk-dev was not found at build time";
}

static const struct bench_contender_ops dpdk_ops = { dpdk_setup, NULL, NULL };

void peer_dpdk_contender(struct bench_contender *c, bool latency)
{
	*c = (struct bench_contender){ .name = "dpdk-skeleton", .ops = &dpdk_ops };
}

void peer_dpdk_cleanup(void)
{
}
#endif
