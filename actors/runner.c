/* actors/runner.c — the per-thread identity used by the runner guard, and
 * the TSan token that stands for RCU grace periods (tsan_annotate.h). */
#include "runner.h"
#include "tsan_annotate.h"

DOCA_TLS _Alignas(2) char runner_self_token;
char tsan_rcu_token;
