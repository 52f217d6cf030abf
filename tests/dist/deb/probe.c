/*
 * probe — a program built against an installed libhev2-dev the way a user
 * builds one (cc probe.c $(pkg-config --cflags --libs hev2)), run by
 * test_deb.sh against the Debian packages.
 *
 *   probe [CMD [ARG...]]
 *
 * Listens on 127.0.0.1, port 0 (the kernel picks one), connects to it with
 * hev2_connect_wait and checks that the connection it accepts is the
 * socket it was handed. Given CMD, it then runs CMD ARG... 127.0.0.1 PORT
 * (an installed hev2-connect, say) and accepts that connection too, and
 * wants CMD to exit 0. Prints the header's and the library's versions and
 * the file the dynamic linker loaded the library from; exits 0 when every
 * check held, 1 otherwise, saying which failed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hev2.h>

/* A loaded machine (or qemu running CMD) may be slow; nothing here waits
 * for anything that is not already under way. */
enum { WAIT_MS = 60000 };

static void fail(const char *what, const char *why)
{
	fprintf(stderr, "probe: %s: %s\n", what, why);
	exit(1);
}

/* accept_one accepts one connection on lfd within WAIT_MS; given a child
 * (pid > 0), it gives up as soon as the child has ended without one. */
static int accept_one(int lfd, pid_t pid)
{
	struct pollfd p = {.fd = lfd, .events = POLLIN};
	int n = 0, status;
	for (int waited = 0; waited < WAIT_MS && n == 0; waited += 100) {
		n = poll(&p, 1, 100);
		if (n < 0 && errno == EINTR)
			n = 0;
		if (n == 0 && pid > 0 && waitpid(pid, &status, WNOHANG) == pid) {
			fprintf(stderr, "probe: the command ended (status %d) without connecting\n", status);
			exit(1);
		}
	}
	if (n <= 0)
		fail("accept", n == 0 ? "no connection came" : strerror(errno));
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		fail("accept", strerror(errno));
	return fd;
}

static int same_address(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
	return a->sin_family == b->sin_family && a->sin_port == b->sin_port &&
	       a->sin_addr.s_addr == b->sin_addr.s_addr;
}

int main(int argc, char **argv)
{
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in la = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof la;
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&la, sizeof la) || listen(lfd, 8) ||
	    getsockname(lfd, (struct sockaddr *)&la, &len))
		fail("listen on 127.0.0.1", strerror(errno));
	char port[8];
	snprintf(port, sizeof port, "%u", ntohs(la.sin_port));

	Dl_info where;
	if (!dladdr((void *)hev2_version, &where) || !where.dli_fname)
		fail("dladdr", "hev2_version is in no loaded file");
	int lib = hev2_version();
	printf("probe: header %d, library %d, loaded from %s\n", HEV2_VERSION_NUM, lib, where.dli_fname);
	if (lib != HEV2_VERSION_NUM)
		fail("hev2_version", "the library's version is not the header's");

	/* hev2's own connect */
	hev2_options o;
	hev2_options_init(&o);
	o.connect_timeout_ms = WAIT_MS;
	hev2_conn c;
	int fd;
	int rc = hev2_connect_wait("127.0.0.1", port, &o, WAIT_MS, &c, &fd);
	if (rc != HEV2_OK) {
		fprintf(stderr, "probe: hev2_connect_wait: %s (%s)\n", hev2_strerror(rc), hev2_last_error());
		hev2_release(c);
		return 1;
	}
	int afd = accept_one(lfd, 0);
	struct sockaddr_in mine, peer;
	socklen_t ml = sizeof mine, pl = sizeof peer;
	if (getsockname(fd, (struct sockaddr *)&mine, &ml) || getpeername(afd, (struct sockaddr *)&peer, &pl))
		fail("getsockname/getpeername", strerror(errno));
	if (!same_address(&mine, &peer))
		fail("hev2_connect_wait", "the accepted connection is not the socket handed over");
	printf("probe: hev2_connect_wait connected to 127.0.0.1 port %s from port %u\n", port, ntohs(mine.sin_port));
	close(afd);
	close(fd);

	if (argc < 2)
		return 0;

	/* CMD ARG... 127.0.0.1 PORT */
	char **args = calloc((size_t)argc + 2, sizeof *args);
	if (!args)
		fail("calloc", strerror(errno));
	for (int i = 1; i < argc; i++)
		args[i - 1] = argv[i];
	args[argc - 1] = "127.0.0.1";
	args[argc] = port;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		fail("fork", strerror(errno));
	if (pid == 0) {
		execvp(args[0], args);
		fprintf(stderr, "probe: exec %s: %s\n", args[0], strerror(errno));
		_exit(127);
	}
	afd = accept_one(lfd, pid);
	close(afd);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			fail("waitpid", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "probe: %s: status %d\n", args[0], status);
		return 1;
	}
	printf("probe: %s connected and exited 0\n", args[0]);
	free(args);
	close(lfd);
	return 0;
}
