package greeting

import "testing"

func TestHelloWorld(t *testing.T) {
	if got, want := HelloWorld(), "Hello, World!"; got != want {
		t.Fatalf("HelloWorld() = %q, want %q", got, want)
	}
}
