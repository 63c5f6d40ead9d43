/*
 * actors/explore.c — the library side of the explorer build
 * (-Dexplore=true): the hook the scheduler installs, and the test-only
 * switches that undo a fix (actors/explore_revert.h).
 */
#include "explore.h"
#include "explore_revert.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void (*doca_explore_hook)(enum explore_kind kind, const char *file, int line);

static const char *reverted_list;
static pthread_once_t reverted_once = PTHREAD_ONCE_INIT;

static void reverted_read(void)
{
	reverted_list = getenv("DOCA_EXPLORE_REVERT");
}

bool doca_explore_reverted(const char *defect)
{
	size_t len = strlen(defect);

	pthread_once(&reverted_once, reverted_read);
	for (const char *p = reverted_list; p != NULL && *p != '\0';) {
		size_t n = strcspn(p, ",");

		if (n == len && strncmp(p, defect, n) == 0)
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}
