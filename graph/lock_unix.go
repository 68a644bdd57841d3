//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package graph

import (
	"errors"
	"os"
	"syscall"
)

// flock locks f; the kernel drops the lock when the holder's file is closed,
// including when the process dies, so a crashed writer never leaves a stale lock.
func flock(f *os.File, exclusive bool) (bool, error) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		}
		return false, err
	}
}

func funlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

const lockingSupported = true
