"""Labels for probe391 (VLM hallucination evaluation and mitigation, CUDA -> Ascend NPU).

One entry per file under files/<id>/upstream/<path>; one C(...) per line a careful porter would edit.
`required` = complete-port counterfactual (every other labelled line already ported).
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script; the project pins torch 2.0.x/2.1.x, and torch_npu only autoloads its backend from 2.5.1 on, "
               "so the NPU device type exists only after an explicit import")

# ----------------------------------------------------------------------------------------------------------------
# VCD (DAMO-NLP-SG/VCD): visual contrastive decoding, POPE/MME eval scripts for LLaVA-1.5, InstructBLIP, Qwen-VL
# ----------------------------------------------------------------------------------------------------------------
E("vcd_sample", "vcd_utils/vcd_sample.py", "explicit_replacement",
  "DAMO-NLP-SG/VCD vcd_utils/vcd_sample.py (contrastive-decoding sample loop monkey-patched into transformers)", [
    C("next_tokens = torch.multinomial(cd_probs, num_samples=1).squeeze(1)", "unsupported_op_workaround", "replace", False,
      "next_tokens = torch.multinomial(cd_probs.float(), num_samples=1).squeeze(1)",
      "Ascend's 2.7.1 API list restricts torch.multinomial input to fp16/fp32; with Qwen-VL (bf16 logits) cd_probs is bf16. "
      "Unconfirmed whether this errors or falls back to CPU, so not required."),
    C("next_tokens = torch.multinomial(probs, num_samples=1).squeeze(1)", "unsupported_op_workaround", "replace", False,
      "next_tokens = torch.multinomial(probs.float(), num_samples=1).squeeze(1)",
      "same fp16/fp32 restriction on the non-contrastive branch; unconfirmed for bf16, so not required"),
])

E("vcd_noise", "vcd_utils/vcd_add_noise.py", "explicit_replacement",
  "DAMO-NLP-SG/VCD vcd_utils/vcd_add_noise.py (diffusion-noise image distortion)", [])

E("vcd_pope_llava", "experiments/eval/object_hallucination_vqa_llava.py", "explicit_replacement",
  "DAMO-NLP-SG/VCD experiments/eval/object_hallucination_vqa_llava.py (POPE answers with LLaVA-1.5 + VCD)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("return_tensors='pt').unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "input_ids = tokenizer_image_token(prompt, tokenizer, IMAGE_TOKEN_INDEX, return_tensors='pt').unsqueeze(0).npu()",
      "prompt ids must live on the NPU next to the model; .cuda() raises without a CUDA driver"),
    C("images=image_tensor.unsqueeze(0).half().cuda(),", "tensor_to_device", "replace", True,
      "images=image_tensor.unsqueeze(0).half().npu(),", "clean image tensor to the NPU"),
    C("images_cd=(image_tensor_cd.unsqueeze(0).half().cuda()", "tensor_to_device", "replace", True,
      "images_cd=(image_tensor_cd.unsqueeze(0).half().npu() if image_tensor_cd is not None else None),",
      "noised (contrastive) image tensor to the NPU"),
])

E("vcd_pope_iblip", "experiments/eval/object_hallucination_vqa_instructblip.py", "explicit_replacement",
  "DAMO-NLP-SG/VCD experiments/eval/object_hallucination_vqa_instructblip.py (POPE with LAVIS InstructBLIP + VCD)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "unported, torch.cuda.is_available() is False on an NPU host and the 7B InstructBLIP silently runs on the CPU"),
])

E("vcd_pope_qwen", "experiments/eval/object_hallucination_vqa_qwenvl.py", "explicit_replacement",
  "DAMO-NLP-SG/VCD experiments/eval/object_hallucination_vqa_qwenvl.py (POPE with Qwen-VL + VCD)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device_map="cuda"', "device_type", "replace", True,
      'model = AutoModelForCausalLM.from_pretrained(model_path, device_map="npu", trust_remote_code=True).eval()',
      "accelerate places every weight on the string device; 'cuda' fails without a CUDA driver"),
])

E("vcd_script", "experiments/cd_scripts/llava1.5_pope.bash", "explicit_replacement",
  "DAMO-NLP-SG/VCD experiments/cd_scripts/llava1.5_pope.bash (launcher)", [
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "the NPU runtime ignores CUDA_VISIBLE_DEVICES; with the value 0 the process lands on npu:0 anyway, "
      "so only the intent (masking the other cards) is lost"),
])

E("vcd_iblip_model", "experiments/lavis/models/blip2_models/blip2_vicuna_instruct.py", "explicit_replacement",
  "DAMO-NLP-SG/VCD experiments/lavis/models/blip2_models/blip2_vicuna_instruct.py (LAVIS InstructBLIP with images_cd)", [])

# ----------------------------------------------------------------------------------------------------------------
# OPERA (shikiml/OPERA): over-trust penalty + retrospection beam search, POPE and CHAIR evaluation on MiniGPT-4-style code
# ----------------------------------------------------------------------------------------------------------------
E("opera_pope", "pope_eval.py", "explicit_replacement",
  "shikiml/OPERA pope_eval.py (POPE with OPERA decoding)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu_id)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu_id)',
      "--gpu-id selects the card by masking; unported the mask is ignored and every run silently lands on npu:0"),
    C('device = torch.device("cuda") if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = torch.device("npu") if torch.npu.is_available() else "cpu"',
      "unported, falls through to the CPU silently"),
])

E("opera_chair_eval", "chair_eval.py", "explicit_replacement",
  "shikiml/OPERA chair_eval.py (captions for CHAIR with OPERA decoding)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu_id)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(args.gpu_id)',
      "--gpu-id is ignored by the NPU runtime otherwise"),
    C('device = torch.device("cuda") if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = torch.device("npu") if torch.npu.is_available() else "cpu"',
      "unported, the 500-image captioning run silently goes to the CPU"),
])

E("opera_chair_metric", "chair.py", "explicit_replacement",
  "shikiml/OPERA chair.py (CHAIR-s/CHAIR-i metric, nltk based)", [])

E("opera_decoding", "transformers-4.29.2/src/transformers/generation/utils.py", "explicit_replacement",
  "shikiml/OPERA transformers-4.29.2/src/transformers/generation/utils.py (opera_beam_search, trimmed)", [
    C("rollback_loc = rollback_locs.mode().values.data", "unsupported_op_workaround", "replace", False,
      "rollback_loc = rollback_locs.cpu().mode().values.data",
      "torch.Tensor.mode is in msFmkTransplt's unsupported list and aten::mode has no NPU kernel in the op lists; "
      "torch_npu's CPU fallback keeps it working, so this is only a host round-trip per step"),
])

E("opera_dist", "minigpt4/common/dist_utils.py", "explicit_replacement",
  "shikiml/OPERA minigpt4/common/dist_utils.py (LAVIS init_distributed_mode)", [
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "bind each rank to its NPU"),
    C('args.dist_backend = "nccl"', "dist_backend", "replace", True, 'args.dist_backend = "hccl"',
      "NCCL is not available with torch_npu; HCCL is the collective backend"),
])

E("opera_blip2", "minigpt4/models/blip2.py", "explicit_replacement",
  "shikiml/OPERA minigpt4/models/blip2.py (LAVIS Blip2Base.maybe_autocast)", [
    C("return torch.cuda.amp.autocast(dtype=dtype)", "amp", "replace", True,
      "return torch.npu.amp.autocast(dtype=dtype)",
      "the model is on the NPU so autocast is wanted, but CUDA autocast disables itself without CUDA: the fp16 EVA ViT "
      "then gets fp32 pixels (dtype mismatch) or the Q-Former runs un-cast"),
])

E("opera_cfg", "eval_configs/llava-1.5_eval.yaml", "explicit_replacement",
  "shikiml/OPERA eval_configs/llava-1.5_eval.yaml", [])

# ----------------------------------------------------------------------------------------------------------------
# LURE (YiyangZhou/LURE): MiniGPT-4 based hallucination revisor, LAVIS runner for training
# ----------------------------------------------------------------------------------------------------------------
E("lure_train", "train.py", "explicit_replacement",
  "YiyangZhou/LURE train.py (MiniGPT-4/LAVIS training entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("lure_train_cfg", "train_configs/minigpt4_stage2_finetune.yaml", "device_branch_or_abstraction",
  "YiyangZhou/LURE train_configs/minigpt4_stage2_finetune.yaml (revisor fine-tuning config)", [
    C('device: "cuda"', "device_type", "replace", True, 'device: "npu"',
      "RunnerBase builds torch.device(run_cfg.device) from this value"),
])

E("lure_eval_cfg", "eval_configs/minigpt4_eval.yaml", "explicit_replacement",
  "YiyangZhou/LURE eval_configs/minigpt4_eval.yaml (revisor inference config)", [
    C("low_resource: True", "unsupported_op_workaround", "replace", True, "low_resource: False",
      "low_resource loads Vicuna through bitsandbytes LLM.int8 (load_in_8bit) and moves the ViT to the CPU; "
      "bitsandbytes int8 has no Ascend backend (only partial NF4), so the revisor must load in fp16"),
])

E("lure_minigpt4", "minigpt4/models/mini_gpt4.py", "explicit_replacement",
  "YiyangZhou/LURE minigpt4/models/mini_gpt4.py (MiniGPT-4 model with low_resource 8-bit branch)", [
    C("load_in_8bit=True,", "unsupported_op_workaround", "removal", False, None,
      "bitsandbytes int8 is unavailable on NPU; only reached when low_resource is True, which the ported "
      "eval config turns off"),
    C("device_map={'': device_8bit}", "device_type", "replace", False,
      "device_map={'': f'npu:{device_8bit}'}",
      "an int device_map entry means a CUDA ordinal to old accelerate (0.16 pinned); newer accelerate maps ints to npu. "
      "Unconfirmed, and only on the low_resource branch"),
])

E("lure_runner", "minigpt4/runners/runner_base.py", "device_branch_or_abstraction",
  "YiyangZhou/LURE minigpt4/runners/runner_base.py (LAVIS RunnerBase)", [
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "amp: True in the config; the CUDA scaler disables itself without CUDA, so fp16 training runs without loss "
      "scaling (silent underflow)"),
    C('return self.device.type == "cuda"', "device_type", "replace", True, 'return self.device.type == "npu"',
      "cuda_enabled gates prepare_sample(); on npu it is False and batches stay on the CPU while the model is on the NPU"),
])

E("lure_task", "minigpt4/tasks/base_task.py", "explicit_replacement",
  "YiyangZhou/LURE minigpt4/tasks/base_task.py (LAVIS inner training loop)", [
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=use_amp):",
      "CUDA autocast is disabled on an NPU host, so the step silently runs in fp32 while the GradScaler expects fp16"),
])

E("lure_data_utils", "minigpt4/datasets/data_utils.py", "explicit_replacement",
  "YiyangZhou/LURE minigpt4/datasets/data_utils.py (move_to_cuda / prepare_sample)", [
    C("return tensor.cuda()", "tensor_to_device", "replace", True, "return tensor.npu()",
      "every training/eval batch goes through this helper"),
])

E("lure_loader_utils", "minigpt4/datasets/datasets/dataloader_utils.py", "explicit_replacement",
  "YiyangZhou/LURE minigpt4/datasets/datasets/dataloader_utils.py (PrefetchLoader with a side copy stream)", [
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
      "creating a CUDA stream fails without a CUDA driver"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "side-stream context for the host-to-device copy"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "compute stream waits for the copy stream"),
    C("batch.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "batch.record_stream(torch.npu.current_stream())",
      "record_stream needs a stream of the tensor's own device"),
])

E("lure_infer", "output_LURE.py", "explicit_replacement",
  "YiyangZhou/LURE output_LURE.py (revisor inference over [IDK]-masked captions)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model = model_cls.from_config(model_config).to('cuda:{}'.format(args.gpu_id))", "tensor_to_device", "replace", True,
      "model = model_cls.from_config(model_config).to('npu:{}'.format(args.gpu_id))", "model placement by --gpu-id"),
    C("chat = Chat(model, vis_processor, device='cuda:{}'.format(args.gpu_id))", "device_type", "replace", True,
      "chat = Chat(model, vis_processor, device='npu:{}'.format(args.gpu_id))",
      "Chat moves images and stop-word ids to this device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "a no-op without CUDA, so nothing fails; the NPU caching allocator just keeps the blocks (memory/fragmentation only)"),
])

E("lure_conv", "minigpt4/conversation/conversation.py", "explicit_replacement",
  "YiyangZhou/LURE minigpt4/conversation/conversation.py (MiniGPT-4 Chat)", [
    C("def __init__(self, model, vis_processor, device='cuda:0'):", "device_type", "replace", False,
      "def __init__(self, model, vis_processor, device='npu:0'):",
      "default only; every caller in the repo passes device explicitly"),
])

E("lure_env", "environment.yml", "explicit_replacement",
  "YiyangZhou/LURE environment.yml (conda env inherited from MiniGPT-4)", [
    C("- cudatoolkit", "torch_cuda_api", "removal", False, None,
      "CUDA runtime from conda is useless on an Ascend host; harmless on x86, unconfirmed on aarch64"),
    C("- pytorch=2.0.0", "import_torch_npu", "replace", True,
      "- pytorch=2.0.1  # plus pip: torch-npu==2.0.1.post1 (CANN 7.0.0)",
      "torch_npu wheels exist for torch 2.0.1, not 2.0.0 (version matrix), and the torch version must match exactly"),
    C("- pytorch-mutex=1.0=cuda", "device_type", "replace", True, "- pytorch-mutex=1.0=cpu",
      "pins the CUDA build of pytorch; torch_npu is installed on top of the CPU build of torch"),
    C("- bitsandbytes==0.37.0", "unsupported_op_workaround", "removal", False, None,
      "only used by the 8-bit low_resource path, which the port turns off; bitsandbytes 0.37 ships CUDA binaries only"),
])

# ----------------------------------------------------------------------------------------------------------------
# Woodpecker (BradyFU/Woodpecker): training-free correction pipeline (GroundingDINO + BLIP-2 VQA + GPT), and the
# GroundingDINO package it installs from source (IDEA-Research/GroundingDINO)
# ----------------------------------------------------------------------------------------------------------------
E("wp_detector", "models/detector.py", "explicit_replacement",
  "BradyFU/Woodpecker models/detector.py (GroundingDINO open-set detection of extracted entities)", [
    C("self.model = load_model(args.detector_config, args.detector_model, device='cuda:0')", "device_type", "replace", True,
      "self.model = load_model(args.detector_config, args.detector_model, device='npu:0')",
      "GroundingDINO builds the model with args.device from this string"),
    C("=device='cuda:0'", "device_type", "replace", True, "device='npu:0'",
      "predict() moves model and image to this device"),
])

E("wp_answerer", "models/answerer.py", "explicit_replacement",
  "BradyFU/Woodpecker models/answerer.py (BLIP-2 VQA answers on crops)", [
    C('self.device = "cuda:1" if torch.cuda.device_count() > 1 else "cuda:0"', "device_type", "replace", True,
      'self.device = "npu:1" if torch.npu.device_count() > 1 else "npu:0"',
      "device choice for the BLIP-2 FlanT5-XXL model and its inputs"),
])

E("wp_demo", "gradio_demo.py", "explicit_replacement",
  "BradyFU/Woodpecker gradio_demo.py (mPLUG-Owl answer + correction demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C(').to("cuda:1")', "tensor_to_device", "replace", True, ').to("npu:1")',
      "mPLUG-Owl (bf16, supported on Atlas A2) placement"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; only affects cached NPU memory between demo sessions"),
])

E("wp_reqs", "requirements.txt", "explicit_replacement",
  "BradyFU/Woodpecker requirements.txt", [
    C("torch==2.0.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.0.1.post1",
      "the NPU backend package, same torch version (2.0.1.post1 pairs with torch 2.0.1 / CANN 7.0.0)"),
])

E("gdino_infer", "groundingdino/util/inference.py", "explicit_replacement",
  "IDEA-Research/GroundingDINO groundingdino/util/inference.py (load_model / predict / Model)", [
    C('def load_model(model_config_path: str, model_checkpoint_path: str, device: str = "cuda"):', "device_type",
      "replace", False,
      'def load_model(model_config_path: str, model_checkpoint_path: str, device: str = "npu"):',
      "default only; Woodpecker passes the device explicitly"),
    C('=device: str = "cuda",', "device_type", "replace", False, 'device: str = "npu",',
      "predict() default; Woodpecker passes device explicitly"),
    C('=device: str = "cuda"', "device_type", "replace", False, 'device: str = "npu"',
      "Model() default; not used by Woodpecker"),
])

E("gdino_msda", "groundingdino/models/GroundingDINO/ms_deform_attn.py", "device_branch_or_abstraction",
  "IDEA-Research/GroundingDINO groundingdino/models/GroundingDINO/ms_deform_attn.py (CUDA MSDA op with PyTorch fallback)", [])

E("gdino_setup", "setup.py", "device_branch_or_abstraction",
  "IDEA-Research/GroundingDINO setup.py (optional CUDAExtension build of groundingdino._C)", [])

# ----------------------------------------------------------------------------------------------------------------
# LLaVA (haotian-liu/LLaVA): the POPE evaluation path used by most hallucination papers
# ----------------------------------------------------------------------------------------------------------------
E("llava_builder", "llava/model/builder.py", "explicit_replacement",
  "haotian-liu/LLaVA llava/model/builder.py (load_pretrained_model)", [
    C('device_map="auto", device="cuda", use_flash_attn=False', "device_type", "replace", True,
      'def load_pretrained_model(model_path, model_base, model_name, load_8bit=False, load_4bit=False, device_map="auto", device="npu", use_flash_attn=False, **kwargs):',
      "the eval scripts never pass device, and vision_tower.to(device=device) uses this default"),
    C('if device != "cuda":', "device_type", "replace", False, 'if device != "npu":',
      "left alone, device='npu' pins the whole model to the current NPU instead of device_map='auto'; still runs, "
      "only placement differs"),
    C("kwargs['load_in_8bit'] = True", "unsupported_op_workaround", "replace", False,
      "raise NotImplementedError('bitsandbytes LLM.int8 is not available on Ascend NPU')",
      "only with load_8bit=True, which no POPE entry point passes"),
    C("kwargs['attn_implementation'] = 'flash_attention_2'", "attention_kernel", "replace", False,
      "kwargs['attn_implementation'] = 'sdpa'",
      "flash-attn cannot be installed on NPU; SDPA dispatches to NPU fused attention. Only with use_flash_attn=True"),
])

E("llava_vqa_loader", "llava/eval/model_vqa_loader.py", "explicit_replacement",
  "haotian-liu/LLaVA llava/eval/model_vqa_loader.py (batched POPE/VQA answer generation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("input_ids = input_ids.to(device='cuda', non_blocking=True)", "tensor_to_device", "replace", True,
      "input_ids = input_ids.to(device='npu', non_blocking=True)", "prompt ids to the NPU"),
    C("images=image_tensor.to(dtype=torch.float16, device='cuda', non_blocking=True),", "tensor_to_device", "replace", True,
      "images=image_tensor.to(dtype=torch.float16, device='npu', non_blocking=True),", "pixel values to the NPU"),
])

E("llava_pope_sh", "scripts/v1_5/eval/pope.sh", "explicit_replacement",
  "haotian-liu/LLaVA scripts/v1_5/eval/pope.sh (chunked multi-device POPE launcher)", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; usually already sourced in the shell or image, so not required"),
    C('gpu_list="${CUDA_VISIBLE_DEVICES:-0}"', "env_var", "replace", True, 'gpu_list="${ASCEND_RT_VISIBLE_DEVICES:-0}"',
      "unported, the NPU list the user exports is silently ignored and the eval runs as a single chunk"),
    C("CUDA_VISIBLE_DEVICES=${GPULIST[$IDX]} python -m llava.eval.model_vqa_loader", "env_var", "replace", True,
      "    ASCEND_RT_VISIBLE_DEVICES=${GPULIST[$IDX]} python -m llava.eval.model_vqa_loader \\",
      "each chunk must be pinned to its own NPU; otherwise all chunks load a 13B model onto npu:0"),
])
