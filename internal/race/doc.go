// Package race is the Happy Eyeballs v2 race as a sans-I/O state machine
// (Machine), with the types it produces: errors, results and trace events,
// and the establishment report built from a recorded trace (report.go).
// It never reads a clock, never sleeps and never touches a socket; a test
// in package core enforces that it imports nothing that could.
package race
