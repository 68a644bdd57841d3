package tinymodel

import "math"

// float16 converts f to IEEE 754 half precision, rounding to nearest even; values beyond the
// half range become infinities, NaN stays NaN.
func float16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff

	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	switch {
	case e >= 0x1f:
		return sign | 0x7c00
	case e <= 0:
		// Subnormal half (or zero): the value is full × 2^(exp-150); a half subnormal
		// counts units of 2^-24.
		if e < -10 {
			return sign
		}
		full := mant | 0x800000
		shift := uint(14 - e)
		half := full >> shift
		rem := full & (1<<shift - 1)
		halfway := uint32(1) << (shift - 1)
		if rem > halfway || (rem == halfway && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	// A carry out of the mantissa bumps the exponent, and past the top it gives infinity:
	// both are the right rounding.
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++
	}
	return sign | uint16(half)
}
