package judge

import (
	"context"
	"fmt"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/store"
)

// WrittenHintMode says how a person's written feedback becomes the OPD
// hint.
//
// The teacher reads the hint with the question but without the answer it
// was about (HintInUser, the default placement), so feedback that only
// makes sense beside that answer ("Your TL;DR: line is too long", "not that
// one") tells it little, or the opposite of what the user meant: asked
// that, the 1.5B coder dropped "TL;DR:" from all 100 of its answers
// (BENCHMARKS.md, "The teacher under each feedback"). Under WrittenRewrite
// the judge, which sees the answer, first rewrites the feedback as an
// instruction that stands on its own.
type WrittenHintMode string

const (
	// WrittenAsIs: the feedback text (or the correcting next message) is
	// the hint as the person wrote it. The default: no model call.
	WrittenAsIs WrittenHintMode = "as-is"
	// WrittenRewrite: the judge rewrites it with the answer in view (one
	// greedy generation of at most Config.HintTokens); when it writes no
	// usable hint the text as written is the hint.
	WrittenRewrite WrittenHintMode = "rewrite"
)

// ParseWrittenHintMode reads --written-hint ("" is the default).
func ParseWrittenHintMode(s string) (WrittenHintMode, error) {
	switch m := WrittenHintMode(s); m {
	case "", WrittenAsIs:
		return WrittenAsIs, nil
	case WrittenRewrite:
		return m, nil
	}
	return "", fmt.Errorf("--written-hint %q: want as-is or rewrite", s)
}

const rewriteSystem = `You turn a user's feedback on an AI assistant's answer into an instruction for answering the same task again. The instruction is read with the task but WITHOUT the earlier answer, so it must make sense on its own:
- Say what the new answer must do, not what was wrong with the earlier one.
- Keep what the feedback takes for granted because the earlier answer already did it (a format, a language, an opening or a closing it had).
- Turn words that point at the earlier answer ("that", "it", "too long") into what they mean, with the numbers and exact words the feedback gives.
Write one or two sentences between ` + HintStart + ` and ` + HintEnd + `.`

// rewriteAsk ends each case the judge is shown.
const rewriteAsk = "\nWrite the instruction for answering the task again."

// rewriteExamples are worked cases shown to the judge before the real one
// (as earlier turns of the conversation): a small model given the rules
// alone echoes them or the feedback. They are unlike the benchmark's
// personas on purpose: a list that was too long, a language kept, an
// opening kept, exact closing words kept, an answer the user had already
// seen.
var rewriteExamples = []struct {
	task, answer, feedback, hint string
}{
	{"How do I make my laptop battery last longer?",
		"1. Lower the screen brightness.\n2. Close the apps you are not using.\n3. Turn on battery saver mode.\n4. Unplug devices you do not need.\n5. Keep the laptop cool.",
		"Way too long, and no list.", "Answer in two or three plain sentences, without a list."},
	{"¿Qué es la fotosíntesis?",
		"La fotosíntesis es el proceso por el cual las plantas usan la luz del sol, el agua y el dióxido de carbono para producir glucosa y oxígeno; ocurre en los cloroplastos gracias a la clorofila y es la base de casi todas las cadenas alimentarias.",
		"Demasiado largo.", "Responde en español, en una sola frase corta."},
	{"Write a short note to my neighbour Sam asking him to water my plants next week.",
		"Dear Sam,\nI hope this note finds you well. I am writing to kindly request your assistance: I shall be away next week, and I would be most grateful if you could water my plants in my absence.\nYours sincerely,\nAlex",
		"Way too formal.", "Write the note starting with \"Dear Sam,\" in a casual, friendly tone, in two or three short sentences."},
	{"What is a good name for a goldfish?",
		"How about Bubbles? It is cheerful, easy to say, and suits a small, lively fish. Other ideas are Goldie, Finn and Nemo.\nCheers, Bot",
		"Just one name, please. Keep the \"Cheers, Bot\" at the end.", "Suggest one name only, in one sentence, and end with the exact words \"Cheers, Bot\"."},
	{"Recommend a book about space.",
		"Try \"Cosmos\" by Carl Sagan: a classic tour of the universe.",
		"Already read that one.", "Recommend a book about space other than \"Cosmos\" by Carl Sagan."},
}

// RewritePrompt is the conversation the judge is sent to rewrite the
// written feedback of in (its FeedbackText, or the user's next message) as
// a stand-alone instruction: the rules, the worked cases, then in.
func RewritePrompt(in Input) []chat.Message {
	msgs := []chat.Message{{Role: chat.RoleSystem, Content: rewriteSystem}}
	for _, ex := range rewriteExamples {
		c := Input{
			Messages: []chat.Message{{Role: chat.RoleUser, Content: ex.task}},
			Response: chat.Message{Role: chat.RoleAssistant, Content: ex.answer},
			NextKind: store.NextFeedback, FeedbackRating: -1, FeedbackText: ex.feedback,
		}
		msgs = append(msgs,
			chat.Message{Role: chat.RoleUser, Content: caseText(c) + rewriteAsk},
			chat.Message{Role: chat.RoleAssistant, Content: HintStart + ex.hint + HintEnd})
	}
	return append(msgs, chat.Message{Role: chat.RoleUser, Content: caseText(in) + rewriteAsk})
}

// rewrite asks the judge to rewrite written (from source: "feedback" or
// "next") with the answer in view, greedily. It returns the hint and the
// votes to record: the judge's rewrite (source "rewrite"), or, when it
// wrote no hint longer than MinHintLen, the text as written, with the
// failed rewrite recorded beside it.
func (j *Judge) rewrite(ctx context.Context, in Input, written, source string) (string, []store.Vote) {
	v := j.voteWith(ctx, store.VoteHint, RewritePrompt(in), Params{Temperature: 0, MaxTokens: j.cfg.HintTokens, Stop: []string{HintEnd}})
	v.Source = "rewrite"
	lost := lostQuote(written, v.Hint)
	if v.Valid && len(v.Hint) > MinHintLen && lost == "" {
		return v.Hint, []store.Vote{v}
	}
	switch {
	case v.Err != "":
	case lost != "":
		v.Err = "the rewrite lost the quoted words " + lost
	default:
		v.Err = "no usable rewrite"
	}
	v.Valid = false
	as := store.Vote{Kind: store.VoteHint, Source: source, Score: 1, Valid: true, Hint: written, Raw: "written hint from " + source + " (the rewrite failed)"}
	return written, []store.Vote{v, as}
}
