package tinymodel

import (
	"math"
	"testing"
)

// halfToFloat decodes IEEE 754 half precision (test oracle for float16).
func halfToFloat(h uint16) float32 {
	sign := float32(1)
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * float32(math.Ldexp(mant, -24))
	case 0x1f:
		if mant != 0 {
			return float32(math.NaN())
		}
		return sign * float32(math.Inf(1))
	}
	return sign * float32(math.Ldexp(1+mant/1024, exp-15))
}

func TestFloat16KnownValues(t *testing.T) {
	for _, tc := range []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.5, 0x3800},
		{0.1, 0x2e66},
		{1.0 / 3, 0x3555},
		{65504, 0x7bff}, // largest half
		{65519, 0x7bff}, // rounds down to it
		{65520, 0x7c00}, // rounds up to infinity
		{1e9, 0x7c00},   // overflow
		{float32(math.Inf(-1)), 0xfc00},
		{float32(math.Ldexp(1, -14)), 0x0400}, // smallest normal
		{float32(math.Ldexp(1, -24)), 0x0001}, // smallest subnormal
		{float32(math.Ldexp(1, -25)), 0x0000}, // halfway to zero: ties to even
		{float32(math.Ldexp(3, -26)), 0x0001}, // 0.75 of the smallest subnormal rounds up
		{1e-10, 0x0000},
		{1 + 1.0/2048, 0x3c00}, // halfway between 1 and the next half: ties to even (down)
		{1 + 3.0/2048, 0x3c02}, // halfway above an odd mantissa: ties to even (up)
		{2 - 1.0/4096, 0x4000}, // a tie above the odd 0x3fff: the carry bumps the exponent
	} {
		if got := float16(tc.in); got != tc.want {
			t.Errorf("float16(%g) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
	if got := float16(float32(math.NaN())); got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
		t.Errorf("float16(NaN) = %#04x, not a NaN", got)
	}
}

func TestFloat16RoundTripsEveryHalf(t *testing.T) {
	for h := range 1 << 16 {
		f := halfToFloat(uint16(h))
		if f != f { // NaN payloads need not survive
			continue
		}
		if got := float16(f); got != uint16(h) {
			t.Fatalf("half %#04x → %g → %#04x", h, f, got)
		}
	}
}

func TestFloat16RoundsToNearest(t *testing.T) {
	// Between two neighbouring halves, every float32 must go to the nearer one.
	for _, h := range []uint16{0x0001, 0x03ff, 0x0400, 0x3c00, 0x5a5a, 0x7bfe} {
		lo, hi := halfToFloat(h), halfToFloat(h+1)
		for _, frac := range []float32{0.25, 0.49, 0.51, 0.75} {
			x := lo + (hi-lo)*frac
			want := h
			if frac > 0.5 {
				want = h + 1
			}
			if got := float16(x); got != want {
				t.Errorf("float16(%g) between %#04x and %#04x = %#04x, want %#04x", x, h, h+1, got, want)
			}
		}
	}
}
