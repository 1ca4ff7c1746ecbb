package train

import "math"

// LogSoftmaxRows returns log softmax(logits) of positions 0..len(ids)−2 of
// one sequence, for comparison with reference logits.
func LogSoftmaxRows(w *Weights, ids []int32) [][]float32 {
	ws, err := newWorkspace(w, false, -1)
	if err != nil {
		panic(err)
	}
	ws.prepare([]Sequence{{PromptIDs: ids[:1], ResponseIDs: ids[1:]}})
	if err := ws.forward(0, false); err != nil {
		panic(err) // no yield hook, ids in range: forward cannot fail
	}
	V := w.Arch.Vocab
	out := make([][]float32, len(ids)-1)
	for r := range out {
		row := make([]float32, V)
		for j, p := range ws.probs[r*V : r*V+V] {
			row[j] = float32(math.Log(float64(p)))
		}
		out[r] = row
	}
	return out
}
