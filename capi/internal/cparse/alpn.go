package cparse

import (
	"errors"
	"strings"
)

// ALPN splits hev2_options.alpn, the caller's protocols separated by
// commas ("h2,http/1.1"), in their order. Each protocol's own rule (1 to
// 255 bytes, at most 16 of them) is the engine's; an empty list or an
// empty entry says nothing a caller could mean.
func ALPN(s string) ([]string, error) {
	if s == "" {
		return nil, errors.New("alpn is empty (NULL means the default, h2 and http/1.1)")
	}
	if hasControl(s) {
		return nil, errors.New("alpn holds a control character")
	}
	out := strings.Split(s, ",")
	for _, p := range out {
		if p == "" {
			return nil, errors.New("alpn has an empty protocol name (two commas, or one at an end)")
		}
	}
	return out, nil
}
