package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/clawrl/clawrl/engine"
	"github.com/clawrl/clawrl/engine/sglang"
	"github.com/clawrl/clawrl/engine/vllm"
)

// engineFlagHelp is --engine's help, shared by serve and trainer.
const engineFlagHelp = "model runtime: vllm:http://host:port[,http://…] or sglang:http://host:port[,http://…] (replicas of one vLLM or SGLang deployment; --model names the same checkpoint folder, for the tokenizer and chat template); default: the native engine in this process"

// openRemoteEngine opens the remote engine --engine names. Adding an engine
// is one case here.
func openRemoteEngine(o serveOptions, log *slog.Logger) (engine.Engine, error) {
	kind, rest, _ := strings.Cut(o.engineURL, ":")
	switch kind {
	case "native":
		return nil, nil
	case "vllm":
		if o.model == "" {
			return nil, errors.New("--engine vllm:… needs --model: the checkpoint folder vLLM serves (clawrl renders and tokenises with it)")
		}
		urls, err := vllm.ParseURLs(rest)
		if err != nil {
			return nil, fmt.Errorf("--engine: %w", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return vllm.Open(ctx, urls, vllm.Options{ModelDir: o.model, Logger: log})
	case "sglang":
		if o.model == "" {
			return nil, errors.New("--engine sglang:… needs --model: the checkpoint folder SGLang serves (clawrl renders and tokenises with it)")
		}
		urls, err := sglang.ParseURLs(rest)
		if err != nil {
			return nil, fmt.Errorf("--engine: %w", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return sglang.Open(ctx, urls, sglang.Options{ModelDir: o.model, Logger: log})
	}
	return nil, fmt.Errorf("--engine %q: unknown engine %q: want vllm:http://… or sglang:http://… (or leave it out for the native engine)", o.engineURL, kind)
}
