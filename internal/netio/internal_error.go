package netio

import (
	"fmt"
	"os"
	"runtime/debug"
)

// InternalError is a bug of hev2 caught while a race was being played: the
// race ends with it (the C ABI reports HEV2_EINTERNAL) rather than taking
// the host process down.
type InternalError struct {
	Panic any
	Stack []byte
}

func (e *InternalError) Error() string { return fmt.Sprintf("hev2: internal error: %v", e.Panic) }

func newInternalError(p any) *InternalError {
	e := &InternalError{Panic: p, Stack: debug.Stack()}
	fmt.Fprintf(os.Stderr, "hev2: internal error (please report): %v\n%s", p, e.Stack)
	return e
}
