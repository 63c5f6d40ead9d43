/* tests/engine/sw_params.c — the software device's open-string parser. */
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

Test(sw_params, malformed_strings_are_refused)
{
	static const char *const bad[] = {
		"",                  /* "sw0:" */
		"engines",           /* no value */
		"engines=",          /* empty value */
		"engines=x",         /* not a number */
		"engines=-1",        /* sign */
		"engines=65",        /* above the limit */
		"engines=99999999999", /* overflow */
		"delay_us=10000001", /* above the limit */
		"bogus=1",           /* unknown key */
		"engines=1,",        /* trailing comma */
		"engines=1,engines=2", /* given twice */
		"cpus=0",            /* cpus without engines */
		"engines=1,cpus=100000", /* no such CPU */
		"engines=1,cpus=1-0", /* reversed range */
		"engines=1,7",       /* a bare item outside a cpus list */
		"Engines=1",         /* keys are case-sensitive */
	};
	struct sw_params p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(sw_params_parse(bad[i], &p), DOCA_ERROR_INVALID_VALUE, "accepted \"%s\"", bad[i]);
}
