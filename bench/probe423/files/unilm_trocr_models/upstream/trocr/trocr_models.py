import logging
from typing import Any, Dict, Optional

import torch
import torch.nn as nn
from fairseq import utils
from fairseq.models import (
    FairseqEncoder,
    FairseqEncoderDecoderModel,
    register_model,
    register_model_architecture,
)
from fairseq.models.fairseq_encoder import EncoderOut
from fairseq.models.transformer import TransformerDecoder, Embedding, base_architecture
from timm.models import create_model

try:
    from .deit import *  # noqa: F401,F403  (registers the deit_*_distilled_patch16_384 models)
except ImportError:
    from deit import *  # noqa: F401,F403

logger = logging.getLogger(__name__)

DEFAULT_MAX_TARGET_POSITIONS = 1024

UNILM_WEIGHTS = "https://layoutlm.blob.core.windows.net/trocr/model_zoo/unilm/unilm1.2-base-uncased.pt"


@register_model("TrOCR")
class TrOCRModel(FairseqEncoderDecoderModel):

    @staticmethod
    def add_args(parser):
        TransformerDecoder.add_args(parser) if hasattr(TransformerDecoder, "add_args") else None
        parser.add_argument("--vit-img-size", type=int, metavar="N",
                            help="the image size of h and w (h=w) of the ViT")
        parser.add_argument("--vit-arch", type=str, metavar="N",
                            help="the arch name for the DeiT/BEiT encoder")
        parser.add_argument("--ape", action="store_true",
                            help="if use absolute_pos_embed")
        parser.add_argument("--mask-ratio", default=0.0, type=float,
                            help="the mask ratio for the encoder output masking.")
        parser.add_argument("--only-keep-pretrained-decoder-structure", action="store_true",
                            help="if only keep the pretrained decoder structure")
        parser.add_argument("--only-keep-pretrained-encoder-structure", action="store_true",
                            help="if only keep the pretrained encoder structure")

    @staticmethod
    def read_args_from_roberta(roberta_args):
        # TODO: this would become easier if encoder/decoder where using a similar
        # TransformerConfig object
        args = argparse_namespace_copy(roberta_args)
        attr_map = [
            ("encoder_attention_heads", "decoder_attention_heads"),
            ("encoder_embed_dim", "decoder_embed_dim"),
            ("encoder_embed_dim", "decoder_output_dim"),
            ("encoder_normalize_before", "decoder_normalize_before"),
            ("encoder_layers_to_keep", "decoder_layers_to_keep"),
            ("encoder_ffn_embed_dim", "decoder_ffn_embed_dim"),
            ("encoder_layerdrop", "decoder_layerdrop"),
            ("encoder_layers", "decoder_layers"),
            ("encoder_learned_pos", "decoder_learned_pos"),
            # should this be set from here ?
            ("max_positions", "max_target_positions"),
        ]
        for k1, k2 in attr_map:
            setattr(args, k2, getattr(roberta_args, k1))

        args.adaptive_softmax_cutoff = None
        args.adaptive_softmax_dropout = 0
        args.share_decoder_input_output_embed = not roberta_args.untie_weights_roberta
        return args

    @classmethod
    def build_model(cls, args, task):
        encoder = TrOCREncoder(args=args, dictionary=task.source_dictionary)

        if getattr(args, "max_target_positions", None) is None:
            args.max_target_positions = DEFAULT_MAX_TARGET_POSITIONS

        decoder_embed_tokens = cls.build_embedding(
            args, task.target_dictionary, args.decoder_embed_dim, args.decoder_embed_path
        )
        decoder = TransformerDecoder(
            args=args,
            dictionary=task.target_dictionary,
            embed_tokens=decoder_embed_tokens,
            no_encoder_attn=False,
        )

        if getattr(args, "decoder_pretrained", None) == "unilm":
            logger.info("Decoder is pretrained using the unilm.")
            unilm_state = torch.hub.load_state_dict_from_url(
                UNILM_WEIGHTS, map_location="cpu", check_hash=True)
            missing, unexpected = decoder.load_state_dict(unilm_state, strict=False)
            logger.info("unilm decoder: %d missing keys, %d unexpected keys",
                        len(missing), len(unexpected))

        model = cls(encoder, decoder)
        return model

    @classmethod
    def build_embedding(cls, args, dictionary, embed_dim, path=None):
        num_embeddings = len(dictionary)
        padding_idx = dictionary.pad()

        emb = Embedding(num_embeddings, embed_dim, padding_idx)
        # if provided, load from preloaded dictionaries
        if path:
            embed_dict = utils.parse_embedding(path)
            utils.load_embedding(embed_dict, dictionary, emb)
        return emb

    def forward(self, imgs, prev_output_tokens, **kwargs):
        encoder_out = self.encoder(imgs, **kwargs)  # (seq_len, batch, embed_dim)
        decoder_out = self.decoder(
            prev_output_tokens, encoder_out=encoder_out, **kwargs
        )  # (batch, seq_len, vocab_size)
        return decoder_out


def argparse_namespace_copy(ns):
    import argparse
    return argparse.Namespace(**vars(ns))


class TrOCREncoder(FairseqEncoder):
    def __init__(self, args, dictionary):
        super().__init__(dictionary)

        if hasattr(args, "only_keep_pretrained_encoder_structure") and \
                args.only_keep_pretrained_encoder_structure:
            pretrained = False
        else:
            pretrained = True

        if "custom_size" in args.deit_arch:
            self.deit = create_model(args.deit_arch, pretrained=pretrained,
                                     img_size=args.input_size, ape=args.ape,
                                     mask_ratio=args.mask_ratio)
        else:
            self.deit = create_model(args.deit_arch, pretrained=pretrained,
                                     ape=args.ape, mask_ratio=args.mask_ratio)

        self.fp16 = args.fp16

    def forward(self, imgs):
        if self.fp16:
            imgs = imgs.half()

        x, encoder_embedding = self.deit.forward_features(imgs)  # bs, n + 2, dim
        x = x.transpose(0, 1)  # n + 2, bs, dim

        encoder_padding_mask = torch.zeros(*x.shape[:2]).transpose(0, 1).to(imgs.device)

        return EncoderOut(
            encoder_out=x,  # T x B x C
            encoder_padding_mask=encoder_padding_mask,  # B x T
            encoder_embedding=encoder_embedding,  # B x T x C
            encoder_states=None,  # List[T x B x C]
            src_tokens=None,
            src_lengths=None,
        )

    def reorder_encoder_out(self, encoder_out, new_order):
        """
        Reorder encoder output according to `new_order`.

        Args:
            encoder_out: output from the ``forward()`` method
            new_order (LongTensor): desired order

        Returns:
            `encoder_out` rearranged according to `new_order`
        """
        _encoder_out = encoder_out["encoder_out"][0] if isinstance(encoder_out, dict) \
            else encoder_out.encoder_out
        _encoder_padding_mask = encoder_out.encoder_padding_mask
        _encoder_embedding = encoder_out.encoder_embedding
        return EncoderOut(
            encoder_out=_encoder_out.index_select(1, new_order),
            encoder_padding_mask=_encoder_padding_mask.index_select(0, new_order),
            encoder_embedding=_encoder_embedding.index_select(0, new_order),
            encoder_states=None,
            src_tokens=None,
            src_lengths=None,
        )


@register_model_architecture("TrOCR", "trocr_base")
def trocr_base(args):
    # DeiT Encoder  deit_base_distilled_patch16_384
    args.deit_arch = getattr(args, "deit_arch", "beit_base_patch16_384")
    # Transformer Decoder
    args.decoder_embed_dim = getattr(args, "decoder_embed_dim", 1024)
    args.decoder_ffn_embed_dim = getattr(args, "decoder_ffn_embed_dim", 4096)
    args.decoder_layers = getattr(args, "decoder_layers", 12)
    args.decoder_attention_heads = getattr(args, "decoder_attention_heads", 16)
    args.decoder_learned_pos = getattr(args, "decoder_learned_pos", True)
    args.max_target_positions = getattr(args, "max_target_positions", 512)
    base_architecture(args)


@register_model_architecture("TrOCR", "trocr_large")
def trocr_large(args):
    # DeiT Encoder  deit_base_distilled_patch16_384
    args.deit_arch = getattr(args, "deit_arch", "beit_large_patch16_384")
    # Transformer Decoder
    args.decoder_embed_dim = getattr(args, "decoder_embed_dim", 1024)
    args.decoder_ffn_embed_dim = getattr(args, "decoder_ffn_embed_dim", 4096)
    args.decoder_layers = getattr(args, "decoder_layers", 12)
    args.decoder_attention_heads = getattr(args, "decoder_attention_heads", 16)
    args.decoder_learned_pos = getattr(args, "decoder_learned_pos", True)
    args.max_target_positions = getattr(args, "max_target_positions", 512)
    base_architecture(args)


@register_model_architecture("TrOCR", "trocr_small")
def trocr_small(args):
    args.deit_arch = getattr(args, "deit_arch", "deit_small_distilled_patch16_384")
    args.decoder_embed_dim = getattr(args, "decoder_embed_dim", 256)
    args.decoder_ffn_embed_dim = getattr(args, "decoder_ffn_embed_dim", 1024)
    args.decoder_layers = getattr(args, "decoder_layers", 6)
    args.decoder_attention_heads = getattr(args, "decoder_attention_heads", 8)
    args.decoder_learned_pos = getattr(args, "decoder_learned_pos", True)
    args.max_target_positions = getattr(args, "max_target_positions", 512)
    base_architecture(args)
