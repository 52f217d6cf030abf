// Package netio performs a race's actions on a real system: non-blocking
// sockets, the process-wide epoll poller, timers, and the drivers that feed
// the race machine what happened.
package netio
