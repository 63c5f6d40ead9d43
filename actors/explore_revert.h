/*
 * actors/explore_revert.h — test-only switches that undo a fix, so the
 * systematic tester (stress/explore/) can show it rediscovers the defect.
 * Outside the explorer build (-Dexplore=true) every switch is false and
 * the old code path compiles away.
 */
#ifndef DOCA_EXPLORE_REVERT_H
#define DOCA_EXPLORE_REVERT_H

#include <stdbool.h>

#ifdef DOCA_EXPLORE
/* True when DOCA_EXPLORE_REVERT (a comma-separated list) names `defect`. */
bool doca_explore_reverted(const char *defect);
#define DOCA_REVERTED(defect) doca_explore_reverted(defect)
#else
#define DOCA_REVERTED(defect) false
#endif

#endif /* DOCA_EXPLORE_REVERT_H */
