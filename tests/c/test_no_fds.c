/* HEV2_ESYSTEM through hev2_last_error / hev2_last_errno, with real EMFILE.
 *
 * A process that has (almost) no fd free when it loads the library: the
 * library's load-time set-up (Go's runtime poller, the shared epoll fd)
 * fails, and hev2_connect, which tries again, must answer HEV2_ESYSTEM with
 * errno EMFILE and say which resource — not a stale errno. Then, with fds
 * given back, connecting works, and an eventfd refused later (hev2_fd) is
 * reported the same way. The library is dlopen'ed after the fds are used
 * up, so this program does not link against it. Each case runs in a child
 * of its own (fork + exec of this program: a fresh process, no Go runtime
 * copied by fork).
 * usage: test_no_fds LIBPATH            (runs the cases)
 *        test_no_fds LIBPATH FREE       (one case: FREE fds left free) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define LIMIT 64

static int (*p_connect)(const char *, const char *, const hev2_options *, hev2_conn *);
static int (*p_init)(void);
static int (*p_wait)(hev2_conn, int);
static int (*p_fd)(hev2_conn);
static int (*p_release)(hev2_conn);
static const char *(*p_last_error)(void);
static int (*p_last_errno)(void);

static int held[LIMIT];
static int n_held;

/* use_up opens /dev/null until EMFILE, then gives back `free` fds. */
static void use_up(int free)
{
	int fd;
	while (n_held < LIMIT && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		held[n_held++] = fd;
	for (int i = 0; i < free && n_held > 0; i++)
		close(held[--n_held]);
}

static void give_back(void)
{
	while (n_held > 0)
		close(held[--n_held]);
}

#define INIT_TEXT                                                              \
	"cannot make the library's permanent fds (Go runtime poller, epoll): " \
	"Too many open files"

static int one_case(const char *lib, int free)
{
	struct rlimit rl = {LIMIT, LIMIT};
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 100;
	use_up(free);
	void *h = dlopen(lib, RTLD_NOW);
	if (!h) {
		/* No fd to open the file with: nothing of hev2 ran; not this test. */
		fprintf(stderr, "test_no_fds: dlopen with %d free: %s\n", free, dlerror());
		return 101;
	}
	*(void **)&p_connect = dlsym(h, "hev2_connect");
	*(void **)&p_init = dlsym(h, "hev2_init");
	*(void **)&p_wait = dlsym(h, "hev2_wait");
	*(void **)&p_fd = dlsym(h, "hev2_fd");
	*(void **)&p_release = dlsym(h, "hev2_release");
	*(void **)&p_last_error = dlsym(h, "hev2_last_error");
	*(void **)&p_last_errno = dlsym(h, "hev2_last_errno");
	if (!p_connect || !p_init || !p_wait || !p_fd || !p_release || !p_last_error || !p_last_errno)
		return 102;

	/* 1. the library's own fds cannot be made: hev2_connect and hev2_init. */
	CHECK(strcmp(p_last_error(), "") == 0); /* nothing failed yet */
	hev2_conn c = 99;
	errno = 0;
	CHECK_INT(p_connect("127.0.0.1", "9", NULL, &c), HEV2_ESYSTEM);
	CHECK_INT(errno, EMFILE);
	CHECK_INT(p_last_errno(), EMFILE);
	CHECK_INT(c, 0);
	CHECK(strcmp(p_last_error(), "hev2_connect: " INIT_TEXT) == 0);
	errno = 0;
	CHECK_INT(p_init(), HEV2_ESYSTEM);
	CHECK_INT(errno, EMFILE);
	CHECK_INT(p_last_errno(), EMFILE);
	CHECK(strcmp(p_last_error(), "hev2_init: " INIT_TEXT) == 0);
	if (check_failures)
		fprintf(stderr, "last error: %s\n", p_last_error());

	/* 2. fds given back: the set-up is tried again and works; a success
	 * leaves the last error as it was. */
	give_back();
	CHECK_INT(p_connect("127.0.0.1", "9", NULL, &c), HEV2_OK);
	CHECK_INT(p_wait(c, 5000), HEV2_OK);
	CHECK(strcmp(p_last_error(), "hev2_init: " INIT_TEXT) == 0);
	CHECK_INT(p_last_errno(), EMFILE);

	/* 3. no fd for the handle's eventfd: hev2_fd says so. */
	use_up(0);
	errno = 0;
	CHECK_INT(p_fd(c), HEV2_ESYSTEM);
	CHECK_INT(errno, EMFILE);
	CHECK_INT(p_last_errno(), EMFILE);
	CHECK(strcmp(p_last_error(), "hev2_fd: eventfd: Too many open files") == 0);
	give_back();

	/* 4. a later failure that is not HEV2_ESYSTEM clears the errno. */
	CHECK_INT(p_release(c), HEV2_OK);
	CHECK_INT(p_release(c), HEV2_EHANDLE);
	CHECK_INT(p_last_errno(), 0);
	CHECK(strstr(p_last_error(), "hev2_release: handle ") == p_last_error());
	return check_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3)
		return one_case(argv[1], atoi(argv[2]));
	if (argc != 2) {
		fprintf(stderr, "usage: %s LIBPATH\n", argv[0]);
		return 2;
	}
	/* One free fd lets dlopen read the file (and close it again); two
	 * still cannot make the three the set-up needs. */
	for (int free = 1; free <= 2; free++) {
		char n[8];
		snprintf(n, sizeof n, "%d", free);
		pid_t pid = fork();
		if (pid == 0) {
			execl("/proc/self/exe", argv[0], argv[1], n, (char *)NULL);
			_exit(127);
		}
		int status = 0;
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
		check_count++;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			check_failures++;
			fprintf(stderr, "test_no_fds: case with %d fds free failed (status 0x%x)\n", free,
			        status);
		}
	}
	return check_done("test_no_fds");
}
