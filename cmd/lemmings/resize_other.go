//go:build !unix

package main

// onResize: without SIGWINCH the width is read once, at start.
func onResize(func()) (stop func()) { return func() {} }
