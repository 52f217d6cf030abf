package resolvertest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hev2/hev2/core"
	"github.com/hev2/hev2/internal/engine"
	"github.com/hev2/hev2/internal/resolve"
	"github.com/hev2/hev2/tests/resolvertest"
)

// connectBurstReport is what a burst of released connects to silent names
// left for the connects made right after it.
type connectBurstReport struct {
	Outcomes             map[string]int // how the burst's connects ended
	HostsFile, Healthy   connectReport  // the connects made right after it
	BusyAfterHealthy     int            // getaddrinfo calls still in glibc then
	MaxPoolThreads       int
	MaxThreads, Baseline int
	Stats                core.SystemResolverStats
}

// childConnectBurst: N connects to distinct silent names, through the
// paths the C ABI takes (StartLibrary: the shared poller's handles; Start:
// a race its waiter drives, here canceled with nobody waiting), each
// released once every lookup is on its way; then, at once, connects to a
// hosts-file name and a name the DNS server answers, both served by a
// listener of the child's own on loopback.
func childConnectBurst(a childArgs) (any, error) {
	r := core.NewSystemResolver(0)
	rep := connectBurstReport{Outcomes: map[string]int{}}
	warmUp(r)
	resolve.AddrConfigFamilies()
	ln, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(int(a.Port)))
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	rep.Baseline = resolvertest.OSThreads()
	peaks := sampleThreadPeaks()
	// The C ABI's two kinds of handle, as capi makes them.
	d := engine.Options{Resolver: r}
	var mu sync.Mutex
	var ended sync.WaitGroup
	note := func(err error) {
		kind := "other: " + fmt.Sprint(err)
		switch {
		case err == nil:
			kind = "connected"
		case errors.Is(err, errReleased):
			kind = "released"
		}
		mu.Lock()
		rep.Outcomes[kind]++
		mu.Unlock()
	}
	var cancels []func()
	for i := 0; i < a.N; i++ {
		host := "n" + strconv.Itoa(i) + "." + a.Host
		if i%2 == 0 {
			ended.Add(1)
			p, err := d.StartLibrary(host, a.Port, func(res *core.Result, err error) {
				if res != nil {
					syscall.Close(res.FD)
				}
				note(err)
				ended.Done()
			})
			if err != nil {
				return nil, err
			}
			cancels = append(cancels, func() { p.Cancel(errReleased) })
			continue
		}
		var done atomic.Bool
		race, err := d.StartWaiter(host, a.Port, func() { done.Store(true) })
		if err != nil {
			return nil, err
		}
		cancels = append(cancels, func() {
			race.Cancel(errReleased)
			_, err := race.Result()
			if !race.Done() {
				err = errors.New("not decided by its cancel")
			}
			note(err)
		})
	}
	// Both families of every connect are asked (the namespace has
	// loopback only) before any is released.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		st := r.Stats()
		if int(st.InFlight+st.Queued)+int(st.HandedOver+st.CapRefused) >= 2*a.N {
			break
		}
	}
	for _, c := range cancels {
		c()
	}
	ended.Wait()
	var both sync.WaitGroup
	both.Add(2)
	for _, c := range []struct {
		host string
		out  *connectReport
	}{{"hosted.test", &rep.HostsFile}, {"good.test", &rep.Healthy}} {
		go func() {
			defer both.Done()
			start := time.Now()
			res, err := d.Connect(context.Background(), c.host, a.Port)
			c.out.ElapsedMS = float64(time.Since(start).Microseconds()) / 1000
			if err != nil {
				c.out.Err = err.Error()
				return
			}
			syscall.Close(res.FD)
			c.out.Addr = res.Addr.Addr().String()
		}()
	}
	both.Wait()
	rep.BusyAfterHealthy = resolve.BusyCalls()
	rep.MaxThreads, rep.MaxPoolThreads = peaks()
	rep.Stats = r.Stats()
	return rep, nil
}

var errReleased = errors.New("released by the test")
