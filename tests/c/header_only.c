/* Includes nothing but hev2.h: the header must be self-contained, compile
 * as strict C99 (and C++), and every function it declares must link. */
#include "hev2.h"

typedef void (*any_fn)(void);

/* Taking each function's address makes the linker resolve all of them. */
static const any_fn every_function[] = {
	(any_fn)hev2_version,      (any_fn)hev2_strerror,    (any_fn)hev2_init,
	(any_fn)hev2_set_max_handles, (any_fn)hev2_stats,    (any_fn)hev2_options_init, (any_fn)hev2_options_init_size, (any_fn)hev2_connect_wait,
	(any_fn)hev2_connect,      (any_fn)hev2_connect_len, (any_fn)hev2_wait,
	(any_fn)hev2_fd,           (any_fn)hev2_cancel,      (any_fn)hev2_result,
	(any_fn)hev2_get_attempt,  (any_fn)hev2_get_event,   (any_fn)hev2_event_name,
	(any_fn)hev2_errmsg,       (any_fn)hev2_release,     (any_fn)hev2_job_register,
	(any_fn)hev2_job_trigger,  (any_fn)hev2_run_jobs,    (any_fn)hev2_jobs_fd,
	(any_fn)hev2_last_error,   (any_fn)hev2_last_errno,
};

int main(void)
{
	for (unsigned i = 0; i < sizeof every_function / sizeof every_function[0]; i++)
		if (!every_function[i])
			return 1;
	hev2_options o;
	if (hev2_options_init(&o) != HEV2_OK || o.size != sizeof o)
		return 1;
	return hev2_version() == HEV2_VERSION_NUM ? 0 : 1;
}
