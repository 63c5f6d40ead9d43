/*
 * bench_stats.c — medians and percentiles (sorting a copy in place).
 */
#include "bench.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/** Percentile by nearest rank; sorts @p v. NAN when empty. */
double bench_percentile(double *v, size_t n, double pct)
{
	size_t rank;

	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	rank = (size_t)ceil(pct / 100.0 * (double)n);
	return v[rank ? rank - 1 : 0];
}

/** Median (mean of the two middle values when n is even); sorts @p v. */
double bench_median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
