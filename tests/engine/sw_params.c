/* tests/engine/sw_params.c — the software device's open-string parser. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "hw/sw/sw.h"

Test(sw_params, no_params_means_inline_without_faults)
{
	struct sw_params p;

	cr_assert_eq(sw_params_parse(NULL, &p), DOCA_SUCCESS);
	cr_assert_eq(p.engines, 0);
	cr_assert_eq(p.fail_every, 0);
	cr_assert_eq(p.partial_every, 0);
	cr_assert_eq(p.delay_us, 0);
	cr_assert_eq(p.ncpus, 0);
}

Test(sw_params, every_key_is_read)
{
	struct sw_params p;

	cr_assert_eq(sw_params_parse("engines=2,fail_every=7,partial_every=11,delay_us=50,cpus=0", &p),
		     DOCA_SUCCESS);
	cr_assert_eq(p.engines, 2);
	cr_assert_eq(p.fail_every, 7);
	cr_assert_eq(p.partial_every, 11);
	cr_assert_eq(p.delay_us, 50);
	cr_assert_eq(p.ncpus, 1);
	cr_assert_eq(p.cpus[0], 0);
}

Test(sw_params, a_cpu_list_takes_ranges_and_items)
{
	struct sw_params p;

	cr_assert_eq(sw_params_parse("engines=3,cpus=0-0,0", &p), DOCA_SUCCESS);
	cr_assert_eq(p.ncpus, 2);
	cr_assert_eq(p.cpus[0], 0);
	cr_assert_eq(p.cpus[1], 0);
}

Test(sw_params, leading_zeros_are_read_as_the_number_they_pad)
{
	struct sw_params p;

	cr_assert_eq(sw_params_parse("engines=0000000000000000002,fail_every=0000000000001,delay_us=00,cpus=00-000",
				     &p),
		     DOCA_SUCCESS);
	cr_assert_eq(p.engines, 2);
	cr_assert_eq(p.fail_every, 1);
	cr_assert_eq(p.delay_us, 0);
	cr_assert_eq(p.ncpus, 1);
	cr_assert_eq(p.cpus[0], 0);
}

Test(sw_params, malformed_strings_are_refused_with_the_reason)
{
	static const struct {
		const char *text;
		const char *why; /* what hw_diag_take() says, or the bad cpus item */
	} bad[] = {
		{ "", "nothing after ':'; keys: " SW_PARAM_KEYS },
		{ "engines", "'engines' is not KEY=VALUE; keys: " SW_PARAM_KEYS },
		{ "engines=", "engines: '' is not a whole number from 0 to 64" },
		{ "engines=x", "engines: 'x' is not a whole number from 0 to 64" },
		{ "engines=-1", "engines: '-1' is not a whole number from 0 to 64" },
		{ "engines=65", "engines: '65' is not a whole number from 0 to 64" },
		{ "engines=99999999999", "engines: '99999999999' is not a whole number from 0 to 64" },
		{ "engines=00000000065", "engines: '00000000065' is not a whole number from 0 to 64" },
		{ "fail_every=0001000000001", "fail_every: '0001000000001' is not a whole number from 0 to 1000000000" },
		{ "engines=0x1", "engines: '0x1' is not a whole number from 0 to 64" },
		{ "delay_us=10000001", "delay_us: '10000001' is not a whole number from 0 to 10000000" },
		{ "bogus=1", "unknown key 'bogus'; keys: " SW_PARAM_KEYS },
		{ "engine=1", "unknown key 'engine'; keys: " SW_PARAM_KEYS },
		{ "engines=1,cpu=1", "unknown key 'cpu'; keys: " SW_PARAM_KEYS },
		{ "engines=1,", "'' is not KEY=VALUE; keys: " SW_PARAM_KEYS },
		{ "engines=1,engines=2", "'engines' is given twice" },
		{ "cpus=0", "'cpus' pins engine threads: it needs engines=N (N >= 1)" },
		{ "engines=1,cpus=100000", "100000" }, /* a cpus item: the reason names the machine's CPUs */
		{ "engines=1,cpus=1-0", "1-0" },
		{ "engines=1,cpus=0,cpus=0", "'cpus' is given twice" },
		{ "engines=1,7", "'7' is not KEY=VALUE; keys: " SW_PARAM_KEYS },
		{ "Engines=1", "unknown key 'Engines'; keys: " SW_PARAM_KEYS },
	};
	struct sw_params p;
	char want[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(sw_params_parse(bad[i].text, &p), DOCA_ERROR_INVALID_VALUE, "accepted \"%s\"",
			     bad[i].text);
		if (strchr(bad[i].why, ' ') == NULL) /* a cpus item */
			snprintf(want, sizeof(want),
				 "cpus: '%s' is not a CPU or a range A-B of them (this machine's: 0-%ld)",
				 bad[i].why, sysconf(_SC_NPROCESSORS_CONF) - 1);
		else
			snprintf(want, sizeof(want), "%s", bad[i].why);
		cr_expect_str_eq(hw_diag_take(), want, "\"%s\"", bad[i].text);
		cr_expect_str_eq(hw_diag_take(), "", "taking the reason clears it");
	}
}
