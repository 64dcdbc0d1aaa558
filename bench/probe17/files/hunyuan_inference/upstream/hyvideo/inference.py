import functools
import os
import random
import time
from pathlib import Path

import torch
import torch.distributed as dist
from loguru import logger

from hyvideo.constants import NEGATIVE_PROMPT, PRECISION_TO_TYPE, PROMPT_TEMPLATE
from hyvideo.diffusion.pipelines import HunyuanVideoPipeline
from hyvideo.diffusion.schedulers import FlowMatchDiscreteScheduler
from hyvideo.modules import load_model
from hyvideo.modules.posemb_layers import get_nd_rotary_pos_embed
from hyvideo.text_encoder import TextEncoder
from hyvideo.utils.data_utils import align_to
from hyvideo.vae import load_vae

try:
    import xfuser
    from xfuser.core.distributed import (
        get_sequence_parallel_rank,
        get_sequence_parallel_world_size,
        get_sp_group,
        init_distributed_environment,
        initialize_model_parallel,
    )
    from xfuser.core.long_ctx_attention import xFuserLongContextAttention
except ImportError:
    xfuser = None
    get_sequence_parallel_world_size = None
    get_sequence_parallel_rank = None
    get_sp_group = None
    xFuserLongContextAttention = None
    init_distributed_environment = None
    initialize_model_parallel = None


def parallelize_transformer(pipe):
    transformer = pipe.transformer
    original_forward = transformer.forward

    @functools.wraps(transformer.__class__.forward)
    def new_forward(self, x, t, text_states=None, text_mask=None, text_states_2=None,
                    freqs_cos=None, freqs_sin=None, guidance=None, return_dict=True):
        if x.shape[-2] // 2 % get_sequence_parallel_world_size() == 0:
            # try to split x by height
            split_dim = -2
        elif x.shape[-1] // 2 % get_sequence_parallel_world_size() == 0:
            # try to split x by width
            split_dim = -1
        else:
            raise ValueError(f"Cannot split video sequence into ulysses_degree x ring_degree "
                             f"({get_sequence_parallel_world_size()}) parts evenly")

        # patch sizes for the temporal, height, and width dimensions are 1, 2, and 2.
        temporal_size, h, w = x.shape[2], x.shape[3] // 2, x.shape[4] // 2

        x = torch.chunk(x, get_sequence_parallel_world_size(), dim=split_dim)[get_sequence_parallel_rank()]

        dim_thw = freqs_cos.shape[-1]
        freqs_cos = freqs_cos.reshape(temporal_size, h, w, dim_thw)
        freqs_cos = torch.chunk(freqs_cos, get_sequence_parallel_world_size(), dim=split_dim - 1)[get_sequence_parallel_rank()]
        freqs_cos = freqs_cos.reshape(-1, dim_thw)
        dim_thw = freqs_sin.shape[-1]
        freqs_sin = freqs_sin.reshape(temporal_size, h, w, dim_thw)
        freqs_sin = torch.chunk(freqs_sin, get_sequence_parallel_world_size(), dim=split_dim - 1)[get_sequence_parallel_rank()]
        freqs_sin = freqs_sin.reshape(-1, dim_thw)

        for block in transformer.double_blocks + transformer.single_blocks:
            block.hybrid_seq_parallel_attn = xFuserLongContextAttention()

        output = original_forward(x, t, text_states, text_mask, text_states_2,
                                  freqs_cos, freqs_sin, guidance, return_dict)

        return_dict = not isinstance(output, tuple)
        sample = output["x"]
        sample = get_sp_group().all_gather(sample, dim=split_dim)
        output["x"] = sample
        return output

    new_forward = new_forward.__get__(transformer)
    transformer.forward = new_forward


class Inference(object):
    def __init__(self, args, vae, vae_kwargs, text_encoder, model, text_encoder_2=None,
                 pipeline=None, use_cpu_offload=False, device=None, logger=None, parallel_args=None):
        self.vae = vae
        self.vae_kwargs = vae_kwargs
        self.text_encoder = text_encoder
        self.text_encoder_2 = text_encoder_2
        self.model = model
        self.pipeline = pipeline
        self.use_cpu_offload = use_cpu_offload
        self.args = args
        self.device = device if device is not None else "cuda" if torch.cuda.is_available() else "cpu"
        self.logger = logger
        self.parallel_args = parallel_args

    @classmethod
    def from_pretrained(cls, pretrained_model_path, args, device=None, **kwargs):
        logger.info(f"Got text-to-video model root path: {pretrained_model_path}")

        # ==================== Initialize Distributed Environment ================
        if args.ulysses_degree > 1 or args.ring_degree > 1:
            assert xfuser is not None, "Ulysses Attention and Ring Attention requires xfuser package."
            assert args.use_cpu_offload is False, "Cannot enable use_cpu_offload in the distributed environment."

            dist.init_process_group("nccl")
            assert dist.get_world_size() == args.ring_degree * args.ulysses_degree, \
                "number of GPUs should be equal to ring_degree * ulysses_degree."

            init_distributed_environment(rank=dist.get_rank(), world_size=dist.get_world_size())
            initialize_model_parallel(
                sequence_parallel_degree=dist.get_world_size(),
                ring_degree=args.ring_degree,
                ulysses_degree=args.ulysses_degree,
            )
            device = torch.device(f"cuda:{os.environ['LOCAL_RANK']}")
        else:
            if device is None:
                device = "cuda" if torch.cuda.is_available() else "cpu"

        parallel_args = {"ulysses_degree": args.ulysses_degree, "ring_degree": args.ring_degree}

        # ======================== Get the args path =============================
        torch.set_grad_enabled(False)

        # =========================== Build main model ===========================
        logger.info("Building model...")
        factor_kwargs = {"device": device, "dtype": PRECISION_TO_TYPE[args.precision]}
        in_channels = args.latent_channels
        out_channels = args.latent_channels

        model = load_model(args, in_channels=in_channels, out_channels=out_channels, factor_kwargs=factor_kwargs)
        if args.use_fp8:
            from hyvideo.modules.fp8_optimization import convert_fp8_linear
            convert_fp8_linear(model, args.dit_weight, original_dtype=PRECISION_TO_TYPE[args.precision])
        model = model.to(device)
        model = Inference.load_state_dict(args, model, pretrained_model_path)
        model.eval()

        # ============================= Build extra models ========================
        vae, _, s_ratio, t_ratio = load_vae(
            args.vae, args.vae_precision, logger=logger, device=device if not args.use_cpu_offload else "cpu"
        )
        vae_kwargs = {"s_ratio": s_ratio, "t_ratio": t_ratio}

        text_encoder = TextEncoder(
            text_encoder_type=args.text_encoder,
            max_length=args.text_len + PROMPT_TEMPLATE[args.prompt_template_video].get("crop_start", 0),
            text_encoder_precision=args.text_encoder_precision,
            tokenizer_type=args.tokenizer,
            prompt_template=PROMPT_TEMPLATE[args.prompt_template],
            prompt_template_video=PROMPT_TEMPLATE[args.prompt_template_video],
            hidden_state_skip_layer=args.hidden_state_skip_layer,
            apply_final_norm=args.apply_final_norm,
            reproduce=args.reproduce,
            logger=logger,
            device=device if not args.use_cpu_offload else "cpu",
        )
        text_encoder_2 = None
        if args.text_encoder_2 is not None:
            text_encoder_2 = TextEncoder(
                text_encoder_type=args.text_encoder_2,
                max_length=args.text_len_2,
                text_encoder_precision=args.text_encoder_precision_2,
                tokenizer_type=args.tokenizer_2,
                reproduce=args.reproduce,
                logger=logger,
                device=device if not args.use_cpu_offload else "cpu",
            )

        return cls(args=args, vae=vae, vae_kwargs=vae_kwargs, text_encoder=text_encoder,
                   text_encoder_2=text_encoder_2, model=model, use_cpu_offload=args.use_cpu_offload,
                   device=device, logger=logger, parallel_args=parallel_args)

    @staticmethod
    def load_state_dict(args, model, pretrained_model_path):
        load_key = args.load_key
        dit_weight = Path(args.dit_weight)
        logger.info(f"Loading torch model {dit_weight}...")
        state_dict = torch.load(dit_weight, map_location=lambda storage, loc: storage)
        if load_key in state_dict:
            state_dict = state_dict[load_key]
        model.load_state_dict(state_dict, strict=True)
        return model


class HunyuanVideoSampler(Inference):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.pipeline = HunyuanVideoPipeline(vae=self.vae, text_encoder=self.text_encoder,
                                             text_encoder_2=self.text_encoder_2, transformer=self.model,
                                             scheduler=FlowMatchDiscreteScheduler(shift=7.0, reverse=True, solver="euler"),
                                             progress_bar_config=None, args=self.args)
        if self.use_cpu_offload:
            self.pipeline.enable_sequential_cpu_offload()
        else:
            self.pipeline = self.pipeline.to(self.device)
        if self.parallel_args["ulysses_degree"] > 1 or self.parallel_args["ring_degree"] > 1:
            parallelize_transformer(self.pipeline)

    @torch.no_grad()
    def predict(self, prompt, height=192, width=336, video_length=129, seed=None, infer_steps=50,
                guidance_scale=6.0, flow_shift=5.0, embedded_guidance_scale=None, batch_size=1, **kwargs):
        if isinstance(seed, int):
            seeds = [seed + i for i in range(batch_size)]
        else:
            seeds = [random.randint(0, 1_000_000) for _ in range(batch_size)]
        generator = [torch.Generator(self.device).manual_seed(seed) for seed in seeds]

        target_height = align_to(height, 16)
        target_width = align_to(width, 16)
        start_time = time.time()
        samples = self.pipeline(prompt=prompt, height=target_height, width=target_width,
                                video_length=video_length, num_inference_steps=infer_steps,
                                guidance_scale=guidance_scale, negative_prompt=NEGATIVE_PROMPT,
                                generator=generator, embedded_guidance_scale=embedded_guidance_scale,
                                output_type="pil", is_progress_bar=True)[0]
        gen_time = time.time() - start_time
        logger.info(f"Success, time: {gen_time}")
        return {"samples": samples, "seeds": seeds, "prompts": [prompt], "size": (target_height, target_width, video_length)}
