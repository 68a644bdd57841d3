//go:build unix

package termprogress

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// onResize calls redraw on every SIGWINCH (the terminal changed size) until
// the returned stop is called.
func onResize(redraw func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, syscall.SIGWINCH)
	go func() {
		for {
			select {
			case <-ch:
				redraw()
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
	}
}
