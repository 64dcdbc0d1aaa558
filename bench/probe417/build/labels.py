"""Labels for probe417 (knowledge tracing: pyKT, AKT, DKT-pytorch, EduKTM, SAINT+ on Riiid).

One entry per upstream file; one C(...) per line a careful porter would edit for Ascend NPU
(explicit torch_npu port, no transfer_to_npu). See README.md for the policy and judgements.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


PYKT_DEV = 'device = "cpu" if not torch.cuda.is_available() else "cuda"'
PYKT_DEV_NPU = 'device = "cpu" if not torch.npu.is_available() else "npu"'
BCE_NOTE = ("Ascend's PyTorch 2.7.1 support list: F.binary_cross_entropy input only bf16/fp16/fp32; "
            "the fp64 cast has no NPU kernel, so compute the loss in fp32")

# ----------------------------------------------------------------------------------------------
# pyKT toolkit (pykt-team/pykt-toolkit)
# ----------------------------------------------------------------------------------------------
E("pykt_dkt", "pykt/models/dkt.py", "explicit_replacement",
  "pykt-team/pykt-toolkit pykt/models/dkt.py (DKT: Embedding + LSTM, device-agnostic)", [])

E("pykt_sakt", "pykt/models/sakt.py", "explicit_replacement",
  "pykt-team/pykt-toolkit pykt/models/sakt.py (SAKT, nn.MultiheadAttention blocks)", [
    C(PYKT_DEV, "device_type", "replace", False, PYKT_DEV_NPU,
      "module-level device global is defined but never used in this module (masks come from models/utils.py); "
      "ported for consistency only"),
])

E("pykt_akt", "pykt/models/akt.py", "explicit_replacement",
  "pykt-team/pykt-toolkit pykt/models/akt.py (AKT monotonic attention with distance decay)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "src_mask, position_effect, pad_zero and the arange in attention() are created on CPU and moved with "
      ".to(device); left as cuda-or-cpu they stay on CPU and mix with NPU scores"),
])

E("pykt_saint", "pykt/models/saint.py", "explicit_replacement",
  "pykt-team/pykt-toolkit pykt/models/saint.py (SAINT encoder/decoder blocks)", [
    C(PYKT_DEV, "device_type", "replace", True, PYKT_DEV_NPU,
      "start_token is built on CPU and moved with .to(device) before torch.cat with the NPU response batch"),
])

E("pykt_models_utils", "pykt/models/utils.py", "explicit_replacement",
  "pykt-team/pykt-toolkit pykt/models/utils.py (ut_mask / lt_mask / pos_encode helpers)", [
    C(PYKT_DEV, "device_type", "replace", True, PYKT_DEV_NPU,
      "ut_mask/pos_encode put the causal mask and position ids on this device; SAKT/SAINT attention on NPU "
      "needs them there"),
])

E("pykt_train_model", "pykt/models/train_model.py", "explicit_replacement",
  "pykt-team/pykt-toolkit pykt/models/train_model.py (cal_loss / model_forward / train_model)", [
    C(PYKT_DEV, "device_type", "replace", True, PYKT_DEV_NPU,
      "every batch tensor is moved with .to(device) in model_forward"),
    C("loss1 = binary_cross_entropy(y.double(), t.double())", "unsupported_op_workaround", "replace", True,
      "loss1 = binary_cross_entropy(y.float(), t.float())", BCE_NOTE),
    C("=loss = binary_cross_entropy(y.double(), t.double())", "unsupported_op_workaround", "replace", True,
      "loss = binary_cross_entropy(y.float(), t.float())", BCE_NOTE + " (the dkt/sakt/saint branch)"),
    C("loss = binary_cross_entropy(y_next.double(), r_next.double())", "unsupported_op_workaround", "replace",
      True, "loss = binary_cross_entropy(y_next.float(), r_next.float())", BCE_NOTE + " (dkt+ branch)"),
    C("loss_r = binary_cross_entropy(y_curr.double(), r_curr.double())", "unsupported_op_workaround", "replace",
      True, "loss_r = binary_cross_entropy(y_curr.float(), r_curr.float())", BCE_NOTE + " (dkt+ branch)"),
    C("t.double()) + preloss[0]", "unsupported_op_workaround", "replace", True,
      "loss = binary_cross_entropy(y.float(), t.float()) + preloss[0]", BCE_NOTE + " (akt family branch)"),
    C("isinstance(d, torch.cuda.FloatTensor)", "torch_cuda_api", "replace", False,
      "elif isinstance(d, torch.FloatTensor) or (isinstance(d, torch.Tensor) and d.is_npu):",
      "legacy CUDA tensor-type check; unreachable in modern torch because isinstance(tensor, Variable) is "
      "already True in the branch above, so the port is for clarity only"),
])

E("pykt_evaluate_model", "pykt/models/evaluate_model.py", "explicit_replacement",
  "pykt-team/pykt-toolkit pykt/models/evaluate_model.py (evaluate + question-level fusion)", [
    C(PYKT_DEV, "device_type", "replace", True, PYKT_DEV_NPU,
      "evaluate() moves q/c/r/masks with .to(device); the model lives on NPU"),
])

E("pykt_init_model", "pykt/models/init_model.py", "explicit_replacement",
  "pykt-team/pykt-toolkit pykt/models/init_model.py (init_model / load_model)", [
    C(PYKT_DEV, "device_type", "replace", True, PYKT_DEV_NPU,
      "init_model places every model with .to(device) and load_model uses map_location=device"),
])

E("pykt_data_loader", "pykt/datasets/data_loader.py", "explicit_replacement",
  "pykt-team/pykt-toolkit pykt/datasets/data_loader.py (KTDataset, CPU tensors)", [])

E("pykt_init_dataset", "pykt/datasets/init_dataset.py", "explicit_replacement",
  "pykt-team/pykt-toolkit pykt/datasets/init_dataset.py (DataLoader construction)", [])

E("pykt_utils", "pykt/utils/utils.py", "explicit_replacement",
  "pykt-team/pykt-toolkit pykt/utils/utils.py (set_seed, debug_print)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():",
      "guards the device seeding; torch.manual_seed above should already seed the NPU generator through the "
      "PrivateUse1 hook (unconfirmed in the knowledge base), so reproducibility only"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "torch.cuda.manual_seed_all is lazily queued and harmless on an NPU host; explicit NPU seeding for "
      "reproducibility (unconfirmed whether torch.manual_seed alone covers it)"),
])

E("pykt_wandb_train", "examples/wandb_train.py", "explicit_replacement",
  "pykt-team/pykt-toolkit examples/wandb_train.py (main() shared by every wandb_<model>_train.py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point for all wandb_*_train.py scripts; pyKT targets torch versions before the 2.5.1 autoload, "
      "and the torch.npu.* calls in the ported library need torch_npu loaded"),
    C(PYKT_DEV, "device_type", "replace", False, PYKT_DEV_NPU,
      "device global is unused in this script (placement happens in init_model/train_model)"),
])

E("pykt_wandb_predict", "examples/wandb_predict.py", "explicit_replacement",
  "pykt-team/pykt-toolkit examples/wandb_predict.py (test-set evaluation of a saved run)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "standalone entry point; load_model/evaluate need the NPU backend registered"),
    C(PYKT_DEV, "device_type", "replace", False, PYKT_DEV_NPU,
      "device global is unused in this script"),
])

E("pykt_kt_config", "configs/kt_config.json", "explicit_replacement",
  "pykt-team/pykt-toolkit configs/kt_config.json (model hyper-parameters)", [])

SWEEP_NOTE = ("CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: every agent would land on NPU 0 "
              "(oversubscribed, possible OOM) instead of its own card")
E("pykt_sweep_sh", "examples/all_start.sh", "explicit_replacement",
  "pykt-team/pykt-toolkit generated wandb sweep launcher (one agent per GPU)", [
    C("WANDB_DIR=./wandb_logs", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; only needed when the calling shell has not sourced set_env.sh already (the agents "
      "inherit the environment)"),
    C("CUDA_VISIBLE_DEVICES=0 nohup", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 nohup wandb agent pykt-team/kt_sweeps/dkt_assist2015_0 > logs/dkt_assist2015_0.log 2>&1 &",
      SWEEP_NOTE),
    C("CUDA_VISIBLE_DEVICES=1 nohup", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=1 nohup wandb agent pykt-team/kt_sweeps/sakt_assist2015_0 > logs/sakt_assist2015_0.log 2>&1 &",
      SWEEP_NOTE),
    C("CUDA_VISIBLE_DEVICES=2 nohup", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=2 nohup wandb agent pykt-team/kt_sweeps/akt_assist2015_0 > logs/akt_assist2015_0.log 2>&1 &",
      SWEEP_NOTE),
    C("CUDA_VISIBLE_DEVICES=3 nohup", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=3 nohup wandb agent pykt-team/kt_sweeps/saint_assist2015_0 > logs/saint_assist2015_0.log 2>&1 &",
      SWEEP_NOTE),
    C("CUDA_VISIBLE_DEVICES=${gpu} nohup", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${gpu} nohup wandb agent pykt-team/kt_sweeps/akt_assist2015_${fold} > logs/akt_assist2015_${fold}.log 2>&1 &",
      SWEEP_NOTE),
])

# ----------------------------------------------------------------------------------------------
# AKT reference implementation (arghosh/AKT)
# ----------------------------------------------------------------------------------------------
AKT_DEV = 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")'
AKT_DEV_NPU = 'device = torch.device("npu" if torch.npu.is_available() else "cpu")'

E("akt_main", "main.py", "explicit_replacement",
  "arghosh/AKT main.py (argparse, train/valid/test driver)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point; AKT's pinned torch predates the torch_npu autoload"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = params.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = params.gpu",
      "--gpu would be silently ignored on NPU. Caveat: run.py/utils.py already query device availability at "
      "import time, so the porter should also move this above those imports (upstream has the same ordering "
      "hazard with CUDA)"),
    C("torch.cuda.manual_seed_all(seedNum)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seedNum)",
      "lazily queued and harmless on NPU; torch.manual_seed likely seeds the NPU too (unconfirmed)"),
])

E("akt_akt", "akt.py", "explicit_replacement",
  "arghosh/AKT akt.py (AKT model with BCEWithLogits loss inside forward)", [
    C(AKT_DEV, "device_type", "replace", True, AKT_DEV_NPU,
      "masks/position tensors in TransformerLayer and attention() are moved with .to(device)"),
])

E("akt_run", "run.py", "explicit_replacement",
  "arghosh/AKT run.py (numpy batching, train/test loops)", [
    C(AKT_DEV, "device_type", "replace", True, AKT_DEV_NPU,
      "input_q/input_qa/target/input_pid are moved to this device every batch"),
])

E("akt_utils", "utils.py", "explicit_replacement",
  "arghosh/AKT utils.py (load_model, file-name helpers)", [
    C(AKT_DEV, "device_type", "replace", True, AKT_DEV_NPU,
      "load_model places AKT with .to(device)"),
])

E("akt_load_data", "load_data.py", "explicit_replacement",
  "arghosh/AKT load_data.py (DATA / PID_DATA csv readers, numpy only)", [])

# ----------------------------------------------------------------------------------------------
# DKT re-implementation in PyTorch (chsong513-style DeepKnowledgeTracing-DKT-Pytorch)
# ----------------------------------------------------------------------------------------------
E("dktpt_run", "KnowledgeTracing/run.py", "explicit_replacement",
  "DeepKnowledgeTracing-DKT-Pytorch KnowledgeTracing/run.py (script-style driver with .cuda())", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; Tensor.npu()/torch.npu need torch_npu loaded"),
    C("torch.cuda.set_device(C.GPU)", "torch_cuda_api", "replace", True, "torch.npu.set_device(C.GPU)",
      "fails on a host without CUDA"),
    C("model = DKT(C.INPUT, C.HIDDEN, C.LAYERS, C.OUTPUT).cuda()", "tensor_to_device", "replace", True,
      "model = DKT(C.INPUT, C.HIDDEN, C.LAYERS, C.OUTPUT).npu()", "model placement"),
    C("lossFunc = eval.lossFunc().cuda()", "tensor_to_device", "replace", False,
      "lossFunc = eval.lossFunc().npu()",
      "lossFunc has no parameters or buffers, so Module.cuda() touches no tensor and does not fail; "
      "ported for consistency"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "print('peak NPU memory: %.1f MB' % (torch.npu.max_memory_allocated() / 1024 ** 2))",
      "log only; the CUDA memory counters return 0 when CUDA was never initialised"),
])

E("dktpt_rnn", "KnowledgeTracing/model/RNNModel.py", "explicit_replacement",
  "DeepKnowledgeTracing-DKT-Pytorch KnowledgeTracing/model/RNNModel.py (nn.RNN DKT)", [
    C("h0 = Variable(torch.zeros(self.layer_dim, x.size(0), self.hidden_dim)).cuda()", "tensor_to_device",
      "replace", True,
      "h0 = Variable(torch.zeros(self.layer_dim, x.size(0), self.hidden_dim)).npu()",
      "initial hidden state must sit on the same device as the batch"),
])

E("dktpt_eval", "KnowledgeTracing/evaluation/eval.py", "explicit_replacement",
  "DeepKnowledgeTracing-DKT-Pytorch KnowledgeTracing/evaluation/eval.py (per-student loss, train/test epochs)", [
    C("loss = torch.Tensor([0.0]).cuda()", "tensor_to_device", "replace", True,
      "loss = torch.Tensor([0.0]).npu()", "loss accumulator is combined with NPU predictions"),
    C("index = torch.LongTensor([[i for i in range(C.MAX_STEP - 1)]]).cuda()", "tensor_to_device", "replace",
      True, "index = torch.LongTensor([[i for i in range(C.MAX_STEP - 1)]]).npu()",
      "gather index must be on the NPU with temp"),
    C("=batch = batch.cuda()", "tensor_to_device", "replace", True, "batch = batch.npu()", "training batch"),
    C("gold_epoch = torch.Tensor([]).cuda()", "tensor_to_device", "replace", True,
      "gold_epoch = torch.Tensor([]).npu()", "concatenated with NPU tensors"),
    C("pred_epoch = torch.Tensor([]).cuda()", "tensor_to_device", "replace", True,
      "pred_epoch = torch.Tensor([]).npu()", "concatenated with NPU tensors"),
    C("batch = batch.to(torch.device('cuda'))", "device_type", "replace", True,
      "batch = batch.to(torch.device('npu'))", "test batch"),
    C("temp_pred = torch.Tensor([]).cuda()", "tensor_to_device", "replace", True,
      "temp_pred = torch.Tensor([]).npu()", "torch.cat with p[i:i + 1] on NPU"),
    C("temp_gold = torch.Tensor([]).cuda()", "tensor_to_device", "replace", True,
      "temp_gold = torch.Tensor([]).npu()", "torch.cat with a[i:i + 1] on NPU"),
    C("index = torch.LongTensor([list(range(C.MAX_STEP - 1))]).cuda()", "tensor_to_device", "replace", True,
      "index = torch.LongTensor([list(range(C.MAX_STEP - 1))]).npu()", "gather index in test_epoch"),
    C("ground_truth = torch.Tensor([]).cuda()", "tensor_to_device", "replace", True,
      "ground_truth = torch.Tensor([]).npu()", "concatenated with NPU gold_epoch"),
    C("prediction = torch.Tensor([]).cuda()", "tensor_to_device", "replace", True,
      "prediction = torch.Tensor([]).npu()", "concatenated with NPU pred_epoch"),
])

E("dktpt_data", "KnowledgeTracing/data/dataloader.py", "explicit_replacement",
  "DeepKnowledgeTracing-DKT-Pytorch KnowledgeTracing/data/{readdata,DKTDataSet,dataloader}.py (merged)", [])

# ----------------------------------------------------------------------------------------------
# EduKTM (bigdata-ustc/EduKTM)
# ----------------------------------------------------------------------------------------------
E("eduktm_dkvmn", "EduKTM/DKVMN/DKVMN.py", "explicit_replacement",
  "bigdata-ustc/EduKTM EduKTM/DKVMN/DKVMN.py (params['gpu'] >= 0 idiom, Variable(...).cuda())", [
    C("return torch.autograd.Variable(tensor).cuda()", "tensor_to_device", "replace", True,
      "return torch.autograd.Variable(tensor).npu()", "every batch goes through varible()"),
    C("torch.cuda.set_device(params['gpu'])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(params['gpu'])", "fails on a host without CUDA"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement"),
])

E("eduktm_lpkt", "EduKTM/LPKT/LPKT.py", "explicit_replacement",
  "bigdata-ustc/EduKTM EduKTM/LPKT/LPKT.py (LPKT trainer, module-level device)", [
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "q_matrix, the net and every batch are placed with .to(device)"),
])

# ----------------------------------------------------------------------------------------------
# SAINT+ for Riiid! Answer Correctness Prediction (Kaggle-style repo, DDP + AMP)
# ----------------------------------------------------------------------------------------------
E("saint_model", "saint_plus/model.py", "explicit_replacement",
  "Riiid SAINT+ solution repos saint_plus/model.py (nn.Transformer encoder-decoder, device from inputs)", [])

E("saint_dataset", "saint_plus/dataset.py", "explicit_replacement",
  "Riiid SAINT+ solution repos saint_plus/dataset.py (per-user windows)", [])

E("saint_utils", "saint_plus/utils.py", "explicit_replacement",
  "Riiid SAINT+ solution repos saint_plus/utils.py (seeding, timer, nvidia-smi / memory logging)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "lazily queued and harmless on NPU; torch.manual_seed likely seeds the NPU too (unconfirmed)"),
    C("if self.sync and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if self.sync and torch.npu.is_available():",
      "left as is the timer just skips the sync and under-reports validation time (log only)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "with the guard ported this runs on the NPU host and torch.cuda.synchronize raises without CUDA"),
    C('["nvidia-smi", "--query-gpu=index,name,memory.used,memory.total,utilization.gpu",', "torch_cuda_api",
      "replace", False, '["npu-smi", "info"],',
      "nvidia-smi is absent on Ascend hosts; FileNotFoundError is caught and the helper returns [] "
      "(log only); npu-smi output needs different parsing"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():",
      "unported it only logs 'running on CPU' and returns (misleading log, nothing breaks)"),
    C("idx = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      "idx = torch.npu.current_device()", "raises without CUDA once the guard above is ported"),
    C("name = torch.cuda.get_device_name(idx)", "torch_cuda_api", "replace", True,
      "name = torch.npu.get_device_name(idx)", "raises without CUDA once the guard is ported"),
    C("total = torch.cuda.get_device_properties(idx).total_memory", "torch_cuda_api", "replace", True,
      "total = torch.npu.get_device_properties(idx).total_memory / 1024 ** 3",
      "NPU device properties do carry total_memory (knowledge §2.8)"),
    C("alloc = torch.cuda.memory_allocated()", "torch_cuda_api", "replace", False,
      "alloc = torch.npu.memory_allocated() / 1024 ** 2",
      "log only; CUDA memory counters return 0 when CUDA was never initialised"),
    C("peak = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 1024 ** 2", "log only, returns 0 on an NPU host"),
    C("reserved = torch.cuda.memory_reserved()", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved() / 1024 ** 2", "log only, returns 0 on an NPU host"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises on a host without CUDA (called every epoch on rank 0)"),
])

E("saint_train", "train.py", "explicit_replacement",
  "Riiid SAINT+ solution repos train.py (torchrun DDP over NCCL, torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point; registers the npu device and the hccl backend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "per-rank device binding"),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL is not available on Ascend"),
    C('device = torch.device(f"cuda:{local_rank}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{local_rank}")', "model, batches and all_reduce tensors use this device"),
    C("num_workers=args.workers, pin_memory=True, drop_last=True", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', drop_last=True, collate_fn=collate,",
      "performance only: without a pin_memory_device the loader may pin for CUDA or skip pinning on an NPU "
      "host depending on the torch version (unconfirmed); non_blocking copies still work"),
    C("pin_memory=True, collate_fn=collate,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu', collate_fn=collate,",
      "same as the train loader, performance only (unconfirmed)"),
    C("with torch.cuda.amp.autocast(enabled=amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=amp):",
      "validation runs under no_grad; unported, CUDA autocast disables itself on an NPU host (fp32 eval, "
      "slower but correct)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "with NPU autocast ported, a CUDA GradScaler disables itself on the NPU host and fp16 gradients are "
      "left unscaled (silent underflow)"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "unported, CUDA autocast disables itself and --amp silently trains in fp32 (performance, not "
      "correctness)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "end-of-epoch sync raises without CUDA"),
])

E("saint_predict", "predict.py", "explicit_replacement",
  "Riiid SAINT+ Kaggle inference kernel (riiideducation time-series API)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C('state = torch.load(ckpt_path, map_location="cuda:0")', "device_type", "replace", True,
      'state = torch.load(ckpt_path, map_location="npu:0")',
      "deserialising onto a CUDA device raises when CUDA is unavailable"),
    C("model = model.cuda().eval()", "tensor_to_device", "replace", True, "model = model.npu().eval()",
      "model placement"),
    C("tensors = [torch.from_numpy(a).cuda(non_blocking=True) for a in arrays]", "tensor_to_device", "replace",
      True, "tensors = [torch.from_numpy(a).npu(non_blocking=True) for a in arrays]", "input placement"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", False, "with torch.npu.amp.autocast():",
      "unported, CUDA autocast disables itself and inference runs in fp32 (performance only)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA was never initialised; the NPU caching allocator is simply not trimmed"),
])

E("saint_launch", "scripts/train_ddp.sh", "explicit_replacement",
  "Riiid SAINT+ solution repos scripts/train_ddp.sh (torchrun launcher)", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "device selection for the Ascend runtime"),
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; only needed if the calling shell/container has not sourced it (set -u caveat: "
      "set_env.sh may trip on unbound variables, knowledge ascend-host-formats.md §3)"),
    C("NGPU=$(echo ${CUDA_VISIBLE_DEVICES}", "env_var", "replace", True,
      "NGPU=$(echo ${ASCEND_RT_VISIBLE_DEVICES} | tr ',' '\\n' | wc -l)",
      "with the export above ported, ${CUDA_VISIBLE_DEVICES} is unset and set -u aborts the script"),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "nvidia-smi is not installed on Ascend hosts and set -e aborts the launcher"),
])

E("saint_docker", "Dockerfile", "explicit_replacement",
  "Riiid SAINT+ solution repos Dockerfile (pytorch/pytorch CUDA runtime base)", [
    C("FROM pytorch/pytorch:1.13.1-cuda11.6-cudnn8-runtime", "env_var", "replace", True,
      "FROM ascendai/pytorch:2.1.0-cann8.0.0-910b-ubuntu22.04",
      "the CUDA wheel of torch cannot drive an NPU; base must carry CANN + CPU torch + matching torch_npu "
      "(image tag unconfirmed)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False,
      "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "consumed by the container runtime, inert on Ascend; Ascend-Docker-Runtime reads ASCEND_VISIBLE_DEVICES "
      "(else map /dev/davinciN at docker run)"),
])
