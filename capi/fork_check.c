/* Fork detection, in C, before Go is entered.
 *
 * The Go runtime does not survive fork(): in a child, anything that needs a
 * goroutine (or even the scheduler's locks, held by a thread that no longer
 * exists) can hang forever. So the public shims ask hev2c_forked() first and
 * answer HEV2_EFORKED without entering Go. Two checks: the pthread_atfork
 * child handler marks every child made by fork(), and the getpid()
 * comparison also catches a child made by a raw clone()/syscall(SYS_fork),
 * which skips the atfork handlers. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "internal.h"

static pid_t loaded_pid;
static atomic_int in_child;

static void mark_child(void) { atomic_store(&in_child, 1); }

__attribute__((constructor)) static void fork_check_setup(void)
{
	loaded_pid = getpid();
	pthread_atfork(NULL, NULL, mark_child);
}

int hev2c_forked(void)
{
	return atomic_load_explicit(&in_child, memory_order_relaxed) ||
	       getpid() != loaded_pid;
}
