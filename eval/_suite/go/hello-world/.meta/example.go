package greeting

// HelloWorld greets the world.
func HelloWorld() string {
	return "Hello, World!"
}
