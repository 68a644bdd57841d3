package pgstore

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Listener wakes live views when a run has new events: one connection
// LISTENs on the events channel for the whole process, and each
// notification ("<run>:<id>") wakes the subscribers of that run. While it
// reconnects (the server restarted), it wakes everyone once it is back, so
// nothing written meanwhile waits for the next event.
type Listener struct {
	db     *DB
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
	// ready is closed once the first LISTEN is in place.
	ready chan struct{}
}

// Listen starts the process's listener; Close stops it.
func (db *DB) Listen(ctx context.Context) *Listener {
	ctx, cancel := context.WithCancel(ctx)
	l := &Listener{db: db, cancel: cancel, done: make(chan struct{}), subs: map[string]map[chan struct{}]struct{}{}, ready: make(chan struct{})}
	go l.loop(ctx)
	return l
}

// Ready is closed once notifications are being received.
func (l *Listener) Ready() <-chan struct{} { return l.ready }

// Subscribe returns a channel that receives (at most one pending value)
// whenever runID gets an event, and the function that ends the subscription.
func (l *Listener) Subscribe(runID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	l.mu.Lock()
	if l.subs[runID] == nil {
		l.subs[runID] = map[chan struct{}]struct{}{}
	}
	l.subs[runID][ch] = struct{}{}
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		delete(l.subs[runID], ch)
		if len(l.subs[runID]) == 0 {
			delete(l.subs, runID)
		}
		l.mu.Unlock()
	}
}

// Close stops listening.
func (l *Listener) Close() {
	l.cancel()
	<-l.done
}

func (l *Listener) wake(runID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, chans := range l.subs {
		if runID != "" && id != runID {
			continue
		}
		for ch := range chans {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

func (l *Listener) loop(ctx context.Context) {
	defer close(l.done)
	first := true
	for ctx.Err() == nil {
		err := l.listen(ctx, func() {
			l.wake("") // anything written while we were away
			if first {
				close(l.ready)
				first = false
			}
		})
		if ctx.Err() != nil {
			return
		}
		_ = err // the server is away: try again shortly
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (l *Listener) listen(ctx context.Context, listening func()) error {
	conn, err := pgx.ConnectConfig(ctx, l.db.conf)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{l.db.EventsChannel()}.Sanitize()); err != nil {
		return err
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		run, _, _ := strings.Cut(n.Payload, ":")
		l.wake(run)
	}
}
