package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/lemmings-dev/lemmings/graph"
)

// stopGrace is how long a process that was asked to stop (SIGINT,
// SIGTERM, a halt, the wall time) has to end on its own: a node stuck in
// a system call is left behind after graph.AbandonGrace, the run's status
// is stored, and the process exits. Past stopGrace it exits anyway.
var stopGrace = graph.AbandonGrace + 15*time.Second

// stoppable returns a context that SIGINT and SIGTERM cancel, a stopping
// func the run calls when a halt or the wall time stops it, and the func to
// call when the command is done. Once a stop begins, a second signal ends
// the process at once (the default action), and a process still there
// stopGrace later exits with the stop's code, saying so: nothing a
// goroutine waits on keeps it alive.
func (a *app) stoppable(parent context.Context) (context.Context, func(error), func()) {
	ctx, stopSignals := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	begun := make(chan int, 1)
	var once sync.Once
	begin := func(code int) { once.Do(func() { begun <- code }) }
	stopping := func(cause error) {
		code := exitPaused
		if !errors.Is(cause, graph.ErrHalted) {
			code = exitInterrupted
		}
		begin(code)
	}
	finished := make(chan struct{})
	go func() {
		var code int
		select {
		case <-finished:
			return
		case code = <-begun:
		case <-ctx.Done():
			if parent.Err() != nil {
				return // the command's own context, not a signal
			}
			code = exitInterrupted
			stopSignals() // a second Ctrl-C or SIGTERM ends the process now
		}
		t := time.NewTimer(stopGrace)
		defer t.Stop()
		select {
		case <-finished:
		case <-t.C:
			fmt.Fprintf(a.stderr, "lemmings: still not stopped %s after it was asked to (a step is stuck in a system call): exiting now; lemmings resume continues the run from its last checkpoint\n", stopGrace)
			os.Exit(code)
		}
	}()
	var doneOnce sync.Once
	return ctx, stopping, func() {
		doneOnce.Do(func() {
			close(finished)
			stopSignals()
		})
	}
}
