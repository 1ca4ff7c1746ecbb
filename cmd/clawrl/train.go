package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawrl/clawrl/chat"
	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/tokenizer"
	"github.com/clawrl/clawrl/tokenizer/chatfmt"
	"github.com/clawrl/clawrl/train"
)

func init() { subcommands = append(subcommands, newTrainCmd) }

func newTrainCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "train", Short: "Train a model offline with the native trainer"}
	cmd.AddCommand(newTrainSFTCmd())
	return cmd
}

type sftFlags struct {
	modelDir, data, out, mode, resume string
	rank                              int
	alpha, dropout, lr, maxGradNorm   float64
	epochs, batch, microTokens        int
	saveEvery                         int
	recompute                         bool
	activationMiB                     int
	precision                         string
	seed                              uint64
}

func newTrainSFTCmd() *cobra.Command {
	var f sftFlags
	cmd := &cobra.Command{
		Use:   "sft",
		Short: "Supervised fine-tuning (LoRA or full) on a JSONL file of chats",
		Long: `Trains on --data, one JSON object per line, either an OpenAI-shape chat
{"messages":[{"role":"user","content":"…"},{"role":"assistant","content":"…"}]}
(rendered with the model's chat template; the loss is on every assistant
message, each predicted from the conversation before it; a "tools" list
beside "messages" is rendered into the prompt as serve renders a request's
tools, and assistant "tool_calls" are trained as the template writes them)
or pre-tokenised
{"prompt_ids":[…],"completion_ids":[…]} (loss on the completion).

Writes to --out a PEFT adapter (adapter_config.json, adapter_model.safetensors)
or, with --mode full, Hugging Face weights (config.json, model.safetensors),
plus optimizer.safetensors and trainer_state.json; --resume DIR continues
exactly from such a folder.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			return runSFT(ctx, f, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.modelDir, "model", "", modelFlagHelp)
	fl.StringVar(&f.data, "data", "", "training data, JSONL")
	fl.StringVar(&f.out, "out", "", "output folder for the adapter or weights and optimizer state")
	fl.StringVar(&f.mode, "mode", "lora", "lora or full")
	fl.StringVar(&f.resume, "resume", "", "continue from a folder this command wrote")
	fl.IntVar(&f.rank, "rank", 16, "LoRA rank")
	fl.Float64Var(&f.alpha, "alpha", 32, "LoRA alpha")
	fl.Float64Var(&f.dropout, "dropout", 0, "LoRA dropout")
	fl.Float64Var(&f.lr, "lr", 0, "learning rate (default 1e-4 LoRA, 1e-5 full)")
	fl.Float64Var(&f.maxGradNorm, "max-grad-norm", 1, "clip the global gradient norm (negative: off)")
	fl.IntVar(&f.epochs, "epochs", 1, "passes over the data")
	fl.IntVar(&f.batch, "batch", 16, "sequences per optimizer step")
	fl.IntVar(&f.microTokens, "micro-batch-tokens", 2048, "tokens per micro-batch (gradients accumulate over a step's micro-batches)")
	fl.IntVar(&f.saveEvery, "save-every", 0, "also save to --out every N steps (0: only at the end)")
	fl.StringVar(&f.precision, "train-precision", "auto", "backward products through frozen weights: auto (bf16 where the CPU has AVX512_BF16 or AVX2 and FMA, the same sums on either; on AMX tiles where it has AMX-BF16; else fp32), bf16 (dy and W rounded to bf16, float32 sums; the forward stays float32) or fp32")
	fl.BoolVar(&f.recompute, "recompute", false, "recompute activations in the backward (less memory, ~1/3 more compute)")
	fl.IntVar(&f.activationMiB, "activation-budget-mib", 0, train.ActivationBudgetFlag)
	fl.Uint64Var(&f.seed, "seed", 0, "seed for LoRA init, dropout and shuffling")
	for _, name := range []string{"model", "data", "out"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

// sftLine is one JSONL record: a chat (with the tools its prompt offered),
// or pre-tokenised ids.
type sftLine struct {
	Messages      []chat.Message `json:"messages"`
	Tools         []chat.Tool    `json:"tools"`
	PromptIDs     []int32        `json:"prompt_ids"`
	CompletionIDs []int32        `json:"completion_ids"`
}

// parseSFTLine parses and checks one record.
func parseSFTLine(line []byte) (sftLine, error) {
	var l sftLine
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&l); err != nil {
		return l, err
	}
	if dec.More() {
		return l, errors.New("trailing data after the JSON object")
	}
	switch {
	case l.Messages != nil && (l.PromptIDs != nil || l.CompletionIDs != nil):
		return l, errors.New("both messages and prompt_ids/completion_ids")
	case l.Tools != nil && l.Messages == nil:
		return l, errors.New("tools without messages: tools go with a chat")
	case l.Messages != nil:
		hasAssistant := false
		for _, m := range l.Messages {
			hasAssistant = hasAssistant || m.Role == "assistant"
		}
		if !hasAssistant {
			return l, errors.New("no assistant message to train on")
		}
		for i, tl := range l.Tools {
			if tl.Function.Name == "" {
				return l, fmt.Errorf("tools[%d] has no function name", i)
			}
		}
	case len(l.PromptIDs) == 0 || len(l.CompletionIDs) == 0:
		return l, errors.New("want messages, or non-empty prompt_ids and completion_ids")
	}
	for _, id := range append(append([]int32(nil), l.PromptIDs...), l.CompletionIDs...) {
		if id < 0 {
			return l, fmt.Errorf("negative token id %d", id)
		}
	}
	return l, nil
}

// chatFormat renders and tokenises chats for SFT.
type chatFormat struct {
	tmpl *chatfmt.Template
	tok  *tokenizer.Tokenizer
}

// sequences turns a chat into one training sequence per assistant message:
// the prompt is the conversation before it rendered with the generation
// prompt (and the tools, as serve renders a request that offers them), the
// response is the rest of the rendering up to and including the message
// (its end-of-turn token included, so the model learns to stop). Prompt and
// response are tokenised apart, as serving sees them: the prompt alone,
// then the tokens the model writes after it.
func (f *chatFormat) sequences(msgs []chat.Message, tools []chat.Tool) ([]train.Sequence, error) {
	var out []train.Sequence
	for i, m := range msgs {
		if m.Role != "assistant" || i == 0 {
			continue
		}
		// Render is what serve renders with (tool-call arguments passed
		// the way the template expects).
		prompt, err := f.tmpl.Render(msgs[:i], tools, chat.RenderOptions{AddGenerationPrompt: true})
		if err != nil {
			return nil, err
		}
		full, err := f.tmpl.Render(msgs[:i+1], tools, chat.RenderOptions{})
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(full, prompt) {
			return nil, fmt.Errorf("assistant message %d: the template's rendering of the reply does not extend the prompt", i)
		}
		resp := f.tok.Encode(full[len(prompt):])
		if len(resp) == 0 {
			continue
		}
		out = append(out, train.Sequence{PromptIDs: f.tok.Encode(prompt), ResponseIDs: resp})
	}
	return out, nil
}

func readSFTData(path, modelDir string, vocab int) ([]train.Sequence, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var seqs []train.Sequence
	var format *chatFormat
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		l, err := parseSFTLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if l.Messages == nil {
			seqs = append(seqs, train.Sequence{PromptIDs: l.PromptIDs, ResponseIDs: l.CompletionIDs})
			continue
		}
		if format == nil {
			tok, tmpl, err := loadChatFormat(modelDir)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: chats need the model's tokenizer and chat template: %w", path, n, err)
			}
			format = &chatFormat{tmpl: tmpl, tok: tok}
		}
		s, err := format.sequences(l.Messages, l.Tools)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		seqs = append(seqs, s...)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, s := range seqs {
		for _, id := range append(append([]int32(nil), s.PromptIDs...), s.ResponseIDs...) {
			if int(id) >= vocab {
				return nil, fmt.Errorf("%s: sequence %d: token id %d outside the model's vocabulary (%d)", path, i, id, vocab)
			}
		}
	}
	if len(seqs) == 0 {
		return nil, fmt.Errorf("%s: no training sequences", path)
	}
	return seqs, nil
}

func runSFT(ctx context.Context, f sftFlags, stdout io.Writer) error {
	mode := train.Mode(f.mode)
	if mode != train.ModeLoRA && mode != train.ModeFull {
		return fmt.Errorf("--mode %q: want lora or full", f.mode)
	}
	if f.batch <= 0 || f.epochs <= 0 {
		return fmt.Errorf("--batch %d and --epochs %d must be positive", f.batch, f.epochs)
	}
	var err error
	if f.modelDir, _, err = resolveModel(ctx, f.modelDir, os.TempDir(), slog.Default()); err != nil {
		return err
	}
	m, err := model.Load(f.modelDir)
	if err != nil {
		return err
	}
	w, err := train.FromModel(m, false)
	if err != nil {
		return err
	}
	if w.ConfigJSON, err = modelConfigJSON(f.modelDir, m.Config); err != nil {
		return err
	}
	w.NameOrPath = f.modelDir
	seqs, err := readSFTData(f.data, f.modelDir, w.Arch.Vocab)
	if err != nil {
		return err
	}
	cfg := train.Config{Mode: mode, LoRA: train.LoRAConfig{Rank: f.rank, Alpha: f.alpha, Dropout: f.dropout},
		MaxGradNorm: f.maxGradNorm, MicroBatchTokens: f.microTokens, Recompute: f.recompute,
		ActivationBudget: train.BudgetFromMiB(f.activationMiB), Seed: f.seed}
	if f.lr > 0 {
		cfg.AdamW = train.DefaultAdamW(f.lr)
	}
	if cfg.Precision, err = train.ParsePrecision(f.precision); err != nil {
		return fmt.Errorf("--train-precision: %w", err)
	}
	tr, err := train.New(w, cfg)
	if err != nil {
		return err
	}
	if f.resume != "" {
		if err := tr.LoadCheckpoint(f.resume); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "sft: %d sequences, %s mode, %d trainable parameters, %d steps per epoch\n",
		len(seqs), mode, countParams(tr.Params()), (len(seqs)+f.batch-1)/f.batch)
	rng := rand.New(rand.NewPCG(f.seed, 0x5f7))
	obj := rl.SFTObjective()
	for epoch := range f.epochs {
		order := rng.Perm(len(seqs))
		for lo := 0; lo < len(order); lo += f.batch {
			batch := make([]train.Sequence, 0, f.batch)
			for _, i := range order[lo:min(lo+f.batch, len(order))] {
				batch = append(batch, seqs[i])
			}
			st, err := tr.Step(ctx, batch, obj)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "epoch %d step %d: loss %.4f grad norm %.3f, %d tokens, %.0f tokens/s\n",
				epoch+1, st.Step, st.Loss, st.GradNorm, st.TotalTokens, st.TokensPerSec)
			if f.saveEvery > 0 && st.Step%int64(f.saveEvery) == 0 {
				if err := tr.SaveCheckpoint(f.out); err != nil {
					return err
				}
			}
		}
	}
	if err := tr.SaveCheckpoint(f.out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "saved to %s after %d steps\n", f.out, tr.StepCount())
	return nil
}

func countParams(ps []*train.Tensor) int {
	n := 0
	for _, p := range ps {
		n += p.Size()
	}
	return n
}
