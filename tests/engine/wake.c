/* tests/engine/wake.c — a waker that has a reason to look again (an engine
 * thread whose completions the PE may have taken before it armed) fires an
 * armed PE only if the reason still holds (pe_wake_fenced_if, pe_wake_if),
 * asks only once it sees the PE armed, and fires at most once per arming. */
#include <criterion/criterion.h>
#include <poll.h>

#include "engine/engine.h"
#include "tests/api/common.h"

struct reason {
	bool holds;
	unsigned asked;
};

static bool reason_holds(const void *what)
{
	struct reason *r = (struct reason *)what;

	r->asked++;
	return r->holds;
}

static bool fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

Test(wake, an_armed_pe_is_fired_only_while_the_wakers_reason_holds)
{
	struct api_fixture f;
	struct reason r = { 0 };
	int fd;

	fixture_init_started(&f, "sw0", 64, 0);
	struct doca_pe *pe = handle_deref(f.pe);

	cr_assert_eq(doca_pe_get_notification_handle(f.pe, &fd), DOCA_SUCCESS);

	/* not armed: the waker returns without asking */
	pe_wake_fenced_if(pe, reason_holds, &r);
	cr_assert_eq(r.asked, 0);
	cr_assert(!fd_readable(fd));

	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_SUCCESS);
	cr_assert(!fd_readable(fd), "armed with nothing to do");

	/* armed, the reason gone (the PE took the completions): no fire */
	pe_wake_fenced_if(pe, reason_holds, &r);
	doca_rcu_read_lock(); /* pe_wake_if's callers are inside a section */
	pe_wake_if(pe, reason_holds, &r);
	doca_rcu_read_unlock();
	cr_assert_eq(r.asked, 2);
	cr_assert(!fd_readable(fd), "fired for a reason that no longer held");
	cr_assert_eq(atomic_load(&pe->armed), PE_ARMED, "the skipped wakes left the arming as it was");

	/* the reason holds: one fire, and the next waker finds FIRED */
	r.holds = true;
	pe_wake_fenced_if(pe, reason_holds, &r);
	cr_assert_eq(r.asked, 3);
	cr_assert(fd_readable(fd));
	cr_assert_eq(atomic_load(&pe->armed), PE_FIRED);
	pe_wake_fenced_if(pe, reason_holds, &r);
	cr_assert_eq(r.asked, 3, "asked although the PE was no longer armed");

	/* without a reason to look again the waker fires as before */
	cr_assert_eq(doca_pe_clear_notification(f.pe), DOCA_SUCCESS);
	cr_assert(!fd_readable(fd));
	cr_assert_eq(doca_pe_request_notification(f.pe), DOCA_SUCCESS);
	pe_wake_fenced_if(pe, NULL, NULL);
	cr_assert(fd_readable(fd));
	cr_assert_eq(doca_pe_clear_notification(f.pe), DOCA_SUCCESS);
	fixture_fini(&f);
}
