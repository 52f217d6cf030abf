// Command go-http fetches a URL with net/http over hev2's Happy Eyeballs
// dialer: the one line is http.Transport{DialContext: d.DialContext}.
// Everything else is net/http as usual (proxies from the environment,
// TLS roots from the system or $SSL_CERT_FILE, keep-alive, HTTP/2).
//
//	go run ./examples/go-http https://example.com/
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/hev2/hev2/core"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go-http URL")
		os.Exit(2)
	}
	var d core.Dialer // RFC 8305 defaults; set its fields to tune the race
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DialContext = d.DialContext
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}

	start := time.Now()
	resp, err := client.Get(os.Args[1])
	if err != nil {
		// A connect failure is a *core.Error inside: every lookup and attempt.
		fmt.Fprintln(os.Stderr, "go-http:", err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-http:", err)
		os.Exit(1)
	}
	fmt.Printf("%s in %v\n%s\n", resp.Status, time.Since(start).Round(time.Millisecond), body)
}
