package main

/*
#include "internal.h"
*/
import "C"

import (
	"net/netip"

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

// builtinResolver: core has no built-in DNS client yet.
func builtinResolver(nameservers []netip.AddrPort) (core.Resolver, error) {
	return nil, fail(statusNotSup, "the built-in resolver is not available in this build")
}
