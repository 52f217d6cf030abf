package core

import "github.com/hev2/hev2/internal/engine"

// The input rules exist once, in the engine (internal/engine/input.go): the
// C ABI turns InputError.Kind into HEV2_EHOST, HEV2_EPORT or HEV2_EOPTIONS,
// and the Ruby and Python bindings turn those into their language's
// exceptions.

// ErrInvalidOptions is wrapped by every InputError: errors.Is(err,
// ErrInvalidOptions) says "refused for its input, nothing was started".
var ErrInvalidOptions = engine.ErrInvalidOptions

type (
	// InputError is a connection refused for its input before anything
	// started (no lookup, no socket): Kind, Field (the option's name as
	// the C header and the bindings spell it, without "_ms") and Reason.
	InputError = engine.InputError
	// InputKind says which input of a connection was refused.
	InputKind = engine.InputKind
)

// Which input was refused (InputError.Kind).
const (
	InputHost   = engine.InputHost
	InputPort   = engine.InputPort
	InputOption = engine.InputOption
)

// Bounds of a connection's inputs: MaxHostLen is HEV2_MAX_HOSTLEN (RFC
// 1035's 253 characters), MaxDuration bounds every duration option (the C
// header's HEV2_MAX_TIMEOUT_MS).
const (
	MaxHostLen                 = engine.MaxHostLen
	MaxDuration                = engine.MaxDuration
	MaxFirstAddressFamilyCount = engine.MaxFirstAddressFamilyCount
)

// Validate reports the first option that cannot be honoured, as an
// *InputError. Connect and DialContext call it; a caller needs to only to
// learn about a bad Dialer before connecting.
func (d *Dialer) Validate() error { return d.options().Validate() }
