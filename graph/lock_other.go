//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package graph

import (
	"errors"
	"os"
)

func flock(*os.File, bool) (bool, error) { return false, errors.New("file locking not supported here") }
func funlock(*os.File) error             { return nil }

const lockingSupported = false
