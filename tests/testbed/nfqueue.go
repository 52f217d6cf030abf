package testbed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// The kernel here has no netem, so a path delay is made with an iptables
// NFQUEUE rule in the server namespace and this reader: every queued packet
// is held for the delay, then given back with an ACCEPT verdict. The
// nfnetlink_queue messages are built by hand on top of mdlayher/netlink
// (florianl/go-nfqueue is not served by the module proxy); the layouts are
// those of <linux/netfilter/nfnetlink_queue.h>.
const (
	nfnlSubsysQueue = 3
	nfqnlMsgPacket  = 0
	nfqnlMsgVerdict = 1
	nfqnlMsgConfig  = 2

	nfqaPacketHdr  = 1 // NFQA_PACKET_HDR: be32 id, be16 hw proto, u8 hook
	nfqaVerdictHdr = 2 // NFQA_VERDICT_HDR: be32 verdict, be32 id
	nfqaCfgCmd     = 1 // NFQA_CFG_CMD: u8 command, u8 pad, be16 pf
	nfqaCfgParams  = 2 // NFQA_CFG_PARAMS: be32 copy range, u8 copy mode

	nfqnlCfgCmdBind = 1
	nfqnlCopyMeta   = 1 // metadata only: the payload is not needed
	nfAccept        = 1
)

// packetDelayer holds every packet of one NFQUEUE queue for delay.
type packetDelayer struct {
	queue uint16
	delay time.Duration
	conn  *netlink.Conn

	wg      sync.WaitGroup
	mu      sync.Mutex
	closing bool
	held    int // packets held right now
	total   int // packets seen
}

// startPacketDelayer binds queue in the namespace netnsFD and starts
// holding its packets.
func startPacketDelayer(netnsFD int, queue uint16, delay time.Duration) (*packetDelayer, error) {
	conn, err := netlink.Dial(unix.NETLINK_NETFILTER, &netlink.Config{NetNS: netnsFD})
	if err != nil {
		return nil, fmt.Errorf("testbed: nfnetlink socket: %w", err)
	}
	_ = conn.SetOption(netlink.NoENOBUFS, true)
	d := &packetDelayer{queue: queue, delay: delay, conn: conn}
	bind := []byte{nfqnlCfgCmdBind, 0, 0, 0}
	params := make([]byte, 5)
	binary.BigEndian.PutUint32(params, 0xffff)
	params[4] = nfqnlCopyMeta
	ae := netlink.NewAttributeEncoder()
	ae.Bytes(nfqaCfgCmd, bind)
	ae.Bytes(nfqaCfgParams, params)
	if err := d.request(nfqnlMsgConfig, ae); err != nil {
		conn.Close()
		return nil, fmt.Errorf("testbed: bind NFQUEUE %d: %w", queue, err)
	}
	d.wg.Add(1)
	go d.readLoop()
	return d, nil
}

// request sends a config message and waits for its acknowledgement.
func (d *packetDelayer) request(msgType uint16, ae *netlink.AttributeEncoder) error {
	attrs, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = d.conn.Execute(netlink.Message{
		Header: netlink.Header{
			Type:  netlink.HeaderType(nfnlSubsysQueue<<8 | msgType),
			Flags: netlink.Request | netlink.Acknowledge,
		},
		Data: append(d.nfgenmsg(), attrs...),
	})
	return err
}

// nfgenmsg is the nfnetlink header: family, version 0, the queue number
// big-endian.
func (d *packetDelayer) nfgenmsg() []byte {
	h := []byte{unix.AF_UNSPEC, 0, 0, 0}
	binary.BigEndian.PutUint16(h[2:], d.queue)
	return h
}

func (d *packetDelayer) readLoop() {
	defer d.wg.Done()
	for {
		msgs, err := d.conn.Receive()
		if err != nil {
			if d.isClosing() {
				return
			}
			var opErr *netlink.OpError
			if errors.As(err, &opErr) && errors.Is(opErr.Err, unix.ENOBUFS) {
				continue
			}
			return
		}
		for _, m := range msgs {
			if m.Header.Type != netlink.HeaderType(nfnlSubsysQueue<<8|nfqnlMsgPacket) || len(m.Data) < 4 {
				continue
			}
			id, ok := packetID(m.Data[4:])
			if !ok {
				continue
			}
			d.hold(id)
		}
	}
}

func packetID(attrs []byte) (uint32, bool) {
	ad, err := netlink.NewAttributeDecoder(attrs)
	if err != nil {
		return 0, false
	}
	for ad.Next() {
		if ad.Type() == nfqaPacketHdr {
			b := ad.Bytes()
			if len(b) >= 4 {
				return binary.BigEndian.Uint32(b), true
			}
		}
	}
	return 0, false
}

// hold gives packet id back to the kernel after the delay.
func (d *packetDelayer) hold(id uint32) {
	d.mu.Lock()
	d.held++
	d.total++
	d.mu.Unlock()
	d.wg.Add(1)
	time.AfterFunc(d.delay, func() {
		defer d.wg.Done()
		d.verdict(id)
		d.mu.Lock()
		d.held--
		d.mu.Unlock()
	})
}

func (d *packetDelayer) verdict(id uint32) {
	v := make([]byte, 8)
	binary.BigEndian.PutUint32(v, nfAccept)
	binary.BigEndian.PutUint32(v[4:], id)
	ae := netlink.NewAttributeEncoder()
	ae.Bytes(nfqaVerdictHdr, v)
	attrs, err := ae.Encode()
	if err != nil {
		return
	}
	// No acknowledgement: the reader would have to sort acks from packets.
	_, _ = d.conn.Send(netlink.Message{
		Header: netlink.Header{
			Type:  netlink.HeaderType(nfnlSubsysQueue<<8 | nfqnlMsgVerdict),
			Flags: netlink.Request,
		},
		Data: append(d.nfgenmsg(), attrs...),
	})
}

func (d *packetDelayer) isClosing() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closing
}

// Packets reports how many packets the queue has seen.
func (d *packetDelayer) Packets() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.total
}

// close waits for held packets to be released, then closes the socket (the
// kernel drops whatever is still queued for an unbound queue).
func (d *packetDelayer) close() {
	d.mu.Lock()
	d.closing = true
	d.mu.Unlock()
	// Release what is held first, then stop reading.
	deadline := time.Now().Add(d.delay + time.Second)
	for time.Now().Before(deadline) {
		d.mu.Lock()
		held := d.held
		d.mu.Unlock()
		if held == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	d.conn.Close()
	d.wg.Wait()
}
