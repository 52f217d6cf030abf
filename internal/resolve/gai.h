/* The getaddrinfo pool of the system resolver: a few C threads (created with
 * pthread_create, not by the Go runtime) that call getaddrinfo(3) one family
 * at a time. Why C threads: a failed pthread_create can be reported as
 * EAI_SYSTEM with its errno (the Go runtime aborts when it cannot make a
 * thread), and idle threads exit, so a burst of lookups does not leave the
 * host with hundreds of threads. A finished job is put on a list and an
 * eventfd is signalled; Go (gai_cgo.go) reads it through its netpoller. */
#ifndef HEV2_GAI_H
#define HEV2_GAI_H

#include <stdint.h>

struct hev2_gai_addr { unsigned char ip[16]; uint32_t scope; int v6; };

/* Where a thread that waits for lookups (a race driven by its waiter) says
 * which eventfd wakes it now (-1: none). A finished job writes it, beside
 * the pool's own eventfd, so that the waiter needs no other thread to learn
 * of the answer. Shared by the waiter and its jobs; the last one frees it. */
struct hev2_gai_waker {
	int fd;
	int refs;
};

struct hev2_gai_job {
	struct hev2_gai_job *next;
	struct hev2_gai_waker *waker;  // NULL, or a reference held by the job
	char *host;
	int family;
	uintptr_t handle;              // the Go side's cgo.Handle
	int rc;                        // getaddrinfo's return value
	int err;                       // errno read on the calling thread when rc == EAI_SYSTEM
	int naddrs;
	struct hev2_gai_addr *addrs;
};

struct hev2_gai_waker *hev2_gai_waker_new(void); /* refs 1, fd -1; NULL: ENOMEM */
void hev2_gai_waker_set(struct hev2_gai_waker *w, int fd);
void hev2_gai_waker_ref(struct hev2_gai_waker *w);
void hev2_gai_waker_unref(struct hev2_gai_waker *w);

/* Returns the eventfd signalled when jobs finish, or -errno. */
int hev2_gai_init(void);
/* Hands j to an idle thread, or starts one: 0, or the errno of the failed
 * pthread_create (j is then not queued). */
int hev2_gai_submit(struct hev2_gai_job *j);
/* Takes every finished job (a list linked by next). */
struct hev2_gai_job *hev2_gai_take_done(void);
void hev2_gai_free(struct hev2_gai_job *j);
void hev2_gai_pool_stats(long *threads, long *idle, long *created);
/* Idle threads exit after ms; a new value applies to waiting threads at once. */
void hev2_gai_set_idle(long ms);

#endif
