package main

import (
	"errors"

	"github.com/hev2/hev2/core"
)

// newResolver picks the contract's --resolver: "system" is getaddrinfo, one
// call per family (core.SystemResolver); "builtin" is hev2's own DNS
// resolver, configured from resolv.conf and hosts like getaddrinfo (in the
// test bed: the client namespace's bind-mounted files).
func newResolver(name string) (core.Resolver, error) {
	switch name {
	case "system":
		return core.DefaultSystemResolver, nil
	case "builtin":
		return core.NewDNSResolver(core.DNSConfig{})
	}
	return nil, errors.New("--resolver " + name + ": want system or builtin")
}
