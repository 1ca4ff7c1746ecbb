#!/usr/bin/env python3
"""Reference for `clawrl bench grpo`: GRPO steps with TRL's GRPOTrainer on
torch CPU, the same checkpoint, prompts, group size, lengths, loss and
optimizer settings as the Go side.

`clawrl bench grpo --reference` runs it with a JSON spec on stdin; by hand:

    python3 cmd/clawrl/bench_grpo_trl.py < spec.json

spec: {"model": dir, "threads": n, "prompts": [text...], "prompt_ids": [[id...]...],
       "group": G, "max_tokens": T, "steps": N, "warmup": W, "mode": "lora"|"full",
       "rank": r, "alpha": a, "lr": lr, "seed": s}

One step (timed from the HF Trainer's on_step_begin to on_step_end, after W
warm-up steps) is GRPOTrainer's: generate G completions of each prompt with
model.generate (sampling at temperature 1), the reward, group-normalised
advantages, the DAPO-normalised PPO-clip loss (epsilon 0.2, epsilon_high
0.28, beta 0: no reference model), backward, gradient clipping at 1 and an
AdamW step. Gradient checkpointing is off (TRL's default is on; off is
faster here). Prints one JSON line. `clawrl bench grpo` sets
OMP_WAIT_POLICY=PASSIVE unless the environment sets it (see
benchGRPORefEnv).
"""
import json
import os
import sys
import time

import torch


def main():
    spec = json.load(sys.stdin)
    torch.set_num_threads(spec["threads"])
    torch.manual_seed(spec["seed"])
    import transformers
    import trl
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    transformers.logging.set_verbosity_error()
    tok = AutoTokenizer.from_pretrained(spec["model"])
    for text, ids in zip(spec["prompts"], spec["prompt_ids"]):
        got = tok(text, add_special_tokens=False)["input_ids"]
        if got != ids:
            raise SystemExit(f"tokenizers disagree on a prompt: transformers {len(got)} ids, clawrl {len(ids)}")
    model = AutoModelForCausalLM.from_pretrained(spec["model"], dtype=torch.float32)

    lengths = []

    def even_token_reward(prompts, completions, completion_ids, **kw):
        # rl.EvenTokenReward: the fraction of completion ids that are even.
        lengths.append([len(c) for c in completion_ids])
        return [sum(1 for i in c if i % 2 == 0) / max(len(c), 1) for c in completion_ids]

    steps = spec["warmup"] + spec["steps"]
    G = spec["group"]
    cfg = GRPOConfig(
        output_dir="/tmp/clawrl-bench-grpo-trl",
        use_cpu=True,
        per_device_train_batch_size=G * len(spec["prompts"]),
        gradient_accumulation_steps=1,
        num_generations=G,
        max_completion_length=spec["max_tokens"],
        max_steps=steps,
        learning_rate=spec["lr"],
        lr_scheduler_type="constant",
        adam_beta2=0.98,
        weight_decay=0.1,
        max_grad_norm=1.0,
        loss_type="dapo",
        beta=0.0,
        epsilon=0.2,
        epsilon_high=0.28,
        temperature=1.0,
        top_p=1.0,
        top_k=0,
        num_iterations=1,
        scale_rewards="group",
        gradient_checkpointing=False,
        shuffle_dataset=False,
        save_strategy="no",
        logging_steps=10**6,
        report_to="none",
        disable_tqdm=True,
        seed=spec["seed"],
    )
    peft_config = None
    if spec["mode"] == "lora":
        from peft import LoraConfig

        peft_config = LoraConfig(r=spec["rank"], lora_alpha=spec["alpha"], lora_dropout=0.0, task_type="CAUSAL_LM",
                                 target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
    ds = Dataset.from_dict({"prompt": spec["prompts"]})

    times = []

    class Timer(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            self.t0 = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            times.append(time.perf_counter() - self.t0)

    trainer = GRPOTrainer(model=model, reward_funcs=even_token_reward, args=cfg, train_dataset=ds,
                          processing_class=tok, peft_config=peft_config, callbacks=[Timer()])
    # The rollout half of a step (generation, reward, advantages) is
    # GRPOTrainer._generate_and_score_completions; time it separately.
    rollout = []
    gen_and_score = trainer._generate_and_score_completions

    def timed_rollout(*a, **kw):
        t0 = time.perf_counter()
        out = gen_and_score(*a, **kw)
        rollout.append(time.perf_counter() - t0)
        return out

    trainer._generate_and_score_completions = timed_rollout
    trainer.train()
    timed = times[spec["warmup"]:]
    rollout = rollout[spec["warmup"]:]
    toks = [sum(l) for l in lengths[spec["warmup"]:]]
    import peft

    print(json.dumps({
        "engine": f"trl {trl.__version__} (torch {torch.__version__.split('+')[0]}, transformers {transformers.__version__}, peft {peft.__version__}; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')})",
        "step_s": timed,
        "completion_tokens": toks,
        "rollout_s": rollout,
        "train_s": [t - r for t, r in zip(timed, rollout)],
        "threads": torch.get_num_threads(),
    }))


if __name__ == "__main__":
    main()
