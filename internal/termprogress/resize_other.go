//go:build !unix

package termprogress

// onResize: without SIGWINCH the width is read once, at start.
func onResize(func()) (stop func()) { return func() {} }
