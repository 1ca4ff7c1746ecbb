package tokenizer

// Byte-level BPE (GPT-2's scheme) writes every byte as one printable rune so
// that vocabularies are plain strings: the printable Latin-1 bytes stand for
// themselves and the other 68 bytes map, in order, to U+0100 and up (space is
// "Ġ", newline "Ċ"). This file holds both directions of that table.

// byteRunes returns the rune that stands for each byte.
func byteRunes() [256]rune {
	var table [256]rune
	var assigned [256]bool
	for b := '!'; b <= '~'; b++ {
		table[b], assigned[b] = b, true
	}
	for b := '¡'; b <= '¬'; b++ {
		table[b], assigned[b] = b, true
	}
	for b := '®'; b <= 'ÿ'; b++ {
		table[b], assigned[b] = b, true
	}
	next := rune(256)
	for b := 0; b < 256; b++ {
		if !assigned[b] {
			table[b] = next
			next++
		}
	}
	return table
}

// runeByte inverts byteRunes: the byte a rune stands for, if any. The runes
// all lie below U+0144, so a slice indexed by rune is the fastest lookup.
type runeByteTable [0x144]int16

func newRuneByteTable() *runeByteTable {
	var t runeByteTable
	for i := range t {
		t[i] = -1
	}
	for b, r := range byteRunes() {
		t[r] = int16(b)
	}
	return &t
}

func (t *runeByteTable) lookup(r rune) (byte, bool) {
	if r < 0 || int(r) >= len(t) || t[r] < 0 {
		return 0, false
	}
	return byte(t[r]), true
}

// byteLevelDecode turns a byte-level token string back into the bytes it
// stands for. ok is false when some rune is not in the byte alphabet (added
// tokens such as "<|im_start|>" pass, tokens with other runes do not); the
// caller then uses the token's own UTF-8 bytes, as Hugging Face does.
func (t *runeByteTable) byteLevelDecode(token string) ([]byte, bool) {
	out := make([]byte, 0, len(token))
	for _, r := range token {
		b, ok := t.lookup(r)
		if !ok {
			return nil, false
		}
		out = append(out, b)
	}
	return out, true
}
