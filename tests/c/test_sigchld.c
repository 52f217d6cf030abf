/* A SIGCHLD storm, as a busy Ruby or Python host makes: the host's handler
 * (no SA_RESTART) is installed *before* the library is loaded, as in a real
 * interpreter that dlopens an extension, and a thread forks short-lived
 * children and sends SIGCHLD bursts while other threads connect, wait with
 * and without timeouts, and poll handle fds. No signal may surface as a
 * failure. Also checks what the header says loading changes: the host's
 * handler is kept but gains SA_ONSTACK; an ignored SIGPIPE stops being
 * SIG_IGN. argv[1]: the path of libhev2.so. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

/* The library's functions, looked up after dlopen. */
static struct {
	int (*connect)(const char *, const char *, const hev2_options *, hev2_conn *);
	int (*wait)(hev2_conn, int);
	int (*fd)(hev2_conn);
	int (*result)(hev2_conn, hev2_result_info *);
	int (*release)(hev2_conn);
	int (*init)(void);
	int (*options_init)(hev2_options *);
	int (*stats)(hev2_stats_info *);
} lib;

static atomic_long signals_seen;
static atomic_int stop_storm;
static atomic_int failures;
static struct server srv;
static struct blackhole bh;
static char ok_port[16], drop_port[16];

static void on_sigchld(int sig)
{
	(void)sig;
	int saved = errno;
	atomic_fetch_add(&signals_seen, 1);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = saved;
}

static void *storm(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_storm)) {
		pid_t p = fork();
		if (p == 0)
			_exit(0);
		for (int i = 0; i < 50; i++)
			kill(getpid(), SIGCHLD);
	}
	return NULL;
}

static void fail(const char *what, int rc)
{
	atomic_fetch_add(&failures, 1);
	fprintf(stderr, "sigchld storm: %s: status %d\n", what, rc);
}

static void *worker(void *arg)
{
	(void)arg;
	hev2_options o;
	lib.options_init(&o);
	for (int i = 0; i < 150; i++) {
		hev2_conn c;
		hev2_result_info r = {.size = sizeof r};
		int rc;
		switch (i % 3) {
		case 0: /* accepted: wait forever must end in success */
			o.connect_timeout_ms = 0;
			if ((rc = lib.connect("127.0.0.1", ok_port, &o, &c)) != HEV2_OK) {
				fail("connect", rc);
				break;
			}
			if ((rc = lib.wait(c, -1)) != HEV2_OK)
				fail("wait(-1)", rc);
			lib.result(c, &r);
			if (r.status != HEV2_OK)
				fail("accepted connect outcome", r.status);
			close(r.fd);
			lib.release(c);
			break;
		case 1: { /* dropped: a 20 ms wait times out, then connect_timeout */
			o.connect_timeout_ms = 40;
			double t0 = now_ms();
			if ((rc = lib.connect("127.0.0.1", drop_port, &o, &c)) != HEV2_OK) {
				fail("connect", rc);
				break;
			}
			/* Not done before 20 ms of waiting, unless this thread was
			 * descheduled past the 40 ms timeout before it could wait. */
			double tw = now_ms();
			rc = lib.wait(c, 20);
			if (!(rc == HEV2_EAGAIN && now_ms() - tw >= 19) && !(rc == HEV2_OK && now_ms() - t0 >= 39))
				fail("wait(20) returned early", rc);
			if ((rc = lib.wait(c, -1)) != HEV2_OK)
				fail("wait(-1)", rc);
			lib.result(c, &r);
			if (r.status != HEV2_ETIMEOUT || now_ms() - t0 < 39)
				fail("connect_timeout outcome", r.status);
			lib.release(c);
			break;
		}
		case 2: { /* accepted, waited for through the handle's fd */
			o.connect_timeout_ms = 0;
			if ((rc = lib.connect("127.0.0.1", ok_port, &o, &c)) != HEV2_OK) {
				fail("connect", rc);
				break;
			}
			struct pollfd p = {.fd = lib.fd(c), .events = POLLIN};
			int n;
			do
				n = poll(&p, 1, 5000);
			while (n < 0 && errno == EINTR);
			if (n != 1)
				fail("poll on hev2_fd", n);
			lib.result(c, &r);
			if (r.status != HEV2_OK)
				fail("accepted connect outcome", r.status);
			close(r.fd);
			lib.release(c);
			break;
		}
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_sigchld PATH/libhev2.so\n");
		return 2;
	}
	/* The host's state before loading. */
	struct sigaction sa = {.sa_handler = on_sigchld};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
#define LOAD(field, name)                                                      \
	do {                                                                   \
		*(void **)&lib.field = dlsym(h, name);                          \
		CHECK(lib.field != NULL);                                      \
	} while (0)
	LOAD(connect, "hev2_connect");
	LOAD(wait, "hev2_wait");
	LOAD(fd, "hev2_fd");
	LOAD(result, "hev2_result");
	LOAD(release, "hev2_release");
	LOAD(init, "hev2_init");
	LOAD(options_init, "hev2_options_init");
	LOAD(stats, "hev2_stats");
	CHECK(dlsym(h, "hev2go_connect") == NULL); /* internals stay hidden */
	CHECK_INT(lib.init(), HEV2_OK);

	/* What loading changed, as documented in hev2.h. */
	struct sigaction now;
	sigaction(SIGCHLD, NULL, &now);
	CHECK(now.sa_handler == on_sigchld);
	CHECK(now.sa_flags & SA_ONSTACK);
	sigaction(SIGPIPE, NULL, &now);
	CHECK(now.sa_handler != SIG_IGN);
	CHECK(raise(SIGPIPE) == 0); /* still ignored for the host itself */

	if (server_start(&srv, AF_INET) < 0 || blackhole_start(&bh, AF_INET) < 0)
		return 1;
	snprintf(ok_port, sizeof ok_port, "%d", srv.port);
	snprintf(drop_port, sizeof drop_port, "%d", bh.port);

	pthread_t s, w[2];
	pthread_create(&s, NULL, storm, NULL);
	usleep(20000);
	double t0 = now_ms();
	for (int i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	atomic_store(&stop_storm, 1);
	pthread_join(s, NULL);
	long seen = atomic_load(&signals_seen);
	printf("sigchld: 300 connects in %.0f ms under %ld SIGCHLD deliveries\n", now_ms() - t0, seen);
	CHECK(seen > 1000);
	CHECK_INT(atomic_load(&failures), 0);
	hev2_stats_info st = {.size = sizeof st};
	CHECK_INT(lib.stats(&st), HEV2_OK);
	CHECK_INT(st.handles_live, 0);
	/* dlclose unloads nothing: the library stays mapped and usable. */
	dlclose(h);
	CHECK_INT(lib.init(), HEV2_OK);
	blackhole_stop(&bh);
	return check_done("test_sigchld");
}
