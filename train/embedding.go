package train

// Token embedding lookup; its backward scatters rows back into the table's
// gradient (shared with a tied LM head).

func embeddingForward(out, table []float32, ids []int32, c int) {
	for t, id := range ids {
		copy(out[t*c:t*c+c], table[int(id)*c:int(id)*c+c])
	}
}

func embeddingBackward(dtable, dout []float32, ids []int32, c int) {
	for t, id := range ids {
		axpy(1, dout[t*c:t*c+c], dtable[int(id)*c:int(id)*c+c])
	}
}
