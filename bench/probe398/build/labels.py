"""Labels for probe398: LLM-based recommendation (P5, TALLRec, LLaRA, LC-Rec, TIGER / RQ-VAE-Recommender).

One entry per synthetic upstream file; one C(...) per line a careful porter would change for Ascend NPU
(explicit port: torch.npu.*, 'npu', hccl; no transfer_to_npu).
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch_npu"
IMPORT_NOTE_REQ = ("entry point calls torch.npu.* / uses 'npu' device strings; the projects' torch generation "
                   "(torch 2.1-era torch_npu) needs the explicit import (autoload only since torch_npu 2.5.1)")
IMPORT_NOTE_OPT = ("HF transformers/accelerate import torch_npu themselves (is_torch_npu_available / is_npu_available) "
                   "and pick the NPU; explicit import is hygiene only")
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
SET_ENV_NOTE = ("CANN environment for torch_npu; usually already sourced by the host profile or the container image, "
                "so not counted as required")
SEED_NOTE = ("seeding only; torch.manual_seed on the line above already seeds the NPU generator "
             "(unconfirmed in knowledge); reproducibility, not correctness")

# ---------------------------------------------------------------- P5 (jeykigung/P5, VL-T5 derived)

E("p5_pretrain", "src/pretrain.py", "explicit_replacement",
  "jeykigung/P5 src/pretrain.py (Trainer + main_worker, torch.distributed.launch, native AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_REQ),
    C("from torch.cuda.amp import autocast", "amp", "replace", True,
      "from torch.npu.amp import autocast",
      "autocast is used in the --fp16 training loop (the launcher passes --fp16); cuda autocast leaves NPU ops in fp32"),
    C("self.model = self.model.to(args.gpu)", "tensor_to_device", "replace", True,
      "self.model = self.model.to(f'npu:{args.gpu}')",
      "an int device index means a CUDA device; must name the npu device"),
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler()",
      "CUDA GradScaler disables itself without CUDA: fp16 training would run without loss scaling"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "per-rank device binding"),
    C("dist.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl')", "NCCL is not available on Ascend; HCCL"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "ngpus_per_node = torch.npu.device_count()",
      "returns 0 on an NPU host but args.world_size only feeds the run name string"),
])

E("p5_trainer_base", "src/trainer_base.py", "explicit_replacement",
  "jeykigung/P5 src/trainer_base.py (TrainerBase: config/model/optimizer creation, save/load)", [
    C("loc = f'cuda:{self.args.gpu}'", "device_type", "replace", True,
      "loc = f'npu:{self.args.gpu}'",
      "map_location for load(); reached from Trainer.train() when test_after_train reloads BEST_EVAL_LOSS"),
])

E("p5_dist_utils", "src/dist_utils.py", "explicit_replacement",
  "jeykigung/P5 src/dist_utils.py (detectron2-style all_gather / reduce_dict)", [
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "HCCL collectives need NPU tensors"),
    C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.LongTensor([tensor.numel()]).to("npu")', "HCCL collectives need NPU tensors"),
    C('size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]', "tensor_to_device", "replace", True,
      'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]', "all_gather output buffers"),
    C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', "all_gather output buffers"),
    C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
      'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', "concatenated with an NPU tensor"),
    C('values = torch.tensor(values).to("cuda")', "tensor_to_device", "replace", True,
      'values = torch.tensor(values).to("npu")', "reduce_dict all_reduce over HCCL is called every epoch"),
])

E("p5_utils", "src/utils.py", "explicit_replacement",
  "jeykigung/P5 src/utils.py (LossMeter, load_state_dict with map_location='cpu')", [])

E("p5_pretrain_data", "src/pretrain_data.py", "explicit_replacement",
  "jeykigung/P5 src/pretrain_data.py (P5_Amazon_Dataset, collate_fn, get_loader)", [])

E("p5_modeling", "src/modeling_p5.py", "explicit_replacement",
  "jeykigung/P5 src/modeling_p5.py (JointEncoder with whole-word embeddings, P5 T5 subclass)", [
    C("get_device_map(len(self.block), range(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "get_device_map(len(self.block), range(torch.npu.device_count())) if device_map is None else device_map",
      "model-parallel path copied from HF T5; dead unless parallelize() is called, which P5 never does"),
    C('self.first_device = "cpu" if "cpu" in self.device_map.keys() else "cuda:"', "device_type", "replace", False,
      'self.first_device = "cpu" if "cpu" in self.device_map.keys() else "npu:" + str(min(self.device_map.keys()))',
      "dead model-parallel path"),
    C('self.last_device = "cuda:" + str(max(self.device_map.keys()))', "device_type", "replace", False,
      'self.last_device = "npu:" + str(max(self.device_map.keys()))', "dead model-parallel path"),
    C('cuda_device = "cuda:" + str(k)', "device_type", "replace", False,
      'cuda_device = "npu:" + str(k)', "dead model-parallel path"),
    C("torch.cuda.set_device(self.first_device)", "torch_cuda_api", "replace", False,
      "torch.npu.set_device(self.first_device)", "only when self.model_parallel is True (never in P5)"),
])

E("p5_script", "scripts/pretrain_P5_small_beauty.sh", "explicit_replacement",
  "jeykigung/P5 scripts/pretrain_P5_small_beauty.sh (torch.distributed.launch launcher)", [
    C("#!/bin/bash", "env_var", "npu_only_addition", False, SET_ENV, SET_ENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "ignored on NPU, but local ranks 0-3 bind NPUs 0-3 via set_device anyway: same devices"),
])

E("p5_evaluate", "notebooks/evaluate_P5.py", "explicit_replacement",
  "jeykigung/P5 notebooks/evaluate_P5.ipynb (jupytext export: sequential + rating evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_REQ),
    C("from torch.cuda.amp import autocast", "amp", "replace", True,
      "from torch.npu.amp import autocast", "args.fp16 = True: the rating cell runs generate_step under autocast"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "ngpus_per_node = torch.npu.device_count()", "world_size is informational only in the notebook"),
    C("torch.cuda.set_device('cuda:{}'.format(args.gpu))", "torch_cuda_api", "replace", True,
      "torch.npu.set_device('npu:{}'.format(args.gpu))", "device binding"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model placement"),
    C("batch['input_ids'].to('cuda'),", "tensor_to_device", "replace", True,
      "batch['input_ids'].to('npu'),", "beam-search inputs must be on the model's device"),
])

# ---------------------------------------------------------------- TALLRec (SAI990323/TALLRec, alpaca-lora derived)

E("tallrec_finetune", "finetune_rec.py", "explicit_replacement",
  "SAI990323/TALLRec finetune_rec.py (alpaca-lora LoRA + LLM.int8 + HF Trainer, AUC metric)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU, IMPORT_NOTE_OPT),
    C("load_in_8bit=True,", "unsupported_op_workaround", "replace", True, "load_in_8bit=False,",
      "bitsandbytes LLM.int8 has no Ascend backend (only NF4 in the multi-backend branch); load fp16 weights, "
      "LoRA adapters train as before"),
    C("if not ddp and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if not ddp and torch.npu.device_count() > 1:",
      "only sets is_parallelizable/model_parallel hints; Trainer also infers model parallelism from hf_device_map "
      "(unconfirmed in knowledge)"),
])

E("tallrec_evaluate", "evaluate.py", "device_branch_or_abstraction",
  "SAI990323/TALLRec evaluate.py (module-level device selection, LoRA merge, yes/no logits AUC)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_REQ),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "otherwise the module-level device silently falls back to CPU"),
    C('device = "cuda"', "device_type", "replace", True, 'device = "npu"',
      "device string used for tokenizer outputs and the model branch"),
    C('if device == "cuda":', "device_type", "replace", False, 'if device == "npu":',
      "without it the else-branch runs: fp32 load with device_map={'': 'npu'} then model.half(); same scores, "
      "more host/device memory during load"),
])

E("tallrec_instruct_sh", "shell/instruct_7B.sh", "explicit_replacement",
  "SAI990323/TALLRec shell/instruct_7B.sh (per-GPU LoRA sweep launcher)", [
    C("CUDA_VISIBLE_DEVICES=$1 python -u finetune_rec.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$1 python -u finetune_rec.py \\",
      "device_map='auto' would otherwise shard the model over every NPU instead of the one chosen by $1"),
])

E("tallrec_evaluate_sh", "shell/evaluate.sh", "explicit_replacement",
  "SAI990323/TALLRec shell/evaluate.sh (evaluate every LoRA checkpoint on one GPU)", [
    C("CUDA_VISIBLE_DEVICES=$CUDA_ID python evaluate.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$CUDA_ID python evaluate.py \\",
      "device_map='auto' would spread over all NPUs and ignore the requested one"),
])

E("tallrec_requirements", "requirements.txt", "explicit_replacement",
  "SAI990323/TALLRec requirements.txt (git-pinned peft/transformers)", [
    C("=bitsandbytes", "unsupported_op_workaround", "removal", False, None,
      "no longer imported once load_in_8bit is dropped; LLM.int8 has no NPU backend"),
    C("git+https://github.com/huggingface/peft.git", "distributed_framework", "replace", False,
      "peft>=0.5.0,<0.10.0",
      "peft NPU awareness since 0.5.0 and prepare_model_for_int8_training still present; compatibility of the old "
      "pin with a newer transformers is unconfirmed"),
    C("git+https://github.com/huggingface/transformers.git", "distributed_framework", "replace", True,
      "transformers>=4.32.0",
      "the pinned early-2023 commit predates NPU support in TrainingArguments/Trainer (native since 4.32.0)"),
])

# ---------------------------------------------------------------- LLaRA (ljy0ustc/LLaRA, PyTorch Lightning 1.x)

E("llara_main", "main.py", "explicit_replacement",
  "ljy0ustc/LLaRA main.py (Lightning Trainer.from_argparse_args, LLaMA + SASRec projector)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_REQ),
    C("parser.add_argument('--accelerator', default='gpu', type=str)", "distributed_framework", "replace", True,
      "parser.add_argument('--accelerator', default='npu', type=str)",
      "Lightning's 'gpu' accelerator needs CUDA; Lightning ships no NPU accelerator, so the port registers a custom "
      "NPU Accelerator under the name 'npu' (the registration itself is not in knowledge)"),
    C("trainer = Trainer.from_argparse_args(args)", "dist_backend", "replace", True,
      'trainer = Trainer.from_argparse_args(args, strategy=DDPStrategy(process_group_backend="hccl"))',
      "devices=-1 on 2 NPUs means DDP; Lightning picks nccl only for cuda devices and gloo otherwise, and gloo "
      "cannot reduce NPU tensors"),
])

E("llara_model_interface", "model/model_interface.py", "explicit_replacement",
  "ljy0ustc/LLaRA model/model_interface.py (MInterface LightningModule, wrap_emb, HR@1)", [])

E("llara_sasrec_modules", "SASRecModules_ori.py", "explicit_replacement",
  "ljy0ustc/LLaRA SASRecModules_ori.py (hand-written attention + FFN for SASRec)", [])

E("llara_rec_model", "recommender/A_SASRec_final_bce_llm.py", "explicit_replacement",
  "ljy0ustc/LLaRA recommender/A_SASRec_final_bce_llm.py (SASRec/GRU/Caser + BCE training script)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_REQ),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C('device = torch.device("cuda:" + str(args.cuda) if torch.cuda.is_available() else "cpu")', "device_type",
      "replace", True,
      'device = torch.device("npu:" + str(args.cuda) if torch.npu.is_available() else "cpu")',
      "otherwise SASRec pre-training silently runs on CPU"),
])

E("llara_train_sh", "train_movielens.sh", "explicit_replacement",
  "ljy0ustc/LLaRA train_movielens.sh", [
    C("CUDA_VISIBLE_DEVICES=2,3 python main.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=2,3 python main.py \\",
      "devices=-1 would take all NPUs instead of 2,3: different world size and global batch"),
])

# ---------------------------------------------------------------- LC-Rec (RUCAIBox/LC-Rec)

E("lcrec_index_main", "index/main.py", "explicit_replacement",
  "RUCAIBox/LC-Rec index/main.py (RQ-VAE item indexer training entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_REQ),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C('parser.add_argument("--device", type=str, default="cuda:1", help="gpu or cpu")', "device_type", "replace",
      True, 'parser.add_argument("--device", type=str, default="npu:1", help="gpu or cpu")',
      "Trainer does torch.device(args.device)"),
])

E("lcrec_index_trainer", "index/trainer.py", "explicit_replacement",
  "RUCAIBox/LC-Rec index/trainer.py (RQ-VAE trainer, collision-rate eval, checkpoint heap)", [])

E("lcrec_vq", "index/models/vq.py", "explicit_replacement",
  "RUCAIBox/LC-Rec index/models/vq.py (VectorQuantizer with k-means init and Sinkhorn uniform assignment)", [])

E("lcrec_generate_indices", "index/generate_indices.py", "explicit_replacement",
  "RUCAIBox/LC-Rec index/generate_indices.py (semantic-ID export with Sinkhorn collision resolution)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_REQ),
    C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
      "hard-coded module-level device"),
])

E("lcrec_finetune", "finetune.py", "explicit_replacement",
  "RUCAIBox/LC-Rec finetune.py (LLaMA full fine-tune with HF Trainer + DeepSpeed ZeRO-3)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU, IMPORT_NOTE_OPT),
    C("if not ddp and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
      "if not ddp and torch.npu.device_count() > 1:",
      "model-parallel hint only; the launcher always runs torchrun (ddp=True)"),
])

E("lcrec_test_ddp", "test_ddp.py", "explicit_replacement",
  "RUCAIBox/LC-Rec test_ddp.py (constrained beam search evaluation over DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE_REQ),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "per-rank device binding"),
    C('dist.init_process_group(backend="nccl", world_size=world_size, rank=local_rank)', "dist_backend", "replace",
      True, 'dist.init_process_group(backend="hccl", world_size=world_size, rank=local_rank)', "HCCL"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", local_rank)', "inputs are moved with batch[0].to(device)"),
    C("except torch.cuda.OutOfMemoryError as e:", "torch_cuda_api", "replace", False,
      "except RuntimeError as e:",
      "beam-shrinking fallback only matters on OOM; whether NPU OOM is raised as torch.OutOfMemoryError "
      "(so the original clause still catches it) is unconfirmed"),
])

E("lcrec_run_sh", "run.sh", "explicit_replacement",
  "RUCAIBox/LC-Rec run.sh / test.sh (torchrun + DeepSpeed launcher)", [
    C("export WANDB_MODE=disabled", "env_var", "npu_only_addition", False, SET_ENV, SET_ENV_NOTE),
    C("export CUDA_LAUNCH_BLOCKING=1", "env_var", "replace", False, "export ASCEND_LAUNCH_BLOCKING=1",
      "debug-only synchronous launch; ignored on NPU, no effect on results (NPU variable name unconfirmed in "
      "knowledge; deleting the line is equally valid)"),
    C("CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 torchrun --nproc_per_node=4 --master_port=4324 test_ddp.py \\",
      "ignored on NPU, but the 4 local ranks bind NPUs 0-3 anyway: same devices"),
])

E("lcrec_ds_config", "config/ds_z3_bf16.json", "explicit_replacement",
  "RUCAIBox/LC-Rec config/ds_z3_bf16.json (DeepSpeed ZeRO-3 bf16)", [])

E("lcrec_utils", "utils.py", "explicit_replacement",
  "RUCAIBox/LC-Rec utils.py (argument groups, set_seed, dataset assembly)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
])

E("lcrec_text_emb", "data/amazon_text_emb.py", "explicit_replacement",
  "RUCAIBox/LC-Rec data/amazon_text_emb.py (LLaMA mean-pooled item text embeddings for the RQ-VAE)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
      "entry point; data/utils.set_device calls torch.npu.is_available() after the port"),
])

E("lcrec_data_utils", "data/utils.py", "device_branch_or_abstraction",
  "RUCAIBox/LC-Rec data/utils.py (set_device, load_plm, text cleaning)", [
    C("'cuda:' + str(gpu_id) if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "'npu:' + str(gpu_id) if torch.npu.is_available() else 'cpu')",
      "otherwise the 7B embedding pass silently runs on CPU"),
])

# ---------------------------------------------------------------- TIGER (EdoardoBotta/RQ-VAE-Recommender)

E("tiger_train_decoder", "train_decoder.py", "device_branch_or_abstraction",
  "EdoardoBotta/RQ-VAE-Recommender train_decoder.py (gin + accelerate, TIGER encoder-decoder retrieval)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU, IMPORT_NOTE_OPT),
    C("model_jagged_mode=True,", "unsupported_op_workaround", "replace", False, "model_jagged_mode=False,",
      "default only; the shipped gin config sets train.model_jagged_mode explicitly (labelled there)"),
])

E("tiger_attention", "modules/transformer/attention.py", "device_branch_or_abstraction",
  "EdoardoBotta/RQ-VAE-Recommender modules/transformer/attention.py (jagged/padded MHA with KV cache)", [
    C("torch.backends.cuda.enable_flash_sdp(True)", "attention_kernel", "removal", False, None,
      "torch.backends.cuda *_sdp switches are listed unsupported on NPU and do nothing there; NPU SDPA picks its "
      "own fused kernel"),
])

E("tiger_jagged", "ops/triton/jagged.py", "device_branch_or_abstraction",
  "EdoardoBotta/RQ-VAE-Recommender ops/triton/jagged.py (Triton padded<->jagged kernels with torch fallback)", [])

E("tiger_train_rqvae", "train_rqvae.py", "device_branch_or_abstraction",
  "EdoardoBotta/RQ-VAE-Recommender train_rqvae.py (RQ-VAE semantic-ID tokenizer training with accelerate)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU, IMPORT_NOTE_OPT),
])

E("tiger_gin", "configs/decoder_amazon.gin", "device_branch_or_abstraction",
  "EdoardoBotta/RQ-VAE-Recommender configs/decoder_amazon.gin", [
    C("train.model_jagged_mode=True", "unsupported_op_workaround", "replace", True,
      "train.model_jagged_mode=False",
      "nested (jagged) tensors only support creation on NPU (nested_tensor_from_jagged / to_padded_tensor are "
      "unsupported); the padded path with a bool attention mask runs on NPU SDPA, without the KV cache"),
])

E("tiger_requirements", "requirements.txt", "explicit_replacement",
  "EdoardoBotta/RQ-VAE-Recommender requirements.txt", [
    C("torch>=2.5.1", "import_torch_npu", "npu_only_addition", False, "torch-npu==2.5.1",
      "must match torch and the host CANN; normally provided by the Ascend image rather than the project"),
    C("tqdm>=4.66.6", "triton_kernel_tuning", "npu_only_addition", True, "triton-ascend",
      "ops/triton/jagged.py imports triton at module level and attention.py imports it; the CPU torch wheels used "
      "with torch_npu do not pull in triton, so the import fails without triton-ascend (kernels stay unused once "
      "jagged mode is off)"),
])
