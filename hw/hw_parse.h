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

/* The decimal number s[0, len) if it is one and at most max. */
static inline bool hw_parse_u32(const char *s, size_t len, uint32_t max, uint32_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 10)
		return false;
	for (size_t i = 0; i < len; i++) {
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
