// Package testbed builds a real, impaired network for hev2's tests: a client
// and a server network namespace joined by one veth link per address family,
// server addresses that are blackholed, refused, delayed or slow to accept,
// a controllable DNS server in the server namespace, and a scenario suite
// that runs any client command (the shared scenario-client contract) inside
// the client namespace.
//
// Typical use (as root):
//
//	bed, err := testbed.Start(testbed.Options{})
//	if err != nil { ... }
//	defer bed.Close()
//	bed.DNS.SetHost("dual.hev2.test", testbed.Answer(testbed.V6Good1), testbed.Answer(testbed.V4Good1))
//	out, err := bed.Exec(ctx, "getent", "ahosts", "dual.hev2.test")
//
// See README.md beside this file for the address plan and the suite.
package testbed
