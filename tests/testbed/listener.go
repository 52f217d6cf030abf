package testbed

import (
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/vishvananda/netns"
)

// serverListener accepts connections on one server address and closes
// each one, at once or (slow accept) after a delay.
type serverListener struct {
	ln     net.Listener
	hold   time.Duration
	wg     sync.WaitGroup
	closed chan struct{}
}

func listenIn(ns netns.NsHandle, addr netip.Addr, port uint16, hold time.Duration) (*serverListener, error) {
	var ln net.Listener
	err := inNamespace(ns, func() error {
		var err error
		ln, err = net.Listen("tcp", net.JoinHostPort(addr.String(), strconv.Itoa(int(port))))
		return err
	})
	if err != nil {
		return nil, err
	}
	l := &serverListener{ln: ln, hold: hold, closed: make(chan struct{})}
	l.wg.Add(1)
	go l.acceptLoop()
	return l, nil
}

func (l *serverListener) acceptLoop() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		if l.hold == 0 {
			c.Close()
			continue
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			select {
			case <-time.After(l.hold):
			case <-l.closed:
			}
			c.Close()
		}()
	}
}

func (l *serverListener) close() {
	close(l.closed)
	l.ln.Close()
	l.wg.Wait()
}
