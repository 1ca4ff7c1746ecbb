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
faster here).

With "impl": "plain" in the spec it runs the same step hand-written on
transformers + PEFT + torch.optim.AdamW instead (model.generate, the reward,
group-normalised advantages, the PPO-clip loss on the completion tokens'
log-softmax, backward, clipping, AdamW): a lean torch floor, without TRL's
machinery (its chunked LM-head log-prob kernel, accelerate, the HF Trainer
loop). Prints one JSON line. `clawrl bench grpo` sets
OMP_WAIT_POLICY=PASSIVE unless the environment sets it (see
benchGRPORefEnv).
"""
import json
import os
import sys
import time

import torch


def plain(spec):
    import peft
    import transformers
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    transformers.logging.set_verbosity_error()
    model = AutoModelForCausalLM.from_pretrained(spec["model"], dtype=torch.float32)
    if spec["mode"] == "lora":
        model = get_peft_model(model, LoraConfig(
            r=spec["rank"], lora_alpha=spec["alpha"], lora_dropout=0.0, task_type="CAUSAL_LM",
            target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]))
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=spec["lr"], betas=(0.9, 0.98), eps=1e-8, weight_decay=0.1)
    G, T = spec["group"], spec["max_tokens"]
    # Prompts have equal length (the Go side makes them so): no padding.
    prompts = torch.tensor([p for p in spec["prompt_ids"] for _ in range(G)])
    P = prompts.shape[1]
    eos = model.generation_config.eos_token_id
    pad = model.generation_config.pad_token_id
    if pad is None:
        pad = eos[0] if isinstance(eos, list) else eos

    def step():
        model.eval()
        with torch.no_grad():
            out = model.generate(input_ids=prompts, attention_mask=torch.ones_like(prompts), max_new_tokens=T,
                                 do_sample=True, temperature=1.0, top_k=0, top_p=1.0, pad_token_id=pad)
        model.train()
        comp = out[:, P:]
        # Tokens after the first EOS are padding.
        eos_ids = torch.tensor(eos if isinstance(eos, list) else [eos])
        is_eos = torch.isin(comp, eos_ids)
        first = torch.where(is_eos.any(1), is_eos.int().argmax(1), torch.full((comp.shape[0],), T))
        mask = (torch.arange(comp.shape[1])[None, :] <= first[:, None]).float()[:, :comp.shape[1]]
        ids = [c[: int(m.sum())].tolist() for c, m in zip(comp, mask)]
        r = torch.tensor([sum(1 for i in c if i % 2 == 0) / max(len(c), 1) for c in ids]).view(-1, G)
        adv = ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-6)).view(-1, 1)
        # Logits of the completion positions only (the LM head over a 152k
        # vocabulary is most of the cost).
        logits = model(input_ids=out, attention_mask=torch.ones_like(out), logits_to_keep=comp.shape[1] + 1).logits[:, :-1]
        logp = torch.log_softmax(logits.float(), -1).gather(-1, comp[..., None]).squeeze(-1)
        ratio = torch.exp(logp - logp.detach())
        pg = torch.max(-ratio * adv, -torch.clamp(ratio, 0.8, 1.28) * adv)
        loss = (pg * mask).sum() / mask.sum()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        return int(mask.sum())

    times, toks = [], []
    for s in range(spec["warmup"] + spec["steps"]):
        t0 = time.perf_counter()
        n = step()
        if s >= spec["warmup"]:
            times.append(time.perf_counter() - t0)
            toks.append(n)
    print(json.dumps({
        "engine": f"torch+peft by hand (torch {torch.__version__.split('+')[0]}, transformers {transformers.__version__}, "
                  f"peft {peft.__version__}; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')})",
        "step_s": times,
        "completion_tokens": toks,
        "threads": torch.get_num_threads(),
    }))


def main():
    spec = json.load(sys.stdin)
    torch.set_num_threads(spec["threads"])
    torch.manual_seed(spec["seed"])
    if spec.get("impl") == "plain":
        plain(spec)
        return
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
