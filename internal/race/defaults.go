package race

import "time"

// RFC 8305 defaults (§3, §5) and the bounds the RFC gives for the
// Connection Attempt Delay.
const (
	DefaultResolutionDelay         = 50 * time.Millisecond
	DefaultConnectionAttemptDelay  = 250 * time.Millisecond
	MinConnectionAttemptDelay      = 10 * time.Millisecond
	MaxConnectionAttemptDelay      = 2 * time.Second
	DefaultFirstAddressFamilyCount = 1
)
