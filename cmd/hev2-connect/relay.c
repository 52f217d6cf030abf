/*
 * relay.c — the --stdio relay of hev2-connect (see relay.h).
 *
 * One thread, one poll(2) loop, one buffer per direction. A direction
 * either reads (its buffer is empty) or writes (its buffer holds data), so
 * nothing is ever read faster than the other side takes it, and poll is
 * never asked about a descriptor with nothing to do. stdin and stdout keep
 * the mode they were given (their open file descriptions are shared with
 * the parent, e.g. ssh or a terminal): a write to a blocking stdout after
 * POLLOUT may wait for its reader, which only delays that direction's
 * next read.
 */
#define _GNU_SOURCE
#include "relay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { BUF_SIZE = 64 * 1024 };

struct direction {
	int from, to;           /* file descriptors */
	const char *from_name;  /* for messages: "stdin", "the connection" */
	const char *to_name;
	int to_is_socket;       /* send(MSG_NOSIGNAL) instead of write */
	char buf[BUF_SIZE];
	size_t off, len;        /* buf[off, len) waits to be written */
	int eof;                /* from has ended */
	int done;               /* eof seen and everything written, finished */
};

static const char *relay_host, *relay_port;

static void fail(const char *what, const char *name, int err)
{
	fprintf(stderr, "hev2-connect: %s port %s: %s %s: %s\n", relay_host, relay_port, what,
	        name, strerror(err));
}

/* finish ends a direction whose input has ended and whose buffer is empty:
 * the half-close that tells the other end. */
static void finish(struct direction *d, int sock)
{
	if (d->to_is_socket) {
		shutdown(sock, SHUT_WR); /* the peer reads EOF; we still read */
	} else {
		/* Whoever reads our stdout sees EOF. /dev/null takes fd 1's place,
		 * so that no descriptor opened later becomes "stdout". */
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, d->to);
			close(null);
		} else {
			close(d->to);
		}
	}
	d->done = 1;
}

/* step_read reads once into an empty buffer. Returns 0, or -1 on an error
 * (reported). A closed stdin (POLLNVAL) counts as its EOF. */
static int step_read(struct direction *d, short revents)
{
	if (revents & POLLNVAL) {
		d->eof = 1;
		return 0;
	}
	ssize_t n = read(d->from, d->buf, sizeof d->buf);
	if (n > 0) {
		d->off = 0;
		d->len = (size_t)n;
	} else if (n == 0) {
		d->eof = 1;
	} else if (errno != EINTR && errno != EAGAIN) {
		fail("reading", d->from_name, errno);
		return -1;
	}
	return 0;
}

/* die_of_sigpipe ends the process as cat or nc would end when the reader
 * of their stdout goes away (`hev2-connect --stdio ... | head`): killed by
 * SIGPIPE, silently, status 141 in a shell. The signal, blocked on this
 * thread, is already pending from the failed write. */
static void die_of_sigpipe(void)
{
	sigset_t pipe_set;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	signal(SIGPIPE, SIG_DFL); /* not the Go runtime's forwarding handler */
	raise(SIGPIPE);
	pthread_sigmask(SIG_UNBLOCK, &pipe_set, NULL);
	_exit(128 + SIGPIPE); /* not reached */
}

/* step_write writes what it can of the buffer. Returns 0, or -1 on an
 * error (reported). */
static int step_write(struct direction *d, short revents)
{
	if (revents & POLLNVAL) {
		fail("writing", d->to_name, EBADF);
		return -1;
	}
	size_t want = d->len - d->off;
	ssize_t n = d->to_is_socket ? send(d->to, d->buf + d->off, want, MSG_NOSIGNAL)
	                            : write(d->to, d->buf + d->off, want);
	if (n < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return 0;
		if (errno == EPIPE && !d->to_is_socket)
			die_of_sigpipe();
		fail("writing", d->to_name, errno);
		return -1;
	}
	d->off += (size_t)n;
	if (d->off == d->len)
		d->off = d->len = 0;
	return 0;
}

int relay_stdio(int sock, const char *host, const char *port)
{
	static struct direction up, down; /* 64 KiB each: not on the stack */
	relay_host = host;
	relay_port = port;
	up = (struct direction){.from = STDIN_FILENO, .to = sock, .from_name = "stdin",
	                        .to_name = "the connection", .to_is_socket = 1};
	down = (struct direction){.from = sock, .to = STDOUT_FILENO, .from_name = "the connection",
	                          .to_name = "stdout"};

	/* A peer that went away must be a write error (EPIPE) we report, not
	 * a SIGPIPE (send uses MSG_NOSIGNAL); a reader of stdout that went away
	 * ends us as it would cat (die_of_sigpipe). The signal is blocked on
	 * this thread only (the one that writes), so no handler of the process
	 * (the Go runtime's included) changes until then. */
	sigset_t pipe_set;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);

	struct direction *dirs[2] = {&up, &down};
	int rc = 0;
	while (rc == 0 && !(up.done && down.done)) {
		struct pollfd p[2];
		int n = 0, slot[2] = {-1, -1};
		for (int i = 0; i < 2; i++) {
			struct direction *d = dirs[i];
			if (d->done)
				continue;
			if (d->len == 0 && d->eof) {
				finish(d, sock);
				continue;
			}
			slot[i] = n;
			p[n++] = d->len ? (struct pollfd){.fd = d->to, .events = POLLOUT}
			                : (struct pollfd){.fd = d->from, .events = POLLIN};
		}
		if (n == 0)
			continue;
		if (poll(p, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			fail("waiting for", "stdin, stdout and the connection", errno);
			rc = -1;
			break;
		}
		for (int i = 0; i < 2 && rc == 0; i++) {
			struct direction *d = dirs[i];
			if (slot[i] < 0 || !p[slot[i]].revents)
				continue;
			rc = d->len ? step_write(d, p[slot[i]].revents) : step_read(d, p[slot[i]].revents);
		}
	}
	close(sock);
	return rc;
}
