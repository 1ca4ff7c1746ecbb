package train

// The embedding lookup's backward scatters rows back into the table's
// gradient (shared with a tied LM head). The forward is model.Linear.Embed.

func embeddingBackward(dtable, dout []float32, ids []int32, c int) {
	for t, id := range ids {
		axpy(1, dout[t*c:t*c+c], dtable[int(id)*c:int(id)*c+c])
	}
}
