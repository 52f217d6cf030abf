package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrInvalidOptions is wrapped by every InputError: errors.Is(err,
// ErrInvalidOptions) says "refused for its input, nothing was started".
var ErrInvalidOptions = errors.New("invalid options")

// InputKind says which input of a connection was refused.
type InputKind uint8

const (
	// InputHost: the host is empty, longer than MaxHostLen or holds a NUL.
	InputHost InputKind = iota + 1
	// InputPort: the port is 0, not a number in 1..65535 nor a known
	// service.
	InputPort
	// InputOption: an option of the Dialer (a duration out of range,
	// timeouts that exclude each other, an unknown family ...).
	InputOption
)

func (k InputKind) String() string {
	switch k {
	case InputHost:
		return "host"
	case InputPort:
		return "port"
	case InputOption:
		return "option"
	}
	return fmt.Sprintf("InputKind(%d)", uint8(k))
}

// InputError is a connection refused for its input before anything started
// (no lookup, no socket). These rules exist once, here: the C ABI turns
// Kind into HEV2_EHOST, HEV2_EPORT or HEV2_EOPTIONS, and the Ruby and
// Python bindings turn those into their language's exceptions.
type InputError struct {
	Kind InputKind
	// Field is "host", "port", or the option's name as the C header and
	// the bindings spell it (without the header's "_ms"): "connect_timeout",
	// "first_address_family_count", "local_host" ...
	Field string
	// Reason says what is wrong with the value ("-1ms out of range
	// [0, 24h]").
	Reason string
}

func (e *InputError) Error() string { return "invalid " + e.Field + ": " + e.Reason }

// Unwrap makes every InputError match ErrInvalidOptions.
func (e *InputError) Unwrap() error { return ErrInvalidOptions }

func invalidOption(field, format string, args ...any) error {
	return &InputError{Kind: InputOption, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Bounds of a connection's inputs.
const (
	// MaxHostLen is the longest host accepted (RFC 1035's 253 characters
	// of presentation format; an IPv6 literal's brackets not counted).
	// The C header's HEV2_MAX_HOSTLEN is the same bound.
	MaxHostLen = 253
	// MaxDuration bounds every duration option: beyond a day a value is a
	// mistake (an unconverted unit), not a wish. The C header's
	// HEV2_MAX_TIMEOUT_MS is the same bound (capi checks it at compile
	// time).
	MaxDuration = 24 * time.Hour
	// MaxFirstAddressFamilyCount bounds FirstAddressFamilyCount.
	MaxFirstAddressFamilyCount = 64
	// MaxALPN bounds the protocols of ALPN.
	MaxALPN = 16
)

// Validate reports the first option that cannot be honoured, as an
// *InputError. Connect, DialContext and the C ABI's connects call it; a
// caller needs to only to learn about a bad Dialer before connecting.
func (o *Options) Validate() error {
	// This runs on every connect and must not allocate: the table is an
	// array on the stack (TestInputRulesAllocateNothing).
	durations := [...]struct {
		name string
		d    time.Duration
	}{
		{"resolution_delay", o.ResolutionDelay},
		{"connection_attempt_delay", o.ConnectionAttemptDelay},
		{"resolv_timeout", o.ResolvTimeout},
		{"connect_timeout", o.ConnectTimeout},
		{"open_timeout", o.OpenTimeout},
		{"keepalive", o.KeepAlive},
		{"history_lifetime", o.HistoryLifetime},
		{"ech_wait", o.ECHWait},
	}
	for _, f := range durations {
		if err := checkDuration(f.name, f.d); err != nil {
			return err
		}
	}
	if o.OpenTimeout > 0 && (o.ResolvTimeout > 0 || o.ConnectTimeout > 0) {
		return invalidOption("open_timeout", "cannot be combined with resolv_timeout or connect_timeout")
	}
	if n := o.FirstAddressFamilyCount; n < 0 || n > MaxFirstAddressFamilyCount {
		return invalidOption("first_address_family_count", "%d out of range [0, %d]", n, MaxFirstAddressFamilyCount)
	}
	switch o.Family {
	case FamilyUnspec, IPv4, IPv6:
	default:
		return invalidOption("family", "unknown family %d", int(o.Family))
	}
	if len(o.ALPN) > MaxALPN {
		return invalidOption("alpn", "%d protocols, at most %d", len(o.ALPN), MaxALPN)
	}
	for _, p := range o.ALPN {
		// RFC 7301: 1 to 255 bytes; a comma cannot cross the C ABI's list.
		if p == "" || len(p) > 255 || strings.ContainsAny(p, ",\x00") {
			return invalidOption("alpn", "%q is not a protocol name (1-255 bytes, no comma or NUL)", p)
		}
	}
	if o.LocalAddr.IsValid() && o.Family != FamilyUnspec && FamilyOf(o.LocalAddr) != o.Family {
		return invalidOption("local_host", "%v is not an address of family %v", o.LocalAddr, o.Family)
	}
	return nil
}

func checkDuration(field string, v time.Duration) error {
	if v < 0 || v > MaxDuration {
		return invalidOption(field, "%v out of range [0, 24h]", v)
	}
	return nil
}

// checkHost applies the host rules and returns the host without the
// brackets an IPv6 literal may come in: what no resolver could ever
// answer is refused at once, with a clear error.
func checkHost(host string) (string, error) {
	if len(host) >= 2 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	switch {
	case host == "":
		return "", &InputError{Kind: InputHost, Field: "host", Reason: "empty"}
	case len(host) > MaxHostLen:
		return "", &InputError{Kind: InputHost, Field: "host", Reason: fmt.Sprintf("longer than %d characters", MaxHostLen)}
	case strings.IndexByte(host, 0) >= 0:
		return "", &InputError{Kind: InputHost, Field: "host", Reason: "contains a NUL byte"}
	}
	return host, nil
}

func invalidPort(format string, args ...any) error {
	return &InputError{Kind: InputPort, Field: "port", Reason: fmt.Sprintf(format, args...)}
}
