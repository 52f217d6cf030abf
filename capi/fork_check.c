/* Fork detection, in C, before Go is entered.
 *
 * The Go runtime does not survive fork(): in a child, anything that needs a
 * goroutine (or even the scheduler's locks, held by a thread that no longer
 * exists) can hang forever. So the public shims ask hev2c_forked() first and
 * answer HEV2_EFORKED without entering Go. hev2c_forked() is on every
 * public call, so it makes no system call:
 *
 * - A wipe-on-fork page. At load, one private anonymous page is mapped,
 *   marked MADV_WIPEONFORK (Linux >= 4.14) and given a non-zero marker. The
 *   kernel hands every child that does not share our memory (fork(), a raw
 *   syscall(SYS_fork), clone() without CLONE_VM: with or without the
 *   pthread_atfork handlers) a zero-filled copy of that page, so the
 *   marker reads 0 there. The check is one load.
 * - The pthread_atfork child handler's flag, also one load: it marks every
 *   child made through glibc's fork() even if the page could not be set up.
 *
 * Fallback: if the page cannot be made (mmap fails: no memory, a mapping
 * limit; madvise fails: a kernel older than 4.14, or a seccomp filter that
 * refuses it), the check falls back to comparing getpid() with the pid
 * recorded at load, which also catches a raw fork but costs a system call
 * per public call. hev2.h's "fork()" section says so. A child made with
 * CLONE_VM (vfork and the like) shares the parent's memory and is not
 * detected by either the page or the flag; it must only exec or _exit, as
 * POSIX already requires of a vfork child. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18 /* Linux 4.14; older headers lack the name */
#endif

/* Any non-zero value would do; a distinctive one reads well in a dump. */
#define LOADED_MARKER 0x68657632 /* "hev2" */

/* The marker inside the wipe-on-fork page, or NULL when the page could not
 * be made (then loaded_pid is compared instead). Both are written once, by
 * the constructor, before any public function can be called. */
static const int *wipe_marker;
static pid_t loaded_pid;
static atomic_int in_child;

static void mark_child(void) { atomic_store(&in_child, 1); }

static void setup_wipe_page(void)
{
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;
	void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return; /* fallback: getpid() */
	if (madvise(p, (size_t)page, MADV_WIPEONFORK) != 0) {
		munmap(p, (size_t)page);
		return; /* fallback: getpid() (kernel < 4.14, seccomp) */
	}
	int *m = p;
	*m = LOADED_MARKER;
	wipe_marker = m;
}

__attribute__((constructor)) static void fork_check_setup(void)
{
	loaded_pid = getpid();
	setup_wipe_page();
	pthread_atfork(NULL, NULL, mark_child);
}

int hev2c_forked(void)
{
	if (atomic_load_explicit(&in_child, memory_order_relaxed))
		return 1;
	if (wipe_marker)
		return __atomic_load_n(wipe_marker, __ATOMIC_RELAXED) != LOADED_MARKER;
	return getpid() != loaded_pid;
}
