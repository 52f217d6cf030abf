/* hev2_write_trace: a recorded race written as SVG, qlog and Chrome trace,
 * to a path and to an fd (the same bytes both ways and every time), and its
 * failures to open or write (HEV2_ESYSTEM with the errno). Its bad input
 * (NULL path, stale, running or unrecorded handle, unknown format) is in
 * test_badinput's table. The files' content is checked in core's tests
 * and by the scenario suite (hev2-testbed suite --trace-files). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

static struct server srv;

/* slurp reads all of fd from its start into buf; returns the length. */
static size_t slurp(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	lseek(fd, 0, SEEK_SET);
	for (ssize_t k; n < cap && (k = read(fd, buf + n, cap - n)) > 0;)
		n += (size_t)k;
	return n;
}

static const struct {
	int format;
	const char *starts;
} formats[] = {
	{HEV2_TRACE_SVG, "<svg xmlns=\"http://www.w3.org/2000/svg\""},
	{HEV2_TRACE_QLOG, "\x1e{\"file_schema\":\"urn:ietf:params:qlog:file:sequential\""},
	{HEV2_TRACE_CHROME, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":["},
};

static void test_formats(void)
{
	hev2_options o;
	hev2_options_init(&o);
	o.record_events = 1;
	char port[16];
	snprintf(port, sizeof port, "%d", srv.port);
	hev2_conn c;
	CHECK_RC(hev2_connect("127.0.0.1", port, &o, &c), HEV2_OK);
	CHECK_RC(hev2_wait(c, 5000), HEV2_OK);
	static char a[1 << 16], b[1 << 16];
	char path[] = "/tmp/hev2-test-trace-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
		CHECK_RC(hev2_write_trace(c, formats[i].format, -1, path), HEV2_OK);
		int rfd = open(path, O_RDONLY | O_CLOEXEC);
		size_t na = slurp(rfd, a, sizeof a);
		close(rfd);
		CHECK(na > 100 && na < sizeof a);
		CHECK(strncmp(a, formats[i].starts, strlen(formats[i].starts)) == 0);
		/* To an fd: the same bytes, written at its offset, fd left open. */
		CHECK(ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0);
		CHECK_RC(hev2_write_trace(c, formats[i].format, fd, NULL), HEV2_OK);
		size_t nb = slurp(fd, b, sizeof b);
		CHECK(na == nb && memcmp(a, b, na) == 0);
		CHECK(fcntl(fd, F_GETFD) >= 0);
	}
	close(fd);
	unlink(path);

	/* Opening or writing fails: HEV2_ESYSTEM, the errno, one line. */
	CHECK_RC(hev2_write_trace(c, HEV2_TRACE_SVG, -1, "/nonexistent-hev2-dir/race.svg"), HEV2_ESYSTEM);
	CHECK_INT(hev2_last_errno(), ENOENT);
	CHECK(strstr(hev2_last_error(), "hev2_write_trace: open /nonexistent-hev2-dir/race.svg") == hev2_last_error());
	int closed = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(closed >= 0);
	close(closed);
	CHECK_RC(hev2_write_trace(c, HEV2_TRACE_QLOG, closed, NULL), HEV2_ESYSTEM);
	CHECK_INT(hev2_last_errno(), EBADF);
	int ro = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK_RC(hev2_write_trace(c, HEV2_TRACE_CHROME, ro, NULL), HEV2_ESYSTEM);
	CHECK_INT(hev2_last_errno(), EBADF);
	close(ro);
	CHECK_RC(hev2_release(c), HEV2_OK);
	CHECK_RC(hev2_write_trace(c, HEV2_TRACE_SVG, -1, "/dev/null"), HEV2_EHANDLE);
}

int main(void)
{
	if (server_start(&srv, AF_INET) < 0) {
		perror("server");
		return 1;
	}
	warm_up(srv.port);
	test_formats();
	server_stop(&srv);
	return check_done("test_trace");
}
