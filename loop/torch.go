package loop

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/clawrl/clawrl/model"
	"github.com/clawrl/clawrl/rl"
	"github.com/clawrl/clawrl/train/torchtrain"
)

const trainBackendHelp = "trainer: native (the Go trainer in this process) or torch:PYTHON (torch + PEFT in a worker process run by that Python interpreter, on a GPU when torch sees one; same samples, losses and adapter files; needs --model to be a Hugging Face folder; CLAWRL_TORCHRUN_NPROC=N runs N processes under torchrun with FSDP2)"

// trainer builds the trainer --train-backend names.
func (s Settings) trainer(m *model.Model, modelDir string, log *slog.Logger) (rl.Trainer, error) {
	kind, python, _ := strings.Cut(s.TrainBackend, ":")
	switch kind {
	case "", "native":
		return s.nativeTrainer(m, modelDir)
	case "torch":
		return s.torchTrainer(python, modelDir, log)
	}
	return nil, fmt.Errorf("--train-backend %q: want native or torch:PYTHON", s.TrainBackend)
}

// torchTrainer starts the torch worker on the Hugging Face folder modelDir.
func (s Settings) torchTrainer(python, modelDir string, log *slog.Logger) (rl.Trainer, error) {
	if python == "" {
		return nil, fmt.Errorf("--train-backend torch:PYTHON: name the Python interpreter that has torch, transformers and peft")
	}
	if fi, err := os.Stat(modelDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--train-backend torch needs --model to be a Hugging Face checkpoint folder (got %q)", modelDir)
	}
	nproc := 0
	if v := os.Getenv("CLAWRL_TORCHRUN_NPROC"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("CLAWRL_TORCHRUN_NPROC %q: want a number of processes", v)
		}
		nproc = n
	}
	step, err := s.stepConfig()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tr, err := torchtrain.Start(ctx, torchtrain.Options{Python: python, ModelDir: modelDir, Config: s.trainConfig(),
		NProcPerNode: nproc, Logger: log.With("part", "trainer")})
	if err != nil {
		return nil, err
	}
	return rl.NewPolicyTrainer(tr, step), nil
}
