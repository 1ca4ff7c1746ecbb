package tokenizer

import "unicode/utf8"

// appendLossy appends src to dst with every maximal invalid UTF-8
// subsequence replaced by one U+FFFD — exactly Rust's
// String::from_utf8_lossy, which Hugging Face's ByteLevel decoder uses (Go's
// own conversions replace byte by byte instead). When final is false, an
// incomplete sequence at the end of src is left unconsumed, since more bytes
// may complete it; consumed says how much of src was used.
func appendLossy(dst, src []byte, final bool) (out []byte, consumed int) {
	i := 0
	for i < len(src) {
		start := i
		c := src[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		// need: total length; lo, hi: the valid range of the second byte.
		var need int
		lo, hi := byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 2
		case c == 0xE0:
			need, lo = 3, 0xA0
		case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
			need = 3
		case c == 0xED:
			need, hi = 3, 0x9F
		case c == 0xF0:
			need, lo = 4, 0x90
		case c >= 0xF1 && c <= 0xF3:
			need = 4
		case c == 0xF4:
			need, hi = 4, 0x8F
		default:
			dst = append(dst, "\uFFFD"...)
			i++
			continue
		}
		i++
		valid := true
		for k := 1; k < need; k++ {
			if i >= len(src) {
				if !final {
					return dst, start
				}
				valid = false
				break
			}
			b := src[i]
			if (k == 1 && (b < lo || b > hi)) || (k > 1 && (b < 0x80 || b > 0xBF)) {
				valid = false
				break
			}
			i++
		}
		if valid {
			dst = append(dst, src[start:i]...)
		} else {
			dst = append(dst, "\uFFFD"...)
		}
	}
	return dst, i
}

// StreamDecoder decodes tokens one at a time for streaming. It releases
// only complete UTF-8 text, and the concatenation of everything Add and
// Flush return is exactly Decode (or DecodeSkipSpecial) of all the ids.
// It satisfies engine.Decoder. It is not safe for concurrent use.
type StreamDecoder struct {
	t           *Tokenizer
	skipSpecial bool
	pending     []byte // the start of a UTF-8 sequence that may still complete
	out         []byte
}

// NewDecoder returns a StreamDecoder that keeps special tokens, like Decode.
func (t *Tokenizer) NewDecoder() *StreamDecoder { return &StreamDecoder{t: t} }

// NewDecoderSkipSpecial returns a StreamDecoder that drops special tokens,
// like DecodeSkipSpecial.
func (t *Tokenizer) NewDecoderSkipSpecial() *StreamDecoder {
	return &StreamDecoder{t: t, skipSpecial: true}
}

// Add consumes one token and returns the text that became complete.
func (d *StreamDecoder) Add(id int32) string {
	t := d.t
	if id < 0 || int(id) >= len(t.tokenBytes) || (d.skipSpecial && t.special[id]) {
		return ""
	}
	b := t.tokenBytes[id]
	if len(d.pending) == 0 && utf8.Valid(b) {
		return string(b) // the common case: a token of whole characters
	}
	d.pending = append(d.pending, b...)
	var n int
	d.out, n = appendLossy(d.out[:0], d.pending, false)
	d.pending = append(d.pending[:0], d.pending[n:]...)
	return string(d.out)
}

// Flush returns what is left: an incomplete sequence becomes U+FFFD, as
// Decode would write it at the end of the text. The decoder can be reused.
func (d *StreamDecoder) Flush() string {
	if len(d.pending) == 0 {
		return ""
	}
	d.out, _ = appendLossy(d.out[:0], d.pending, true)
	d.pending = d.pending[:0]
	return string(d.out)
}
