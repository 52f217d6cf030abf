/* The getaddrinfo pool: see gai.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "gai.h"

static pthread_mutex_t hev2_gai_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hev2_gai_cv;
static struct hev2_gai_job *hev2_gai_pending, *hev2_gai_pending_tail, *hev2_gai_done;
static int hev2_gai_npending, hev2_gai_nidle, hev2_gai_nthreads;
static long hev2_gai_created;
static long hev2_gai_idle_ms = 5000;
static int hev2_gai_efd = -1;

// Runs getaddrinfo for one family and copies the answer out, so the
// addrinfo list is freed on this thread whatever happens to the caller.
static void hev2_gai_run(struct hev2_gai_job *j) {
	struct addrinfo hints, *res = NULL, *ai;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = j->family;
	hints.ai_socktype = SOCK_STREAM;
	j->rc = getaddrinfo(j->host, NULL, &hints, &res);
	j->err = j->rc == EAI_SYSTEM ? errno : 0;
	if (j->rc != 0)
		return;
	int n = 0;
	for (ai = res; ai; ai = ai->ai_next)
		n++;
	j->addrs = calloc(n ? n : 1, sizeof *j->addrs);
	if (!j->addrs) {
		freeaddrinfo(res);
		j->rc = EAI_MEMORY;
		return;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		struct hev2_gai_addr *a = &j->addrs[j->naddrs];
		if (ai->ai_family == AF_INET6) {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ai->ai_addr;
			memcpy(a->ip, &s6->sin6_addr, 16);
			a->scope = s6->sin6_scope_id;
			a->v6 = 1;
		} else if (ai->ai_family == AF_INET) {
			memcpy(a->ip, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
		} else {
			continue;
		}
		j->naddrs++;
	}
	freeaddrinfo(res);
}

static void *hev2_gai_worker(void *arg) {
	struct hev2_gai_job *j = arg;
	// A library's helper thread takes no asynchronous signal: the host's
	// and Go's threads get them, as they expect.
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	// Named, so that a host's `top -H` or /proc/PID/task shows whose
	// threads these are, and tests can see the last one gone.
	pthread_setname_np(pthread_self(), "hev2-gai");
	for (;;) {
		hev2_gai_run(j);
		// Count this thread as free before its job is seen as done: the
		// job's slot is given back only then, so a new job finds this
		// thread instead of creating one, and threads never outnumber
		// the slots.
		// The job may be freed as soon as it is on the done list: take
		// its waker reference first.
		struct hev2_gai_waker *w = j->waker;
		j->waker = NULL;
		pthread_mutex_lock(&hev2_gai_mu);
		j->next = hev2_gai_done;
		hev2_gai_done = j;
		hev2_gai_nidle++;
		pthread_mutex_unlock(&hev2_gai_mu);
		uint64_t one = 1;
		if (w) {
			int fd = __atomic_load_n(&w->fd, __ATOMIC_ACQUIRE);
			if (fd >= 0)
				while (write(fd, &one, sizeof one) < 0 && errno == EINTR)
					;
			hev2_gai_waker_unref(w);
		}
		while (write(hev2_gai_efd, &one, sizeof one) < 0 && errno == EINTR)
			;
		// Wait for the next job; exit once idle for hev2_gai_idle_ms
		// (read again at every wake-up, so a new value applies at once).
		pthread_mutex_lock(&hev2_gai_mu);
		struct timespec since;
		clock_gettime(CLOCK_MONOTONIC, &since);
		int rc = 0;
		while (!hev2_gai_pending && rc != ETIMEDOUT) {
			struct timespec until = since;
			until.tv_sec += hev2_gai_idle_ms / 1000;
			until.tv_nsec += (hev2_gai_idle_ms % 1000) * 1000000;
			if (until.tv_nsec >= 1000000000) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000;
			}
			rc = pthread_cond_timedwait(&hev2_gai_cv, &hev2_gai_mu, &until);
		}
		hev2_gai_nidle--;
		j = hev2_gai_pending;
		if (!j) {
			hev2_gai_nthreads--;
			pthread_mutex_unlock(&hev2_gai_mu);
			return NULL;
		}
		hev2_gai_pending = j->next;
		if (!hev2_gai_pending)
			hev2_gai_pending_tail = NULL;
		hev2_gai_npending--;
		pthread_mutex_unlock(&hev2_gai_mu);
	}
}

// Returns the eventfd signalled when jobs finish, or -errno.
int hev2_gai_init(void) {
	if (hev2_gai_efd >= 0)
		return hev2_gai_efd;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&hev2_gai_cv, &ca);
	pthread_condattr_destroy(&ca);
	hev2_gai_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return hev2_gai_efd < 0 ? -errno : hev2_gai_efd;
}

// Hands j to an idle thread, or starts one. Returns 0 or the errno of the
// failed pthread_create (j is then not queued).
int hev2_gai_submit(struct hev2_gai_job *j) {
	pthread_mutex_lock(&hev2_gai_mu);
	if (hev2_gai_nidle > hev2_gai_npending) {
		j->next = NULL;
		if (hev2_gai_pending_tail)
			hev2_gai_pending_tail->next = j;
		else
			hev2_gai_pending = j;
		hev2_gai_pending_tail = j;
		hev2_gai_npending++;
		pthread_mutex_unlock(&hev2_gai_mu);
		pthread_cond_signal(&hev2_gai_cv);
		return 0;
	}
	pthread_attr_t attr;
	pthread_t t;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&t, &attr, hev2_gai_worker, j);
	pthread_attr_destroy(&attr);
	if (rc == 0) {
		hev2_gai_nthreads++;
		hev2_gai_created++;
	}
	pthread_mutex_unlock(&hev2_gai_mu);
	return rc;
}

struct hev2_gai_job *hev2_gai_take_done(void) {
	pthread_mutex_lock(&hev2_gai_mu);
	struct hev2_gai_job *j = hev2_gai_done;
	hev2_gai_done = NULL;
	pthread_mutex_unlock(&hev2_gai_mu);
	return j;
}

struct hev2_gai_waker *hev2_gai_waker_new(void) {
	struct hev2_gai_waker *w = malloc(sizeof *w);
	if (w) {
		w->fd = -1;
		w->refs = 1;
	}
	return w;
}

void hev2_gai_waker_set(struct hev2_gai_waker *w, int fd) {
	__atomic_store_n(&w->fd, fd, __ATOMIC_RELEASE);
}

void hev2_gai_waker_ref(struct hev2_gai_waker *w) {
	__atomic_add_fetch(&w->refs, 1, __ATOMIC_RELAXED);
}

void hev2_gai_waker_unref(struct hev2_gai_waker *w) {
	if (__atomic_sub_fetch(&w->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(w);
}

void hev2_gai_free(struct hev2_gai_job *j) {
	if (j->waker)
		hev2_gai_waker_unref(j->waker);
	free(j->addrs);
	free(j->host);
	free(j);
}

void hev2_gai_pool_stats(long *threads, long *idle, long *created) {
	pthread_mutex_lock(&hev2_gai_mu);
	*threads = hev2_gai_nthreads;
	*idle = hev2_gai_nidle;
	*created = hev2_gai_created;
	pthread_mutex_unlock(&hev2_gai_mu);
}

void hev2_gai_set_idle(long ms) {
	pthread_mutex_lock(&hev2_gai_mu);
	hev2_gai_idle_ms = ms;
	pthread_cond_broadcast(&hev2_gai_cv);
	pthread_mutex_unlock(&hev2_gai_mu);
}
