/*
 * hw/hw_parse.h — parsing the numbers of an open string ("KEY=N"), shared
 * by the backends (inline: a module links nothing of the library).
 */
#ifndef DOCA_HW_PARSE_H
#define DOCA_HW_PARSE_H

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The decimal number s[0, len) if it is one and at most max (leading
 * zeros allowed, as strtoul would: "007" is 7). */
static inline bool hw_parse_u32(const char *s, size_t len, uint32_t max, uint32_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	if (len == 0)
		return false;
	while (i + 1u < len && s[i] == '0')
		i++;
	if (len - i > 10) /* more digits than a uint32_t has: too big (and no overflow below) */
		return false;
	for (; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		v = v * 10u + (uint64_t)(s[i] - '0');
	}
	if (v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

#endif /* DOCA_HW_PARSE_H */
