"""clawrl's torch trainer worker: LoRA training of a Hugging Face checkpoint
with torch + PEFT, driven by clawrl (package train/torchtrain) over stdin and
stdout, one JSON object per line each way.

clawrl keeps the samples, the advantages and the loss (package rl): for each
micro-batch it asks this worker for the log-probabilities and entropies of
the response tokens ("forward"), computes d(loss)/d(logp) and
d(loss)/d(entropy) with its own code, and sends them back ("backward"); the
worker back-propagates them through the model into the LoRA weights and,
after the last micro-batch, clips the gradient norm and takes one AdamW step
("update"). So a step here applies exactly the loss the native trainer
applies, on torch's kernels (a GPU when there is one).

Checkpoints are the native trainer's layout: the PEFT adapter
(adapter_config.json, adapter_model.safetensors) plus optimizer.safetensors
(<PEFT tensor name>.exp_avg / .exp_avg_sq) and trainer_state.json, so either
trainer resumes the other's checkpoint and every engine serves its adapter.

Several GPUs: run it under torchrun (clawrl does with --train-backend
torch:PYTHON and CLAWRL_TORCHRUN_NPROC=N); rank 0 talks to clawrl and
broadcasts each command, every rank runs its share of each micro-batch's
sequences on an FSDP2-sharded model (torch.distributed.fsdp.fully_shard), and
the per-token values are gathered to rank 0.

Requests: {"op": "init" | "score" | "forward" | "backward" | "update" |
"save" | "load" | "quit", ...}; answers: {"ok": true, ...} or
{"error": "message"}.
"""

import json
import math
import os
import sys

import torch
import torch.distributed as dist


def log(*args):
    print("torchtrain worker:", *args, file=sys.stderr, flush=True)


class Worker:
    def __init__(self):
        self.model = None
        self.opt = None
        self.step = 0
        self.momentum_step = 0  # steps since exp_avg was last reset (reset_momentum)
        self.kept = []  # (logp, entropy) tensors of the last forward, per local sequence
        self.rank = dist.get_rank() if dist.is_initialized() else 0
        self.world = dist.get_world_size() if dist.is_initialized() else 1

    # -- set up -------------------------------------------------------------

    def init(self, req):
        from peft import LoraConfig, get_peft_model
        from transformers import AutoModelForCausalLM

        self.cfg = req
        if req.get("mode", "lora") != "lora":
            raise ValueError("the torch trainer trains LoRA adapters only (mode %r)" % req.get("mode"))
        device = req.get("device") or ("cuda" if torch.cuda.is_available() else "cpu")
        if device == "cuda" and self.world > 1:
            device = "cuda:%d" % int(os.environ.get("LOCAL_RANK", "0"))
            torch.cuda.set_device(device)
        self.device = torch.device(device)
        dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[req.get("dtype", "float32")]
        torch.manual_seed(int(req.get("seed", 0)))
        model = AutoModelForCausalLM.from_pretrained(req["model"], dtype=dtype)
        if req.get("recompute"):
            # train.Config.Recompute: keep each layer's input and recompute
            # its activations in the backward. The non-reentrant form needs
            # no input that requires a gradient (the embedding is frozen) and
            # replays dropout's random draws.
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        lora = req["lora"]
        adapter = req.get("adapter")
        if adapter:
            # A checkpoint's own settings win, as in the native trainer.
            with open(os.path.join(adapter, "adapter_config.json")) as f:
                ac = json.load(f)
            lora = {"rank": ac["r"], "alpha": ac["lora_alpha"], "dropout": ac.get("lora_dropout", 0.0),
                    "targets": sorted(ac["target_modules"]) if isinstance(ac["target_modules"], list) else ac["target_modules"]}
        self.lora = lora
        config = LoraConfig(r=lora["rank"], lora_alpha=lora["alpha"], lora_dropout=lora.get("dropout", 0.0),
                            target_modules=lora["targets"], bias="none", task_type="CAUSAL_LM")
        model = get_peft_model(model, config)
        model.to(self.device)
        if self.world > 1:
            from torch.distributed.fsdp import fully_shard

            for layer in model.base_model.model.model.layers:
                fully_shard(layer)
            fully_shard(model)
        self.model = model
        self.params = [p for _, p in self.named_trainable()]
        a = req["adamw"]
        self.adamw = a
        self.opt = torch.optim.AdamW(self.params, lr=a["LR"], betas=(a["Beta1"], a["Beta2"]), eps=a["Eps"],
                                     weight_decay=a["WeightDecay"], foreach=False)
        self.max_grad_norm = float(req.get("max_grad_norm", 1.0))
        step = self.load({"dir": adapter})["step"] if adapter else 0
        return {"trainable": sum(p.numel() for p in self.params), "device": str(self.device), "world": self.world, "step": step,
                "lora": self.lora, "recompute": bool(getattr(model, "is_gradient_checkpointing", False))}

    def named_trainable(self):
        """Trainable parameters under their PEFT file names (the adapter name dropped)."""
        for name, p in self.model.named_parameters():
            if p.requires_grad:
                yield name.replace(".default", ""), p

    # -- the model's per-token values --------------------------------------

    def local(self, seqs):
        """This rank's share of a micro-batch: every world-th sequence. Under
        FSDP every rank must run the same number of forward passes (each one
        gathers the shards), so a rank short of sequences repeats its first
        one (or the batch's) as padding: index -1, its values unused and its
        gradient zero."""
        mine = list(range(self.rank, len(seqs), self.world))
        if self.world > 1:
            per_rank = -(-len(seqs) // self.world)
            mine += [-1] * (per_rank - len(mine))
        return mine

    def values_of(self, seqs, index):
        return self.token_values(seqs[index if index >= 0 else 0])

    def token_values(self, seq):
        prompt, response = seq["prompt"], seq["response"]
        ids = torch.tensor([prompt + response], dtype=torch.long, device=self.device)
        logits = self.model(input_ids=ids).logits[0].float()
        # Position len(prompt)-1+t predicts response token t.
        start = len(prompt) - 1
        lsm = torch.log_softmax(logits[start:start + len(response)], dim=-1)
        target = torch.tensor(response, dtype=torch.long, device=self.device)
        logp = lsm.gather(1, target[:, None])[:, 0]
        entropy = -(lsm.exp() * lsm).sum(-1)
        return logp, entropy

    def gather(self, seqs, local_values):
        """Per-sequence [logp list, entropy list] of the whole micro-batch, on rank 0."""
        out = [None] * len(seqs)
        for i, (lp, en) in zip(self.local(seqs), local_values):
            if i < 0:
                continue
            out[i] = [finite(lp.detach().float().cpu().tolist()), finite(en.detach().float().cpu().tolist())]
        if self.world > 1:
            parts = [None] * self.world if self.rank == 0 else None
            dist.gather_object(out, parts, dst=0)
            if self.rank == 0:
                for part in parts:
                    for i, v in enumerate(part):
                        if v is not None:
                            out[i] = v
        return out

    def score(self, req):
        self.model.eval()
        seqs = req["seqs"]
        values = []
        with torch.no_grad():
            if req.get("reference"):
                with self.model.disable_adapter():
                    values = [self.values_of(seqs, i) for i in self.local(seqs)]
            else:
                values = [self.values_of(seqs, i) for i in self.local(seqs)]
        got = self.gather(seqs, values)
        return {"logprobs": [g[0] for g in got], "entropy": [g[1] for g in got]} if self.rank == 0 else {}

    def forward(self, req):
        self.model.train()
        seqs = req["seqs"]
        self.kept = [self.values_of(seqs, i) for i in self.local(seqs)]
        self.kept_index = self.local(seqs)
        got = self.gather(seqs, self.kept)
        return {"logprobs": [g[0] for g in got], "entropy": [g[1] for g in got]} if self.rank == 0 else {}

    def backward(self, req):
        # FSDP averages gradients over the ranks; the loss is a sum over
        # every rank's tokens, so each rank's share is scaled back up.
        scale = float(self.world)
        outs, grads = [], []
        for i, (lp, en) in zip(self.kept_index, self.kept):
            outs += [lp, en]
            if i < 0:  # padding
                grads += [torch.zeros_like(lp), torch.zeros_like(en)]
                continue
            grads += [torch.tensor(req["dlogp"][i], dtype=lp.dtype, device=self.device) * scale,
                      torch.tensor(req["dentropy"][i], dtype=en.dtype, device=self.device) * scale]
        if outs:
            torch.autograd.backward(outs, grads)
        self.kept, self.kept_index = [], []
        return {}

    def update(self, req):
        if self.max_grad_norm > 0:
            norm = torch.nn.utils.clip_grad_norm_(self.params, self.max_grad_norm)
        else:
            norm = torch.nn.utils.get_total_norm([p.grad for p in self.params if p.grad is not None])
        norm = float(norm.full_tensor() if hasattr(norm, "full_tensor") else norm)
        # torch corrects exp_avg's bias by 1 - beta1**t over all t steps; after
        # a reset (reset_momentum) the native trainer corrects it by
        # 1 - beta1**k, k the steps since. This step's lr scaled by
        # (1 - beta1**t)/(1 - beta1**k), and the weight decay by the inverse
        # (torch decays by lr * weight_decay), is exactly that update.
        t, k = self.step + 1, self.momentum_step + 1
        saved = [(g["lr"], g["weight_decay"]) for g in self.opt.param_groups]
        # The step's rate (AdamWConfig.Rate: warmup, first rate) comes from
        # the Go side; weight decay follows it, as torch decays by lr * wd.
        lr = float(req.get("lr", saved[0][0]))
        for g in self.opt.param_groups:
            g["lr"] = lr
        if k != t:
            b1 = self.opt.param_groups[0]["betas"][0]
            c = (1 - b1 ** t) / (1 - b1 ** k)
            for g in self.opt.param_groups:
                g["lr"], g["weight_decay"] = g["lr"] * c, g["weight_decay"] / c
        try:
            self.opt.step()
        finally:
            for g, (lr, wd) in zip(self.opt.param_groups, saved):
                g["lr"], g["weight_decay"] = lr, wd
        self.opt.zero_grad(set_to_none=False)
        self.step += 1
        self.momentum_step += 1
        return {"grad_norm": norm, "step": self.step}

    def reset_momentum(self, req):
        for p in self.params:
            st = self.opt.state.get(p)
            if st and "exp_avg" in st:
                st["exp_avg"].zero_()
        self.momentum_step = 0
        return {}

    def zero_grad(self, req):
        self.opt.zero_grad(set_to_none=False)
        self.kept, self.kept_index = [], []
        return {}

    # -- checkpoints ----------------------------------------------------------

    def full(self, t):
        return t.full_tensor() if hasattr(t, "full_tensor") else t

    def save(self, req):
        from safetensors.torch import save_file

        d = req["dir"]
        tensors, moments = {}, {}
        for name, p in self.named_trainable():
            tensors[name] = self.full(p.detach()).float().cpu().contiguous()
            st = self.opt.state.get(p, {})
            for key in ("exp_avg", "exp_avg_sq"):
                v = st.get(key)
                moments[name + "." + key] = (self.full(v).float().cpu().contiguous() if v is not None
                                             else torch.zeros_like(tensors[name]))
        if self.rank != 0:
            return {}
        os.makedirs(d, exist_ok=True)
        save_file(tensors, os.path.join(d, "adapter_model.safetensors"), metadata={"format": "pt"})
        save_file(moments, os.path.join(d, "optimizer.safetensors"))
        base = self.cfg["model"]
        ac = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "base_model_name_or_path": base,
              "r": self.lora["rank"], "lora_alpha": self.lora["alpha"], "lora_dropout": self.lora.get("dropout", 0.0),
              "target_modules": list(self.lora["targets"]), "bias": "none", "fan_in_fan_out": False,
              "inference_mode": True, "modules_to_save": None}
        with open(os.path.join(d, "adapter_config.json"), "w") as f:
            json.dump(ac, f, indent=2)
        state = {"step": self.step, "micro_batches": 0, "mode": "lora", "adamw": self.adamw,
                 "seed": int(self.cfg.get("seed", 0)), "max_grad_norm": self.max_grad_norm}
        if self.momentum_step != self.step:
            state["momentum_step"] = self.momentum_step
        with open(os.path.join(d, "trainer_state.json"), "w") as f:
            json.dump(state, f, indent=2)
        return {}

    def load(self, req):
        from safetensors.torch import load_file

        d = req["dir"]
        weights = load_file(os.path.join(d, "adapter_model.safetensors"))
        opt_path = os.path.join(d, "optimizer.safetensors")
        moments = load_file(opt_path) if os.path.exists(opt_path) else {}
        step = momentum_step = 0
        if os.path.exists(os.path.join(d, "trainer_state.json")):
            with open(os.path.join(d, "trainer_state.json")) as f:
                ts = json.load(f)
            step = int(ts.get("step", 0))
            momentum_step = int(ts.get("momentum_step", step))
            if not 0 <= momentum_step <= step:
                raise ValueError("checkpoint %s: momentum_step %d outside 0…%d" % (d, momentum_step, step))
        with torch.no_grad():
            for name, p in self.named_trainable():
                if name not in weights:
                    raise ValueError("checkpoint %s has no tensor %s" % (d, name))
                src = weights[name].to(p.dtype)
                if tuple(src.shape) != tuple(p.shape) and not hasattr(p, "full_tensor"):
                    raise ValueError("checkpoint %s: %s has shape %s, the model %s" % (d, name, list(src.shape), list(p.shape)))
                self.assign(p, src)
                if moments:
                    st = self.opt.state[p]
                    st["step"] = torch.tensor(float(step))
                    for key in ("exp_avg", "exp_avg_sq"):
                        buf = torch.zeros_like(p)
                        self.assign(buf, moments[name + "." + key].to(p.dtype))
                        st[key] = buf
        self.step, self.momentum_step = step, momentum_step
        return {"step": step}

    def assign(self, p, full):
        if hasattr(p, "full_tensor"):
            from torch.distributed.tensor import distribute_tensor

            p.copy_(distribute_tensor(full.to(p.device_mesh.device_type), p.device_mesh, p.placements))
        else:
            p.copy_(full.to(p.device))


def finite(values):
    """JSON has no infinities: a log-probability of -inf (a token the model
    gives no mass) goes as float32's lowest value."""
    return [v if math.isfinite(v) else (-3.4028234663852886e38 if v < 0 else float("nan")) for v in values]


def serve(worker, out):
    ops = {"init": worker.init, "score": worker.score, "forward": worker.forward, "backward": worker.backward,
           "update": worker.update, "zero_grad": worker.zero_grad, "reset_momentum": worker.reset_momentum, "save": worker.save, "load": worker.load}
    while True:
        req = None
        if worker.rank == 0:
            line = sys.stdin.readline()
            req = json.loads(line) if line.strip() else {"op": "quit"}
        if worker.world > 1:
            box = [req]
            dist.broadcast_object_list(box, src=0)
            req = box[0]
        op = req.get("op")
        if op == "quit":
            return
        try:
            if op not in ops:
                raise ValueError("unknown op %r" % op)
            resp = ops[op](req)
            resp["ok"] = True
        except Exception as e:  # reported to clawrl, which fails the step
            resp = {"error": "%s: %s" % (type(e).__name__, e)}
        if worker.rank == 0:
            try:
                line = json.dumps(resp, allow_nan=False)
            except ValueError as e:  # a NaN: the model diverged
                line = json.dumps({"error": "%s answer has a NaN: %s" % (op, e)})
            out.write(line + "\n")
            out.flush()


def main():
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    # The protocol owns stdout; anything a library prints goes to stderr.
    proto = sys.stdout
    sys.stdout = sys.stderr
    worker = Worker()
    try:
        serve(worker, proto)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


if __name__ == "__main__":
    main()
