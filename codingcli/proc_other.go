//go:build unix && !linux

package codingcli

import "syscall"

func setParentDeathSignal(*syscall.SysProcAttr) {}
