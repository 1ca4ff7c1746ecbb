package quant

import "encoding/binary"

// The reference dot products of one weight row (its blocks) with one
// quantized activation row: integer sums per block, scaled as llama.cpp's
// generic ggml_vec_dot_*_q8_* do. They are the ground truth for the
// assembly and the pure-Go path of every build.

var dotRef = map[Type]func(w []byte, a actRow) float32{
	Q4_0: dotQ4_0Ref, Q4_1: dotQ4_1Ref, Q5_0: dotQ5_0Ref, Q5_1: dotQ5_1Ref,
	Q8_0: dotQ8_0Ref, Q4_K: dotQ4KRef, Q5_K: dotQ5KRef, Q6_K: dotQ6KRef,
}

func dotQ4_0Ref(w []byte, a actRow) float32 {
	var sum float32
	for b := 0; b < len(a.qs)/QK; b++ {
		blk, q := w[18*b:18*b+18], a.qs[QK*b:]
		s := 0
		for j := 0; j < 16; j++ {
			s += (int(blk[2+j]&15) - 8) * int(q[j])
			s += (int(blk[2+j]>>4) - 8) * int(q[j+16])
		}
		sum += float32(s) * (f16at(blk, 0) * a.ds[2*b])
	}
	return sum
}

func dotQ4_1Ref(w []byte, a actRow) float32 {
	var sum float32
	for b := 0; b < len(a.qs)/QK; b++ {
		blk, q := w[20*b:20*b+20], a.qs[QK*b:]
		s := 0
		for j := 0; j < 16; j++ {
			s += int(blk[4+j]&15) * int(q[j])
			s += int(blk[4+j]>>4) * int(q[j+16])
		}
		sum += float32(s)*(f16at(blk, 0)*a.ds[2*b]) + f16at(blk, 2)*a.ds[2*b+1]
	}
	return sum
}

func dotQ5_0Ref(w []byte, a actRow) float32 {
	var sum float32
	for b := 0; b < len(a.qs)/QK; b++ {
		blk, q := w[22*b:22*b+22], a.qs[QK*b:]
		qh := binary.LittleEndian.Uint32(blk[2:])
		s := 0
		for j := 0; j < 16; j++ {
			h0 := int(qh>>j<<4) & 0x10
			h1 := int(qh>>(j+12)) & 0x10
			s += (int(blk[6+j]&15) | h0 - 16) * int(q[j])
			s += (int(blk[6+j]>>4) | h1 - 16) * int(q[j+16])
		}
		sum += float32(s) * (f16at(blk, 0) * a.ds[2*b])
	}
	return sum
}

func dotQ5_1Ref(w []byte, a actRow) float32 {
	var sum float32
	for b := 0; b < len(a.qs)/QK; b++ {
		blk, q := w[24*b:24*b+24], a.qs[QK*b:]
		qh := binary.LittleEndian.Uint32(blk[4:])
		s := 0
		for j := 0; j < 16; j++ {
			h0 := int(qh>>j<<4) & 0x10
			h1 := int(qh>>(j+12)) & 0x10
			s += (int(blk[8+j]&15) | h0) * int(q[j])
			s += (int(blk[8+j]>>4) | h1) * int(q[j+16])
		}
		sum += float32(s)*(f16at(blk, 0)*a.ds[2*b]) + f16at(blk, 2)*a.ds[2*b+1]
	}
	return sum
}

func dotQ8_0Ref(w []byte, a actRow) float32 {
	var sum float32
	for b := 0; b < len(a.qs)/QK; b++ {
		blk, q := w[34*b:34*b+34], a.qs[QK*b:]
		s := 0
		for j := 0; j < 32; j++ {
			s += int(int8(blk[2+j])) * int(q[j])
		}
		sum += float32(s) * (f16at(blk, 0) * a.ds[2*b])
	}
	return sum
}

// K-quants: per super-block, d·Σ sc_j·(q·q8 over sub-block j) minus
// dmin·Σ m_j·(Σq8 over sub-block j), the minimum term from the bsums.
func dotQ4KRef(w []byte, a actRow) float32 {
	var sum float32
	for b := 0; b < len(a.qs)/QKK; b++ {
		blk, q := w[144*b:144*b+144], a.qs[QKK*b:]
		bs := a.bsums[16*b:]
		sumi, mins := 0, 0
		for j := 0; j < 4; j++ {
			for h := 0; h < 2; h++ {
				sc, m := scaleMinK4(2*j+h, blk[4:16])
				mins += int(m) * (int(bs[4*j+2*h]) + int(bs[4*j+2*h+1]))
				s := 0
				for l := 0; l < 32; l++ {
					s += int(blk[16+32*j+l]>>(4*h)&15) * int(q[64*j+32*h+l])
				}
				sumi += int(sc) * s
			}
		}
		d := f16at(blk, 0) * a.ds[b]
		dmin := f16at(blk, 2) * a.ds[b]
		sum += d*float32(sumi) - dmin*float32(mins)
	}
	return sum
}

func dotQ5KRef(w []byte, a actRow) float32 {
	var sum float32
	for b := 0; b < len(a.qs)/QKK; b++ {
		blk, q := w[176*b:176*b+176], a.qs[QKK*b:]
		bs := a.bsums[16*b:]
		qh := blk[16:48]
		sumi, mins := 0, 0
		for j := 0; j < 4; j++ {
			for h := 0; h < 2; h++ {
				sc, m := scaleMinK4(2*j+h, blk[4:16])
				mins += int(m) * (int(bs[4*j+2*h]) + int(bs[4*j+2*h+1]))
				s := 0
				for l := 0; l < 32; l++ {
					v := int(blk[48+32*j+l]>>(4*h)&15) | int(qh[l]>>(2*j+h)&1)<<4
					s += v * int(q[64*j+32*h+l])
				}
				sumi += int(sc) * s
			}
		}
		d := f16at(blk, 0) * a.ds[b]
		dmin := f16at(blk, 2) * a.ds[b]
		sum += d*float32(sumi) - dmin*float32(mins)
	}
	return sum
}

func dotQ6KRef(w []byte, a actRow) float32 {
	var sum float32
	for b := 0; b < len(a.qs)/QKK; b++ {
		blk, q := w[210*b:210*b+210], a.qs[QKK*b:]
		ql, qh, sc := blk[0:128], blk[128:192], blk[192:208]
		sumi := 0
		for n := 0; n < 2; n++ {
			for l := 0; l < 32; l++ {
				is := 8*n + l/16
				lo, hi, h := ql[64*n+l], ql[64*n+l+32], qh[32*n+l]
				qq := q[128*n:]
				sumi += int(int8(sc[is])) * (int(lo&15|(h&3)<<4) - 32) * int(qq[l])
				sumi += int(int8(sc[is+2])) * (int(hi&15|(h>>2&3)<<4) - 32) * int(qq[l+32])
				sumi += int(int8(sc[is+4])) * (int(lo>>4|(h>>4&3)<<4) - 32) * int(qq[l+64])
				sumi += int(int8(sc[is+6])) * (int(hi>>4|(h>>6&3)<<4) - 32) * int(qq[l+96])
			}
		}
		sum += f16at(blk, 208) * a.ds[b] * float32(sumi)
	}
	return sum
}
