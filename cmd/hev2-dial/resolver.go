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
		return nil, errors.New("--resolver builtin: not available yet (core has no built-in resolver in this build)")
	}
	return nil, errors.New("--resolver " + name + ": want system or builtin")
}
