/*
 * relay.h — hev2-connect --stdio: copy stdin to a connected socket and the
 * socket to stdout, like nc, with half-close in both directions.
 */
#ifndef HEV2_CONNECT_RELAY_H
#define HEV2_CONNECT_RELAY_H

/*
 * relay_stdio relays until both directions are finished:
 *   stdin -> sock: at stdin's EOF (once everything read was sent), the
 *                  socket's write side is shut down (shutdown(SHUT_WR));
 *   sock -> stdout: at the socket's EOF (once everything received was
 *                  written), stdout is closed.
 * sock must be a connected, non-blocking TCP socket; it is closed on return.
 * Returns 0 when both directions ended at an EOF, -1 after printing one
 * line to stderr ("hev2-connect: HOST port PORT: <what>: <why>") when a read
 * or a write failed on either side. When the reader of stdout has gone
 * away (EPIPE), it does not return: the process dies of SIGPIPE, as cat.
 */
int relay_stdio(int sock, const char *host, const char *port);

#endif
