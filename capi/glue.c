/* C helpers for the Go side: cgo cannot call a C function pointer, and the
 * sockaddr unions are simpler to fill in C. */
#include <netinet/in.h>
#include <string.h>

#include "internal.h"

void hev2c_fill_sockaddr(hev2_result_info *r, const unsigned char *addr,
                         int addr_len, int port, uint32_t scope_id)
{
	memset(&r->sockaddr, 0, sizeof r->sockaddr);
	if (addr_len == 4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&r->sockaddr;
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		memcpy(&sin->sin_addr, addr, 4);
		r->sockaddr_len = sizeof *sin;
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&r->sockaddr;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		memcpy(&sin6->sin6_addr, addr, 16);
		sin6->sin6_scope_id = scope_id;
		r->sockaddr_len = sizeof *sin6;
	}
}

/* The callback pointer and its user data travel through Go as integers:
 * a user's data may be any bit pattern ((void *)1 is common), and the Go
 * runtime aborts if it meets such a value typed as a pointer. */
void hev2c_call_done_u(uintptr_t fn, hev2_conn c, int status, uintptr_t data)
{
	((hev2_done_fn)fn)(c, status, (void *)data);
}
