package main

/*
#include "internal.h"
*/
import "C"

import (
	"net/netip"
	"strings"
	"sync"

	"github.com/hev2/hev2/core"
)

// resolverFor maps hev2_options.resolver (+ nameservers) onto a core
// resolver. The system resolver is core's process-wide one, so its bound on
// getaddrinfo threads in flight holds across every handle.
func resolverFor(choice int, nameservers []netip.AddrPort) (core.Resolver, error) {
	switch choice {
	case C.HEV2_RESOLVER_DEFAULT:
		if len(nameservers) > 0 {
			return builtinResolver(nameservers)
		}
		return core.DefaultSystemResolver, nil
	case C.HEV2_RESOLVER_SYSTEM:
		if len(nameservers) > 0 {
			return nil, fail(statusOptions, "nameservers need the built-in resolver, not the system one")
		}
		return core.DefaultSystemResolver, nil
	case C.HEV2_RESOLVER_BUILTIN:
		return builtinResolver(nameservers)
	}
	return nil, fail(statusOptions, "resolver %d is not HEV2_RESOLVER_DEFAULT, _SYSTEM or _BUILTIN", choice)
}

// builtinResolvers keeps one built-in resolver per name-server list, so a
// connect does not re-read resolv.conf and the hosts file each time and the
// resolver's counters describe the process. Bounded: past the bound a new
// list gets a resolver of its own, not cached.
var builtinResolvers = struct {
	sync.Mutex
	m map[string]*core.DNSResolver
}{m: map[string]*core.DNSResolver{}}

const maxCachedResolvers = 64

func builtinResolver(nameservers []netip.AddrPort) (core.Resolver, error) {
	servers := make([]string, len(nameservers))
	for i, ns := range nameservers {
		servers[i] = ns.String()
	}
	key := strings.Join(servers, ",")
	builtinResolvers.Lock()
	defer builtinResolvers.Unlock()
	if r, ok := builtinResolvers.m[key]; ok {
		return r, nil
	}
	r, err := core.NewDNSResolver(core.DNSConfig{Nameservers: servers})
	if err != nil {
		return nil, fail(statusOptions, "built-in resolver: %v", err)
	}
	if len(builtinResolvers.m) < maxCachedResolvers {
		builtinResolvers.m[key] = r
	}
	return r, nil
}
