/*
 * tests/api/header_self_contained.c — compiled once per public header with
 * -DDOCA_HEADER="<name>": each header compiles on its own, first in its
 * translation unit (no hidden include-order dependency).
 */
#include DOCA_HEADER

int header_self_contained_anchor(void);
int header_self_contained_anchor(void)
{
	return 0;
}
