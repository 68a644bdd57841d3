package pgstore

import (
	"context"
	"net"
	"time"
)

// A box cut off from the database (its link down, the server's machine
// gone) must not wait for the kernel's default of about 15 minutes to learn
// it: an idle connection is probed after 5 s, every 2 s, and given up after
// 3 unanswered probes; data sent and not acknowledged within userTimeout
// fails the connection (Linux). The server ends such a box's sessions by
// its own keepalives (docs/distributed.md), which frees its runs.
const (
	keepIdle     = 5 * time.Second
	keepInterval = 2 * time.Second
	keepCount    = 3
	userTimeout  = 15 * time.Second
)

// dial is the dialer of every connection to the store.
func dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{
		Timeout:         10 * time.Second,
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: keepIdle, Interval: keepInterval, Count: keepCount},
		Control:         setUserTimeout,
	}
	return d.DialContext(ctx, network, addr)
}
