// Command syscount connects N times to a loopback listener run by another
// process, with hev2 or with Go's net.Dialer, so that `strace -c -f` over
// it counts the client's syscalls only. `make bench-core` runs it twice
// (N=0 and N) and prints syscalls per connect.
//
//	syscount -serve                 # listens on 127.0.0.1, prints the port
//	syscount -mode hev2|net -n N -port P
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/hev2/hev2/core"
	"golang.org/x/sys/unix"
)

func main() {
	serve := flag.Bool("serve", false, "accept and close connections forever")
	mode := flag.String("mode", "hev2", "hev2 or net")
	n := flag.Int("n", 1000, "connections to make")
	port := flag.Int("port", 0, "listener port on 127.0.0.1")
	flag.Parse()
	if *serve {
		serveForever()
		return
	}
	ctx := context.Background()
	addr := "127.0.0.1:" + strconv.Itoa(*port)
	var d core.Dialer
	var nd net.Dialer
	for i := 0; i < *n; i++ {
		switch *mode {
		case "hev2":
			res, err := d.Connect(ctx, "127.0.0.1", uint16(*port))
			if err != nil {
				fail(err)
			}
			unix.Close(res.FD)
		case "net":
			c, err := nd.DialContext(ctx, "tcp", addr)
			if err != nil {
				fail(err)
			}
			c.Close()
		default:
			fail(fmt.Errorf("unknown mode %q", *mode))
		}
	}
}

func serveForever() {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	for {
		c, err := ln.Accept()
		if err != nil {
			fail(err)
		}
		c.Close()
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "syscount:", err)
	os.Exit(1)
}
