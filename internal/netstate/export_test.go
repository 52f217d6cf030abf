package netstate

// Read is read for the tests: one synchronous dump in the calling thread's
// network namespace.
var Read = read

// Compute is compute for the tests.
var Compute = compute

// Route and Nexthop are route and nexthop for the tests.
type (
	Route   = route
	Nexthop = nexthop
)

// ParseAddr and ParseRoute are parseAddr and parseRoute for the tests.
var (
	ParseAddr  = parseAddr
	ParseRoute = parseRoute
)
