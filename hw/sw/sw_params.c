/*
 * hw/sw/sw_params.c — the open string of the software device:
 * "engines=N,cpus=LIST,fail_every=N,partial_every=N,delay_us=N,ring_max=N".
 * A cpus LIST is "A", "A-B" and further ",C" or ",C-D" items.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/sw/sw.h"
#include "hw/hw_parse.h"

/* One cpus item: "A" or "A-B", each a CPU this machine has (configured:
 * online ones need not be numbered 0..N-1). Whether one may take a thread
 * (online, inside the process's cpuset) only the kernel knows: the engine
 * thread's creation refuses it (sw_engines_start). */
static bool parse_cpu_item(const char *s, size_t len, struct sw_params *p)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	const char *dash = memchr(s, '-', len);
	uint32_t lo, hi;
	uint32_t max = conf > 0 && conf <= CPU_SETSIZE ? (uint32_t)conf - 1u : 0u;

	if (dash == NULL) {
		if (!hw_parse_u32(s, len, max, &lo))
			goto bad;
		hi = lo;
	} else if (!hw_parse_u32(s, (size_t)(dash - s), max, &lo) ||
		   !hw_parse_u32(dash + 1, len - (size_t)(dash - s) - 1u, max, &hi) || hi < lo) {
		goto bad;
	}
	for (uint32_t c = lo; c <= hi; c++) {
		if (p->ncpus == SW_ENGINES_MAX) {
			hw_diag("cpus: more than %u CPUs listed", SW_ENGINES_MAX);
			return false;
		}
		p->cpus[p->ncpus++] = (int)c;
	}
	return true;
bad:
	hw_diag("cpus: '%.*s' is not a CPU or a range A-B of them (this machine's: 0-%u)", (int)len, s, max);
	return false;
}

static bool parse_pair(const char *key, size_t klen, const char *val, size_t vlen, struct sw_params *p,
		       uint32_t *seen)
{
	static const struct {
		const char *name;
		size_t offset;
		uint32_t max;
	} keys[] = {
		{ "engines", offsetof(struct sw_params, engines), SW_ENGINES_MAX },
		{ "fail_every", offsetof(struct sw_params, fail_every), SW_EVERY_MAX },
		{ "partial_every", offsetof(struct sw_params, partial_every), SW_EVERY_MAX },
		{ "delay_us", offsetof(struct sw_params, delay_us), SW_DELAY_US_MAX },
		{ "ring_max", offsetof(struct sw_params, ring_max), SW_RING_MAX_MAX },
	};

	for (uint32_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strlen(keys[i].name) != klen || memcmp(keys[i].name, key, klen) != 0)
			continue;
		if (*seen & (1u << i)) {
			hw_diag("'%s' is given twice", keys[i].name); /* ambiguous */
			return false;
		}
		*seen |= 1u << i;
		if (hw_parse_u32(val, vlen, keys[i].max, (uint32_t *)((char *)p + keys[i].offset)))
			return true;
		hw_diag("%s: '%.*s' is not a whole number from 0 to %u", keys[i].name, (int)vlen, val,
			keys[i].max);
		return false;
	}
	hw_diag("unknown key '%.*s'; keys: " SW_PARAM_KEYS, (int)klen, key);
	return false;
}

doca_error_t sw_params_parse(const char *text, struct sw_params *p)
{
	uint32_t seen = 0;
	bool in_cpus = false, had_cpus = false;

	memset(p, 0, sizeof(*p));
	if (text == NULL)
		return DOCA_SUCCESS;
	if (*text == '\0') {
		hw_diag("nothing after ':'; keys: " SW_PARAM_KEYS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (const char *tok = text;;) {
		size_t len = strcspn(tok, ",");
		const char *eq = memchr(tok, '=', len);

		if (eq == NULL) {
			/* a bare item continues a cpus list */
			if (!in_cpus) {
				hw_diag("'%.*s' is not KEY=VALUE; keys: " SW_PARAM_KEYS, (int)len, tok);
				return DOCA_ERROR_INVALID_VALUE;
			}
			if (!parse_cpu_item(tok, len, p))
				return DOCA_ERROR_INVALID_VALUE;
		} else if ((size_t)(eq - tok) == 4 && memcmp(tok, "cpus", 4) == 0) {
			if (had_cpus) {
				hw_diag("'cpus' is given twice");
				return DOCA_ERROR_INVALID_VALUE;
			}
			if (!parse_cpu_item(eq + 1, len - 5u, p))
				return DOCA_ERROR_INVALID_VALUE;
			in_cpus = had_cpus = true;
		} else {
			in_cpus = false;
			if (!parse_pair(tok, (size_t)(eq - tok), eq + 1, len - (size_t)(eq - tok) - 1u, p, &seen))
				return DOCA_ERROR_INVALID_VALUE;
		}
		if (tok[len] == '\0')
			break;
		tok += len + 1;
	}
	if (had_cpus && p->engines == 0) {
		hw_diag("'cpus' pins engine threads: it needs engines=N (N >= 1)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}
