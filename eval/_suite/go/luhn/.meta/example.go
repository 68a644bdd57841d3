package luhn

// Valid reports whether id passes the Luhn checksum.
func Valid(id string) bool {
	sum, n := 0, 0
	for i := len(id) - 1; i >= 0; i-- {
		c := id[i]
		if c == ' ' {
			continue
		}
		if c < '0' || c > '9' {
			return false
		}
		d := int(c - '0')
		if n%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		n++
	}
	return n > 1 && sum%10 == 0
}
