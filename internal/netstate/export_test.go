package netstate

// Read is read for the tests: one synchronous dump in the calling thread's
// network namespace.
var Read = read

// Compute is compute for the tests.
var Compute = compute
