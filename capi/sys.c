/* The few raw system calls capi makes itself. Host processes are full of
 * signals (a SIGCHLD storm from Ruby made a raw ppoll see thousands of
 * EINTRs), so every call here retries EINTR. None of them has a deadline:
 * hev2_wait's timeout is kept by Go's scheduler, which never sees EINTR.
 * close() is never retried: on Linux the fd is gone even when close
 * reports EINTR. */
#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "internal.h"

int hev2c_eventfd_new(void)
{
	int fd;
	do
		fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	while (fd < 0 && errno == EINTR);
	return fd;
}

void hev2c_eventfd_signal(int fd)
{
	uint64_t one = 1;
	ssize_t n;
	int saved = errno; /* also called from signal handlers (job triggers) */
	do
		n = write(fd, &one, sizeof one);
	while (n < 0 && errno == EINTR);
	/* EAGAIN means the counter is at its maximum: already readable. */
	errno = saved;
}
