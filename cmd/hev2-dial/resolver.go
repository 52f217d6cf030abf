package main

import (
	"errors"

	"github.com/hev2/hev2/core"
)

// newResolver picks the contract's --resolver: "system" is getaddrinfo,
// one call per family (core.SystemResolver).
func newResolver(name string) (core.Resolver, error) {
	switch name {
	case "system":
		return core.DefaultSystemResolver, nil
	case "builtin":
		// hev2's own DNS resolver, configured from the namespace's
		// resolv.conf and hosts like getaddrinfo.
		return core.NewDNSResolver(core.DNSConfig{})
	}
	return nil, errors.New("--resolver " + name + ": want system or builtin")
}
